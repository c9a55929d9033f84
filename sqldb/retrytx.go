package sqldb

import (
	"context"
	"database/sql"
)

// retryTxAttempts bounds how often RetryTx runs a transaction PostgreSQL
// rolled back; each retry waits on the lock it lost, so few are needed.
const retryTxAttempts = 5

// RetryTx is Tx run again while PostgreSQL rolls it back to break a
// deadlock or a serialization conflict (IsRetryable): transactions that
// take locks (LockKey, FOR UPDATE) in an order their data decides may meet
// another process's in the other order. fn must be safe to run again: it
// starts over on a fresh transaction. On SQLite it is Tx.
func (db *DB) RetryTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	var err error
	for range retryTxAttempts {
		if err = db.Tx(ctx, fn); !IsRetryable(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}
