package messaging

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// inboxMessage is a message as the inbox reads it: the columns a
// notification (docs/inbox.md, "The notification object") and a live event
// show.
type inboxMessage struct {
	ID, OrganizationID, NotificationID               string
	SubscriberID, TemplateID, TransactionID, Channel string
	Content                                          []byte
	Subject, Avatar                                  *string
	CTA, Data, Tags, DeliveredAt                     []byte
	Read, Seen, Archived                             bool
	LastReadDate, LastSeenDate, FirstSeenDate        *string
	ArchivedAt, SnoozedUntil                         *string
	CreatedAt, UpdatedAt                             string
}

var inboxColumns = `id, organization_id, notification_id, subscriber_id, template_id, transaction_id, channel, content, subject, avatar,
	` + ctaColumn + `, data, tags, ` + deliveredColumn + `, read, seen, archived, last_read_date, last_seen_date, first_seen_date,
	archived_at, snoozed_until, created_at, ` + updatedColumn

// dest is where a row of inboxColumns is scanned, in their order.
func (m *inboxMessage) dest() []any {
	return []any{&m.ID, &m.OrganizationID, &m.NotificationID, &m.SubscriberID, &m.TemplateID, &m.TransactionID, &m.Channel, &m.Content, &m.Subject,
		&m.Avatar, &m.CTA, &m.Data, &m.Tags, &m.DeliveredAt, &m.Read, &m.Seen, &m.Archived, &m.LastReadDate,
		&m.LastSeenDate, &m.FirstSeenDate, &m.ArchivedAt, &m.SnoozedUntil, &m.CreatedAt, &m.UpdatedAt}
}

func scanInboxMessage(row scanner) (*inboxMessage, error) {
	var m inboxMessage
	err := row.Scan(m.dest()...)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, platform.ErrNotFound
	}
	return &m, err
}

// inboxFilter selects a subscriber's inbox messages (docs/inbox.md,
// "Filters" and "What the routes do").
type inboxFilter struct {
	read, archived, snoozed, seen *bool
	tags                          [][]string // groups ANDed, each group's tags ORed
	data                          map[string]any
	severity                      []string
	createdGte, createdLte        string // times (docs/api.md, "Identifiers and timestamps"); "" for none
}

// inboxScope is the inbox a request reads: one subscriber's messages in
// its environment, of the session's context (inbox_context.go).
type inboxScope struct {
	env, subscriberID string
	context           string // contextColumn of the session's context keys
}

// scopeOf is the inbox of who.
func scopeOf(who platform.Subscriber) inboxScope {
	return inboxScope{env: who.EnvironmentID, subscriberID: who.ID, context: contextColumn(who.ContextKeys)}
}

// cond is the WHERE condition of f for the scope's in_app messages.
// severities are the workflows' severities other than none, by _id.
func (f *inboxFilter) cond(q *queries, box inboxScope, severities map[string]string) (string, []any) {
	where := []string{"environment_id = ?", "subscriber_id = ?", "channel = 'in_app'", "context_keys = ?"}
	args := []any{box.env, box.subscriberID, box.context}
	return f.more(q, where, args, severities)
}

// more adds f's conditions to where. A data filter's key may be nested
// ("a.b") two levels deep.
func (f *inboxFilter) more(q *queries, where []string, args []any, severities map[string]string) (string, []any) {
	// In one order, so that a filter's query is always the same text and
	// reuses its prepared statement.
	for _, c := range [...]struct {
		col string
		v   *bool
	}{{"read", f.read}, {"archived", f.archived}, {"seen", f.seen}} {
		if c.v != nil {
			where, args = append(where, c.col+" = ?"), append(args, sqldb.Flag(*c.v))
		}
	}
	if f.snoozed != nil {
		if *f.snoozed {
			where = append(where, "snoozed_until IS NOT NULL")
		} else {
			where = append(where, "snoozed_until IS NULL")
		}
	}
	for _, group := range f.tags {
		if len(group) == 0 {
			continue
		}
		where = append(where, q.anyTag(len(group)))
		for _, t := range group {
			args = append(args, t)
		}
	}
	keys := make([]string, 0, len(f.data))
	for k := range f.data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var w string
		w, args = q.d.JSONEquals(args, "messages.data", strings.Split(k, "."), f.data[k])
		where = append(where, w)
	}
	if len(f.severity) > 0 {
		var in, others []any
		none := false
		for id, sev := range severities {
			others = append(others, id)
			if slices.Contains(f.severity, sev) {
				in = append(in, id)
			}
		}
		none = slices.Contains(f.severity, "none")
		var ors []string
		if len(in) > 0 {
			ors, args = append(ors, "template_id IN ("+sqldb.Placeholders(len(in))+")"), append(args, in...)
		}
		if none {
			if len(others) == 0 {
				ors = append(ors, "1 = 1")
			} else {
				ors, args = append(ors, "template_id NOT IN ("+sqldb.Placeholders(len(others))+")"), append(args, others...)
			}
		}
		if len(ors) == 0 {
			ors = []string{"1 = 0"}
		}
		where = append(where, "("+strings.Join(ors, " OR ")+")")
	}
	if f.createdGte != "" {
		where, args = append(where, "created_at >= ?"), append(args, f.createdGte)
	}
	if f.createdLte != "" {
		where, args = append(where, "created_at <= ?"), append(args, f.createdLte)
	}
	return strings.Join(where, " AND "), args
}

// inboxPage returns up to limit of f's messages, newest first, starting
// after the message after (when set) or skipping offset, and whether more follow.
func (s *Store) inboxPage(ctx context.Context, box inboxScope, f *inboxFilter, sev map[string]string,
	after string, offset, limit int) ([]*inboxMessage, bool, error) {
	cond, args := f.cond(s.queries, box, sev)
	query := pageQuery(cond, args, "inbox", after, offset, limit)
	p, err := cachedPageOf(s, pageOwner(box.env, box.subscriberID), query, func() (inboxAnswer, error) {
		msgs, more, err := s.readInboxPage(ctx, box, cond, args, after, offset, limit)
		return inboxAnswer{msgs, more}, err
	}, inboxAnswer.encode, decodeInbox)
	return p.msgs, p.more, err
}

// inboxAnswer is a page of an inbox and whether more follow.
type inboxAnswer struct {
	msgs []*inboxMessage
	more bool
}

func (p inboxAnswer) encode(b []byte) []byte {
	b = appendFlag(b, p.more)
	return encodeRows(b, p.msgs, (*inboxMessage).dest)
}

func decodeInbox(b []byte) (inboxAnswer, error) {
	if len(b) == 0 {
		return inboxAnswer{}, errBadPage
	}
	msgs, err := decodeRows(b[1:], (*inboxMessage).dest)
	return inboxAnswer{msgs, b[0] == 1}, err
}

// readInboxPage is inboxPage, read from the database.
func (s *Store) readInboxPage(ctx context.Context, box inboxScope, cond string, args []any,
	after string, offset, limit int) ([]*inboxMessage, bool, error) {
	if after != "" {
		var at string
		err := s.db.QueryRow(ctx, `SELECT created_at FROM messages WHERE environment_id = ? AND subscriber_id = ? AND id = ?`,
			box.env, box.subscriberID, after).Scan(&at)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			// A cursor deleted since the page was read: ids grow with
			// time, so the messages older than it are still found.
			cond, args = cond+" AND id < ?", append(args, after)
		case err != nil:
			return nil, false, err
		default:
			cond, args = cond+" AND (created_at < ? OR (created_at = ? AND id < ?))", append(args, at, at, after)
		}
		offset = 0
	}
	rows, err := s.db.Query(ctx, `SELECT `+inboxColumns+` FROM messages WHERE `+cond+`
		ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, append(args, limit+1, offset)...)
	if err != nil {
		return nil, false, fmt.Errorf("read inbox: %w", err)
	}
	defer rows.Close()
	var out []*inboxMessage
	for rows.Next() {
		m, err := scanInboxMessage(rows)
		if err != nil {
			return nil, false, err
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}

// inboxCountLimit is the most an inbox count counts, as the reference
// platform's (it shows "99+").
const inboxCountLimit = 100

// inboxCount counts f's messages, up to max.
func (s *Store) inboxCount(ctx context.Context, box inboxScope, f *inboxFilter, sev map[string]string, max int) (int, error) {
	cond, args := f.cond(s.queries, box, sev)
	var n int
	err := s.db.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM messages WHERE `+cond+` LIMIT ?) AS page`,
		append(args, max)...).Scan(&n)
	return n, err
}

// severityCounts are the unread counts of a subscriber's inbox.
type severityCounts struct {
	Total    int            `json:"total"`
	Severity map[string]int `json:"severity"`
}

// unreadBySeverity counts the scope's unread, unsnoozed in_app messages
// by their workflow's severity, each up to inboxCountLimit.
func (s *Store) unreadBySeverity(ctx context.Context, box inboxScope, sev map[string]string) (severityCounts, error) {
	rows, err := s.db.Query(ctx, `SELECT template_id, count(*) FROM messages
		WHERE environment_id = ? AND subscriber_id = ? AND channel = 'in_app' AND context_keys = ?
		AND read = 0 AND snoozed_until IS NULL
		GROUP BY template_id`, box.env, box.subscriberID, box.context)
	if err != nil {
		return severityCounts{}, err
	}
	defer rows.Close()
	out := severityCounts{Severity: map[string]int{"high": 0, "medium": 0, "low": 0, "none": 0}}
	for rows.Next() {
		var tpl string
		var n int
		if err := rows.Scan(&tpl, &n); err != nil {
			return out, err
		}
		level := sev[tpl]
		if level == "" {
			level = "none"
		}
		out.Severity[level] += n
		out.Total += n
	}
	for k, n := range out.Severity {
		out.Severity[k] = min(n, inboxCountLimit)
	}
	out.Total = min(out.Total, inboxCountLimit)
	return out, rows.Err()
}

// inboxAction is one way an inbox changes a message (docs/inbox.md,
// "What each action changes").
type inboxAction string

const (
	actionRead      inboxAction = "read"
	actionUnread    inboxAction = "unread"
	actionArchive   inboxAction = "archive"
	actionUnarchive inboxAction = "unarchive"
	actionSnooze    inboxAction = "snooze"
	actionUnsnooze  inboxAction = "unsnooze"
	actionSeen      inboxAction = "seen"
)

// inboxSets are the columns each action writes; ?1 is now, ?6 a snooze's
// end (bound by a snooze alone: a shared database cannot type a parameter
// a statement does not use).
var inboxSets = map[inboxAction]string{
	actionRead: `seen = 1, last_seen_date = ?1, first_seen_date = coalesce(first_seen_date, ?1),
		read = 1, last_read_date = ?1`,
	actionUnread: `seen = 1, first_seen_date = coalesce(first_seen_date, ?1), read = 0, last_read_date = NULL,
		archived = 0, archived_at = NULL`,
	actionArchive: `seen = 1, last_seen_date = ?1, first_seen_date = coalesce(first_seen_date, ?1),
		read = 1, last_read_date = ?1, archived = 1, archived_at = ?1`,
	actionUnarchive: `seen = 1, first_seen_date = coalesce(first_seen_date, ?1), read = 1, archived = 0, archived_at = NULL`,
	actionSnooze: `snoozed_until = ?6, seen = 1, first_seen_date = coalesce(first_seen_date, ?1),
		archived = 0, archived_at = NULL`,
	actionUnsnooze: `snoozed_until = NULL, seen = 1, first_seen_date = coalesce(first_seen_date, ?1),
		archived = 0, archived_at = NULL`,
	actionSeen: `seen = 1, last_seen_date = ?1, first_seen_date = coalesce(first_seen_date, ?1)`,
}

// inboxMark applies action to one of the scope's in_app messages and
// returns it as it stands after, or platform.ErrNotFound when the scope
// has no such message. A snooze's end is until.
func (s *Store) inboxMark(ctx context.Context, box inboxScope, id string, action inboxAction, until string) (*inboxMessage, error) {
	var out *inboxMessage
	env := box.env
	raise := s.wantsAny(ctx, env, inboxEvents[action])
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		cond := `environment_id = ?2 AND subscriber_id = ?3 AND id = ?4 AND channel = 'in_app' AND context_keys = ?5`
		if action == actionUnsnooze {
			cond += ` AND snoozed_until IS NOT NULL` // unsnoozing what is not snoozed is a 404 (docs/inbox.md, "Filters")
		}
		args := []any{sqldb.FormatTime(s.now()), env, box.subscriberID, id, box.context}
		if action == actionSnooze {
			args = append(args, until)
		}
		res, err := tx.ExecContext(ctx, `UPDATE messages SET `+inboxSets[action]+`, updated_at = ?1 WHERE `+cond, args...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return platform.ErrNotFound
		}
		if err := s.pagesChanged(ctx, tx, env, box.subscriberID); err != nil {
			return err
		}
		out, err = scanInboxMessage(tx.QueryRowContext(ctx, `SELECT `+inboxColumns+` FROM messages WHERE id = ?`, id))
		if err != nil || !raise {
			return err
		}
		return s.raiseFor(ctx, tx, env, inboxEvents[action], []string{id}, nil)
	})
	return out, err
}

// bulkCond is the WHERE condition of a bulk route: the scope's messages
// of every channel that f selects, among ids when given.
func (f *inboxFilter) bulkCond(q *queries, box inboxScope, ids []string) (string, []any) {
	where := []string{"environment_id = ?", "subscriber_id = ?", "context_keys = ?"}
	args := []any{box.env, box.subscriberID, box.context}
	if ids != nil {
		where, args = append(where, q.idsIn), append(args, idList(ids))
	}
	return f.more(q, where, args, nil)
}

// inboxMarkAll applies action to every message of the scope that f
// selects (of any channel and any state f does not name, as the reference
// platform's bulk updates), and ids when given; it returns how many changed.
func (s *Store) inboxMarkAll(ctx context.Context, box inboxScope, f *inboxFilter, ids []string, action inboxAction) (int64, error) {
	env := box.env
	cond, args := f.bulkCond(s.queries, box, ids)
	// Numbered parameters for the SET clause come first, so the WHERE
	// clause's plain ones are numbered after them.
	set := strings.NewReplacer("?1", "?", "?6", "?").Replace(inboxSets[action])
	now := sqldb.FormatTime(s.now())
	var setArgs []any
	for range strings.Count(set, "?") {
		setArgs = append(setArgs, now)
	}
	query, all := `UPDATE messages SET `+set+`, updated_at = ? WHERE `+cond, append(append(setArgs, now), args...)
	event := inboxEvents[action]
	if !s.wantsAny(ctx, env, event) {
		res, err := s.db.ExecContext(ctx, query, all...)
		if err != nil {
			return 0, fmt.Errorf("mark all %s: %w", action, err)
		}
		n, err := res.RowsAffected()
		if err == nil && n > 0 {
			err = s.pagesChanged(ctx, nil, env, box.subscriberID)
		}
		return n, err
	}
	var n int64
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		ids, err := returningIDs(ctx, tx, query, all...)
		n = int64(len(ids))
		if err != nil {
			return err
		}
		if err := s.pagesChanged(ctx, tx, env, box.subscriberID); err != nil {
			return err
		}
		return s.raiseFor(ctx, tx, env, event, ids, nil)
	})
	if err != nil {
		return 0, fmt.Errorf("mark all %s: %w", action, err)
	}
	return n, nil
}

// inboxMessage reads one of the scope's in-app messages.
func (s *Store) inboxMessage(ctx context.Context, box inboxScope, id string) (*inboxMessage, error) {
	m, err := scanInboxMessage(s.db.QueryRowContext(ctx, `SELECT `+inboxColumns+` FROM messages
		WHERE environment_id = ? AND subscriber_id = ? AND id = ? AND channel = 'in_app' AND context_keys = ?`,
		box.env, box.subscriberID, id, box.context))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, platform.ErrNotFound
	}
	return m, err
}

// inboxDeleteAll removes every message of the scope f selects, and ids
// when given, with the payloads no message is left to read (the sweeper
// only finds payloads through their messages).
func (s *Store) inboxDeleteAll(ctx context.Context, box inboxScope, f *inboxFilter, ids []string) (int64, error) {
	cond, args := f.bulkCond(s.queries, box, ids)
	var n int64
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		gone, _, err := s.deleteMessages(ctx, tx, cond, args...)
		n = int64(len(gone))
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("delete all: %w", err)
	}
	return n, nil
}

// inboxAct completes (status "done") or reverts ("pending") the action
// button of type button on one of the scope's messages; completing an
// unread message reads it, as the reference platform does. It returns
// errNoButton when the message has no such button.
func (s *Store) inboxAct(ctx context.Context, box inboxScope, id, button, status string) (*inboxMessage, error) {
	var out *inboxMessage
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		m, err := scanInboxMessage(tx.QueryRowContext(ctx, `SELECT `+inboxColumns+` FROM messages
			WHERE environment_id = ? AND subscriber_id = ? AND id = ? AND channel = 'in_app' AND context_keys = ?`,
			box.env, box.subscriberID, id, box.context))
		if err != nil {
			return err
		}
		if !hasButton(m.CTA, button) {
			return errNoButton
		}
		now := sqldb.FormatTime(s.now())
		_, err = tx.ExecContext(ctx, `UPDATE messages SET
			cta = `+s.queries.act+`,
			first_seen_date = CASE WHEN read = 0 THEN coalesce(first_seen_date, ?3) ELSE first_seen_date END,
			last_seen_date = CASE WHEN read = 0 THEN ?3 ELSE last_seen_date END,
			last_read_date = CASE WHEN read = 0 THEN ?3 ELSE last_read_date END,
			seen = CASE WHEN read = 0 THEN 1 ELSE seen END,
			read = 1, updated_at = ?3
			WHERE id = ?4`, status, button, now, id)
		if err != nil {
			return err
		}
		if err := s.pagesChanged(ctx, tx, box.env, box.subscriberID); err != nil {
			return err
		}
		out, err = scanInboxMessage(tx.QueryRowContext(ctx, `SELECT `+inboxColumns+` FROM messages WHERE id = ?`, id))
		return err
	})
	return out, err
}

var errNoButton = errors.New("no such action button")

// hasButton reports whether a stored cta has an action button of type t.
func hasButton(cta []byte, t string) bool {
	var c messageCTA
	if json.Unmarshal(cta, &c) != nil || c.Action == nil {
		return false
	}
	for _, b := range c.Action.Buttons {
		if b.Type == t {
			return true
		}
	}
	return false
}

// inboxDelete removes one of the scope's messages, with its payload when
// no other message reads it.
func (s *Store) inboxDelete(ctx context.Context, box inboxScope, id string) error {
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		gone, _, err := s.deleteMessages(ctx, tx, `environment_id = ? AND subscriber_id = ? AND id = ? AND context_keys = ?`,
			box.env, box.subscriberID, id, box.context)
		if err == nil && len(gone) == 0 {
			return platform.ErrNotFound
		}
		return err
	})
	if err != nil && !errors.Is(err, platform.ErrNotFound) {
		return fmt.Errorf("delete message %s: %w", id, err)
	}
	return err
}

// EndSnooze brings a snoozed message back when its snooze ends, as the
// reference platform does: unsnoozed, unread and delivered again now, so it
// is at the top of the inbox, and announced as a new notification. A
// message no longer snoozed until then (unsnoozed by hand, snoozed again
// for longer, deleted) is left alone. activity's job queue calls it.
func (s *Store) EndSnooze(ctx context.Context, environmentID, messageID string, until time.Time) error {
	now := sqldb.FormatTime(s.now())
	var subscriberID string
	raise := s.wantsAny(ctx, environmentID, EventUnsnoozed)
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, s.queries.endSnooze, now, environmentID, messageID, sqldb.FormatTime(until)).Scan(&subscriberID)
		if err == nil {
			err = s.pagesChanged(ctx, tx, environmentID, subscriberID)
		}
		if err != nil || !raise {
			return err
		}
		return s.raiseFor(ctx, tx, environmentID, EventUnsnoozed, []string{messageID}, nil)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("end snooze of %s: %w", messageID, err)
	}
	s.publish(LiveEvent{EnvironmentID: environmentID, SubscriberID: subscriberID, MessageID: messageID, Kind: LiveReceived})
	return nil
}
