package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/workflows"
)

// data wraps an inbox answer in the {data: …} envelope its client reads
// from every answer but the list and the counts (docs/inbox.md,
// "What the routes do").
type data[T any] struct {
	Data T `json:"data"`
}

// inboxQuery reads the filters of the inbox list and its bulk routes from
// a query string (docs/inbox.md, "Filters").
func inboxQuery(q *platform.Query, values url.Values) *inboxFilter {
	f := &inboxFilter{}
	truth := func(name string) *bool {
		if !values.Has(name) {
			return nil
		}
		v := values.Get(name) == "true"
		return &v
	}
	f.read, f.archived, f.snoozed, f.seen = truth("read"), truth("archived"), truth("snoozed"), truth("seen")
	f.tags = queryTags(values)
	if raw := values.Get("data"); raw != "" {
		d, err := parseInboxData([]byte(raw))
		if err != nil {
			q.Fail("data", raw, err.Error())
		}
		f.data = d
	}
	f.severity = append(values["severity"], values["severity[]"]...)
	for _, sev := range f.severity {
		if !slices.Contains([]string{"high", "medium", "low", "none"}, sev) {
			q.Fail("severity", sev, "must be one of: high, medium, low, none")
		}
	}
	for name, dst := range map[string]*string{"createdGte": &f.createdGte, "createdLte": &f.createdLte} {
		if v := values.Get(name); v != "" {
			ms, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				q.Fail(name, v, "must be a Unix time in milliseconds")
				continue
			}
			*dst = sqldb.FormatTime(time.UnixMilli(ms))
		}
	}
	return f
}

var tagGroup = regexp.MustCompile(`^tags\[(\d+)\]\[\d*\]$`)

// queryTags reads tags[]=a&tags[]=b (one group: any of them) and
// tags[0][]=a&tags[1][]=b (groups, each to match).
func queryTags(values url.Values) [][]string {
	var groups [][]string
	if one := append(values["tags[]"], values["tags"]...); len(one) > 0 {
		groups = append(groups, one)
	}
	byIndex := map[int][]string{}
	for k, vs := range values {
		if m := tagGroup.FindStringSubmatch(k); m != nil {
			i, _ := strconv.Atoi(m[1])
			byIndex[i] = append(byIndex[i], vs...)
		}
	}
	keys := make([]int, 0, len(byIndex))
	for i := range byIndex {
		keys = append(keys, i)
	}
	sort.Ints(keys)
	for _, i := range keys {
		groups = append(groups, byIndex[i])
	}
	return groups
}

// parseInboxData reads a data filter: a JSON object of scalars, at most two
// levels deep, strings of at most 256 characters (docs/inbox.md, "Filters").
func parseInboxData(raw []byte) (map[string]any, error) {
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil || doc == nil {
		return nil, errors.New("must be a JSON object")
	}
	out := map[string]any{}
	var walk func(prefix string, m map[string]any, depth int) error
	walk = func(prefix string, m map[string]any, depth int) error {
		for k, v := range m {
			switch v := v.(type) {
			case map[string]any:
				if depth == 2 {
					return errors.New("must nest at most two levels")
				}
				if err := walk(prefix+k+".", v, depth+1); err != nil {
					return err
				}
			case string:
				if len([]rune(v)) > 256 {
					return errors.New("string values must be at most 256 characters long")
				}
				out[prefix+k] = v
			case float64, bool:
				out[prefix+k] = v
			default:
				return errors.New("values must be strings, numbers or booleans")
			}
		}
		return nil
	}
	return out, walk("", doc, 1)
}

// checkUnreadArchived refuses the one filter the reference platform does not serve.
func (f *inboxFilter) checkUnreadArchived() error {
	if f.read != nil && !*f.read && f.archived != nil && *f.archived {
		return platform.BadRequest("Filtering for unread and archived notifications is not supported.")
	}
	return nil
}

// handleInboxNotifications serves GET /v1/inbox/notifications: a page of
// the subscriber's in_app notifications, newest first (docs/inbox.md,
// "Filters"), and GET /v2/subscribers/{subscriberId}/notifications.
func handleInboxNotifications(s *Store, rt notificationRoute) http.Handler {
	type filterEcho struct {
		Tags     []string       `json:"tags,omitempty"`
		Read     *bool          `json:"read,omitempty"`
		Archived *bool          `json:"archived,omitempty"`
		Snoozed  *bool          `json:"snoozed,omitempty"`
		Seen     *bool          `json:"seen,omitempty"`
		Data     map[string]any `json:"data,omitempty"`
		Severity []string       `json:"severity,omitempty"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		who, err := rt.owner(r)
		if err != nil {
			return err
		}
		q := platform.NewQuery(r)
		values := r.URL.Query()
		limit := q.Int("limit", 10, 1, 100)
		offset := q.Int("offset", 0, 0, math.MaxInt32)
		after := q.String("after")
		if after != "" && !sqldb.IsID(after) {
			q.Fail("after", after, "must be a notification id")
		}
		f := inboxQuery(q, values)
		if err := q.Err(); err != nil {
			return err
		}
		if err := f.checkUnreadArchived(); err != nil {
			return err
		}
		var sev map[string]string // only a severity filter reads them
		if len(f.severity) > 0 {
			if sev, err = s.inbox.Workflows.WorkflowSeverities(ctx, who.EnvironmentID); err != nil {
				return err
			}
		}
		rows, more, err := s.inboxPage(ctx, scopeOf(who), f, sev, after, offset, limit)
		if err != nil {
			return err
		}
		out, err := s.notifications(ctx, who, rows)
		if err != nil {
			return err
		}
		echo := filterEcho{Read: f.read, Archived: f.archived, Snoozed: f.snoozed, Seen: f.seen, Data: f.data, Severity: f.severity}
		for _, g := range f.tags {
			echo.Tags = append(echo.Tags, g...)
		}
		filter, err := json.Marshal(echo)
		if err != nil {
			return err
		}
		// {"data":[…],"hasMore":…,"filter":…}, the page written by hand
		// (inboxjson.go).
		buf := pageBodies.Get().(*[]byte)
		defer pageBodies.Put(buf)
		body := append((*buf)[:0], `{"data":[`...)
		for i := range out {
			if i > 0 {
				body = append(body, ',')
			}
			body = appendInboxNotification(body, &out[i])
		}
		body = appendBool(append(body, ']'), `,"hasMore":`, more)
		*buf = append(append(append(body, `,"filter":`...), filter...), '}')
		return platform.WriteJSON(w, http.StatusOK, *buf)
	})
}

// notifications converts rows for their subscriber, naming each one's workflow.
func (s *Store) notifications(ctx context.Context, who platform.Subscriber, rows []*inboxMessage) ([]inboxNotification, error) {
	ids := []string{}
	for _, m := range rows {
		if m.TemplateID != "" && !slices.Contains(ids, m.TemplateID) {
			ids = append(ids, m.TemplateID)
		}
	}
	wfs, err := s.inbox.Workflows.InboxWorkflows(ctx, who.EnvironmentID, ids)
	if err != nil {
		return nil, err
	}
	to := inboxTo{ID: who.ID, SubscriberID: who.SubscriberID, FirstName: who.FirstName, LastName: who.LastName}
	out := make([]inboxNotification, 0, len(rows))
	for _, m := range rows {
		var wf *workflows.InboxWorkflow
		if w, ok := wfs[m.TemplateID]; ok {
			wf = &w
		}
		out = append(out, toNotification(m, to, wf))
	}
	return out, nil
}

// inboxCountFilter is one entry of GET /v1/inbox/notifications/count's filters.
type inboxCountFilter struct {
	Tags     json.RawMessage `json:"tags,omitempty"`
	Read     *bool           `json:"read,omitempty"`
	Archived *bool           `json:"archived,omitempty"`
	Snoozed  *bool           `json:"snoozed,omitempty"`
	Seen     *bool           `json:"seen,omitempty"`
	Severity json.RawMessage `json:"severity,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// handleInboxCount serves GET /v1/inbox/notifications/count: a count, up to
// 100, for each filter of the filters JSON array, in its order
// (docs/inbox.md, "What the routes do"), and GET
// /v2/subscribers/{subscriberId}/notifications/count.
func handleInboxCount(s *Store, rt notificationRoute) http.Handler {
	type count struct {
		Count  int              `json:"count"`
		Filter inboxCountFilter `json:"filter"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		who, err := rt.owner(r)
		if err != nil {
			return err
		}
		raw := r.URL.Query().Get("filters")
		var filters []inboxCountFilter
		if raw == "" {
			filters = []inboxCountFilter{{}}
		} else if err := json.Unmarshal([]byte(raw), &filters); err != nil {
			return platform.BadRequest("filters must be a JSON array of filters")
		}
		if len(filters) > 30 {
			return platform.InvalidField("filters", nil, "must hold at most 30 filters")
		}
		parsed := make([]*inboxFilter, len(filters))
		for i, cf := range filters {
			f, err := cf.filter()
			if err != nil {
				return platform.BadRequest("filters.%d: %v", i, err)
			}
			if err := f.checkUnreadArchived(); err != nil {
				return err
			}
			parsed[i] = f
		}
		sev, err := s.inbox.Workflows.WorkflowSeverities(ctx, who.EnvironmentID)
		if err != nil {
			return err
		}
		out := make([]count, len(filters))
		for i, f := range parsed {
			n, err := s.inboxCount(ctx, scopeOf(who), f, sev, inboxCountLimit)
			if err != nil {
				return err
			}
			out[i] = count{Count: n, Filter: filters[i]}
		}
		return rt.answer(w, out)
	})
}

// filter reads a count filter: tags as a list (any of them) or as
// {or:[…]} / {and:[{or:[…]},…]}; severity as one or a list.
func (cf inboxCountFilter) filter() (*inboxFilter, error) {
	f := &inboxFilter{read: cf.Read, archived: cf.Archived, snoozed: cf.Snoozed, seen: cf.Seen}
	if len(cf.Tags) > 0 && string(cf.Tags) != "null" {
		var list []string
		var or struct {
			Or  []string `json:"or"`
			And []struct {
				Or []string `json:"or"`
			} `json:"and"`
		}
		switch {
		case json.Unmarshal(cf.Tags, &list) == nil:
			f.tags = [][]string{list}
		case json.Unmarshal(cf.Tags, &or) == nil:
			if len(or.Or) > 0 {
				f.tags = append(f.tags, or.Or)
			}
			for _, g := range or.And {
				f.tags = append(f.tags, g.Or)
			}
		default:
			return nil, errors.New("tags must be a list of strings, {or: [...]} or {and: [{or: [...]}]}")
		}
	}
	if len(cf.Severity) > 0 && string(cf.Severity) != "null" {
		var one string
		if json.Unmarshal(cf.Severity, &one) == nil {
			f.severity = []string{one}
		} else if json.Unmarshal(cf.Severity, &f.severity) != nil {
			return nil, errors.New("severity must be a severity or a list of them")
		}
		for _, sev := range f.severity {
			if !slices.Contains([]string{"high", "medium", "low", "none"}, sev) {
				return nil, fmt.Errorf("severity %q is not one of high, medium, low, none", sev)
			}
		}
	}
	if len(cf.Data) > 0 && string(cf.Data) != "null" {
		d, err := parseInboxData(cf.Data)
		if err != nil {
			return nil, fmt.Errorf("data %v", err)
		}
		f.data = d
	}
	return f, nil
}

// notificationID reads the notification id of a route's path; an id that
// is no message id is one the subscriber does not have.
func (rt notificationRoute) notificationID(r *http.Request) (string, error) {
	id := r.PathValue(rt.idParam)
	if !sqldb.IsID(id) {
		return "", notificationNotFound(id)
	}
	return id, nil
}

// decodeNotificationRequest reads a notification route's {id} and its body.
func decodeNotificationRequest[T any](rt notificationRoute, r *http.Request) (string, T, error) {
	var req T
	id, err := rt.notificationID(r)
	if err != nil {
		return "", req, err
	}
	req, err = platform.Decode[T](r)
	return id, req, err
}

func notificationNotFound(id string) error {
	return platform.NotFound("Notification with id: %s is not found.", id)
}

// respondNotification answers a changed notification of who and announces
// the change.
func (s *Store) respondNotification(w http.ResponseWriter, r *http.Request, rt notificationRoute, who platform.Subscriber,
	m *inboxMessage, kind LiveKind) error {
	out, err := s.notifications(r.Context(), who, []*inboxMessage{m})
	if err != nil {
		return err
	}
	s.publish(LiveEvent{EnvironmentID: who.EnvironmentID, SubscriberID: who.ID, Kind: kind})
	return rt.answer(w, out[0])
}

// handleInboxMark serves PATCH /v1/inbox/notifications/{id}/<action> for
// read, unread, archive, unarchive and unsnooze, and PATCH
// /v2/subscribers/{subscriberId}/notifications/{notificationId}/<action>.
func handleInboxMark(s *Store, rt notificationRoute, action inboxAction) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		who, err := rt.owner(r)
		if err != nil {
			return err
		}
		id, err := rt.notificationID(r)
		if err != nil {
			return err
		}
		m, err := s.inboxMark(ctx, scopeOf(who), id, action, "")
		if errors.Is(err, platform.ErrNotFound) {
			return notificationNotFound(id)
		}
		if err != nil {
			return err
		}
		if action == actionUnsnooze && s.inbox.Snoozes != nil {
			if err := s.inbox.Snoozes.CancelUnsnooze(ctx, who.EnvironmentID, id); err != nil {
				return err
			}
		}
		return s.respondNotification(w, r, rt, who, m, LiveChanged)
	})
}

// handleInboxSnooze serves PATCH /v1/inbox/notifications/{id}/snooze: the
// message leaves the inbox until snoozeUntil, at least a minute and at most
// the configured maximum ahead, and the job queue brings it back then;
// and PATCH /v2/subscribers/{subscriberId}/notifications/{notificationId}/snooze.
func handleInboxSnooze(s *Store, rt notificationRoute) http.Handler {
	type request struct {
		SnoozeUntil string `json:"snoozeUntil" validate:"required"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		who, err := rt.owner(r)
		if err != nil {
			return err
		}
		id, req, err := decodeNotificationRequest[request](rt, r)
		if err != nil {
			return err
		}
		if s.inbox.Snoozes == nil {
			return platform.BadRequest("Snoozing is not available on this server")
		}
		until, err := time.Parse(time.RFC3339Nano, req.SnoozeUntil)
		if err != nil {
			return platform.InvalidField("snoozeUntil", req.SnoozeUntil, "must be an ISO 8601 date")
		}
		now := s.now()
		if until.Before(now.Add(time.Minute)) {
			return platform.InvalidField("snoozeUntil", req.SnoozeUntil, "must be at least 1 minute in the future")
		}
		if until.After(now.Add(s.inbox.MaxSnooze)) {
			return platform.InvalidField("snoozeUntil", req.SnoozeUntil,
				"Snooze Duration Limit Exceeded: at most %d hours ahead", int(s.inbox.MaxSnooze/time.Hour))
		}
		// The job that ends the snooze is filed first: a message snoozed
		// with none would never come back.
		m, err := s.inboxMessage(ctx, scopeOf(who), id)
		if errors.Is(err, platform.ErrNotFound) {
			return notificationNotFound(id)
		}
		if err != nil {
			return err
		}
		err = s.inbox.Snoozes.ScheduleUnsnooze(ctx, Snooze{EnvironmentID: who.EnvironmentID,
			MessageID: id, NotificationID: m.NotificationID, Until: until})
		if errors.Is(err, ErrSnoozeExpired) {
			return platform.Errorf(http.StatusUnprocessableEntity,
				"Notification with id: %s can no longer be snoozed: its activity record has expired (HERALD_ACTIVITY_RETENTION)", id)
		}
		if err != nil {
			return err
		}
		m, err = s.inboxMark(ctx, scopeOf(who), id, actionSnooze, sqldb.FormatTime(until))
		if errors.Is(err, platform.ErrNotFound) {
			return notificationNotFound(id) // deleted meanwhile: its job finds nothing to bring back
		}
		if err != nil {
			return err
		}
		return s.respondNotification(w, r, rt, who, m, LiveChanged)
	})
}

// handleInboxAction serves PATCH /v1/inbox/notifications/{id}/complete and
// /revert: an action button done, or pending again.
func handleInboxAction(s *Store, status string) http.Handler {
	type request struct {
		ActionType string `json:"actionType" validate:"required,oneof=primary secondary"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		who := platform.SubscriberFrom(r.Context())
		id, req, err := decodeNotificationRequest[request](inboxRoute, r)
		if err != nil {
			return err
		}
		return s.act(w, r, inboxRoute, who, id, req.ActionType, status)
	})
}

// act sets the action button of type button of who's notification id to
// status, and answers the notification.
func (s *Store) act(w http.ResponseWriter, r *http.Request, rt notificationRoute, who platform.Subscriber, id, button, status string) error {
	m, err := s.inboxAct(r.Context(), scopeOf(who), id, button, status)
	switch {
	case errors.Is(err, platform.ErrNotFound):
		return notificationNotFound(id)
	case errors.Is(err, errNoButton):
		return platform.BadRequest("Could not find %s action", button)
	case err != nil:
		return err
	}
	return s.respondNotification(w, r, rt, who, m, LiveChanged)
}

// handleInboxDelete serves DELETE /v1/inbox/notifications/{id}/delete and
// DELETE /v2/subscribers/{subscriberId}/notifications/{notificationId}.
func handleInboxDelete(s *Store, rt notificationRoute) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		who, err := rt.owner(r)
		if err != nil {
			return err
		}
		id, err := rt.notificationID(r)
		if err != nil {
			return err
		}
		if err := s.inboxDelete(ctx, scopeOf(who), id); errors.Is(err, platform.ErrNotFound) {
			return notificationNotFound(id)
		} else if err != nil {
			return err
		}
		s.publish(LiveEvent{EnvironmentID: who.EnvironmentID, SubscriberID: who.ID, Kind: LiveChanged})
		return platform.NoContent(w)
	})
}

// bulkRequest is the body of the inbox's bulk routes.
type bulkRequest struct {
	NotificationIDs []string        `json:"notificationIds"`
	Tags            json.RawMessage `json:"tags"`
	Data            json.RawMessage `json:"data"` // a JSON string holding the object, as the client sends it
	// ContextKeys, on the API's routes, select the messages of exactly
	// that context, as a session's context does; the inbox's own routes go
	// by the session's.
	ContextKeys []string `json:"contextKeys"`
}

// filter reads the bulk body's tags and data.
func (b bulkRequest) filter() (*inboxFilter, error) {
	cf := inboxCountFilter{Tags: b.Tags}
	if len(b.Data) > 0 && string(b.Data) != "null" {
		var s string
		if json.Unmarshal(b.Data, &s) == nil {
			cf.Data = json.RawMessage(s)
		} else {
			cf.Data = b.Data
		}
	}
	f, err := cf.filter()
	if err != nil {
		return nil, platform.BadRequest("%v", err)
	}
	return f, nil
}

// handleInboxBulk serves the bulk routes, POST /v1/inbox/notifications/
// read, archive, read-archive, delete and seen: every message of the
// subscriber the body's tags and data select (seen: the ids it names); and
// the same under /v2/subscribers/{subscriberId}/notifications/.
func handleInboxBulk(s *Store, rt notificationRoute, route string) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		who, err := rt.owner(r)
		if err != nil {
			return err
		}
		var req bulkRequest
		if r.ContentLength != 0 {
			if req, err = platform.Decode[bulkRequest](r); err != nil {
				return err
			}
		}
		f, err := req.filter()
		if err != nil {
			return err
		}
		if !rt.envelope && req.ContextKeys != nil {
			who.ContextKeys = req.ContextKeys
		}
		box := scopeOf(who)
		kind := LiveChanged
		switch route {
		case "read":
			_, err = s.inboxMarkAll(ctx, box, f, nil, actionRead)
		case "archive":
			_, err = s.inboxMarkAll(ctx, box, f, nil, actionArchive)
		case "read-archive":
			t := true
			f.read = &t
			_, err = s.inboxMarkAll(ctx, box, f, nil, actionArchive)
		case "delete":
			_, err = s.inboxDeleteAll(ctx, box, f, nil)
		case "seen":
			for i, id := range req.NotificationIDs {
				if !sqldb.IsID(id) {
					return platform.InvalidField(fmt.Sprintf("notificationIds.%d", i), id, "must be a notification id")
				}
			}
			if len(req.NotificationIDs) == 0 && req.NotificationIDs != nil {
				return platform.NoContent(w) // no ids: nothing to mark (docs/inbox.md, "Filters")
			}
			kind = LiveSeen
			_, err = s.inboxMarkAll(ctx, box, f, req.NotificationIDs, actionSeen)
		}
		if err != nil {
			return err
		}
		s.publish(LiveEvent{EnvironmentID: box.env, SubscriberID: box.subscriberID, Kind: kind})
		return platform.NoContent(w)
	})
}
