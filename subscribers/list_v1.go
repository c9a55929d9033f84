package subscribers

import (
	"context"
	"net/http"

	"github.com/herald-notify/herald/platform"
)

// handleSubscriberListV1 serves GET /v1/subscribers: the environment's
// subscribers a page at a time, newest first, as the reference platform's
// older clients list them (docs/api.md, "Subscribers"). page is
// 0-based; limit is 1..100, default 10.
func handleSubscriberListV1(store *Store) http.Handler {
	type pageResponse struct {
		Page     int          `json:"page"`
		HasMore  bool         `json:"hasMore"`
		PageSize int          `json:"pageSize"`
		Data     []Subscriber `json:"data"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		q := platform.NewQuery(r)
		page, limit := q.Int("page", 0, 0, 10_000), q.Int("limit", 10, 1, 100)
		if err := q.Err(); err != nil {
			return err
		}
		ctx := r.Context()
		subs, more, err := store.listPage(ctx, platform.TenantFrom(ctx).EnvironmentID, page, limit)
		if err != nil {
			return err
		}
		out := pageResponse{Page: page, HasMore: more, PageSize: len(subs), Data: make([]Subscriber, len(subs))}
		for i, s := range subs {
			out.Data[i] = s.toResponse(false)
		}
		return platform.JSON(w, http.StatusOK, out)
	})
}

// listPage reads one page of subscribers, newest first, and whether a later
// page has any: it asks for one row more than the page holds.
func (s *Store) listPage(ctx context.Context, environmentID string, page, limit int) (subs []*subscriber, more bool, err error) {
	defer platform.Wrap(&err, "list subscribers")
	rows, err := s.db.Query(ctx, `SELECT `+subscriberColumns+` FROM subscribers
		WHERE environment_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
		environmentID, limit+1, page*limit)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	subs = []*subscriber{}
	for rows.Next() {
		sub, err := s.scanSubscriber(rows)
		if err != nil {
			return nil, false, err
		}
		subs = append(subs, sub)
	}
	if err := rows.Err(); err != nil {
		return nil, false, err
	}
	if len(subs) > limit {
		subs, more = subs[:limit], true
	}
	return subs, more, s.resolveChannels(ctx, environmentID, subs)
}
