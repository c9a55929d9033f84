package activity

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/workflows"
)

// chainStep is what every job of one workflow step carries, the same for
// every trigger while the workflow is unchanged. It is decided once per
// parse of the workflow (parsedWorkflow), so that a trigger only adds ids
// and group keys: building and marshalling each job's step snapshot was a
// tenth of a trigger's work before the write.
type chainStep struct {
	step     workflows.Step
	snapshot json.RawMessage // the job's copy of its step (docs/api.md, "Delivery")
	stored   string          // what a job's step column holds for snapshot (snapshots.go)
	values   json.RawMessage
	provider string
	digest   any    // the digest metadata, as stored; nil for other steps
	groupBy  string // the payload path digest or throttle jobs are grouped by
}

// chainSteps returns the chain of wf: the trigger step, then each step,
// each the parent of the next.
func chainSteps(wf *workflows.Workflow) []chainStep {
	steps := append([]workflows.Step{{ID: triggerStepID(wf.ID), StepID: stepTrigger, Type: stepTrigger, Name: "trigger"}}, wf.Steps...)
	chain := make([]chainStep, len(steps))
	for i, st := range steps {
		c := chainStep{step: st, values: json.RawMessage(`{}`), provider: chainProvider(st.Type)}
		if len(st.ControlValues) > 0 {
			c.values, _ = json.Marshal(st.ControlValues)
		}
		var parentStep any
		if i > 0 {
			parentStep = steps[i-1].ID
		}
		snapshot := map[string]any{
			"_id": st.ID, "_templateId": st.ID, "active": true, "name": firstNonEmpty(st.Name, st.StepID),
			"filters": []any{}, "_parentId": parentStep, "controlVariables": c.values,
		}
		switch st.Type {
		case stepDigest:
			var cfg digestConfig
			json.Unmarshal(c.values, &cfg)
			meta := cfg.metadata()
			b, _ := json.Marshal(meta)
			c.digest, c.groupBy = string(b), cfg.DigestKey
			snapshot["metadata"] = meta
		case stepThrottle:
			var cfg throttleConfig
			json.Unmarshal(c.values, &cfg)
			c.groupBy = cfg.ThrottleKey
		case stepDelay:
			var cfg delayConfig
			json.Unmarshal(c.values, &cfg)
			snapshot["metadata"] = cfg.metadata()
		}
		c.snapshot, _ = json.Marshal(snapshot)
		chain[i] = c
	}
	return chain
}

// triggerStepID is the _id of a workflow's trigger step, which the
// workflow itself does not store. It is derived from the workflow's _id,
// so every trigger job of a workflow names the same step, as the jobs of
// its other steps do, and their snapshots stay the same bytes.
func triggerStepID(workflowID string) string {
	return derivedID("herald/trigger-step/", workflowID)
}

// derivedID is the _id of what is derived from of rather than stored,
// named by kind. It has the ObjectId layout of every _id (docs/api.md,
// "Identifiers and timestamps"): of's own creation seconds, then a hash.
func derivedID(kind, of string) string {
	seconds := "00000000"
	if sqldb.IsID(of) {
		seconds = of[:8]
	}
	sum := sha256.Sum256([]byte(kind + of))
	return seconds + hex.EncodeToString(sum[:8])
}

// planChain decides a recipient's notification id and the jobs of its
// steps from the workflow's chain. The trigger job, at position 0, does
// nothing but release the first step, so the first step is due now, as the
// worker would leave it without a claim and a settlement per notification;
// the trigger job itself is derived from its notification and not planned
// or written (derived.go).
func (p *plan) planChain(r *recipient, now time.Time) {
	r.at = now
	r.nid = sqldb.NewIDAt(now)
	ts := sqldb.FormatTime(now)
	var payload map[string]any // read only when a step groups by it
	r.jobs = make([]jobRow, len(p.chain)-1)
	for i, c := range p.chain[1:] {
		row := jobRow{id: sqldb.NewIDAt(now), position: i + 1, step: c.step, snapshot: c.snapshot, stepColumn: c.stored, values: c.values,
			provider: c.provider, status: statusPending, digest: c.digest}
		if c.step.Type == stepDigest || c.step.Type == stepThrottle {
			if payload == nil {
				json.Unmarshal(p.payload, &payload)
			}
			row.groupKey = group(p.wf.ID, r.id, c.step.StepID, keyValue(payload, c.groupBy))
		}
		if i == 0 {
			row.status, row.runAt = statusQueued, ts
		}
		r.jobs[i] = row
	}
}
