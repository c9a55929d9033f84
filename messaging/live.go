package messaging

import (
	"maps"
	"slices"
	"sync"
)

// LiveKind is what happened to a subscriber's inbox.
type LiveKind int

const (
	// LiveReceived: a message arrived (delivered, or back from a snooze).
	LiveReceived LiveKind = iota + 1
	// LiveChanged: messages were read, seen, archived, snoozed or deleted.
	LiveChanged
	// LiveSeen: messages were only marked seen.
	LiveSeen
)

// LiveEvent says that a subscriber's inbox changed. It is small on
// purpose: the counts and the message an inbox socket is sent are read
// where the socket is, so a bus that carries events between instances
// (the shared database's notifications) has only this to carry.
type LiveEvent struct {
	EnvironmentID string
	SubscriberID  string // the subscriber's _id
	MessageID     string // for LiveReceived
	Kind          LiveKind
}

// LiveBus carries live events from where messages change to the sockets
// that listen for their subscriber. Publish never blocks, and deliver
// functions must not either.
type LiveBus interface {
	Publish(ev LiveEvent)
	// Subscribe calls deliver with each event of one subscriber until
	// cancel is called.
	Subscribe(environmentID, subscriberID string, deliver func(LiveEvent)) (cancel func())
}

// MemoryBus is the LiveBus of one process: it fans events out in memory
// to that process's sockets.
type MemoryBus struct {
	mu   sync.RWMutex
	subs map[string]map[*func(LiveEvent)]struct{} // by environment and subscriber _id
}

// NewMemoryBus returns an empty in-memory bus.
func NewMemoryBus() *MemoryBus {
	return &MemoryBus{subs: map[string]map[*func(LiveEvent)]struct{}{}}
}

// Publish hands ev to every listener of its subscriber; a subscriber with
// none costs a map lookup.
func (b *MemoryBus) Publish(ev LiveEvent) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for fn := range b.subs[liveKey(ev.EnvironmentID, ev.SubscriberID)] {
		(*fn)(ev)
	}
}

// Subscribe registers a listener of one subscriber.
func (b *MemoryBus) Subscribe(environmentID, subscriberID string, deliver func(LiveEvent)) func() {
	key := liveKey(environmentID, subscriberID)
	fn := &deliver
	b.mu.Lock()
	if b.subs[key] == nil {
		b.subs[key] = map[*func(LiveEvent)]struct{}{}
	}
	b.subs[key][fn] = struct{}{}
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs[key], fn)
			if len(b.subs[key]) == 0 {
				delete(b.subs, key)
			}
			b.mu.Unlock()
		})
	}
}

// keys returns the environment and subscriber keys (liveKey) that have
// listeners now.
func (b *MemoryBus) keys() []string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return slices.Collect(maps.Keys(b.subs))
}

// publish announces ev when the store has a bus.
func (s *Store) publish(ev LiveEvent) {
	if s.live != nil {
		s.live.Publish(ev)
	}
}
