package workflows

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/templates"
)

// LayoutSummary is a layout as the console lists it.
type LayoutSummary struct {
	LayoutID, Name, UpdatedAt     string
	IsDefault, TranslationEnabled bool
	UsedBy                        []WorkflowRef
}

// maxConsoleLayouts bounds the layouts the console lists: an environment
// keeps a handful.
const maxConsoleLayouts = 100

// LayoutSummaries lists the environment's layouts, the default first, each
// with the workflows that use it.
func (s *Store) LayoutSummaries(ctx context.Context, envID string) (out []LayoutSummary, err error) {
	defer platform.Wrap(&err, "layout summaries")
	list, _, err := s.listLayouts(ctx, envID, listFilter{limit: maxConsoleLayouts, orderBy: "name"})
	if err != nil {
		return nil, err
	}
	for _, l := range list {
		users, err := layoutUsers(ctx, s.db, envID, l.LayoutID)
		if err != nil {
			return nil, err
		}
		out = append(out, LayoutSummary{LayoutID: l.LayoutID, Name: l.Name, UpdatedAt: l.UpdatedAt,
			IsDefault: l.IsDefault, TranslationEnabled: l.IsTranslationEnabled, UsedBy: users})
	}
	slices.SortStableFunc(out, func(a, b LayoutSummary) int {
		switch {
		case a.IsDefault == b.IsDefault:
			return 0
		case a.IsDefault:
			return -1
		}
		return 1
	})
	return out, nil
}

// LayoutPreview renders the layout named by key around a stand-in for a
// step's body, for an example subscriber, as POST
// /v2/layouts/{layoutId}/preview does without a request body.
func (s *Store) LayoutPreview(ctx context.Context, envID, key string) (string, error) {
	l, err := s.layout(ctx, s.db, envID, key)
	if err != nil {
		return "", err
	}
	if l.Email == nil {
		return previewContent, nil
	}
	src, err := templates.LayoutSource(l.Email.Body, l.Email.EditorType)
	if err != nil {
		return "", err
	}
	vars := map[string]any{"subscriber": map[string]any{"firstName": "Ada", "lastName": "Lovelace", "email": "ada@example.com"},
		"payload": map[string]any{}}
	templates.ShareBudget(vars)
	return templates.ApplyLayout(src, previewContent, vars, false)
}

// TranslationGrid is a workflow's translations as a grid: every key any
// locale has, by every locale, a missing cell absent from Cells.
type TranslationGrid struct {
	WorkflowID, Name string
	Enabled          bool
	Locales, Keys    []string
	Cells            map[string]map[string]string // key → locale → value
}

// Missing reports whether locale lacks key.
func (g TranslationGrid) Missing(key, locale string) bool {
	_, ok := g.Cells[key][locale]
	return !ok
}

// TranslationGridOf reads the translations of the workflow named by key as
// a grid.
func (s *Store) TranslationGridOf(ctx context.Context, envID, key string) (g TranslationGrid, err error) {
	defer platform.Wrap(&err, "translation grid of %s", key)
	w, err := find(ctx, s.db, envID, key)
	if err != nil {
		return g, notFound(err, key)
	}
	g = TranslationGrid{WorkflowID: w.WorkflowID, Name: w.Name, Enabled: w.IsTranslationEnabled, Cells: map[string]map[string]string{}}
	rows, err := s.db.QueryContext(ctx, `SELECT locale, content FROM translations
		WHERE environment_id = ? AND resource_type = 'workflow' AND resource_id = ? ORDER BY locale`, envID, w.WorkflowID)
	if err != nil {
		return g, err
	}
	defer rows.Close()
	for rows.Next() {
		var locale, content string
		if err := rows.Scan(&locale, &content); err != nil {
			return g, err
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(content), &v); err != nil {
			return g, err
		}
		g.Locales = append(g.Locales, locale)
		for k, val := range templates.FlattenKeys(v) {
			if g.Cells[k] == nil {
				g.Cells[k] = map[string]string{}
				g.Keys = append(g.Keys, k)
			}
			g.Cells[k][locale] = val
		}
	}
	slices.Sort(g.Keys)
	return g, rows.Err()
}
