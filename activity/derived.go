package activity

import (
	"encoding/json"
	"strconv"

	"github.com/herald-notify/herald/workflows"
)

// Two rows of every notification would be the same but for its ids and
// time, so they are derived when read rather than stored (docs/storage.md,
// "Derived rows"):
//
//   - its trigger job, which only releases the first step and is complete
//     as soon as it is written: position 0, the workflow's trigger step,
//     provider "service", its time the notification's;
//   - the "Step queued" detail of each job of its chain, written with the
//     notification: each job's first, in chain order, before every stored
//     one, its time the notification's, its provider the one the job's step
//     type starts with.
//
// A notification written before they were derived keeps them stored: a
// trigger job is derived only where none is stored at position 0, and a
// job's "Step queued" detail only where it has none stored.

// triggerJobID is the _id of the trigger job of notification nid.
func triggerJobID(nid string) string {
	return derivedID("herald/trigger-job/", nid)
}

// queuedDetailID is the _id of the "Step queued" detail of job jobID.
func queuedDetailID(jobID string) string {
	return derivedID("herald/step-queued/", jobID)
}

// detailID is the _id of the execution detail numbered seq of notification
// nid, where the detail, written with its notification, leaves it out.
func detailID(nid string, seq int) string {
	return derivedID("herald/detail/"+strconv.Itoa(seq)+"/", nid)
}

// queuedKind is the kind of the "Step queued" detail (detailKinds).
const queuedKind = 1

// triggerJob is the derived trigger job of the notification; step is its
// workflow's triggerSnapshot.
func triggerJob(nid, createdAt string, step, overrides, payload json.RawMessage, sh shape) jobResponse {
	return jobResponse{ID: triggerJobID(nid), Type: stepTrigger, Step: step,
		Overrides: overrides, Payload: payload, ProviderID: sh.provider(chainProvider(stepTrigger)),
		Status: statusCompleted, UpdatedAt: createdAt}
}

// queuedDetail is the derived "Step queued" detail of a job of the step
// type, written with its notification at createdAt.
func queuedDetail(jobID, stepType, createdAt string, sh shape) detailResponse {
	k := detailKinds[queuedKind-1]
	return detailResponse{ID: queuedDetailID(jobID), CreatedAt: createdAt, Status: k.status, Detail: k.detail,
		Source: k.source, ProviderID: sh.provider(chainProvider(stepType))}
}

// triggerSnapshot is the step snapshot of the trigger job of a workflow's
// notifications, as its chain plans it (chainSteps): the same bytes a
// stored trigger job's step names.
func triggerSnapshot(workflowID string) json.RawMessage {
	return chainSteps(&workflows.Workflow{ID: workflowID})[0].snapshot
}
