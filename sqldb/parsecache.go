package sqldb

import (
	"bytes"
	"sync"
)

// parseCacheLimit bounds a ParseCache; past it, the cache starts over.
const parseCacheLimit = 10_000

// ParseCache keeps what was parsed from a stored JSON document for as long
// as the same bytes come back: a job's step snapshot and controls, which
// every job of a step carries unchanged, or an integration's credentials.
// A hot path that parses the same document on every run spends more on
// parsing than on the work.
type ParseCache[V any] struct {
	mu      sync.Mutex
	entries map[string]parsed[V]
}

type parsed[V any] struct {
	raw   []byte
	value V
}

// Get returns parse(raw), from the cache when key last parsed the same
// bytes. The value is shared between callers: they must not modify it.
func (c *ParseCache[V]) Get(key string, raw []byte, parse func([]byte) (V, error)) (V, error) {
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && bytes.Equal(e.raw, raw) {
		return e.value, nil
	}
	v, err := parse(raw)
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	if c.entries == nil || len(c.entries) >= parseCacheLimit {
		c.entries = map[string]parsed[V]{}
	}
	c.entries[key] = parsed[V]{raw: raw, value: v}
	c.mu.Unlock()
	return v, nil
}
