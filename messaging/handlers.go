package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// handleFeed serves GET /v1/subscribers/{subscriberId}/notifications/feed:
// the subscriber's in_app messages, newest first (docs/api.md, "The feed"
// and "Lists and paging").
func handleFeed(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx, env := r.Context(), platform.TenantFrom(r.Context()).EnvironmentID
		q := platform.NewQuery(r)
		f := feedFilter{
			page:  q.Int("page", 0, 0, math.MaxInt32),
			limit: q.Int("limit", 10, 1, 100),
			read:  q.Bool("read"),
			seen:  q.Bool("seen"),
		}
		if p := q.String("payload"); p != "" {
			matches, err := parsePayloadFilter(p)
			switch {
			case errors.Is(err, errPayloadEncoding):
				q.Malformed("payload", p, err.Error())
			case err != nil:
				q.Fail("payload", p, err.Error())
			}
			f.payload = matches
		}
		if err := q.Err(); err != nil {
			return err
		}
		subID, sum, err := s.resolveSubscriber(ctx, env, r.PathValue("subscriberId"))
		if err != nil {
			return err
		}
		f.subscriberID, f.withSummary = subID, sum == nil
		f.organizationID = platform.TenantFrom(ctx).OrganizationID
		rows, total, err := s.feed(ctx, env, f)
		if err != nil {
			return err
		}
		hasMore := f.page*f.limit+len(rows) < total
		buf := pageBodies.Get().(*[]byte)
		defer pageBodies.Put(buf)
		*buf = appendFeedPage((*buf)[:0], total, hasMore, rows, sum, f.page)
		return platform.WriteJSON(w, http.StatusOK, *buf)
	})
}

// handleMarkAs serves POST /v1/subscribers/{subscriberId}/messages/mark-as
// (docs/api.md, "Mark-as"). Only the subscriber's own messages of this
// environment are changed and returned; other ids are ignored, as the
// reference platform does (docs/api.md, "Mark-as"), so marking a message
// deleted a moment ago is not an error.
func handleMarkAs(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx, env := r.Context(), platform.TenantFrom(r.Context()).EnvironmentID
		req, err := platform.Decode[*markAsRequest](r)
		if err != nil {
			return err
		}
		subID, _, err := s.resolveSubscriber(ctx, env, r.PathValue("subscriberId"))
		if err != nil {
			return err
		}
		rows, err := s.markAs(ctx, env, subID, req.ids, req.MarkAs, s.now())
		if err != nil {
			return err
		}
		return s.writeMarked(ctx, w, env, subID, rows)
	})
}

// markAsRequest is the mark-as body: messageId is one id or a non-empty
// array of ids.
type markAsRequest struct {
	MessageID json.RawMessage `json:"messageId"`
	MarkAs    string          `json:"markAs" validate:"required,oneof=read seen unread unseen"`
	ids       []string
}

// Valid checks messageId, which may be a string or an array of strings.
func (m *markAsRequest) Valid(context.Context) map[string]string {
	if m == nil { // the body was JSON null
		return map[string]string{"messageId": "is required", "markAs": "is required"}
	}
	if len(m.MessageID) == 0 || string(m.MessageID) == "null" {
		return map[string]string{"messageId": "is required"}
	}
	var one string
	if json.Unmarshal(m.MessageID, &one) == nil {
		if !sqldb.IsID(one) {
			return map[string]string{"messageId": "must be a 24-character hex id"}
		}
		m.ids = []string{one}
		return nil
	}
	var many []json.RawMessage
	if json.Unmarshal(m.MessageID, &many) != nil {
		return map[string]string{"messageId": "must be a string or an array of strings"}
	}
	// No upper bound but the body's size, as the reference platform: a
	// client may mark all it has read at once.
	if len(many) == 0 {
		return map[string]string{"messageId": "must contain at least one id"}
	}
	problems := map[string]string{}
	for i, raw := range many {
		var id string
		if json.Unmarshal(raw, &id) != nil || !sqldb.IsID(id) {
			problems[fmt.Sprintf("messageId.%d", i)] = "must be a 24-character hex id"
			continue
		}
		m.ids = append(m.ids, id)
	}
	return problems
}

// handleMessageList serves GET /v1/messages (docs/api.md, "Messages"):
// newest first, with the subscriber and the workflow embedded.
func handleMessageList(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx, env := r.Context(), platform.TenantFrom(r.Context()).EnvironmentID
		q := platform.NewQuery(r)
		f := listFilter{
			channel:        q.Enum("channel", "", channels...),
			transactionIDs: q.Strings("transactionId"),
			page:           q.Int("page", 0, 0, math.MaxInt32),
			limit:          q.Int("limit", 10, 1, 1000),
		}
		sid := q.String("subscriberId")
		if err := q.Err(); err != nil {
			return err
		}
		if sid != "" {
			id, _, err := s.resolveSubscriber(ctx, env, sid)
			if err != nil {
				return err
			}
			f.subscriberID = id
		}
		rows, total, err := s.list(ctx, env, f)
		if err != nil {
			return err
		}
		out, err := s.messageResponses(ctx, env, rows)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, page[messageResponse]{
			TotalCount: total, HasMore: f.page*f.limit+len(out) < total,
			Data: out, PageSize: len(out), Page: f.page,
		})
	})
}

// handleMessageDelete serves DELETE /v1/messages/{messageId}.
func handleMessageDelete(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		env, id := platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("messageId")
		if !sqldb.IsID(id) {
			return platform.NotFound("Message %s not found", id)
		}
		subID, err := s.deleteMessage(r.Context(), env, id)
		if errors.Is(err, platform.ErrNotFound) {
			return platform.NotFound("Message %s not found", id)
		} else if err != nil {
			return err
		}
		s.publish(LiveEvent{EnvironmentID: env, SubscriberID: subID, Kind: LiveChanged})
		return platform.JSON(w, http.StatusOK, map[string]any{"acknowledged": true, "status": "deleted"})
	})
}

// handleTransactionDelete serves DELETE /v1/messages/transaction/{transactionId}:
// every message of the transaction, or of one channel of it; 204
// (docs/api.md, "What strict clients check").
func handleTransactionDelete(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		env, txID := platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("transactionId")
		q := platform.NewQuery(r)
		channel := q.Enum("channel", "", channels...)
		if err := q.Err(); err != nil {
			return err
		}
		n, inApp, err := s.deleteTransaction(r.Context(), env, txID, channel)
		if err != nil {
			return err
		}
		if n == 0 {
			return platform.NotFound("No messages found for transactionId %s", txID)
		}
		for _, subID := range inApp {
			s.publish(LiveEvent{EnvironmentID: env, SubscriberID: subID, Kind: LiveChanged})
		}
		return platform.NoContent(w)
	})
}
