package console

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/herald-notify/herald/subscribers"
)

// contextsData is what the Contexts page shows.
type contextsData struct {
	Query      url.Values
	Page       subscribers.ContextPage
	Problem    string
	Filtered   bool
	Prev, Next string
}

// handleContexts serves GET /console/env/{env}/contexts: the contexts
// triggers were sent on behalf of, found by type, id and a part of their
// type:id key, a page at a time.
func handleContexts(cs Contexts) handler {
	return func(p *page) error {
		q := keep(p.r.URL.Query(), []string{"type", "id", "search", "after", "before"})
		data := contextsData{Query: q, Filtered: q.Get("type")+q.Get("id")+q.Get("search") != ""}
		list, err := cs.ContextList(p.r.Context(), p.env.ID, withDefaults(q, url.Values{"limit": {"25"}}))
		data.Page = list
		if data.Problem, _, err = listProblem(err); err != nil {
			return err
		}
		data.Prev, data.Next = cursorLinks(p.r.URL.Path, q, list.Previous, list.Next)
		return p.render("contexts", "contexts", "Contexts", data)
	}
}

// contextData is what a context's page shows.
type contextData struct {
	C    subscribers.Context
	Form form // its data, as JSON
}

// handleContext serves GET /console/env/{env}/contexts/{type}/{id}: the
// context's data, as a form to edit it.
func handleContext(cs Contexts) handler {
	return func(p *page) error { return renderContext(p, cs, form{}, http.StatusOK) }
}

func renderContext(p *page, cs Contexts, f form, status int) error {
	c, err := cs.Context(p.r.Context(), p.env.ID, p.r.PathValue("type"), p.r.PathValue("id"))
	if err != nil {
		return err
	}
	if f.Values == nil {
		f = form{Values: url.Values{"data": {prettyJSON(c.Data)}}, Errors: map[string]string{}}
	}
	return p.renderStatus(status, "context", "contexts", c.Key(), contextData{C: c, Form: f})
}

// handleContextSave serves POST /console/env/{env}/contexts/{type}/{id}:
// the data typed replaces the context's, under the rules of PATCH
// /v2/contexts/{type}/{id}.
func handleContextSave(cs Contexts) handler {
	return func(p *page) error {
		f := newForm(p.r)
		typ, id := p.r.PathValue("type"), p.r.PathValue("id")
		c, err := cs.SetContextData(p.r.Context(), p.tenant(), typ, id, json.RawMessage(f.Value("data")))
		if err != nil {
			if !f.refused(err) || statusOf(err) == http.StatusNotFound {
				return err
			}
			return renderContext(p, cs, f, statusOf(err))
		}
		return p.redirect(p.envURL("contexts", c.Type, c.ID), "The data of "+c.Key()+" is saved.")
	}
}

// handleContextDelete serves POST
// /console/env/{env}/contexts/{type}/{id}/delete: the context goes; the
// notifications sent on its behalf keep its key.
func handleContextDelete(cs Contexts) handler {
	return func(p *page) error {
		typ, id := p.r.PathValue("type"), p.r.PathValue("id")
		if err := cs.DeleteContext(p.r.Context(), p.tenant(), typ, id); err != nil {
			return err
		}
		return p.redirect(p.envURL("contexts"), "The context "+typ+":"+id+" is deleted.")
	}
}
