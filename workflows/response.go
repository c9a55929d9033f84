package workflows

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// toResponse builds the response (docs/api.md, "Workflows") of w, computing
// every step's variables and issues. lookup may be nil (no integration
// check).
func toResponse(ctx context.Context, w *workflow, lookup *integrationLookup) (workflowResponse, error) {
	res := workflowResponse{
		ID:                   w.ID,
		WorkflowID:           w.WorkflowID,
		Slug:                 slugify(w.Name, "workflow") + "_wf_" + w.ID,
		Name:                 w.Name,
		Description:          w.Description,
		Tags:                 w.Tags,
		Active:               w.Active,
		ValidatePayload:      w.ValidatePayload,
		PayloadSchema:        w.PayloadSchema,
		IsTranslationEnabled: w.IsTranslationEnabled,
		CreatedAt:            w.CreatedAt,
		UpdatedAt:            w.UpdatedAt,
		UpdatedBy:            &userRef{ID: w.UpdatedBy},
		LastPublishedAt:      optional(w.LastPublishedAt),
		Steps:                make([]stepResponse, 0, len(w.Steps)),
		Origin:               w.Origin,
		Preferences:          w.Preferences,
		LastTriggeredAt:      optional(w.LastTriggeredAt),
		PayloadExample:       payloadExample(w.PayloadSchema),
		Severity:             w.Severity,
		StepTypeOverviews:    []string{},
	}
	if res.Tags == nil {
		res.Tags = []string{}
	}
	if len(res.PayloadSchema) == 0 {
		res.PayloadSchema = json.RawMessage("null")
	}
	if w.LastPublishedBy != "" {
		res.LastPublishedBy = &userRef{ID: w.LastPublishedBy}
	}
	controlIssues := false
	for i, st := range w.Steps {
		values := st.ControlValues
		if values == nil {
			values = map[string]any{}
		}
		vars := variablesFor(w, i)
		sr := stepResponse{
			Controls: controlsResponse{
				DataSchema: dataSchema(st.Type),
				UISchema:   uiSchemaFor(st.Type),
				Values:     values,
			},
			ControlValues:      values,
			Variables:          vars,
			StepID:             st.StepID,
			ID:                 st.ID,
			Name:               st.Name,
			Slug:               slugify(st.Name, "step") + "_st_" + st.ID,
			WorkflowID:         w.WorkflowID,
			WorkflowDatabaseID: w.ID,
			Type:               st.Type,
			Origin:             w.Origin,
		}
		issues := stepIssues{Controls: contentIssues(w, i, vars)}
		if slices.Contains(channels, st.Type) {
			missing, err := lookup.missing(ctx, st.Type)
			if err != nil {
				return res, err
			}
			if missing {
				issues.Integration = map[string][]runtimeIssue{st.Type: {{
					IssueType: issueMissingIntegration,
					Message:   "There is no active " + st.Type + " integration in this environment",
				}}}
			}
		}
		if issues.Controls != nil || issues.Integration != nil {
			sr.Issues = &issues
		}
		controlIssues = controlIssues || issues.Controls != nil
		res.Steps = append(res.Steps, sr)
		if !slices.Contains(res.StepTypeOverviews, st.Type) {
			res.StepTypeOverviews = append(res.StepTypeOverviews, st.Type)
		}
	}
	res.Status = workflowStatus(w.Active, controlIssues)
	return res, nil
}

// workflowStatus follows the reference's computeWorkflowStatus: inactive
// wins, and only control issues are an ERROR. A missing integration is listed
// on its step but does not stop a trigger (that step fails when it runs), so
// it leaves the workflow ACTIVE.
func workflowStatus(active, controlIssues bool) string {
	switch {
	case !active:
		return "INACTIVE"
	case controlIssues:
		return "ERROR"
	}
	return "ACTIVE"
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// payloadExample builds an example payload from the payload schema: each
// property's default, else its first enum value or example, else a value of
// its type. Null when the workflow has no schema, or when the schema does not
// describe an object: the "Workflows" section of docs/api.md types
// payloadExample as object or null.
func payloadExample(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	var s any
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	m, ok := s.(map[string]any)
	if !ok {
		return nil
	}
	if ex, ok := exampleOf(m, 0).(map[string]any); ok {
		return ex
	}
	return nil
}

func exampleOf(s map[string]any, depth int) any {
	if v, ok := s["default"]; ok {
		return v
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if e, ok := s["examples"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	types := schemaTypes(s)
	props, hasProps := s["properties"].(map[string]any)
	switch {
	case hasProps || slices.Contains(types, "object") || len(types) == 0:
		out := map[string]any{}
		if depth > 8 {
			return out
		}
		for k, p := range props {
			if pm, ok := p.(map[string]any); ok {
				out[k] = exampleOf(pm, depth+1)
			}
		}
		return out
	case slices.Contains(types, "array"):
		return []any{}
	case slices.Contains(types, "string"):
		return ""
	case slices.Contains(types, "number"), slices.Contains(types, "integer"):
		return 0
	case slices.Contains(types, "boolean"):
		return false
	}
	return nil
}

// slugify lowers s to ascii letters and digits joined by single hyphens,
// which always matches the identifier pattern; fallback stands in when
// nothing is left (a name of only symbols, say).
func slugify(s, fallback string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range norm.NFKD.String(s) {
		switch {
		case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(unicode.ToLower(r))
		case unicode.Is(unicode.Mn, r):
			// a combining accent left by NFKD: drop it, keep the letter
		default:
			hyphen = true
		}
	}
	out := b.String()
	if len(out) > 100 { // leaves room for a suffix within the 128-character limit
		out = strings.TrimRight(out[:100], "-")
	}
	if out == "" {
		return fallback
	}
	return out
}

// shortSuffix returns 6 random lowercase letters and digits, appended to a
// generated identifier that is already taken.
func shortSuffix() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 6)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

func itoa(i int) string { return strconv.Itoa(i) }
