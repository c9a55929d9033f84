package workflows

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/templates"
)

// layoutEmail is a layout's email control values: its body, HTML or a
// block-editor document, holding the {{content}} slot.
type layoutEmail struct {
	Body       string `json:"body" validate:"required,max=262144"`
	EditorType string `json:"editorType" validate:"required,oneof=html block"`
}

// layoutCreateRequest is the body of POST /v2/layouts.
type layoutCreateRequest struct {
	LayoutID             string `json:"layoutId" validate:"required,max=128,identifier"`
	Name                 string `json:"name" validate:"required,max=256"`
	IsTranslationEnabled bool   `json:"isTranslationEnabled"`
	Source               string `json:"__source" validate:"omitempty,max=64"`
}

// layoutUpdateRequest is the body of PUT /v2/layouts/{layoutId}.
type layoutUpdateRequest struct {
	Name                 string                `json:"name" validate:"required,max=256"`
	IsTranslationEnabled bool                  `json:"isTranslationEnabled"`
	ControlValues        layoutControlsRequest `json:"controlValues"`
}

// layoutControlsRequest is a layout update's controlValues: absent keeps
// the layout's body; null, or an object without email, clears it.
type layoutControlsRequest struct {
	present bool
	Email   *layoutEmail `json:"email"`
}

// UnmarshalJSON notes that controlValues was given, null included.
func (c *layoutControlsRequest) UnmarshalJSON(b []byte) error {
	c.present = true
	if string(b) == "null" {
		return nil
	}
	if !strings.HasPrefix(string(b), "{") {
		// Offset 0 points at no field of the body: the decoder names
		// controlValues itself.
		return &json.UnmarshalTypeError{Value: "value", Type: reflect.TypeFor[map[string]any]()}
	}
	type plain layoutControlsRequest
	err := json.Unmarshal(b, (*plain)(c))
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		typeErr.Offset = 0 // an offset into b, not into the body
	}
	return err
}

// layoutDuplicateRequest is the body of POST /v2/layouts/{layoutId}/duplicate.
type layoutDuplicateRequest struct {
	Name                 string `json:"name" validate:"required,max=256"`
	LayoutID             string `json:"layoutId" validate:"omitempty,max=128,identifier"`
	IsTranslationEnabled bool   `json:"isTranslationEnabled"`
}

// layout is a stored layout.
type layout struct {
	ID, OrganizationID, EnvironmentID, LayoutID, Name string
	IsDefault, IsTranslationEnabled                   bool
	Email                                             *layoutEmail // nil when its control values were cleared
	UpdatedBy, CreatedAt, UpdatedAt                   string
}

// layoutResponse is a layout on the wire (docs/content.md, "Layouts").
type layoutResponse struct {
	ID                   string         `json:"_id"`
	LayoutID             string         `json:"layoutId"`
	Slug                 string         `json:"slug"`
	Name                 string         `json:"name"`
	IsDefault            bool           `json:"isDefault"`
	IsTranslationEnabled bool           `json:"isTranslationEnabled"`
	UpdatedAt            string         `json:"updatedAt"`
	UpdatedBy            *userRef       `json:"updatedBy"`
	CreatedAt            string         `json:"createdAt"`
	Origin               string         `json:"origin"`
	Type                 string         `json:"type"`
	Variables            schema         `json:"variables"`
	Controls             layoutControls `json:"controls"`
}

type layoutControls struct {
	DataSchema schema         `json:"dataSchema"`
	UISchema   uiSchema       `json:"uiSchema"`
	Values     map[string]any `json:"values"`
}

// layoutVariables is what a layout's Liquid may read: what every step
// sees, and content, the slot of the step's body.
func layoutVariables() schema {
	sub := subscriberSchema()
	return object(schema{
		"subscriber": sub, "actor": subscriberSchema(), "payload": anyObject(), "steps": anyObject(),
		"context": anyObject(), "tenant": anyObject(), "t": anyObject(), "content": str(),
	})
}

func toLayoutResponse(l *layout) layoutResponse {
	values := map[string]any{}
	if l.Email != nil {
		values["email"] = l.Email
	}
	res := layoutResponse{
		ID: l.ID, LayoutID: l.LayoutID, Slug: slugify(l.Name, "layout") + "_ly_" + l.ID, Name: l.Name,
		IsDefault: l.IsDefault, IsTranslationEnabled: l.IsTranslationEnabled,
		UpdatedAt: l.UpdatedAt, CreatedAt: l.CreatedAt, Origin: originCloud, Type: "REGULAR",
		Variables: layoutVariables(),
		Controls: layoutControls{
			DataSchema: object(schema{"email": object(schema{
				"body": str(), "editorType": enum([]string{"html", "block"}),
			})}),
			UISchema: uiSchema{Group: "LAYOUT", Properties: map[string]uiProperty{"email": ui("LAYOUT_EMAIL")}},
			Values:   values,
		},
	}
	if l.UpdatedBy != "" {
		res.UpdatedBy = &userRef{ID: l.UpdatedBy}
	}
	return res
}

// checkLayoutEmail checks what the tags cannot: the editor a layout's body
// is written in, its {{content}} slot and its Liquid (docs/content.md, "Layouts").
func checkLayoutEmail(e *layoutEmail) error {
	if e == nil {
		return nil
	}
	if err := templates.CheckLayout(e.Body, e.EditorType); err != nil {
		return platform.BadRequest("%s", err.Error())
	}
	src, _ := templates.LayoutSource(e.Body, e.EditorType)
	if err := templates.Parse(src); err != nil {
		return platform.InvalidField("controlValues.email.body", nil, "%v", err)
	}
	return nil
}

// layoutListOrder maps the orderBy values of GET /v2/layouts to columns.
var layoutListOrder = map[string]string{"createdAt": "created_at", "updatedAt": "updated_at", "name": "name"}

// handleLayoutCreate serves POST /v2/layouts.
func handleLayoutCreate(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[layoutCreateRequest](r)
		if err != nil {
			return err
		}
		l, err := store.createLayout(r.Context(), platform.TenantFrom(r.Context()), req)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusCreated, toLayoutResponse(l))
	})
}

// handleLayoutList serves GET /v2/layouts: a page by offset and limit, in
// the order asked, filtered by query on the name and layoutId.
func handleLayoutList(store *Store) http.Handler {
	type listResponse struct {
		Layouts    []layoutResponse `json:"layouts"`
		TotalCount int              `json:"totalCount"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		q := platform.NewQuery(r)
		f := listFilter{
			limit:   q.Int("limit", 50, 1, 100),
			offset:  q.Int("offset", 0, 0, 1_000_000),
			query:   q.String("query"),
			orderBy: layoutListOrder[q.Enum("orderBy", "createdAt", "createdAt", "updatedAt", "name")],
			desc:    strings.ToUpper(q.Enum("orderDirection", "DESC", "ASC", "DESC", "asc", "desc")) == "DESC",
		}
		if err := q.Err(); err != nil {
			return err
		}
		list, total, err := store.listLayouts(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, f)
		if err != nil {
			return err
		}
		out := listResponse{Layouts: make([]layoutResponse, 0, len(list)), TotalCount: total}
		for _, l := range list {
			out.Layouts = append(out.Layouts, toLayoutResponse(l))
		}
		return platform.JSON(w, http.StatusOK, out)
	})
}

// handleLayoutGet serves GET /v2/layouts/{layoutId} (layoutId or _id).
func handleLayoutGet(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		l, err := store.layout(r.Context(), store.db, platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("layoutId"))
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, toLayoutResponse(l))
	})
}

// handleLayoutUpdate serves PUT /v2/layouts/{layoutId}.
func handleLayoutUpdate(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[layoutUpdateRequest](r)
		if err != nil {
			return err
		}
		if err := checkLayoutEmail(req.ControlValues.Email); err != nil {
			return err
		}
		l, err := store.updateLayout(r.Context(), platform.TenantFrom(r.Context()), r.PathValue("layoutId"), req)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, toLayoutResponse(l))
	})
}

// handleLayoutDelete serves DELETE /v2/layouts/{layoutId}: neither the
// default layout nor one a workflow uses can go (409).
func handleLayoutDelete(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		if err := store.deleteLayout(r.Context(), platform.TenantFrom(r.Context()), r.PathValue("layoutId")); err != nil {
			return err
		}
		return platform.NoContent(w)
	})
}

// handleLayoutDuplicate serves POST /v2/layouts/{layoutId}/duplicate.
func handleLayoutDuplicate(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[layoutDuplicateRequest](r)
		if err != nil {
			return err
		}
		l, err := store.duplicateLayout(r.Context(), platform.TenantFrom(r.Context()), r.PathValue("layoutId"), req)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusCreated, toLayoutResponse(l))
	})
}

// handleLayoutUsage serves GET /v2/layouts/{layoutId}/usage: the workflows
// whose email steps name the layout.
func handleLayoutUsage(store *Store) http.Handler {
	type usage struct {
		Workflows []WorkflowRef `json:"workflows"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		env := platform.TenantFrom(ctx).EnvironmentID
		l, err := store.layout(ctx, store.db, env, r.PathValue("layoutId"))
		if err != nil {
			return err
		}
		refs, err := layoutUsers(ctx, store.db, env, l.LayoutID)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, usage{Workflows: refs})
	})
}

// WorkflowRef names a workflow: its name and workflowId.
type WorkflowRef struct {
	Name       string `json:"name"`
	WorkflowID string `json:"workflowId"`
}

// previewContent stands in for a step's body in a layout's preview.
const previewContent = `<p>The content of an email step goes here.</p>`

// handleLayoutPreview serves POST /v2/layouts/{layoutId}/preview: the
// layout rendered, with the body the request's controlValues give or its
// own, around a stand-in for a step's body, for the request's subscriber
// or an example one.
func handleLayoutPreview(store *Store) http.Handler {
	type previewSubscriber struct {
		ID        string         `json:"_id,omitempty"`
		FirstName *string        `json:"firstName,omitempty"`
		LastName  *string        `json:"lastName,omitempty"`
		Email     *string        `json:"email,omitempty"`
		Phone     *string        `json:"phone,omitempty"`
		Avatar    *string        `json:"avatar,omitempty"`
		Locale    *string        `json:"locale,omitempty"`
		Timezone  *string        `json:"timezone,omitempty"`
		Data      map[string]any `json:"data,omitempty"`
	}
	type previewPayload struct {
		Subscriber *previewSubscriber `json:"subscriber,omitempty"`
	}
	type previewRequest struct {
		ControlValues  layoutControlsRequest `json:"controlValues"`
		PreviewPayload previewPayload        `json:"previewPayload"`
	}
	type previewResult struct {
		Type    string `json:"type"`
		Preview struct {
			Body string `json:"body"`
		} `json:"preview"`
	}
	type previewResponse struct {
		PreviewPayloadExample previewPayload `json:"previewPayloadExample"`
		Schema                schema         `json:"schema"`
		Result                previewResult  `json:"result"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[previewRequest](r)
		if err != nil {
			return err
		}
		if err := checkLayoutEmail(req.ControlValues.Email); err != nil {
			return err
		}
		l, err := store.layout(r.Context(), store.db, platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("layoutId"))
		if err != nil {
			return err
		}
		email := l.Email
		if req.ControlValues.present {
			email = req.ControlValues.Email
		}
		sub := req.PreviewPayload.Subscriber
		if sub == nil {
			first, last, addr := "Ada", "Lovelace", "ada@example.com"
			sub = &previewSubscriber{FirstName: &first, LastName: &last, Email: &addr}
		}
		raw, _ := json.Marshal(sub)
		var fields map[string]any
		json.Unmarshal(raw, &fields)
		res := previewResponse{PreviewPayloadExample: previewPayload{Subscriber: sub}, Schema: layoutVariables()}
		res.Result.Type = "email"
		res.Result.Preview.Body = previewContent
		if email != nil {
			src, err := templates.LayoutSource(email.Body, email.EditorType)
			if err != nil {
				return platform.BadRequest("%s", err.Error())
			}
			vars := map[string]any{"subscriber": templates.Normalize(fields), "payload": map[string]any{}}
			templates.ShareBudget(vars)
			if res.Result.Preview.Body, err = templates.ApplyLayout(src, previewContent, vars, false); err != nil {
				return platform.InvalidField("controlValues.email.body", nil, "%v", err)
			}
		}
		return platform.JSON(w, http.StatusCreated, res)
	})
}
