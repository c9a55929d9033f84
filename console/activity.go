package console

import (
	"net/url"
	"strconv"
	"time"

	"github.com/herald-notify/herald/activity"
	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/workflows"
)

// activityFilters are the query parameters of the Activity page: those of
// GET /v1/notifications, which the activity domain reads as it reads the
// API's, so the page filters by exactly what the API does.
var activityFilters = []string{"search", "subscriberIds", "emails", "templates", "channels", "severity",
	"transactionId", "topicKey", "contextKeys", "after", "before", "page"}

// activityPageSize is how many notifications a page lists.
const activityPageSize = "25"

// activityData is what the Activity page shows.
type activityData struct {
	Query     url.Values // the filters as given, to fill the form again
	Page      activity.NotificationPage
	Workflows []workflows.Named // for the workflow filter
	Problem   string            // why the filters were refused
	Filtered  bool
	Prev      string
	Next      string
}

// handleActivity serves GET /console/env/{env}/activity: the notifications,
// newest first, with every filter of GET /v1/notifications, a page at a
// time.
func handleActivity(a Activity, wfs Workflows) handler {
	return func(p *page) error {
		q := activityQuery(p.r.URL.Query())
		data := activityData{Query: q, Filtered: len(q) > 0 && !(len(q) == 1 && q.Has("page"))}
		page, err := a.Notifications(p.r.Context(), p.env.ID, withDefaults(q, url.Values{"limit": {activityPageSize}}))
		data.Page = page
		var status int
		if data.Problem, status, err = listProblem(err); err != nil {
			return err
		}
		if data.Workflows, err = wfs.WorkflowNames(p.r.Context(), p.env.ID, 500); err != nil {
			return err
		}
		data.Prev, data.Next = pageLinks(p.r.URL.Path, q, data.Page.Page, data.Page.HasMore)
		return p.renderStatus(status, "activity", "activity", "Activity", data)
	}
}

// activityQuery keeps the filters of q that are set, and turns the times
// the form picked (datetime-local, without a zone, which the console's
// script gives in UTC as after and before) into UTC when the script did
// not.
func activityQuery(q url.Values) url.Values {
	out := url.Values{}
	for _, k := range activityFilters {
		for _, v := range q[k] {
			if v != "" {
				out.Add(k, v)
			}
		}
	}
	for _, k := range []string{"after", "before"} {
		if local := q.Get(k + "Local"); local != "" && !out.Has(k) {
			if t, err := time.Parse("2006-01-02T15:04", local); err == nil {
				out.Set(k, t.UTC().Format(time.RFC3339))
			}
		}
	}
	return out
}

// pageLinks are the links to the newer and older pages of a page-numbered
// list at path, keeping its filters.
func pageLinks(path string, q url.Values, page int, hasMore bool) (prev, next string) {
	link := func(n int) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Del("page")
		if n > 0 {
			v.Set("page", strconv.Itoa(n))
		}
		if len(v) == 0 {
			return path
		}
		return path + "?" + v.Encode()
	}
	if page > 0 {
		prev = link(page - 1)
	}
	if hasMore {
		next = link(page + 1)
	}
	return prev, next
}

// problemOf is what a refused query says: its fields' problems, or its
// message.
func problemOf(e *platform.Error) string {
	if len(e.Fields) == 0 {
		return e.Message
	}
	msg := ""
	for name, f := range e.Fields {
		if msg != "" {
			msg += "; "
		}
		msg += name + " " + f.Messages[0]
	}
	return msg
}

// notificationData is what a notification's page shows.
type notificationData struct {
	N        activity.Notification
	Messages []messaging.Sent
}

// handleNotification serves GET /console/env/{env}/activity/{id}: one
// notification, its steps as a timeline with every execution detail and
// the provider's raw answer, and each message as the subscriber got it.
func handleNotification(a Activity, m Messages) handler {
	return func(p *page) error {
		n, err := a.Notification(p.r.Context(), p.env.ID, p.r.PathValue("id"))
		if err != nil {
			return err
		}
		msgs, _, err := m.SentMessages(p.r.Context(), p.env.ID, messaging.SentQuery{TransactionID: n.TransactionID,
			NotificationID: n.ID, Limit: 50})
		if err != nil {
			return err
		}
		title := n.WorkflowName
		if title == "" {
			title = "Notification"
		}
		return p.render("notification", "activity", title, notificationData{N: n, Messages: msgs})
	}
}

// handleEmail serves GET /console/env/{env}/messages/{id}/email: an email
// as it was sent, for the notification page's sandboxed frame, under a
// policy that lets its styles and images show and nothing in it run.
func handleEmail(m Messages) handler {
	return func(p *page) error {
		msg, err := m.SentMessage(p.r.Context(), p.env.ID, p.r.PathValue("id"))
		if err != nil {
			return err
		}
		if msg.Channel != "email" {
			return platform.NotFound("Message %s is not an email", msg.ID)
		}
		frameable(p.w)
		p.w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, err = p.w.Write([]byte(msg.HTML))
		return err
	}
}
