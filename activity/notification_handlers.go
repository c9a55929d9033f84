package activity

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// handleNotificationList serves GET /v1/notifications: the environment's
// triggered events, newest first, filtered by the query (docs/api.md,
// "Notifications").
func handleNotificationList(s *Store, subscribers Subscribers) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		nq, err := readNotificationQuery(platform.NewQuery(r))
		if err != nil {
			return err
		}
		ctx := r.Context()
		env := platform.TenantFrom(ctx).EnvironmentID
		rows, jobs, hasMore, err := s.notificationPage(ctx, env, nq, subscribers, shapeList)
		if err != nil {
			return err
		}
		data, err := s.render(ctx, env, rows, jobs, subscribers, true)
		if err != nil {
			return err
		}
		page := nq.f.page
		if rows == nil {
			page = 0 // no subscriber matched: the platform answers page 0 (get-activity-feed)
		}
		return platform.JSON(w, http.StatusOK, map[string]any{
			"hasMore": hasMore, "data": data, "pageSize": len(data), "page": page,
		})
	})
}

// notificationQuery is the query of GET /v1/notifications, read: the
// filters, and those that name subscribers, which are resolved to them.
type notificationQuery struct {
	f                     listFilter
	subscriberIDs, emails []string
	search                string
}

// readNotificationQuery reads the filters of GET /v1/notifications
// (docs/api.md, "Notifications"): a value no filter can hold is a 422, an
// unreadable time or an empty range a 400.
func readNotificationQuery(q *platform.Query) (nq notificationQuery, err error) {
	nq.f = listFilter{
		page:          q.Int("page", 0, 0, 1<<30),
		limit:         q.Int("limit", 10, 1, 50),
		channels:      q.Strings("channels"),
		templates:     q.Strings("templates"),
		severity:      q.Strings("severity"),
		transactionID: q.Strings("transactionId"),
		topicKey:      q.String("topicKey"),
		contextKeys:   q.Strings("contextKeys"),
	}
	nq.subscriberIDs, nq.emails, nq.search = q.Strings("subscriberIds"), q.Strings("emails"), q.String("search")
	after, before := q.String("after"), q.String("before")
	for _, sev := range nq.f.severity {
		if !slices.Contains([]string{"high", "medium", "low", "none"}, sev) {
			q.Fail("severity", sev, "must be one of: high, medium, low, none")
		}
	}
	// A typo in a filter would otherwise read as "no events".
	for _, ch := range nq.f.channels {
		if !slices.Contains([]string{"in_app", "email", "sms", "chat", "push"}, ch) {
			q.Fail("channels", ch, "must be one of: in_app, email, sms, chat, push")
		}
	}
	for _, id := range nq.f.templates {
		if !sqldb.IsID(id) {
			q.Fail("templates", id, "must be a 24-character hex id")
		}
	}
	if err := q.Err(); err != nil {
		return nq, err
	}
	if nq.f.after, err = queryTime(after, "after"); err != nil {
		return nq, err
	}
	if nq.f.before, err = queryTime(before, "before"); err != nil {
		return nq, err
	}
	if !nq.f.after.IsZero() && !nq.f.before.IsZero() && nq.f.after.After(nq.f.before) {
		return nq, platform.BadRequest("Invalid date range: after (%s) is later than before (%s)",
			sqldb.FormatTime(nq.f.after), sqldb.FormatTime(nq.f.before))
	}
	return nq, nil
}

// notificationPage reads one page of the environment's notifications as
// nq asks, with their jobs in the shape sh, and whether a later page has
// any. Filters that name subscribers are resolved to them first, any of
// them matching, as the platform does; rows is nil when none matched.
func (s *Store) notificationPage(ctx context.Context, env string, nq notificationQuery, subscribers Subscribers, sh shape) (rows []notificationRow, jobs map[string][]jobResponse, hasMore bool, err error) {
	f := nq.f
	if len(nq.subscriberIDs) > 0 || len(nq.emails) > 0 || nq.search != "" {
		if f.subscribers, err = subscribers.SubscribersMatching(ctx, env, nq.subscriberIDs, nq.emails, nq.search); err != nil {
			return nil, nil, false, err
		}
		if len(f.subscribers) == 0 {
			return nil, nil, false, nil
		}
	}
	rows, jobs, err = s.readNotifications(ctx, sh, func(q querier) (rows []notificationRow, err error) {
		rows, hasMore, err = listNotifications(ctx, q, s.notificationsSQL, env, f)
		return rows, err
	})
	if rows == nil && err == nil {
		rows = []notificationRow{}
	}
	return rows, jobs, hasMore, err
}

// handleNotificationGet serves GET /v1/notifications/{notificationId}: one
// triggered event with its jobs and their execution details, in order.
func handleNotificationGet(s *Store, subscribers Subscribers) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		id := r.PathValue("notificationId")
		env := platform.TenantFrom(ctx).EnvironmentID
		notFound := &platform.Error{Status: http.StatusNotFound, Message: "Notification not found",
			Extra: map[string]any{"cause": "Notification with id " + id + " not found"}}
		if !sqldb.IsID(id) {
			return notFound
		}
		rows, jobs, err := s.readNotifications(ctx, shapeOne, func(q querier) ([]notificationRow, error) {
			row, err := getNotification(ctx, q, env, id)
			return []notificationRow{row}, err
		})
		if errors.Is(err, platform.ErrNotFound) {
			return notFound
		}
		if err != nil {
			return err
		}
		data, err := s.render(ctx, env, rows, jobs, subscribers, false)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, data[0])
	})
}

// queryTime reads an ISO 8601 query value; an unreadable one is a 400, as
// the reference answers.
func queryTime(s, name string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := sqldb.ParseTime(s)
	if err != nil {
		if d, derr := time.Parse("2006-01-02", s); derr == nil {
			return d, nil
		}
		return time.Time{}, platform.BadRequest("Invalid date format for parameter '%s': %q is not an ISO 8601 date", name, s)
	}
	return t, nil
}
