package messaging

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// The routes older clients of the reference platform call
// (docs/compatibility.md, "Legacy routes"), served as aliases of what Herald
// already does: their bodies are read in the old shape and answered as the
// modern route answers.

// legacyMarkRequest is the body of POST …/messages/markAs: messageId as
// mark-as takes it, and which flags to set.
type legacyMarkRequest struct {
	MessageID json.RawMessage `json:"messageId"`
	Mark      *struct {
		Seen *bool `json:"seen"`
		Read *bool `json:"read"`
	} `json:"mark"`
	ids []string
}

// Valid checks messageId as mark-as does, and that mark sets something.
func (m *legacyMarkRequest) Valid(ctx context.Context) map[string]string {
	if m == nil {
		return map[string]string{"messageId": "is required", "mark": "is required"}
	}
	ids := &markAsRequest{MessageID: m.MessageID}
	problems := ids.Valid(ctx)
	if problems == nil {
		problems = map[string]string{}
	}
	m.ids = ids.ids
	if m.Mark == nil || (m.Mark.Seen == nil && m.Mark.Read == nil) {
		problems["mark"] = "must set seen, read or both"
	}
	return problems
}

// marks are the mark-as operations a legacy mark stands for, seen first:
// read and unread set seen too, so a read flag has the last word on it.
func (m *legacyMarkRequest) marks() []string {
	var out []string
	if s := m.Mark.Seen; s != nil {
		out = append(out, map[bool]string{true: "seen", false: "unseen"}[*s])
	}
	if r := m.Mark.Read; r != nil {
		out = append(out, map[bool]string{true: "read", false: "unread"}[*r])
	}
	return out
}

// handleLegacyMarkAs serves POST /v1/subscribers/{subscriberId}/messages/markAs,
// the older form of mark-as: {messageId, mark: {seen?, read?}}. It answers
// what mark-as answers.
func handleLegacyMarkAs(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx, env := r.Context(), platform.TenantFrom(r.Context()).EnvironmentID
		req, err := platform.Decode[*legacyMarkRequest](r)
		if err != nil {
			return err
		}
		subID, _, err := s.resolveSubscriber(ctx, env, r.PathValue("subscriberId"))
		if err != nil {
			return err
		}
		var rows []*message
		for _, mark := range req.marks() {
			if rows, err = s.markAs(ctx, env, subID, req.ids, mark, s.now()); err != nil {
				return err
			}
		}
		return s.writeMarked(ctx, w, env, subID, rows)
	})
}

// writeMarked announces a mark-as to the subscriber's live inbox and
// answers it: the marked messages, each with the contextKeys only that
// answer carries (docs/api.md, "Messages"), and 201.
func (s *Store) writeMarked(ctx context.Context, w http.ResponseWriter, env, subID string, rows []*message) error {
	s.publish(LiveEvent{EnvironmentID: env, SubscriberID: subID, Kind: LiveChanged})
	out, err := s.messageResponses(ctx, env, rows)
	if err != nil {
		return err
	}
	for i := range out {
		out[i].ContextKeys = &[]string{}
	}
	return platform.JSON(w, http.StatusCreated, out)
}

// markAllRequest is the body of POST …/messages/mark-all.
type markAllRequest struct {
	MarkAs         string          `json:"markAs" validate:"required,oneof=read seen unread unseen"`
	FeedIdentifier json.RawMessage `json:"feedIdentifier"`
}

// Valid accepts feedIdentifier as a string or an array of strings.
func (m *markAllRequest) Valid(context.Context) map[string]string {
	if m == nil {
		return map[string]string{"markAs": "is required"}
	}
	if len(m.FeedIdentifier) == 0 || string(m.FeedIdentifier) == "null" {
		return nil
	}
	var one string
	var many []string
	if json.Unmarshal(m.FeedIdentifier, &one) != nil && json.Unmarshal(m.FeedIdentifier, &many) != nil {
		return map[string]string{"feedIdentifier": "must be a string or an array of strings"}
	}
	return nil
}

// handleMarkAll serves POST /v1/subscribers/{subscriberId}/messages/mark-all:
// every in-app message of the subscriber takes the state, and the answer is
// how many changed. Herald's messages belong to no feed, so a
// feedIdentifier matches none of them.
func handleMarkAll(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx, env := r.Context(), platform.TenantFrom(r.Context()).EnvironmentID
		req, err := platform.Decode[*markAllRequest](r)
		if err != nil {
			return err
		}
		subID, _, err := s.resolveSubscriber(ctx, env, r.PathValue("subscriberId"))
		if err != nil {
			return err
		}
		n := 0
		if len(req.FeedIdentifier) == 0 || string(req.FeedIdentifier) == "null" {
			if n, err = s.markAll(ctx, env, subID, req.MarkAs); err != nil {
				return err
			}
		}
		s.publish(LiveEvent{EnvironmentID: env, SubscriberID: subID, Kind: LiveChanged})
		return platform.JSON(w, http.StatusCreated, n)
	})
}

// markAll sets mark on every in-app message of the subscriber not already
// in that state, and returns how many it changed.
func (s *Store) markAll(ctx context.Context, env, subscriberID, mark string) (int, error) {
	// What mark-as sets, and which messages it would change.
	op, ok := map[string]struct{ set, unlike string }{
		"read":   {"read = 1, seen = 1, last_read_date = ?1, last_seen_date = ?1", "NOT (read = 1 AND seen = 1)"},
		"unread": {"read = 0, seen = 1, last_read_date = ?1, last_seen_date = ?1", "NOT (read = 0 AND seen = 1)"},
		"seen":   {"seen = 1, last_seen_date = ?1", "seen = 0"},
		"unseen": {"seen = 0, last_seen_date = ?1", "seen = 1"},
	}[mark]
	if !ok {
		return 0, fmt.Errorf("mark all as %q", mark)
	}
	query := `UPDATE messages SET ` + op.set + `, updated_at = ?1
		WHERE environment_id = ?2 AND subscriber_id = ?3 AND channel = 'in_app' AND ` + op.unlike
	args := []any{sqldb.FormatTime(s.now()), env, subscriberID}
	event, ok := markEvents[mark]
	if !ok || !s.wantsAny(ctx, env, event) {
		res, err := s.db.ExecContext(ctx, query, args...)
		if err != nil {
			return 0, fmt.Errorf("mark all messages %s: %w", mark, err)
		}
		n, err := res.RowsAffected()
		if err == nil && n > 0 {
			err = s.pagesChanged(ctx, nil, env, subscriberID)
		}
		return int(n), err
	}
	var n int
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		ids, err := returningIDs(ctx, tx, query, args...)
		n = len(ids)
		if err != nil {
			return err
		}
		if err := s.pagesChanged(ctx, tx, env, subscriberID); err != nil {
			return err
		}
		return s.raiseFor(ctx, tx, env, event, ids, nil)
	})
	if err != nil {
		return 0, fmt.Errorf("mark all messages %s: %w", mark, err)
	}
	return n, nil
}

// handleUnseenCount serves GET /v1/subscribers/{subscriberId}/notifications/unseen:
// {count} of the subscriber's in-app messages with seen as asked (default
// false), at most limit (default and maximum 100), as the feed counts them.
func handleUnseenCount(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx, env := r.Context(), platform.TenantFrom(r.Context()).EnvironmentID
		q := platform.NewQuery(r)
		seen, limit := q.Bool("seen"), q.Int("limit", 100, 1, 100)
		if err := q.Err(); err != nil {
			return err
		}
		if seen == nil {
			seen = new(bool)
		}
		subID, _, err := s.resolveSubscriber(ctx, env, r.PathValue("subscriberId"))
		if err != nil {
			return err
		}
		var n int
		err = s.db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM messages
			WHERE environment_id = ? AND subscriber_id = ? AND channel = 'in_app' AND seen = ? LIMIT ?) AS page`,
			env, subID, sqldb.Flag(*seen), limit).Scan(&n)
		if err != nil {
			return fmt.Errorf("count unseen messages: %w", err)
		}
		return platform.JSON(w, http.StatusOK, map[string]int{"count": n})
	})
}
