package messaging

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// handleMessageAction serves POST
// /v1/subscribers/{subscriberId}/messages/{messageId}/actions/{type}: the
// message's action set to status, with the button clicked (type) and what
// the client sent with it kept as its result (docs/api.md, "Calls to
// action"). It answers 201 with the message, as the reference platform
// does.
func handleMessageAction(s *Store) http.Handler {
	type request struct {
		Status  string         `json:"status" validate:"required,oneof=pending done"`
		Payload map[string]any `json:"payload"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		button := r.PathValue("type")
		if button != "primary" && button != "secondary" {
			return platform.InvalidField("type", button, "must be one of: primary, secondary")
		}
		req, err := platform.Decode[request](r)
		if err != nil {
			return err
		}
		ctx, env := r.Context(), platform.TenantFrom(r.Context()).EnvironmentID
		subID, _, err := s.resolveSubscriber(ctx, env, r.PathValue("subscriberId"))
		if err != nil {
			return err
		}
		id := r.PathValue("messageId")
		m, err := s.setAction(ctx, env, subID, id, button, req.Status, req.Payload)
		if errors.Is(err, platform.ErrNotFound) {
			return platform.NotFound("Message with id %s not found", id)
		}
		if err != nil {
			return err
		}
		s.publish(LiveEvent{EnvironmentID: env, SubscriberID: subID, Kind: LiveChanged})
		out, err := s.messageResponses(ctx, env, []*message{m})
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusCreated, out[0])
	})
}

// setAction writes the action of one of the subscriber's messages: its
// status, and its result {type, payload}. A message without a call to
// action gets one holding only the action.
func (s *Store) setAction(ctx context.Context, env, subscriberID, id, button, status string, payload map[string]any) (*message, error) {
	if !sqldb.IsID(id) {
		return nil, platform.ErrNotFound
	}
	var out *message
	err := s.db.Tx(ctx, func(tx *sql.Tx) error {
		var raw []byte
		err := tx.QueryRowContext(ctx, `SELECT `+ctaColumn+` FROM messages WHERE environment_id = ? AND subscriber_id = ? AND id = ?`,
			env, subscriberID, id).Scan(&raw)
		if errors.Is(err, sql.ErrNoRows) {
			return platform.ErrNotFound
		}
		if err != nil {
			return err
		}
		cta, err := withAction(raw, button, status, payload)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE messages SET cta = ?, updated_at = ? WHERE id = ?`,
			cta, sqldb.FormatTime(s.now()), id)
		if err != nil {
			return err
		}
		if err := s.pagesChanged(ctx, tx, env, subscriberID); err != nil {
			return err
		}
		rows, err := queryMessages(ctx, tx, `SELECT `+messageColumns+` FROM messages WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return platform.ErrNotFound
		}
		out = rows[0]
		return nil
	})
	if err != nil && !errors.Is(err, platform.ErrNotFound) {
		return nil, fmt.Errorf("set action of message %s: %w", id, err)
	}
	return out, err
}

// withAction is the stored cta with its action's status and result set,
// its other members (the buttons, the redirect) kept as they are.
func withAction(raw []byte, button, status string, payload map[string]any) ([]byte, error) {
	cta := map[string]any{}
	if len(raw) > 0 && json.Unmarshal(raw, &cta) != nil || cta == nil {
		cta = map[string]any{}
	}
	if _, ok := cta["type"]; !ok {
		cta["type"] = "redirect"
	}
	action, _ := cta["action"].(map[string]any)
	if action == nil {
		action = map[string]any{"buttons": []any{}}
	}
	result := map[string]any{"type": button}
	if payload != nil {
		result["payload"] = payload
	}
	action["status"], action["result"] = status, result
	cta["action"] = action
	return json.Marshal(cta)
}
