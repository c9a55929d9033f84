package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Several Herald processes on one PostgreSQL database tell each other what
// changed with NOTIFY, sent inside the writing transaction so it is heard
// only if, and once, the write commits. Each process LISTENs on one
// connection of its own. A notification missed while that connection was
// down cannot be recovered, so every handler is told to start over (reset)
// each time the listener connects; the listener pings every listenPing, so
// a dead connection is found, and caches dropped, within about that long.
// On SQLite one process owns the database and Notify does nothing.

// listenPing is how long the listener waits for a notification before it
// checks its connection and takes in new channels.
const listenPing = time.Second

// NotifyLimit is the largest payload PostgreSQL carries, less a margin.
const NotifyLimit = 7900

// Notify tells the other processes on channel, when tx commits; tx nil
// sends at once. payload must be at most NotifyLimit bytes. The sender
// hears nothing of its own notifications: it knows already.
func (db *DB) Notify(ctx context.Context, tx *sql.Tx, channel, payload string) error {
	if !db.Postgres {
		return nil
	}
	if len(payload) > NotifyLimit {
		return errors.New("notify " + channel + ": payload too large")
	}
	const q = `SELECT pg_notify(?, ?)`
	var err error
	if tx != nil {
		_, err = tx.ExecContext(ctx, q, channel, db.NotifyPayload(payload))
	} else {
		_, err = db.w.ExecContext(ctx, q, channel, db.NotifyPayload(payload))
	}
	return err
}

// NotifyPayload is payload as Notify sends it, for a statement that calls
// pg_notify itself: after this process's instance ID and a newline, so the
// listener knows its own.
func (db *DB) NotifyPayload(payload string) string { return db.instance + "\n" + payload }

// A Listener is told what another process notified on its channel, and to
// reset (forget everything it derived from the database) when
// notifications may have been missed: on the listener's every connect.
type Listener struct {
	Notified func(payload string)
	Reset    func()
}

// listeners runs the LISTEN connection of a PostgreSQL DB.
type listeners struct {
	mu      sync.Mutex
	byChan  map[string][]Listener
	started bool
	stop    chan struct{}
	stopped chan struct{}
	logger  *slog.Logger
}

// Listen calls l for every notification on channel from another process.
// It does nothing on SQLite.
func (db *DB) Listen(channel string, l Listener) {
	if !db.Postgres {
		return
	}
	ls := &db.listen
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.byChan == nil {
		ls.byChan = map[string][]Listener{}
	}
	ls.byChan[channel] = append(ls.byChan[channel], l)
	if !ls.started {
		ls.started, ls.stop, ls.stopped = true, make(chan struct{}), make(chan struct{})
		go db.listenLoop()
	}
}

// SetLogger sets where the listener reports a lost connection.
func (db *DB) SetLogger(l *slog.Logger) {
	db.listen.mu.Lock()
	db.listen.logger = l
	db.listen.mu.Unlock()
}

func (db *DB) listenLoop() {
	ls := &db.listen
	defer close(ls.stopped)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-ls.stop; cancel() }()
	for ctx.Err() == nil {
		err := db.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		ls.mu.Lock()
		logger := ls.logger
		ls.mu.Unlock()
		if logger != nil {
			logger.Warn("listener connection lost; caches are dropped and it reconnects", "error", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(listenPing):
		}
	}
}

// listenOnce connects, listens on every channel, resets every listener and
// relays notifications until the connection fails or ctx ends.
func (db *DB) listenOnce(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, db.pgConfig)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	listening := map[string]bool{}
	for first := true; ; first = false {
		chans := db.listen.channels()
		for _, ch := range chans {
			if !listening[ch] {
				if _, err := conn.Exec(ctx, `LISTEN `+pgx.Identifier{ch}.Sanitize()); err != nil {
					return err
				}
				listening[ch] = true
				if !first {
					db.listen.reset(ch) // it may have missed some before it listened
				}
			}
		}
		if first {
			for _, ch := range chans {
				db.listen.reset(ch)
			}
		}
		wctx, cancel := context.WithTimeout(ctx, listenPing)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			from, payload, _ := strings.Cut(n.Payload, "\n")
			if from != db.instance {
				db.listen.notify(n.Channel, payload)
			}
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			if err := conn.Ping(ctx); err != nil {
				return err
			}
		default:
			return err
		}
	}
}

func (ls *listeners) channels() []string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return slices.Collect(maps.Keys(ls.byChan))
}

func (ls *listeners) of(ch string) []Listener {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.byChan[ch]
}

func (ls *listeners) reset(ch string) {
	for _, l := range ls.of(ch) {
		if l.Reset != nil {
			l.Reset()
		}
	}
}

func (ls *listeners) notify(ch, payload string) {
	for _, l := range ls.of(ch) {
		if l.Notified != nil {
			l.Notified(payload)
		}
	}
}

// closeListen stops the listener, if it runs.
func (db *DB) closeListen() {
	ls := &db.listen
	ls.mu.Lock()
	started := ls.started
	ls.mu.Unlock()
	if started {
		close(ls.stop)
		<-ls.stopped
	}
}
