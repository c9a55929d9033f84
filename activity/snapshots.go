package activity

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// What every delivery of a workflow copies from it (each job's step
// snapshot, the notification's template summary and preferences) is the
// same bytes for every trigger while the workflow is unchanged
// (parsedWorkflow): stored in each row, it was a fifth of a notification's
// bytes. Each such value is stored once, in workflow_snapshots, and the
// column holds its key instead: "#" and a hash of the value, which no JSON
// document starts with. Rows written before keep the value in the column,
// and read the same (snapshotColumn).
//
// A snapshot is never deleted: there is one per version of a workflow and
// per step of it, and a notification of any age may name it.

const insertSnapshotSQL = `INSERT INTO workflow_snapshots (id, body) VALUES (?, ?) ON CONFLICT (id) DO NOTHING`

// minSnapshot is the size from which a value is stored as a snapshot: a
// smaller one costs less in its column than a key.
const minSnapshot = 64

// workflowSnapshot is a value stored once under key.
type workflowSnapshot struct {
	key  string
	body json.RawMessage
}

// snapshotOf answers body's snapshot; its key is "" when body is small
// enough to stay in its column.
func snapshotOf(body json.RawMessage) workflowSnapshot {
	if len(body) < minSnapshot {
		return workflowSnapshot{body: body}
	}
	sum := sha256.Sum256(body)
	return workflowSnapshot{key: "#" + hex.EncodeToString(sum[:12]), body: body}
}

// column is what a row's column holds for the snapshot.
func (s workflowSnapshot) column() string {
	if s.key != "" {
		return s.key
	}
	return string(s.body)
}

// snapshotColumn is an SQL expression reading col, a column that may hold
// a snapshot's key: the snapshot's value, or otherwise value, the
// expression reading what the column holds.
func snapshotColumn(col, value string) string {
	return `(CASE WHEN ` + col + ` LIKE '#%' THEN (SELECT ws.body FROM workflow_snapshots ws WHERE ws.id = ` + col + `) ELSE ` + value + ` END)`
}

// storeSnapshots writes the snapshots r's rows name, those not known to be
// committed already: a trigger writes none once the first with its
// workflow has committed.
func (s *Store) storeSnapshots(ctx context.Context, tx *sql.Tx, r *insertRequest) error {
	for _, p := range r.plans {
		for _, snap := range p.snapshots {
			if _, ok := s.snapshots.Load(snap.key); ok || snap.key == "" {
				continue
			}
			if err := s.db.WriteLater(ctx, tx, insertSnapshotSQL, snap.key, string(snap.body)); err != nil {
				return fmt.Errorf("store workflow snapshot: %w", err)
			}
		}
	}
	return nil
}

// snapshotsCommitted records that r's snapshots are in the database, once
// the transaction that wrote them has committed.
func (s *Store) snapshotsCommitted(r *insertRequest) {
	for _, p := range r.plans {
		for _, snap := range p.snapshots {
			s.snapshots.Store(snap.key, struct{}{})
		}
	}
}

// snapshotColumns decides parsed's snapshots: each step's, the template
// summary's and the preferences', and what the columns that name them
// hold.
func (parsed *parsedWorkflow) snapshotColumns() {
	parsed.snapshots = nil
	add := func(body json.RawMessage) string {
		snap := snapshotOf(body)
		if snap.key != "" {
			parsed.snapshots = append(parsed.snapshots, snap)
		}
		return snap.column()
	}
	for i := 1; i < len(parsed.chain); i++ { // the trigger job at 0 is not stored
		parsed.chain[i].stored = add(parsed.chain[i].snapshot)
	}
	parsed.templateColumn = add(parsed.template)
	parsed.preferencesColumn = add(parsed.preferences)
}
