package platform

import (
	"bytes"
	"sync"
)

// parseCacheLimit bounds a ParseCache; past it, the cache starts over.
const parseCacheLimit = 10_000

// ParseCache keeps what was parsed from a JSON document another domain
// answered, for as long as that domain answers the same bytes. Domains
// exchange JSON (their contracts are JSON-shaped), and a hot path that
// parses the same cached document on every request (a trigger's workflow,
// a feed's owner) spends more on parsing than on anything else.
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
