package sqldb

import (
	"context"
	"hash/fnv"
)

// Exclusive runs fn unless another process sharing the database is running
// the work called name, and reports whether fn ran. Maintenance every
// instance schedules (the retention sweep) thus runs on one at a time, and
// another takes it up as soon as that one stops or dies: the lock is a
// session advisory lock, released with its connection. On SQLite, one
// process owns the database and fn always runs.
func (db *DB) Exclusive(ctx context.Context, name string, fn func(context.Context) error) (ran bool, err error) {
	if !db.Postgres {
		return true, fn(ctx)
	}
	conn, err := db.r.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	key := lockKey(name)
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(?)`, key).Scan(&ran); err != nil || !ran {
		return false, err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(?)`, key)
	return true, fn(ctx)
}

// lockKey is the advisory lock key of name.
func lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("herald/" + name))
	return int64(h.Sum64())
}
