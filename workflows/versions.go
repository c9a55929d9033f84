package workflows

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// This file keeps a workflow's versions (docs/editor.md, "Versions"):
// every save — create, PUT, PATCH, a sync into the environment, a
// duplicate, a restore — writes the workflow as it now is, with who saved
// it, when and an optional note, so any earlier state can be read,
// compared and restored.

// snapshot is the editable state of a workflow: what a version keeps.
type snapshot struct {
	Name                 string          `json:"name"`
	WorkflowID           string          `json:"workflowId"`
	Description          string          `json:"description"`
	Tags                 []string        `json:"tags"`
	Active               bool            `json:"active"`
	ValidatePayload      bool            `json:"validatePayload"`
	PayloadSchema        json.RawMessage `json:"payloadSchema"`
	IsTranslationEnabled bool            `json:"isTranslationEnabled"`
	Severity             string          `json:"severity"`
	Preferences          Preferences     `json:"preferences"`
	Steps                []Step          `json:"steps"`
}

func snapshotOf(w *workflow) snapshot {
	s := snapshot{
		Name: w.Name, WorkflowID: w.WorkflowID, Description: w.Description, Tags: w.Tags, Active: w.Active,
		ValidatePayload: w.ValidatePayload, PayloadSchema: w.PayloadSchema, IsTranslationEnabled: w.IsTranslationEnabled,
		Severity: w.Severity, Preferences: w.Preferences, Steps: w.Steps,
	}
	if s.Tags == nil {
		s.Tags = []string{}
	}
	if s.Steps == nil {
		s.Steps = []Step{}
	}
	if len(s.PayloadSchema) == 0 {
		s.PayloadSchema = json.RawMessage("null")
	}
	return s
}

// version is one stored version.
type version struct {
	ID, WorkflowID, Note, CreatedBy, CreatedAt string
	Number                                     int
	Snapshot                                   snapshot
}

// versionResponse is a version on the wire; the list leaves workflow out.
type versionResponse struct {
	ID                 string    `json:"_id"`
	WorkflowDatabaseID string    `json:"_workflowId"`
	Version            int       `json:"version"`
	Note               string    `json:"note"`
	CreatedBy          userRef   `json:"createdBy"`
	CreatedAt          string    `json:"createdAt"`
	Workflow           *snapshot `json:"workflow,omitempty"`
}

func toVersionResponse(v version, full bool) versionResponse {
	res := versionResponse{ID: v.ID, WorkflowDatabaseID: v.WorkflowID, Version: v.Number, Note: v.Note,
		CreatedBy: userRef{ID: v.CreatedBy}, CreatedAt: v.CreatedAt}
	if full {
		s := v.Snapshot
		res.Workflow = &s
	}
	return res
}

// maxNote is the longest note a save may carry.
const maxNote = 500

// recordVersion writes w, as saved by userID at ts, as its next version.
// A workflow saved before versions were kept has none: its state before
// this save (prev, when known) is kept first, so no save loses the
// previous state.
func recordVersion(ctx context.Context, tx *sql.Tx, w, prev *workflow, userID, note, ts string) error {
	var last int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(version), 0) FROM workflow_versions WHERE workflow_id = ?`,
		w.ID).Scan(&last); err != nil {
		return err
	}
	if last == 0 && prev != nil {
		if err := insertVersion(ctx, tx, prev, 1, prev.UpdatedBy, "", prev.UpdatedAt); err != nil {
			return err
		}
		last = 1
	}
	return insertVersion(ctx, tx, w, last+1, userID, note, ts)
}

func insertVersion(ctx context.Context, tx *sql.Tx, w *workflow, n int, userID, note, ts string) error {
	snap, err := json.Marshal(snapshotOf(w))
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO workflow_versions
		(id, environment_id, workflow_id, version, snapshot, note, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		sqldb.NewID(), w.EnvironmentID, w.ID, n, string(snap), note, userID, ts)
	return err
}

const versionColumns = `id, workflow_id, version, snapshot, note, created_by, created_at`

func scanVersion(row scanner) (version, error) {
	var v version
	var snap string
	err := row.Scan(&v.ID, &v.WorkflowID, &v.Number, &snap, &v.Note, &v.CreatedBy, &v.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return v, platform.ErrNotFound
	}
	if err != nil {
		return v, err
	}
	return v, json.Unmarshal([]byte(snap), &v.Snapshot)
}

// versions returns a page of the versions of the workflow named by key,
// newest first, and how many it has.
func (s *Store) versions(ctx context.Context, envID, key string, limit, offset int) (out []version, total int, err error) {
	defer platform.Wrap(&err, "versions of workflow %s", key)
	tx, err := s.db.BeginSnapshot(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	w, err := find(ctx, tx, envID, key)
	if err != nil {
		return nil, 0, notFound(err, key)
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM workflow_versions WHERE workflow_id = ?`, w.ID).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+versionColumns+` FROM workflow_versions
		WHERE workflow_id = ? ORDER BY version DESC LIMIT ? OFFSET ?`, w.ID, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		v, err := scanVersion(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, v)
	}
	return out, total, rows.Err()
}

// version returns version n of the workflow named by key.
func (s *Store) version(ctx context.Context, envID, key string, n int) (v version, err error) {
	w, err := find(ctx, s.db, envID, key)
	if err != nil {
		return v, notFound(err, key)
	}
	v, err = scanVersion(s.db.QueryRowContext(ctx, `SELECT `+versionColumns+` FROM workflow_versions
		WHERE workflow_id = ? AND version = ?`, w.ID, n))
	if errors.Is(err, platform.ErrNotFound) {
		return v, platform.NotFound("Version %d of workflow %s not found", n, key)
	}
	return v, err
}

// restore makes version n of the workflow named by key its current
// state, as a new version: steps keep the _ids they had in it.
func (s *Store) restore(ctx context.Context, tenant platform.Tenant, key string, n int, note string) (*workflow, error) {
	v, err := s.version(ctx, tenant.EnvironmentID, key, n)
	if err != nil {
		return nil, err
	}
	req, err := requestOf(&workflow{
		Name: v.Snapshot.Name, WorkflowID: v.Snapshot.WorkflowID, Description: v.Snapshot.Description,
		Tags: v.Snapshot.Tags, Active: v.Snapshot.Active, ValidatePayload: v.Snapshot.ValidatePayload,
		PayloadSchema: nullIfNull(v.Snapshot.PayloadSchema), IsTranslationEnabled: v.Snapshot.IsTranslationEnabled,
		Severity: v.Snapshot.Severity, Steps: v.Snapshot.Steps,
	})
	if err != nil {
		return nil, err
	}
	if note == "" {
		note = fmt.Sprintf("Restored version %d", n)
	}
	return s.change(ctx, tenant, key, note, func(tx *sql.Tx, w *workflow) (err error) {
		if err := apply(w, req, false); err != nil {
			return err
		}
		w.Preferences = v.Snapshot.Preferences
		if req.WorkflowID != w.WorkflowID {
			w.WorkflowID, err = chooseIdentifier(ctx, tx, tenant.EnvironmentID, req.WorkflowID, req.Name, w.ID)
		}
		return err
	})
}

func nullIfNull(raw json.RawMessage) json.RawMessage {
	if string(raw) == "null" {
		return nil
	}
	return raw
}

// versionNumber reads the {version} of a path: a version number from 1.
func versionNumber(r *http.Request, name string) (int, error) {
	n, err := strconv.Atoi(r.PathValue(name))
	if err != nil || n < 1 {
		return 0, platform.NotFound("Version %s not found", r.PathValue(name))
	}
	return n, nil
}
