package console

import (
	"net/url"
	"strconv"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/workflows"
)

// workflowsPageSize is how many workflows a page lists.
const workflowsPageSize = 25

// workflowsData is what the Workflows page shows.
type workflowsData struct {
	Query     url.Values
	Workflows []workflows.Listed
	Total     int
	Problem   string
	Prev      string
	Next      string
	Targets   []platform.Environment // where a workflow can be synced to
}

// handleWorkflows serves GET /console/env/{env}/workflows: each workflow
// with its status, channels, tags and last trigger, found by name or
// workflowId as GET /v2/workflows finds them.
func handleWorkflows(w Workflows) handler {
	return func(p *page) error {
		q := keep(p.r.URL.Query(), []string{"query", "page"})
		data := workflowsData{Query: q}
		var err error
		data.Workflows, data.Total, err = w.Workflows(p.r.Context(), p.env.ID, withDefaults(q, url.Values{"limit": {strconv.Itoa(workflowsPageSize)}}))
		if data.Problem, _, err = listProblem(err); err != nil {
			return err
		}
		page, _ := strconv.Atoi(q.Get("page"))
		data.Prev, data.Next = pageLinks(p.r.URL.Path, q, page, (page+1)*workflowsPageSize < data.Total)
		for _, env := range p.envs {
			if env.ID != p.env.ID {
				data.Targets = append(data.Targets, env)
			}
		}
		return p.render("workflows", "workflows", "Workflows", data)
	}
}

// handleWorkflowActive serves POST
// /console/env/{env}/workflows/{workflowId}/active: the workflow on or
// off, as PATCH /v2/workflows/{workflowId} with active switches it.
func handleWorkflowActive(w Workflows) handler {
	return func(p *page) error {
		f := newForm(p.r)
		enabled := f.Values["active"]
		on := len(enabled) > 0 && enabled[len(enabled)-1] == "true" // the switch's value follows its hidden off
		key := p.r.PathValue("workflowId")
		if err := w.SetActive(p.r.Context(), p.tenant(), key, on); err != nil {
			return err
		}
		state := "inactive: triggers of it send nothing"
		if on {
			state = "active"
		}
		return p.redirect(p.envURL("workflows"), key+" is "+state+".")
	}
}

// handleWorkflowSync serves POST
// /console/env/{env}/workflows/{workflowId}/sync: the workflow copied to
// another environment of the organization, as PUT
// /v2/workflows/{workflowId}/sync copies it.
func handleWorkflowSync(w Workflows) handler {
	return func(p *page) error {
		f := newForm(p.r)
		key, target := p.r.PathValue("workflowId"), f.Value("target")
		if err := w.Sync(p.r.Context(), p.tenant(), key, target); err != nil {
			return err
		}
		name := target
		for _, env := range p.envs {
			if env.ID == target {
				name = env.Name
			}
		}
		return p.redirect(p.envURL("workflows"), key+" is synced to "+name+".")
	}
}
