package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/herald-notify/herald/subscribers"
)

// topicsData is what the Topics page shows.
type topicsData struct {
	Query    url.Values
	Page     subscribers.TopicPage
	Problem  string
	Filtered bool
	Prev     string
	Next     string
	Form     form // the new topic's
}

// handleTopics serves GET /console/env/{env}/topics: the topics, found by
// key and name as GET /v2/topics finds them, and the form to add one.
func handleTopics(t Topics) handler {
	return func(p *page) error { return renderTopics(p, t, form{}, http.StatusOK) }
}

func renderTopics(p *page, t Topics, f form, status int) error {
	q := keep(p.r.URL.Query(), []string{"key", "name", "after", "before"})
	data := topicsData{Query: q, Filtered: q.Get("key")+q.Get("name") != "", Form: f}
	page, err := t.Topics(p.r.Context(), p.env.ID, withDefaults(q, url.Values{"limit": {"20"}, "orderBy": {"createdAt"}}))
	data.Page = page
	if data.Problem, _, err = listProblem(err); err != nil {
		return err
	}
	data.Prev, data.Next = cursorLinks(p.r.URL.Path, q, data.Page.Previous, data.Page.Next)
	return p.renderStatus(status, "topics", "topics", "Topics", data)
}

// handleTopicCreate serves POST /console/env/{env}/topics: a new topic,
// under the rules of POST /v1/topics.
func handleTopicCreate(t Topics) handler {
	return func(p *page) error {
		f := newForm(p.r)
		topic, err := t.CreateTopic(p.r.Context(), p.tenant(), subscribers.NewTopic{Key: f.Value("key"), Name: f.Value("name")})
		if err != nil {
			if !f.refused(err) {
				return err
			}
			return renderTopics(p, t, f, statusOf(err))
		}
		return p.redirect(p.envURL("topics", topic.Key), "The topic "+topic.Key+" is created.")
	}
}

// topicData is what a topic's page shows.
type topicData struct {
	T       subscribers.Topic
	Members subscribers.MemberPage
	Prev    string
	Next    string
	Form    form // the rename's
	Add     form // the members to add
}

// handleTopic serves GET /console/env/{env}/topics/{key}: the topic and its
// members, a page at a time.
func handleTopic(t Topics) handler {
	return func(p *page) error { return renderTopic(p, t, topicData{}, http.StatusOK) }
}

func renderTopic(p *page, t Topics, data topicData, status int) error {
	ctx, key := p.r.Context(), p.r.PathValue("key")
	var err error
	if data.T, err = t.Topic(ctx, p.env.ID, key); err != nil {
		return err
	}
	q := keep(p.r.URL.Query(), []string{"after", "before"})
	if data.Members, err = t.TopicMembers(ctx, p.env.ID, key, withDefaults(q, url.Values{"limit": {"25"}, "orderBy": {"createdAt"}})); err != nil {
		return err
	}
	data.Prev, data.Next = cursorLinks(p.r.URL.Path, q, data.Members.Previous, data.Members.Next)
	if data.Form.Values == nil {
		data.Form = form{Values: url.Values{"name": {data.T.Name}}, Errors: map[string]string{}}
	}
	return p.renderStatus(status, "topic", "topics", data.T.Key, data)
}

// handleTopicRename serves POST /console/env/{env}/topics/{key}/rename.
func handleTopicRename(t Topics) handler {
	return func(p *page) error {
		f := newForm(p.r)
		key := p.r.PathValue("key")
		if _, err := t.RenameTopic(p.r.Context(), p.env.ID, key, subscribers.TopicName{Name: f.Value("name")}); err != nil {
			if !f.refused(err) {
				return err
			}
			return renderTopic(p, t, topicData{Form: f}, http.StatusUnprocessableEntity)
		}
		return p.redirect(p.envURL("topics", key), "The topic is renamed.")
	}
}

// handleTopicDelete serves POST /console/env/{env}/topics/{key}/delete: the
// topic and its subscriptions go.
func handleTopicDelete(t Topics) handler {
	return func(p *page) error {
		key := p.r.PathValue("key")
		if err := t.DeleteTopic(p.r.Context(), p.env.ID, key); err != nil {
			return err
		}
		return p.redirect(p.envURL("topics"), "The topic "+key+" is deleted.")
	}
}

// handleTopicMembers serves POST /console/env/{env}/topics/{key}/members:
// the subscriberIds given (separated by spaces, commas or lines) join the
// topic, or, with remove, leave it.
func handleTopicMembers(t Topics) handler {
	return func(p *page) error {
		f := newForm(p.r)
		ctx, key := p.r.Context(), p.r.PathValue("key")
		ids := strings.FieldsFunc(f.Value("subscriberIds"), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })
		var unknown []string
		var err error
		if f.Checked("remove") {
			unknown, err = t.Unsubscribe(ctx, p.env.ID, key, ids)
		} else {
			unknown, err = t.Subscribe(ctx, p.tenant(), key, ids)
		}
		if err != nil {
			if !f.refused(err) {
				return err
			}
			if e, ok := f.Errors["subscribers"]; ok {
				f.Errors["subscriberIds"] = e
			}
			return renderTopic(p, t, topicData{Add: f}, http.StatusUnprocessableEntity)
		}
		done := "Added"
		if f.Checked("remove") {
			done = "Removed"
		}
		msg := done + " " + plural(len(ids)-len(unknown), "subscriber", "subscribers") + "."
		if len(unknown) > 0 {
			msg += " Not found or not members: " + strings.Join(unknown, ", ") + "."
		}
		return p.redirect(p.envURL("topics", key), msg)
	}
}
