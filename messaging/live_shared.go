package messaging

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/herald-notify/herald/sqldb"
)

// liveChannel is the notification channel that carries live events
// between the Herald processes sharing a database.
const liveChannel = "herald_inbox"

// NewLiveBus returns the LiveBus for db: a MemoryBus on SQLite, where one
// process holds every socket, and a SharedBus on a shared database, where a
// subscriber's socket may be held by any of several processes.
func NewLiveBus(db *sqldb.DB, logger *slog.Logger) LiveBus {
	if !db.Shared() {
		return NewMemoryBus()
	}
	return NewSharedBus(db, logger)
}

// SharedBus is the LiveBus of several processes on one shared database.
// An event goes to this process's sockets as on a MemoryBus, and to the
// others' with NOTIFY on liveChannel: a delivered message's in the
// statement that stores it (queries.insertNotify), so that they hear of
// it when, and only if, its transaction commits; any other right after its
// write, from a goroutine that packs the events waiting into as few
// notifications as fit. Each process LISTENs and hands what the others
// notify to its own sockets. An event is small (LiveEvent): the receiving
// process reads the message and counts it sends where the socket is, from
// the same database.
type SharedBus struct {
	local  *MemoryBus
	db     *sqldb.DB
	logger *slog.Logger

	mu      sync.Mutex
	pending []LiveEvent // waiting to be notified
	sending bool        // a goroutine is notifying them
}

// NewSharedBus returns a SharedBus on db, listening for the other
// processes' events; logger hears of events that could not be sent.
func NewSharedBus(db *sqldb.DB, logger *slog.Logger) *SharedBus {
	if logger == nil {
		logger = slog.Default()
	}
	b := &SharedBus{local: NewMemoryBus(), db: db, logger: logger}
	db.Listen(liveChannel, sqldb.Listener{Notified: b.received, Reset: b.resync})
	return b
}

// maxPendingLive bounds the events waiting to be notified; past it they
// are dropped, as a MemoryBus's slow sockets drop theirs (the counts come
// with the next event).
const maxPendingLive = 10000

// notifyTimeout bounds one NOTIFY sent outside a transaction.
const notifyTimeout = 5 * time.Second

// Publish hands ev to this process's sockets, and queues it for the
// others; it never waits on the database.
func (b *SharedBus) Publish(ev LiveEvent) {
	b.local.Publish(ev)
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) >= maxPendingLive {
		return
	}
	b.pending = append(b.pending, ev)
	if !b.sending {
		b.sending = true
		go b.send()
	}
}

// wire is the payload of a NOTIFY on liveChannel that tells the other
// processes of ev, for a statement that notifies itself
// (queries.insertNotify).
func (b *SharedBus) wire(ev LiveEvent) string {
	return b.db.NotifyPayload(packLive([]LiveEvent{ev})[0])
}

// Subscribe registers a listener of one subscriber's events, from this
// process and the others.
func (b *SharedBus) Subscribe(environmentID, subscriberID string, deliver func(LiveEvent)) func() {
	return b.local.Subscribe(environmentID, subscriberID, deliver)
}

// send notifies the pending events until none is left; events published
// meanwhile go with the next notification.
func (b *SharedBus) send() {
	for {
		b.mu.Lock()
		batch := b.pending
		b.pending = nil
		if len(batch) == 0 {
			b.sending = false
			b.mu.Unlock()
			return
		}
		b.mu.Unlock()
		for _, payload := range packLive(batch) {
			ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
			err := b.db.Notify(ctx, nil, liveChannel, payload)
			cancel()
			if err != nil {
				b.logger.Warn("live inbox events not sent to the other instances", "error", err)
			}
		}
	}
}

// received hands the events another process notified to this process's
// sockets.
func (b *SharedBus) received(payload string) {
	var evs []liveWire
	if json.Unmarshal([]byte(payload), &evs) != nil {
		return
	}
	for _, w := range evs {
		b.local.Publish(LiveEvent{EnvironmentID: w.E, SubscriberID: w.S, MessageID: w.M, Kind: w.K})
	}
}

// resync runs when the listener (re)connects, after which events of the
// other processes may have been missed: each subscriber with a socket here
// is sent its counts again.
func (b *SharedBus) resync() {
	for _, key := range b.local.keys() {
		env, sub, _ := strings.Cut(key, "\x00")
		b.local.Publish(LiveEvent{EnvironmentID: env, SubscriberID: sub, Kind: LiveChanged})
	}
}

// liveWire is a LiveEvent as a notification carries it.
type liveWire struct {
	E string   `json:"e"`
	S string   `json:"s"`
	M string   `json:"m,omitempty"`
	K LiveKind `json:"k"`
}

// packLive encodes evs as JSON arrays of at most sqldb.NotifyLimit
// bytes each.
func packLive(evs []LiveEvent) []string {
	var out []string
	b := []byte{'['}
	for _, ev := range evs {
		one, err := json.Marshal(liveWire{E: ev.EnvironmentID, S: ev.SubscriberID, M: ev.MessageID, K: ev.Kind})
		if err != nil || len(one)+2 > sqldb.NotifyLimit {
			continue
		}
		if len(b)+len(one)+1 > sqldb.NotifyLimit {
			out = append(out, string(append(b[:len(b)-1], ']')))
			b = []byte{'['}
		}
		b = append(append(b, one...), ',')
	}
	if len(b) > 1 {
		out = append(out, string(append(b[:len(b)-1], ']')))
	}
	return out
}
