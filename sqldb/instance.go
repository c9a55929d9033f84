package sqldb

import (
	"context"
	"database/sql"
	"sync"
	"time"
)

// Every Herald process sharing a PostgreSQL database beats in the instances
// table. What a process owns (a job's lease, an idempotency key in flight, a
// fan-out) carries its instance ID, and is taken over by another process
// only once the owner's beat is older than InstanceTTL: alive, an owner
// keeps what it holds even across another process's start.
//
// On SQLite one process owns the database: whatever a previous process held
// is free at start, and no beat is kept.

// Beat and TTL: a process that missed InstanceTTL/HeartbeatEvery beats in a
// row is dead to the others.
const (
	HeartbeatEvery = 2 * time.Second
	InstanceTTL    = 15 * time.Second
)

// Instance is this process's ID among those sharing the database.
func (db *DB) Instance() string { return db.instance }

// Shared reports whether other processes may use the database at once.
func (db *DB) Shared() bool { return db.Postgres }

// LiveSince is the oldest beat, at now, of a live instance; compare
// instances.heartbeat_at with it.
func LiveSince(now time.Time) string { return FormatTime(now.Add(-InstanceTTL)) }

// OwnerAliveSQL is a condition true while the instance whose ID is the
// expression owner beat since the time bound to its one placeholder
// (LiveSince). Only on a Shared database: SQLite keeps no beats.
func OwnerAliveSQL(owner string) string {
	return "EXISTS (SELECT 1 FROM instances i WHERE i.id = " + owner + " AND i.heartbeat_at > ?)"
}

// Beat records that this process is alive, now; Heartbeat calls it.
func (db *DB) Beat(ctx context.Context, now time.Time) error {
	if !db.Postgres {
		return nil
	}
	ts := FormatTime(now)
	_, err := db.w.ExecContext(ctx, `
		INSERT INTO instances (id, started_at, heartbeat_at) VALUES (?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`, db.instance, ts, ts)
	return err
}

// StartHeartbeat beats every HeartbeatEvery until the returned stop is
// called, which removes this instance's row so the others take over at once
// whatever it still holds: call it once the work it holds has stopped. Rows
// of instances dead for an hour are removed as it goes.
func (db *DB) StartHeartbeat(now func() time.Time) (stop func(context.Context)) {
	if !db.Postgres {
		return func(context.Context) {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(HeartbeatEvery)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-tick.C:
				// A failed beat is tried again at the next tick; missing a
				// few is what InstanceTTL allows for.
				ctx, cancel := context.WithTimeout(context.Background(), HeartbeatEvery)
				db.Beat(ctx, now())
				db.w.ExecContext(ctx, `DELETE FROM instances WHERE heartbeat_at < ?`, FormatTime(now().Add(-time.Hour)))
				cancel()
			}
		}
	}()
	var once sync.Once
	return func(ctx context.Context) {
		once.Do(func() {
			close(quit)
			<-done
			db.w.ExecContext(ctx, `DELETE FROM instances WHERE id = ?`, db.instance)
		})
	}
}

// LockKey takes a transaction-scoped lock on key, held until tx ends: the
// read-then-write logic SQLite serialises with its one writer is serialised
// across processes with it on PostgreSQL. It does nothing on SQLite.
func (db *DB) LockKey(ctx context.Context, tx *sql.Tx, key string) error {
	if !db.Postgres {
		return nil
	}
	_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(`+LockKeySQL+`)`, key)
	return err
}

// LockKeySQL is the advisory lock key LockKey computes from the text bound
// to its one placeholder, for a statement that takes the lock itself (in
// shared mode, say).
const LockKeySQL = "hashtextextended(?, 0)"
