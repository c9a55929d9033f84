package subscribers

import (
	"context"
	"database/sql"
	"errors"
	"net/http"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// A subscriber is online while any process holds a live inbox socket of
// its: each process records in subscriber_sockets the subscribers it
// holds one for, and the last socket to close anywhere sets it offline and
// stamps lastOnlineAt (docs/inbox.md, "Online status").

// SocketsOpened records that this process holds a live inbox socket of the
// subscriber whose _id is subscriberRef, and sets it online.
func (s *Store) SocketsOpened(ctx context.Context, environmentID, subscriberRef string) (err error) {
	defer platform.Wrap(&err, "subscriber online")
	return s.presence(ctx, environmentID, subscriberRef, func(tx *sql.Tx) (bool, error) {
		_, err := tx.ExecContext(ctx, `INSERT INTO subscriber_sockets (subscriber_ref, instance_id) VALUES (?, ?)
			ON CONFLICT (subscriber_ref, instance_id) DO NOTHING`, subscriberRef, s.db.Instance())
		return true, err
	})
}

// SocketsClosed records that this process no longer holds any live inbox
// socket of the subscriber, and sets it offline when no live process does.
func (s *Store) SocketsClosed(ctx context.Context, environmentID, subscriberRef string) (err error) {
	defer platform.Wrap(&err, "subscriber offline")
	return s.presence(ctx, environmentID, subscriberRef, func(tx *sql.Tx) (bool, error) {
		_, err := tx.ExecContext(ctx, `DELETE FROM subscriber_sockets WHERE subscriber_ref = ? AND instance_id = ?`,
			subscriberRef, s.db.Instance())
		if err != nil {
			return false, err
		}
		held, args := `SELECT count(*) FROM subscriber_sockets WHERE subscriber_ref = ?`, []any{subscriberRef}
		if s.db.Shared() {
			// A process that died holding a socket no longer does.
			held, args = held+` AND `+sqldb.OwnerAliveSQL("instance_id"), append(args, sqldb.LiveSince(s.now()))
		}
		var n int
		if err := tx.QueryRowContext(ctx, held, args...).Scan(&n); err != nil {
			return false, err
		}
		return n > 0, nil
	})
}

// presence runs record in a write of the subscriber that then sets it
// online as record answers, as the reference platform does: lastOnlineAt
// is when it went offline.
func (s *Store) presence(ctx context.Context, environmentID, subscriberRef string, record func(*sql.Tx) (bool, error)) error {
	var subscriberID string
	err := s.db.QueryRowContext(ctx, `SELECT subscriber_id FROM subscribers WHERE id = ? AND environment_id = ?`,
		subscriberRef, environmentID).Scan(&subscriberID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // deleted while its socket was open: nothing to mark
	}
	if err != nil {
		return err
	}
	defer s.changed(environmentID, subscriberID)
	return s.db.RetryTx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, environmentID, subscriberID); err != nil {
			return err
		}
		online, err := record(tx)
		if err != nil {
			return err
		}
		return s.setOnline(ctx, tx, subscriberRef, online)
	})
}

// setOnline writes the subscriber's online flag; going offline stamps
// lastOnlineAt.
func (s *Store) setOnline(ctx context.Context, tx *sql.Tx, subscriberRef string, online bool) error {
	if online {
		_, err := tx.ExecContext(ctx, `UPDATE subscribers SET is_online = 1 WHERE id = ?`, subscriberRef)
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE subscribers SET is_online = 0, last_online_at = ? WHERE id = ?`,
		sqldb.FormatTime(s.now()), subscriberRef)
	return err
}

// ResetPresence forgets the sockets of processes that are gone, and sets
// offline the subscribers none that remains holds one of. On SQLite one
// process owns the database, so at its start every earlier socket is gone;
// on PostgreSQL, those of instances whose beat stopped. Herald calls it at
// start, after its own first beat.
func (s *Store) ResetPresence(ctx context.Context) (err error) {
	defer platform.Wrap(&err, "reset online status")
	dead, args := `ss.instance_id <> ?`, []any{s.db.Instance()}
	if s.db.Shared() {
		dead, args = `NOT `+sqldb.OwnerAliveSQL("ss.instance_id"), []any{sqldb.LiveSince(s.now())}
	}
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT s.environment_id, s.subscriber_id FROM subscriber_sockets ss
		JOIN subscribers s ON s.id = ss.subscriber_ref WHERE `+dead, args...)
	if err != nil {
		return err
	}
	byEnv := map[string][]string{}
	for rows.Next() {
		var env, id string
		if err := rows.Scan(&env, &id); err != nil {
			rows.Close()
			return err
		}
		byEnv[env] = append(byEnv[env], id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for env, ids := range byEnv {
		if err := s.resetPresence(ctx, env, ids, dead, args); err != nil {
			return err
		}
	}
	return nil
}

// resetPresence drops the dead sockets of the environment's subscriberIDs,
// and sets offline those no live process holds one of.
func (s *Store) resetPresence(ctx context.Context, environmentID string, subscriberIDs []string, dead string, deadArgs []any) error {
	defer s.changed(environmentID, subscriberIDs...)
	return s.db.RetryTx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, environmentID, subscriberIDs...); err != nil {
			return err
		}
		in := sqldb.Placeholders(len(subscriberIDs))
		refs := `SELECT id FROM subscribers WHERE environment_id = ? AND subscriber_id IN (` + in + `)`
		refArgs := []any{environmentID}
		for _, id := range subscriberIDs {
			refArgs = append(refArgs, id)
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM subscriber_sockets AS ss WHERE `+dead+` AND ss.subscriber_ref IN (`+refs+`)`,
			append(append([]any{}, deadArgs...), refArgs...)...)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE subscribers SET is_online = 0, last_online_at = ?
			WHERE id IN (`+refs+`) AND id NOT IN (SELECT subscriber_ref FROM subscriber_sockets)`,
			append([]any{sqldb.FormatTime(s.now())}, refArgs...)...)
		return err
	})
}

// handleSubscriberOnlineStatus serves PATCH
// /v1/subscribers/{subscriberId}/online-status: the subscriber's isOnline
// set by hand, as its inbox sockets set it, answered as GET answers it.
func handleSubscriberOnlineStatus(store *Store) http.Handler {
	type request struct {
		IsOnline *bool `json:"isOnline" validate:"required_without=Online"`
		// Online is the name the reference's older Node client (2.6) sends
		// the flag under; isOnline wins when both are sent.
		Online *bool `json:"online"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[request](r)
		if err != nil {
			return err
		}
		if req.IsOnline == nil {
			req.IsOnline = req.Online
		}
		ctx, env := r.Context(), platform.TenantFrom(r.Context()).EnvironmentID
		id := r.PathValue("subscriberId")
		sub, err := store.getStored(ctx, env, id)
		if errors.Is(err, platform.ErrNotFound) {
			return platform.NotFound("Subscriber %q not found", id)
		}
		if err != nil {
			return err
		}
		err = store.presence(ctx, env, sub.ID, func(*sql.Tx) (bool, error) { return *req.IsOnline, nil })
		if err != nil {
			return err
		}
		sub, err = store.get(ctx, env, id)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, sub.toResponse(true))
	})
}
