package subscribers

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/workflows"
)

// Channels are the channel kinds a preference can turn off, in the order
// answers list them.
var Channels = []string{"in_app", "email", "sms", "chat", "push"}

// Rule names which preference decided a channel. The values are the
// reference's preference document types, which its v1 answers carry as
// `type`.
type Rule string

// The rules, from the last resort to the first that applies.
const (
	RuleDefault            Rule = "DEFAULT"             // nothing set the channel: it is on
	RuleWorkflow           Rule = "WORKFLOW_RESOURCE"   // the workflow's defaults
	RuleUser               Rule = "USER_WORKFLOW"       // the workflow author's override of them
	RuleSubscriberGlobal   Rule = "SUBSCRIBER_GLOBAL"   // the subscriber's global preferences
	RuleSubscriberWorkflow Rule = "SUBSCRIBER_WORKFLOW" // the subscriber's preferences for this workflow
)

// Detail is the execution detail that says this rule turned a step off, as
// the reference words it.
func (r Rule) Detail() string {
	switch r {
	case RuleSubscriberWorkflow:
		return "Step filtered by subscriber workflow preferences"
	case RuleSubscriberGlobal:
		return "Step filtered by subscriber global preferences"
	case RuleUser:
		return "Step filtered by user preferences"
	}
	return "Step filtered by workflow preferences"
}

// bySubscriber reports whether the subscriber set the channel, which the
// reference's answers list as an override with source "subscriber".
func (r Rule) bySubscriber() bool { return r == RuleSubscriberGlobal || r == RuleSubscriberWorkflow }

// Decision is whether one channel delivers, and which rule said so.
type Decision struct {
	Enabled bool
	Rule    Rule
}

// Set is what a subscriber set: channel → enabled, for the channels it
// named. A channel absent falls through to the next rule.
type Set map[string]bool

// Subscribed is a subscriber's preferences that bear on one workflow.
type Subscribed struct {
	Global    Set
	Workflow  Set
	UpdatedAt string    // when the workflow set last changed; "" when there is none
	Schedule  *Schedule // the subscriber's schedule; nil when it set none
}

// Resolved is every channel's decision for one subscriber and workflow.
type Resolved struct {
	Critical bool                // the workflow ignores subscriber preferences
	Channels map[string]Decision // every channel of Channels
	// Schedule is the subscriber's schedule, nil when it set none or the
	// workflow is critical, which reaches a subscriber at any hour.
	Schedule *Schedule
}

// Resolve decides every channel for a workflow's preferences and what a
// subscriber set, in the reference's order (its merge of the WORKFLOW_RESOURCE,
// USER_WORKFLOW, SUBSCRIBER_GLOBAL and SUBSCRIBER_WORKFLOW documents, later
// winning): the subscriber's setting for this workflow, then its global one,
// then the author's override, then the workflow's defaults, and within a
// workflow set a channel's own flag before `all`. A critical workflow (either
// set read-only) ignores the subscriber's two.
//
// Where the reference names the last document merged as the reason a step
// was skipped, a Decision names the rule that decided its channel.
func Resolve(wf workflows.Preferences, sub Subscribed) Resolved {
	out := Resolved{Critical: wf.Critical(), Channels: make(map[string]Decision, len(Channels))}
	for _, c := range Channels {
		out.Channels[c] = decide(c, wf, sub, out.Critical)
	}
	return out
}

func decide(c string, wf workflows.Preferences, sub Subscribed, critical bool) Decision {
	if !critical {
		if on, ok := sub.Workflow[c]; ok {
			return Decision{on, RuleSubscriberWorkflow}
		}
		if on, ok := sub.Global[c]; ok {
			return Decision{on, RuleSubscriberGlobal}
		}
	}
	if wf.User != nil {
		if set, ok := wf.User.Channels[c]; ok {
			return Decision{set.Enabled, RuleUser}
		}
	}
	if set, ok := wf.Default.Channels[c]; ok {
		return Decision{set.Enabled, RuleWorkflow}
	}
	if wf.User != nil {
		return Decision{wf.User.All.Enabled, RuleUser}
	}
	return Decision{wf.Default.All.Enabled, RuleWorkflow}
}

// Preferences resolves the channels of the workflow whose _id is
// workflowID, with preferences wf, for the subscriber whose _id is
// subscriberRef (Resolve). It reads the subscriber's preferences only when
// the workflow is not critical. The delivery of a channel step and the
// inbox's preferences read through it.
func (s *Store) Preferences(ctx context.Context, environmentID, subscriberRef, workflowID string, wf workflows.Preferences) (Resolved, error) {
	if wf.Critical() {
		return Resolve(wf, Subscribed{}), nil
	}
	sub, err := s.subscribed(ctx, environmentID, subscriberRef, workflowID)
	if err != nil {
		return Resolved{}, err
	}
	r := Resolve(wf, sub)
	r.Schedule = sub.Schedule
	return r, nil
}

// subscribed returns a subscriber's global preferences and those for one
// workflow, read in one indexed read and kept until the next preference
// write: the delivery of every channel step asks (Preferences), and a read
// was a quarter of an in-app trigger's CPU (bench scenario 7). Callers must
// not modify the sets.
func (s *Store) subscribed(ctx context.Context, environmentID, subscriberRef, workflowID string) (Subscribed, error) {
	key := environmentID + "\x00" + subscriberRef + "\x00" + workflowID
	return cacheFor(s.db).preferences.Get(key, func() (Subscribed, error) {
		return s.readSubscribed(ctx, environmentID, subscriberRef, workflowID)
	})
}

// readSubscribed is subscribed's read.
func (s *Store) readSubscribed(ctx context.Context, environmentID, subscriberRef, workflowID string) (sub Subscribed, err error) {
	defer platform.Wrap(&err, "read preferences")
	rows, err := s.db.Query(ctx, `SELECT workflow_id, channels, updated_at, schedule FROM subscriber_preferences
		WHERE environment_id = ? AND subscriber_id = ? AND workflow_id IN ('', ?)`, environmentID, subscriberRef, workflowID)
	if err != nil {
		return sub, err
	}
	defer rows.Close()
	for rows.Next() {
		var wfID, channels, updated string
		var schedule sql.NullString
		if err := rows.Scan(&wfID, &channels, &updated, &schedule); err != nil {
			return sub, err
		}
		var set Set
		if err := json.Unmarshal([]byte(channels), &set); err != nil {
			return sub, fmt.Errorf("preferences of %s: %w", subscriberRef, err)
		}
		if wfID == "" {
			sub.Global = set
			if sub.Schedule, err = parseSchedule(schedule); err != nil {
				return sub, fmt.Errorf("schedule of %s: %w", subscriberRef, err)
			}
		} else {
			sub.Workflow, sub.UpdatedAt = set, updated
		}
	}
	return sub, rows.Err()
}

// allSubscribed reads every preference set of a subscriber: its global one
// and one per workflow _id.
func (s *Store) allSubscribed(ctx context.Context, environmentID, subscriberRef string) (global Set, schedule *Schedule, byWorkflow map[string]Subscribed, err error) {
	defer platform.Wrap(&err, "read preferences")
	rows, err := s.db.QueryContext(ctx, `SELECT workflow_id, channels, updated_at, schedule FROM subscriber_preferences
		WHERE environment_id = ? AND subscriber_id = ?`, environmentID, subscriberRef)
	if err != nil {
		return nil, nil, nil, err
	}
	defer rows.Close()
	byWorkflow = map[string]Subscribed{}
	for rows.Next() {
		var wfID, channels, updated string
		var rawSchedule sql.NullString
		if err := rows.Scan(&wfID, &channels, &updated, &rawSchedule); err != nil {
			return nil, nil, nil, err
		}
		var set Set
		if err := json.Unmarshal([]byte(channels), &set); err != nil {
			return nil, nil, nil, fmt.Errorf("preferences of %s: %w", subscriberRef, err)
		}
		if wfID == "" {
			global = set
			if schedule, err = parseSchedule(rawSchedule); err != nil {
				return nil, nil, nil, fmt.Errorf("schedule of %s: %w", subscriberRef, err)
			}
		} else {
			byWorkflow[wfID] = Subscribed{Workflow: set, UpdatedAt: updated}
		}
	}
	return global, schedule, byWorkflow, rows.Err()
}

// parseSchedule reads the schedule column: nil when NULL.
func parseSchedule(raw sql.NullString) (*Schedule, error) {
	if !raw.Valid || raw.String == "" {
		return nil, nil
	}
	var sc Schedule
	if err := json.Unmarshal([]byte(raw.String), &sc); err != nil {
		return nil, err
	}
	return &sc, nil
}

// globalPreferences reads the subscriber's global channels and schedule
// inside tx: what a write left.
func (s *Store) globalPreferences(ctx context.Context, tx *sql.Tx, environmentID, subscriberRef string) (Set, *Schedule, error) {
	var channels string
	var raw sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT channels, schedule FROM subscriber_preferences
		WHERE environment_id = ? AND subscriber_id = ? AND workflow_id = ''`, environmentID, subscriberRef).Scan(&channels, &raw)
	if err != nil {
		return nil, nil, err
	}
	set := Set{}
	if err := json.Unmarshal([]byte(channels), &set); err != nil {
		return nil, nil, err
	}
	schedule, err := parseSchedule(raw)
	return set, schedule, err
}

// setSchedule lays change over the subscriber's schedule, on its global
// preferences row, which it creates with no channel set when there is
// none yet.
func (s *Store) setSchedule(ctx context.Context, tx *sql.Tx, environmentID, subscriberRef string, change *Schedule) error {
	var current sql.NullString
	err := tx.QueryRowContext(ctx, `SELECT schedule FROM subscriber_preferences
		WHERE environment_id = ? AND subscriber_id = ? AND workflow_id = ''`, environmentID, subscriberRef).Scan(&current)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	old, err := parseSchedule(current)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(old.merge(change))
	now := sqldb.FormatTime(s.now())
	_, err = tx.ExecContext(ctx, `INSERT INTO subscriber_preferences
		(environment_id, subscriber_id, workflow_id, channels, created_at, updated_at, schedule) VALUES (?, ?, '', '{}', ?, ?, ?)
		ON CONFLICT (environment_id, subscriber_id, workflow_id) DO UPDATE SET schedule = excluded.schedule, updated_at = excluded.updated_at`,
		environmentID, subscriberRef, now, now, string(b))
	return err
}

// setPreferences merges change into the subscriber's preferences for the
// workflow whose _id is workflowID, or into its global ones when workflowID
// is "". As the reference does, a global write first takes each channel it
// sets out of every per-workflow set of the subscriber, so that the global
// choice is the one that holds until the subscriber overrides it again.
func (s *Store) setPreferences(ctx context.Context, tx *sql.Tx, environmentID, subscriberRef, workflowID string, change Set) (Set, error) {
	if len(change) == 0 {
		return nil, nil
	}
	now := sqldb.FormatTime(s.now())
	if workflowID == "" {
		if err := s.unsetWorkflowChannels(ctx, tx, environmentID, subscriberRef, change, now); err != nil {
			return nil, err
		}
	}
	var current string
	err := tx.QueryRowContext(ctx, `SELECT channels FROM subscriber_preferences
		WHERE environment_id = ? AND subscriber_id = ? AND workflow_id = ?`, environmentID, subscriberRef, workflowID).Scan(&current)
	set := Set{}
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal([]byte(current), &set); err != nil {
			return nil, err
		}
	}
	maps.Copy(set, change)
	b, _ := json.Marshal(set)
	_, err = tx.ExecContext(ctx, `INSERT INTO subscriber_preferences
		(environment_id, subscriber_id, workflow_id, channels, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (environment_id, subscriber_id, workflow_id) DO UPDATE SET channels = excluded.channels, updated_at = excluded.updated_at`,
		environmentID, subscriberRef, workflowID, string(b), now, now)
	return set, err
}

// unsetWorkflowChannels removes the channels of change from every
// per-workflow set of the subscriber.
func (s *Store) unsetWorkflowChannels(ctx context.Context, tx *sql.Tx, environmentID, subscriberRef string, change Set, now string) error {
	// The channels column is a JSON object of booleans, by channel.
	d := s.db.Dialect()
	q := `UPDATE subscriber_preferences SET channels = ` + d.JSONRemoveKey("channels", "?") + `, updated_at = ?
		WHERE environment_id = ? AND subscriber_id = ? AND workflow_id != '' AND ` + d.JSONHasKey("channels", "?")
	for c := range change {
		if _, err := tx.ExecContext(ctx, q, c, now, environmentID, subscriberRef, c); err != nil {
			return err
		}
	}
	return nil
}
