package console

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/herald-notify/herald/activity"
	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/subscribers"
)

// subscriberFilters are the Subscribers page's query parameters: those of
// GET /v2/subscribers, read by the subscribers domain as it reads the
// API's.
var subscriberFilters = []string{"subscriberId", "email", "name", "phone", "after", "before"}

// subscribersData is what the Subscribers page shows.
type subscribersData struct {
	Query    url.Values
	Page     subscribers.SearchPage
	Problem  string
	Filtered bool
	Prev     string
	Next     string
}

// handleSubscribers serves GET /console/env/{env}/subscribers: a search as
// GET /v2/subscribers searches, a page at a time.
func handleSubscribers(s Subscribers) handler {
	return func(p *page) error {
		q := keep(p.r.URL.Query(), subscriberFilters)
		data := subscribersData{Query: q, Filtered: q.Get("subscriberId")+q.Get("email")+q.Get("name")+q.Get("phone") != ""}
		page, err := s.Search(p.r.Context(), p.env.ID, withDefaults(q, url.Values{"limit": {"20"}}))
		data.Page = page
		var status int
		if data.Problem, status, err = listProblem(err); err != nil {
			return err
		}
		data.Prev, data.Next = cursorLinks(p.r.URL.Path, q, data.Page.Previous, data.Page.Next)
		return p.renderStatus(status, "subscribers", "subscribers", "Subscribers", data)
	}
}

// keep returns the parameters of q named in names that are set.
func keep(q url.Values, names []string) url.Values {
	out := url.Values{}
	for _, k := range names {
		for _, v := range q[k] {
			if v != "" {
				out.Add(k, v)
			}
		}
	}
	return out
}

// cursorLinks are the links to the pages around a cursor page at path,
// keeping its filters.
func cursorLinks(path string, q url.Values, previous, next string) (prev, nextLink string) {
	link := func(key, cursor string) string {
		v := url.Values{}
		for k, vs := range q {
			v[k] = vs
		}
		v.Del("after")
		v.Del("before")
		v.Set(key, cursor)
		return path + "?" + v.Encode()
	}
	if previous != "" {
		prev = link("before", previous)
	}
	if next != "" {
		nextLink = link("after", next)
	}
	return prev, nextLink
}

// subscriberData is what a subscriber's page shows.
type subscriberData struct {
	S             subscribers.Subscriber
	Form          form // the profile form, with what was typed when refused
	CredForm      form
	ScheduleForm  form // the schedule form, with what was typed when refused
	Weekdays      []string
	Preferences   subscribers.PreferenceSheet
	Channels      []string
	Topics        []subscribers.Topic
	Feed          []messaging.Sent
	FeedTotal     int
	Notifications []activity.Notification
	Providers     []string // those a subscriber may hold credentials for
	TopicProblem  string
}

// handleSubscriber serves GET /console/env/{env}/subscribers/{subscriberId}:
// the profile, channels and credentials, preferences, topics, in-app feed
// and recent notifications of one subscriber.
func handleSubscriber(d *Deps) handler {
	return func(p *page) error { return renderSubscriber(p, d, subscriberData{}, http.StatusOK) }
}

// renderSubscriber reads everything the subscriber's page shows into data,
// keeping the forms it holds, and renders it.
func renderSubscriber(p *page, d *Deps, data subscriberData, status int) error {
	ctx, env, id := p.r.Context(), p.env.ID, p.r.PathValue("subscriberId")
	var err error
	if data.S, err = d.Subscribers.Subscriber(ctx, env, id); errors.Is(err, platform.ErrNotFound) {
		return platform.NotFound("There is no subscriber %q in %s", id, p.env.Name)
	} else if err != nil {
		return err
	}
	if data.Preferences, err = d.Subscribers.PreferenceSheet(ctx, env, id); err != nil {
		return err
	}
	if data.Topics, err = d.Subscribers.TopicsOf(ctx, env, id); err != nil {
		return err
	}
	if data.Feed, data.FeedTotal, err = d.Messages.SentMessages(ctx, env, messaging.SentQuery{SubscriberID: id, Channel: "in_app", Limit: 10}); err != nil {
		return err
	}
	recent, err := d.Activity.Notifications(ctx, env, url.Values{"subscriberIds": {id}, "limit": {"10"}})
	if err != nil {
		return err
	}
	data.Notifications = recent.Notifications
	if data.Form.Values == nil {
		data.Form = profileForm(data.S)
	}
	if data.ScheduleForm.Values == nil {
		data.ScheduleForm = scheduleForm(data.Preferences.Schedule)
	}
	data.Weekdays = weekdays
	data.Channels = subscribers.Channels
	data.Providers = subscribers.ProviderIDs()
	return p.renderStatus(status, "subscriber", "subscribers", data.S.SubscriberID, data)
}

// profileForm is the profile form filled with what the subscriber has.
func profileForm(s subscribers.Subscriber) form {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	v := url.Values{}
	for name, value := range map[string]string{"firstName": str(s.FirstName), "lastName": str(s.LastName),
		"email": str(s.Email), "phone": str(s.Phone), "avatar": str(s.Avatar), "locale": str(s.Locale),
		"timezone": str(s.Timezone)} {
		v.Set(name, value)
	}
	if len(s.Data) > 0 && string(s.Data) != "null" {
		v.Set("data", prettyJSON(s.Data))
	}
	return form{Values: v, Errors: map[string]string{}}
}
