package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strconv"

	"github.com/herald-notify/herald/platform"
)

// This file compares two states of a workflow: two of its versions, or
// the workflow and what a sync would make of its copy in another
// environment (docs/editor.md, "Versions").

// fieldChange is one difference: the JSON path of the value, and the value
// before and after (null when there was or will be none).
type fieldChange struct {
	Path string `json:"path"`
	Kind string `json:"kind"` // added, removed or changed
	From any    `json:"from"`
	To   any    `json:"to"`
}

// diffable is a snapshot as diff reads it: steps keyed by stepId without
// their _ids, which differ between environments and say nothing of
// content, and their order as a list of stepIds.
func diffable(s *snapshot) map[string]any {
	if s == nil {
		return map[string]any{}
	}
	var m map[string]any
	b, _ := json.Marshal(s)
	json.Unmarshal(b, &m)
	steps := map[string]any{}
	order := []any{}
	for _, st := range s.Steps {
		steps[st.StepID] = map[string]any{"name": st.Name, "type": st.Type, "controlValues": jsonValue(st.ControlValues)}
		order = append(order, st.StepID)
	}
	m["steps"], m["stepOrder"] = steps, order
	return m
}

func jsonValue(v any) any {
	var out any
	b, _ := json.Marshal(v)
	json.Unmarshal(b, &out)
	return out
}

// diff lists what changes from a to b (either may be nil: nothing).
func diff(a, b *snapshot) []fieldChange {
	out := []fieldChange{}
	diffValues("", diffable(a), diffable(b), &out)
	return out
}

func diffValues(path string, a, b any, out *[]fieldChange) {
	am, aObj := a.(map[string]any)
	bm, bObj := b.(map[string]any)
	if aObj && bObj {
		var keys []string
		for k := range am {
			keys = append(keys, k)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			av, inA := am[k]
			bv, inB := bm[k]
			switch {
			case !inA:
				*out = append(*out, fieldChange{Path: p, Kind: "added", To: bv})
			case !inB:
				*out = append(*out, fieldChange{Path: p, Kind: "removed", From: av})
			default:
				diffValues(p, av, bv, out)
			}
		}
		return
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, fieldChange{Path: path, Kind: "changed", From: a, To: b})
	}
}

// handleVersionList serves GET /v2/workflows/{workflowId}/versions: newest
// first, paged by limit and offset.
func handleVersionList(store *Store) http.Handler {
	type listResponse struct {
		Versions   []versionResponse `json:"versions"`
		TotalCount int               `json:"totalCount"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		q := platform.NewQuery(r)
		limit, offset := q.Int("limit", 20, 1, 100), q.Int("offset", 0, 0, 1_000_000)
		if err := q.Err(); err != nil {
			return err
		}
		list, total, err := store.versions(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("workflowId"), limit, offset)
		if err != nil {
			return err
		}
		out := listResponse{Versions: make([]versionResponse, 0, len(list)), TotalCount: total}
		for _, v := range list {
			out.Versions = append(out.Versions, toVersionResponse(v, false))
		}
		return platform.JSON(w, http.StatusOK, out)
	})
}

// handleVersionGet serves GET /v2/workflows/{workflowId}/versions/{version}:
// the version with the workflow as it was.
func handleVersionGet(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		n, err := versionNumber(r, "version")
		if err != nil {
			return err
		}
		v, err := store.version(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("workflowId"), n)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, toVersionResponse(v, true))
	})
}

// handleVersionDiff serves GET
// /v2/workflows/{workflowId}/versions/{version}/diff?from=N: what changed
// from version N (the one before by default; 0 for nothing) to this one.
func handleVersionDiff(store *Store) http.Handler {
	type diffResponse struct {
		From    int           `json:"from"`
		To      int           `json:"to"`
		Changes []fieldChange `json:"changes"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		n, err := versionNumber(r, "version")
		if err != nil {
			return err
		}
		q := platform.NewQuery(r)
		from := q.Int("from", n-1, 0, 1<<31-1)
		if err := q.Err(); err != nil {
			return err
		}
		ctx, envID, key := r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("workflowId")
		to, err := store.version(ctx, envID, key, n)
		if err != nil {
			return err
		}
		var before *snapshot
		if from > 0 {
			v, err := store.version(ctx, envID, key, from)
			if err != nil {
				return platform.InvalidField("from", strconv.Itoa(from), "no such version")
			}
			before = &v.Snapshot
		}
		return platform.JSON(w, http.StatusOK, diffResponse{From: from, To: n, Changes: diff(before, &to.Snapshot)})
	})
}

// restoreRequest is the body of POST
// /v2/workflows/{workflowId}/versions/{version}/restore.
type restoreRequest struct {
	VersionNote string `json:"versionNote" validate:"max=500"`
}

// handleVersionRestore serves POST
// /v2/workflows/{workflowId}/versions/{version}/restore: the workflow
// becomes what it was in that version, saved as a new version.
func handleVersionRestore(store *Store, integrations IntegrationChecker) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := decodeOptional[restoreRequest](r)
		if err != nil {
			return err
		}
		n, err := versionNumber(r, "version")
		if err != nil {
			return err
		}
		wf, err := store.restore(r.Context(), platform.TenantFrom(r.Context()), r.PathValue("workflowId"), n, req.VersionNote)
		if err != nil {
			return err
		}
		return respond(w, r, http.StatusOK, wf, integrations)
	})
}

// handleSyncDiff serves POST /v2/workflows/{workflowId}/sync/diff: what
// PUT /v2/workflows/{workflowId}/sync with the same body would change in
// the target environment, without changing it.
func handleSyncDiff(store *Store) http.Handler {
	type syncDiffResponse struct {
		TargetEnvironmentID string        `json:"targetEnvironmentId"`
		Exists              bool          `json:"exists"`
		Changes             []fieldChange `json:"changes"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[syncRequest](r)
		if err != nil {
			return err
		}
		src, tgt, err := store.syncPair(r.Context(), platform.TenantFrom(r.Context()), r.PathValue("workflowId"), req.TargetEnvironmentID)
		if err != nil {
			return err
		}
		out := syncDiffResponse{TargetEnvironmentID: req.TargetEnvironmentID, Exists: tgt != nil}
		after := snapshotOf(src)
		if tgt != nil {
			before := snapshotOf(tgt)
			out.Changes = diff(&before, &after)
		} else {
			out.Changes = diff(nil, &after)
		}
		return platform.JSON(w, http.StatusOK, out)
	})
}

// syncPair reads the workflow named by key and its copy in the target
// environment (nil when there is none yet), checking the target as a sync
// does.
func (s *Store) syncPair(ctx context.Context, tenant platform.Tenant, key, targetID string) (src, tgt *workflow, err error) {
	if targetID == tenant.EnvironmentID {
		return nil, nil, platform.InvalidField("targetEnvironmentId", targetID, "Cannot sync workflow to the same environment")
	}
	target, err := platform.FindEnvironment(ctx, s.db, tenant.OrganizationID, targetID)
	if errors.Is(err, platform.ErrNotFound) {
		return nil, nil, platform.NotFound("Environment %s not found", targetID)
	}
	if err != nil {
		return nil, nil, err
	}
	if src, err = s.get(ctx, tenant.EnvironmentID, key); err != nil {
		return nil, nil, err
	}
	tgt, err = find(ctx, s.db, target.ID, src.WorkflowID)
	if errors.Is(err, platform.ErrNotFound) {
		return src, nil, nil
	}
	return src, tgt, err
}
