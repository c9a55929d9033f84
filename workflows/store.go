package workflows

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// Store keeps workflows and notification groups in SQLite.
type Store struct {
	db     *sqldb.DB
	now    func() time.Time
	events EventSink // where workflow events are raised; nil raises none (UseEvents)

	// Triggers read their workflow on every request; it is cached until
	// the next workflow write through this store, or through another
	// process on the same database (peers). Keyed by environment + "\x00" +
	// workflowId.
	triggers sqldb.WriteCache[*Workflow]
	peers    sqldb.Invalidations
	// layouts are the email layouts deliveries read (EmailLayout), nil for
	// none, kept the same way; keyed by environment + "\x00" + layoutId.
	layouts sqldb.WriteCache[*EmailLayout]
	// translations are each workflow's and layout's translations by
	// locale (Translations), kept the same way.
	translations sqldb.WriteCache[*localeKeys]
	// inboxWorkflows are what inbox notifications show of their workflow
	// (InboxWorkflows), and severities each environment's severities
	// (WorkflowSeverities): every inbox read names its workflows, so they
	// are kept the same way; keyed by environment + "\x00" + _id, and by
	// environment.
	inboxWorkflows sqldb.WriteCache[InboxWorkflow]
	severities     sqldb.WriteCache[map[string]string]

	// lastTriggered is when each workflow's lastTriggeredAt was last
	// written, by _id (Triggered).
	triggeredMu   sync.Mutex
	lastTriggered map[string]time.Time

	integrations IntegrationChecker // for Workflows; nil checks none
}

// changed invalidates the trigger cache. Writers call it after their
// transaction ends, so an answer read before the write's commit carries an
// older generation and is not used again.
func (s *Store) changed() {
	s.triggers.Invalidate()
	s.layouts.Invalidate()
	s.translations.Invalidate()
	s.inboxWorkflows.Invalidate()
	s.severities.Invalidate()
}

// NewStore returns a Store on db.
func NewStore(db *sqldb.DB) *Store {
	s := &Store{db: db, now: time.Now, lastTriggered: map[string]time.Time{}}
	s.peers = db.Invalidations("herald_workflows", nil, s.changed)
	return s
}

// writing begins a workflow write in tx to the environments envIDs: it
// tells the other processes sharing the database to drop their cached
// workflows when tx commits, and takes turns with their writes to the same
// environments, which read a workflow or look for a free workflowId before
// writing. (On SQLite the one writer already serialises them.)
func (s *Store) writing(ctx context.Context, tx *sql.Tx, envIDs ...string) error {
	slices.Sort(envIDs) // one order, so two writers never wait on each other
	for _, id := range slices.Compact(envIDs) {
		if err := s.db.LockKey(ctx, tx, "workflows/"+id); err != nil {
			return err
		}
	}
	return s.peers.Changed(ctx, tx)
}

// triggeredEvery is how stale lastTriggeredAt may be. A burst of triggers
// writes it once in this time: it says when a workflow was last used, and a
// write per trigger would cost every trigger a statement on the one writer.
const triggeredEvery = time.Second

// maxTriggeredKept bounds the workflows whose last write Triggered keeps.
const maxTriggeredKept = 10000

// Triggered records that the workflow with _id id was triggered at at, as
// its lastTriggeredAt. The trigger cache is left alone: the trigger does
// not read the field.
func (s *Store) Triggered(ctx context.Context, environmentID, id string, at time.Time) error {
	s.triggeredMu.Lock()
	last, ok := s.lastTriggered[id]
	if ok && at.Sub(last) < triggeredEvery {
		s.triggeredMu.Unlock()
		return nil
	}
	if len(s.lastTriggered) >= maxTriggeredKept {
		clear(s.lastTriggered) // deleted workflows' entries go too; each costs one write at most
	}
	s.lastTriggered[id] = at
	s.triggeredMu.Unlock()
	// Only a later time: two writes a second apart may reach the writer in
	// either order.
	_, err := s.db.ExecContext(ctx, `UPDATE workflows SET last_triggered_at = ?1
		WHERE environment_id = ?2 AND id = ?3 AND (last_triggered_at IS NULL OR last_triggered_at < ?1)`,
		sqldb.FormatTime(at), environmentID, id)
	if err != nil {
		s.triggeredMu.Lock()
		delete(s.lastTriggered, id) // so the next trigger writes it
		s.triggeredMu.Unlock()
		return fmt.Errorf("record trigger of workflow %s: %w", id, err)
	}
	return nil
}

// defaultGroupName is the name of every environment's default notification group.
const defaultGroupName = "General"

// SeedEnvironment creates the environment's default notification group
// ("General") and its default layout when missing.
func (s *Store) SeedEnvironment(ctx context.Context, env platform.Environment) (err error) {
	defer s.changed()
	defer platform.Wrap(&err, "seed workflows of environment %s", env.ID)
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := s.defaultGroup(ctx, tx, env.OrganizationID, env.ID); err != nil {
			return err
		}
		return s.seedLayout(ctx, tx, env)
	})
}

// defaultGroup returns the environment's default group, creating it when missing.
func (s *Store) defaultGroup(ctx context.Context, tx *sql.Tx, orgID, envID string) (string, error) {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO notification_groups (id, organization_id, environment_id, name, created_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (environment_id, name) DO NOTHING`,
		sqldb.NewIDAt(s.now()), orgID, envID, defaultGroupName, sqldb.FormatTime(s.now()))
	if err != nil {
		return "", err
	}
	var id string
	err = tx.QueryRowContext(ctx, `SELECT id FROM notification_groups WHERE environment_id = ? AND name = ?`,
		envID, defaultGroupName).Scan(&id)
	return id, err
}

// querier is what both a pool and a transaction can read through.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// workflowColumns is shared by every query that reads whole workflows.
const workflowColumns = `id, organization_id, environment_id, workflow_id, notification_group_id, creator_id,
	name, description, tags, active, validate_payload, coalesce(payload_schema, ''), translation_enabled,
	severity, preferences, origin, steps, updated_by, coalesce(last_published_at, ''),
	coalesce(last_published_by, ''), coalesce(last_triggered_at, ''), deleted, coalesce(deleted_at, ''),
	coalesce(deleted_by, ''), created_at, updated_at`

type scanner interface{ Scan(dest ...any) error }

func scanWorkflow(row scanner) (*workflow, error) {
	var w workflow
	var tags, schema, prefs, steps string
	err := row.Scan(&w.ID, &w.OrganizationID, &w.EnvironmentID, &w.WorkflowID, &w.NotificationGroupID, &w.CreatorID,
		&w.Name, &w.Description, &tags, &w.Active, &w.ValidatePayload, &schema, &w.IsTranslationEnabled,
		&w.Severity, &prefs, &w.Origin, &steps, &w.UpdatedBy, &w.LastPublishedAt,
		&w.LastPublishedBy, &w.LastTriggeredAt, &w.Deleted, &w.DeletedAt,
		&w.DeletedBy, &w.CreatedAt, &w.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, platform.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if schema != "" {
		w.PayloadSchema = json.RawMessage(schema)
	}
	if err := json.Unmarshal([]byte(tags), &w.Tags); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(prefs), &w.Preferences); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(steps), &w.Steps); err != nil {
		return nil, err
	}
	return &w, nil
}

// find returns the live workflow of the environment whose workflowId or _id
// is key, or platform.ErrNotFound. A workflowId match wins over an _id match.
func find(ctx context.Context, q querier, envID, key string) (*workflow, error) {
	return scanWorkflow(q.QueryRowContext(ctx, `
		SELECT `+workflowColumns+` FROM workflows
		WHERE environment_id = ? AND deleted = 0 AND (workflow_id = ? OR id = ?)
		ORDER BY workflow_id = ? DESC LIMIT 1`, envID, key, key, key))
}

// listFilter selects a page of GET /v2/workflows.
type listFilter struct {
	offset, limit int
	query         string
	tags          []string
	orderBy       string // a column name, checked by the handler
	desc          bool
}

// list returns a page of the environment's live workflows and the count of all matches.
func (s *Store) list(ctx context.Context, envID string, f listFilter) (out []*workflow, total int, err error) {
	defer platform.Wrap(&err, "list workflows")
	// The count and the page read one snapshot.
	tx, err := s.db.BeginSnapshot(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	where := []string{"environment_id = ?", "deleted = 0"}
	args := []any{envID}
	d := s.db.Dialect()
	if f.query != "" {
		where = append(where, "("+d.Instr("lower(name)", "lower(?)")+" > 0 OR "+d.Instr("lower(workflow_id)", "lower(?)")+" > 0)")
		args = append(args, f.query, f.query)
	}
	if len(f.tags) > 0 {
		where = append(where, "EXISTS (SELECT 1 FROM "+d.JSONTexts("tags", "t")+" WHERE value IN ("+sqldb.Placeholders(len(f.tags))+"))")
		for _, t := range f.tags {
			args = append(args, t)
		}
	}
	cond := strings.Join(where, " AND ")
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM workflows WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	dir := "ASC"
	if f.desc {
		dir = "DESC"
	}
	rows, err := tx.QueryContext(ctx, `
		SELECT `+workflowColumns+` FROM workflows WHERE `+cond+`
		ORDER BY `+f.orderBy+` `+dir+`, id `+dir+` LIMIT ? OFFSET ?`, append(args, f.limit, f.offset)...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		w, err := scanWorkflow(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, w)
	}
	return out, total, rows.Err()
}

// insert stores a new workflow.
func insert(ctx context.Context, tx *sql.Tx, w *workflow) error {
	tags, prefs, steps, err := encodeJSON(w)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `
		INSERT INTO workflows (id, organization_id, environment_id, workflow_id, notification_group_id, creator_id,
			name, description, tags, active, validate_payload, payload_schema, translation_enabled, severity,
			preferences, origin, steps, updated_by, last_published_at, last_published_by, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULLIF(?, ''), NULLIF(?, ''), ?, ?)`,
		w.ID, w.OrganizationID, w.EnvironmentID, w.WorkflowID, w.NotificationGroupID, w.CreatorID,
		w.Name, w.Description, tags, sqldb.Flag(w.Active), sqldb.Flag(w.ValidatePayload), nullJSON(w.PayloadSchema), sqldb.Flag(w.IsTranslationEnabled),
		w.Severity, prefs, w.Origin, steps, w.UpdatedBy, w.LastPublishedAt, w.LastPublishedBy, w.CreatedAt, w.UpdatedAt)
	return conflictOn(err, w.WorkflowID)
}

// update rewrites a workflow's editable fields.
func update(ctx context.Context, tx *sql.Tx, w *workflow) error {
	tags, prefs, steps, err := encodeJSON(w)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `
		UPDATE workflows SET workflow_id = ?, notification_group_id = ?, name = ?, description = ?, tags = ?, active = ?,
			validate_payload = ?, payload_schema = ?, translation_enabled = ?, severity = ?, preferences = ?, steps = ?,
			updated_by = ?, last_published_at = NULLIF(?, ''), last_published_by = NULLIF(?, ''), updated_at = ?
		WHERE id = ?`,
		w.WorkflowID, w.NotificationGroupID, w.Name, w.Description, tags, sqldb.Flag(w.Active), sqldb.Flag(w.ValidatePayload),
		nullJSON(w.PayloadSchema), sqldb.Flag(w.IsTranslationEnabled), w.Severity, prefs, steps, w.UpdatedBy,
		w.LastPublishedAt, w.LastPublishedBy, w.UpdatedAt, w.ID)
	return conflictOn(err, w.WorkflowID)
}

func conflictOn(err error, workflowID string) error {
	if sqldb.IsUniqueViolation(err) {
		return platform.Conflict("Workflow with workflowId %q already exists", workflowID)
	}
	return err
}

func nullJSON(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}

func encodeJSON(w *workflow) (tags, prefs, steps string, err error) {
	t := w.Tags
	if t == nil {
		t = []string{}
	}
	st := w.Steps
	if st == nil {
		st = []Step{}
	}
	var b [3][]byte
	for i, v := range []any{t, w.Preferences, st} {
		if b[i], err = json.Marshal(v); err != nil {
			return "", "", "", err
		}
	}
	return string(b[0]), string(b[1]), string(b[2]), nil
}

// softDelete marks a workflow deleted, keeping the row for message summaries.
func softDelete(ctx context.Context, tx *sql.Tx, id, userID, ts string) error {
	_, err := tx.ExecContext(ctx, `
		UPDATE workflows SET deleted = 1, deleted_at = ?, deleted_by = ?, updated_at = ? WHERE id = ?`,
		ts, userID, ts, id)
	return err
}

// identifierTaken reports whether a live workflow of the environment has workflowId.
func identifierTaken(ctx context.Context, tx *sql.Tx, envID, workflowID, exceptID string) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, `
		SELECT count(*) FROM workflows WHERE environment_id = ? AND workflow_id = ? AND deleted = 0 AND id != ?`,
		envID, workflowID, exceptID).Scan(&n)
	return n > 0, err
}

// groupsByID returns notification groups keyed by id.
func (s *Store) groupsByID(ctx context.Context, envID string) (map[string]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name FROM notification_groups WHERE environment_id = ?`, envID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, err
		}
		out[id] = name
	}
	return out, rows.Err()
}
