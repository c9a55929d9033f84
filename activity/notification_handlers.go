package activity

import (
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
		q := platform.NewQuery(r)
		f := listFilter{
			page:          q.Int("page", 0, 0, 1<<30),
			limit:         q.Int("limit", 10, 1, 50),
			channels:      q.Strings("channels"),
			templates:     q.Strings("templates"),
			severity:      q.Strings("severity"),
			transactionID: q.Strings("transactionId"),
			topicKey:      q.String("topicKey"),
			contextKeys:   q.Strings("contextKeys"),
		}
		subscriberIDs, emails, search := q.Strings("subscriberIds"), q.Strings("emails"), q.String("search")
		after, before := q.String("after"), q.String("before")
		for _, sev := range f.severity {
			if !slices.Contains([]string{"high", "medium", "low", "none"}, sev) {
				q.Fail("severity", sev, "must be one of: high, medium, low, none")
			}
		}
		// A typo in a filter would otherwise read as "no events".
		for _, ch := range f.channels {
			if !slices.Contains([]string{"in_app", "email", "sms", "chat", "push"}, ch) {
				q.Fail("channels", ch, "must be one of: in_app, email, sms, chat, push")
			}
		}
		for _, id := range f.templates {
			if !sqldb.IsID(id) {
				q.Fail("templates", id, "must be a 24-character hex id")
			}
		}
		if err := q.Err(); err != nil {
			return err
		}
		var err error
		if f.after, err = queryTime(after, "after"); err != nil {
			return err
		}
		if f.before, err = queryTime(before, "before"); err != nil {
			return err
		}
		if !f.after.IsZero() && !f.before.IsZero() && f.after.After(f.before) {
			return platform.BadRequest("Invalid date range: after (%s) is later than before (%s)",
				sqldb.FormatTime(f.after), sqldb.FormatTime(f.before))
		}
		ctx := r.Context()
		env := platform.TenantFrom(ctx).EnvironmentID
		// The platform resolves these filters to subscribers, any of them
		// matching, and answers page 0 when none does (get-activity-feed).
		if len(subscriberIDs) > 0 || len(emails) > 0 || search != "" {
			if f.subscribers, err = subscribers.SubscribersMatching(ctx, env, subscriberIDs, emails, search); err != nil {
				return err
			}
			if len(f.subscribers) == 0 {
				return platform.JSON(w, http.StatusOK, map[string]any{"hasMore": false, "data": []any{}, "pageSize": 0, "page": 0})
			}
		}
		var hasMore bool
		rows, jobs, err := s.readNotifications(ctx, true, func(q querier) (rows []notificationRow, err error) {
			rows, hasMore, err = listNotifications(ctx, q, s.notificationsSQL, env, f)
			return rows, err
		})
		if err != nil {
			return err
		}
		data, err := render(ctx, env, rows, jobs, subscribers, true)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, map[string]any{
			"hasMore": hasMore, "data": data, "pageSize": len(data), "page": f.page,
		})
	})
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
		rows, jobs, err := s.readNotifications(ctx, false, func(q querier) ([]notificationRow, error) {
			row, err := getNotification(ctx, q, env, id)
			return []notificationRow{row}, err
		})
		if errors.Is(err, platform.ErrNotFound) {
			return notFound
		}
		if err != nil {
			return err
		}
		data, err := render(ctx, env, rows, jobs, subscribers, false)
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
