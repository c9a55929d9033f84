package activity_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/activity"
	"github.com/herald-notify/herald/sqldb"
)

// TestSweeper_SweepsInBatchesAndGivesPagesBack: the sweeper runs a task's
// batches to the end, counts what they removed, skips a task kept forever,
// and on a new file (auto_vacuum=INCREMENTAL) leaves no free page behind.
func TestSweeper_SweepsInBatchesAndGivesPagesBack(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	db, err := sqldb.Open(ctx, filepath.Join(t.TempDir(), "sweep.db"))
	is.NoErr(err) // opened
	defer db.Close()
	var mode int
	is.NoErr(db.QueryRowContext(context.Background(), `PRAGMA auto_vacuum`).Scan(&mode))
	is.Equal(mode, 2) // a new file vacuums incrementally
	_, err = db.ExecContext(context.Background(), `CREATE TABLE t (id INTEGER PRIMARY KEY, at INTEGER, body TEXT)`)
	is.NoErr(err)
	_, err = db.ExecContext(context.Background(), `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
		INSERT INTO t SELECT i, i, randomblob(2000) FROM n`)
	is.NoErr(err) // 2,000 rows of 2 KB

	now := time.Unix(10000, 0)
	var batches int
	sweep := func(ctx context.Context, before time.Time, cursor string, limit int) (string, map[string]int64, error) {
		batches++
		res, err := db.ExecContext(ctx, `DELETE FROM t WHERE id IN (SELECT id FROM t WHERE at < ? LIMIT ?)`, before.Unix(), limit)
		if err != nil {
			return "", nil, err
		}
		n, _ := res.RowsAffected()
		next := ""
		if int(n) == limit {
			next = "more"
		}
		return next, map[string]int64{"t": n}, nil
	}
	var logs bytes.Buffer
	s := &activity.Sweeper{DB: db, Now: func() time.Time { return now }, Batch: 100, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Tasks: []activity.SweepTask{
			{Name: "t", Keep: 8000 * time.Second, Sweep: sweep}, // rows with at < 2000 expire
			{Name: "forever", Keep: 0, Sweep: sweep},            // never runs
		}}
	is.NoErr(s.Sweep(ctx))                             // swept
	is.Equal(s.Removed(), map[string]int64{"t": 1999}) // every expired row, counted
	is.Equal(batches, 20)                              // in batches of 100, the last one short
	var free, left int
	is.NoErr(db.QueryRowContext(context.Background(), `PRAGMA freelist_count`).Scan(&free))
	is.Equal(free, 0) // the freed pages given back
	is.NoErr(db.QueryRowContext(context.Background(), `SELECT count(*) FROM t`).Scan(&left))
	is.Equal(left, 1)                                  // the newer row kept
	is.True(strings.Contains(logs.String(), "t=1999")) // the log says what went
}
