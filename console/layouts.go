package console

import (
	"github.com/herald-notify/herald/workflows"
)

// layoutsData is what the Layouts page shows.
type layoutsData struct {
	Layouts  []workflows.LayoutSummary
	Selected string // the layout previewed
}

// handleLayouts serves GET /console/env/{env}/layouts: the environment's
// email layouts, which workflows use each, and one previewed (?layout=,
// else the default).
func handleLayouts(c Content) handler {
	return func(p *page) error {
		list, err := c.LayoutSummaries(p.r.Context(), p.env.ID)
		if err != nil {
			return err
		}
		data := layoutsData{Layouts: list, Selected: p.r.URL.Query().Get("layout")}
		if data.Selected == "" && len(list) > 0 {
			data.Selected = list[0].LayoutID
		}
		return p.render("layouts", "layouts", "Layouts", data)
	}
}

// handleLayoutPreview serves GET
// /console/env/{env}/layouts/{layoutId}/preview: the layout rendered, for
// the Layouts page's sandboxed frame.
func handleLayoutPreview(c Content) handler {
	return func(p *page) error {
		html, err := c.LayoutPreview(p.r.Context(), p.env.ID, p.r.PathValue("layoutId"))
		if err != nil {
			return err
		}
		frameable(p.w)
		p.w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, err = p.w.Write([]byte(html))
		return err
	}
}

// handleTranslations serves GET
// /console/env/{env}/workflows/{workflowId}/translations: the workflow's
// keys by locale, the cells a locale lacks marked.
func handleTranslations(c Content) handler {
	return func(p *page) error {
		g, err := c.TranslationGridOf(p.r.Context(), p.env.ID, p.r.PathValue("workflowId"))
		if err != nil {
			return err
		}
		return p.render("translations", "workflows", "Translations of "+g.Name, g)
	}
}
