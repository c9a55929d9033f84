package sqldb

import (
	"context"
	"database/sql"
	"encoding/json"
	"sync"
	"sync/atomic"
)

// writeCacheLimit is a WriteCache's default bound; past it, the cache
// starts over.
const writeCacheLimit = 1024

// WriteCache keeps answers read from the database until the next write made
// through the store that owns it (which calls Invalidate, or Forget when the
// write changed one key's answer only). It suits data read on every request
// but rarely written, such as a workflow or an environment's integrations.
// On a database other processes write too (PostgreSQL), the owner also
// hears their writes through an Invalidations channel.
type WriteCache[V any] struct {
	Limit int // answers kept before the cache starts over; 0 means 1,024

	gen     atomic.Uint64 // bumped by every Invalidate
	mu      sync.Mutex
	forgets uint64 // Forget calls so far
	entries map[string]writeCacheEntry[V]
}

type writeCacheEntry[V any] struct {
	gen   uint64
	value V
}

// Invalidate forgets every cached answer.
func (c *WriteCache[V]) Invalidate() { c.gen.Add(1) }

// Forget forgets the answer for key, after a write that changed it and no
// other key's.
func (c *WriteCache[V]) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgets++
	delete(c.entries, key)
}

// Get returns the cached answer for key, or loads, caches and returns it.
func (c *WriteCache[V]) Get(key string, load func() (V, error)) (V, error) {
	return c.GetIf(key, func() (V, bool, error) {
		v, err := load()
		return v, true, err
	})
}

// GetIf is Get for answers that may depend on more than the owner's writes:
// load says whether its answer may be kept. The generation and the count of
// Forget calls are taken before loading, so an answer read while a write
// lands is never kept past that write.
func (c *WriteCache[V]) GetIf(key string, load func() (V, bool, error)) (V, error) {
	gen := c.gen.Load()
	c.mu.Lock()
	e, ok := c.entries[key]
	forgets := c.forgets
	c.mu.Unlock()
	if ok && e.gen == gen {
		return e.value, nil
	}
	v, keep, err := load()
	if err != nil || !keep {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.forgets == forgets { // else some key's answer was forgotten meanwhile, perhaps this one's
		c.keepLocked(key, gen, v)
	}
	return v, nil
}

// Loaded is one answer a GetMany load read, and whether it may be kept.
type Loaded[V any] struct {
	Value V
	Keep  bool
}

// GetMany is GetIf for many keys at once: the cached answers are taken as
// they are and the rest are read in one call, load(missing), which answers
// the keys it found. Keys that neither has are absent from the result.
func (c *WriteCache[V]) GetMany(keys []string, load func(missing []string) (map[string]Loaded[V], error)) (map[string]V, error) {
	gen := c.gen.Load()
	out := make(map[string]V, len(keys))
	var missing []string
	c.mu.Lock()
	for _, key := range keys {
		if e, ok := c.entries[key]; ok && e.gen == gen {
			out[key] = e.value
		} else {
			missing = append(missing, key)
		}
	}
	forgets := c.forgets
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	loaded, err := load(missing)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, l := range loaded {
		out[key] = l.Value
		if l.Keep && c.forgets == forgets {
			c.keepLocked(key, gen, l.Value)
		}
	}
	return out, nil
}

// keepLocked caches v for key as read at generation gen; c.mu is held.
func (c *WriteCache[V]) keepLocked(key string, gen uint64, v V) {
	limit := c.Limit
	if limit <= 0 {
		limit = writeCacheLimit
	}
	if c.entries == nil || len(c.entries) >= limit {
		c.entries = map[string]writeCacheEntry[V]{}
	}
	c.entries[key] = writeCacheEntry[V]{gen: gen, value: v}
}

// Invalidations carries, between the processes sharing a PostgreSQL
// database, what each one's writes changed, for the caches of one store:
// the writer sends the keys inside its transaction (Changed), so the others
// hear them when, and only if, it commits, and forget their answers for
// them. A cache that hears nothing for a while is not stale for it: a lost
// listener connection resets every cache (Listen), so only the moment
// between a commit and its notification's arrival, milliseconds, is.
// On SQLite one process owns the database and Changed does nothing.
type Invalidations struct {
	db      *DB
	channel string
}

// Invalidations listens on channel for the keys other processes' writes
// changed, calling forget with each, and reset when a write named none
// (everything changed) or notifications may have been missed. forget nil
// resets on every notification.
func (db *DB) Invalidations(channel string, forget func(key string), reset func()) Invalidations {
	db.Listen(channel, Listener{
		Notified: func(payload string) {
			var keys []string
			if forget == nil || payload == "" || json.Unmarshal([]byte(payload), &keys) != nil {
				reset()
				return
			}
			for _, k := range keys {
				forget(k)
			}
		},
		Reset: reset,
	})
	return Invalidations{db: db, channel: channel}
}

// Changed tells the other processes that the answers for keys changed, when
// tx commits (tx nil: now); no keys, or more than a notification carries,
// tell them that everything did. Keys travel as JSON, so they may hold any
// character, NUL included, which PostgreSQL text cannot.
func (inv Invalidations) Changed(ctx context.Context, tx *sql.Tx, keys ...string) error {
	if inv.db == nil || !inv.db.Postgres {
		return nil
	}
	payload := ""
	if len(keys) > 0 {
		b, _ := json.Marshal(keys) // strings cannot fail to marshal
		if len(b) <= NotifyLimit {
			payload = string(b)
		}
	}
	return inv.db.Notify(ctx, tx, inv.channel, payload)
}
