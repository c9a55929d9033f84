package sqldb

import (
	"encoding/binary"
	"hash/maphash"
	"sync"
)

// ByteCache is a WriteCache for many small byte answers, each forgotten on
// its own (there is no Invalidate): it keeps them in one byte arena, found
// through a map of hashes to offsets, so that the collector sees two
// objects where a map of strings to slices holds two per entry. A cache of
// 100,000 subscriber identities held in a WriteCache gave the collector
// 200,000 objects to mark on every cycle, and the p99 of requests that
// never read it rose.
//
// The answers it returns share the arena: callers must not modify them.
type ByteCache struct {
	Limit int // answers kept before the cache starts over; 0 means 1,024

	mu      sync.Mutex
	forgets uint64 // Forget calls so far
	seed    maphash.Seed
	stored  int               // entries written to arena
	index   map[uint64]uint32 // hash of a key → offset of its entry in arena
	arena   []byte            // entries: key length, value length (4+4 bytes), key, value
}

// Forget forgets the answer for key, after a write that changed it and no
// other key's. Its bytes stay in the arena until the cache starts over.
func (c *ByteCache) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgets++
	if c.index != nil {
		delete(c.index, maphash.String(c.seed, key))
	}
}

// Get returns the cached answer for key, or loads, caches and returns it.
// As in WriteCache, the count of Forget calls is taken before loading, so
// an answer read while a write lands is never kept past that write.
func (c *ByteCache) Get(key string, load func() ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	v, ok := c.lookup(key)
	forgets := c.forgets
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := load()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.forgets == forgets {
		c.store(key, v)
	}
	return v, nil
}

// lookup finds key's entry. Two keys may share a hash: the entry's key is
// compared, and the later of the two replaces the other.
func (c *ByteCache) lookup(key string) ([]byte, bool) {
	if c.index == nil {
		return nil, false
	}
	off, ok := c.index[maphash.String(c.seed, key)]
	if !ok {
		return nil, false
	}
	e := c.arena[off:]
	klen, vlen := binary.LittleEndian.Uint32(e), binary.LittleEndian.Uint32(e[4:])
	if string(e[8:8+klen]) != key {
		return nil, false
	}
	return e[8+klen : 8+klen+vlen : 8+klen+vlen], true
}

// store keeps v for key. The arena holds at most Limit entries, counted as
// written (so that forgotten entries, and two keys that share a hash and
// replace each other, cannot grow it without bound); past that the cache
// starts over.
func (c *ByteCache) store(key string, v []byte) {
	limit := c.Limit
	if limit <= 0 {
		limit = writeCacheLimit
	}
	if c.index == nil || c.stored >= limit || uint64(len(c.arena)) > 1<<31 {
		// A new arena, not the old one truncated: answers handed out
		// still point into the old one.
		c.seed, c.stored = maphash.MakeSeed(), 0
		c.index, c.arena = map[uint64]uint32{}, nil
	}
	c.stored++
	off := uint32(len(c.arena))
	c.arena = binary.LittleEndian.AppendUint32(c.arena, uint32(len(key)))
	c.arena = binary.LittleEndian.AppendUint32(c.arena, uint32(len(v)))
	c.arena = append(append(c.arena, key...), v...)
	c.index[maphash.String(c.seed, key)] = off
}

// Reset forgets every answer, when they may have changed in ways no Forget
// named: another process's writes went unheard.
func (c *ByteCache) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgets++
	// A new arena next time, not this one truncated: answers handed out
	// still point into it.
	c.index, c.arena, c.stored = nil, nil, 0
}
