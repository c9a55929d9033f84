package messaging

import (
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
// (PostgreSQL's LISTEN/NOTIFY) has only this to carry.
type LiveEvent struct {
	EnvironmentID string
	SubscriberID  string // the subscriber's _id
	MessageID     string // for LiveReceived
	Kind          LiveKind
}

// LiveBus carries live events from where messages change to the sockets
// that listen for their subscriber. Publish never blocks.
type LiveBus interface {
	Publish(ev LiveEvent)
	// Subscribe returns the events of one subscriber until cancel is called.
	Subscribe(environmentID, subscriberID string) (events <-chan LiveEvent, cancel func())
}

// MemoryBus is the LiveBus of one process: it fans events out in memory
// to that process's sockets.
type MemoryBus struct {
	mu   sync.RWMutex
	subs map[string]map[chan LiveEvent]struct{} // by environment and subscriber _id
}

// NewMemoryBus returns an empty in-memory bus.
func NewMemoryBus() *MemoryBus {
	return &MemoryBus{subs: map[string]map[chan LiveEvent]struct{}{}}
}

// liveBuffer is how many events a socket may fall behind by; past it, the
// oldest news is dropped rather than the publisher blocked (the counts an
// event brings are read when it is sent, so a later one carries them).
const liveBuffer = 64

// Publish hands ev to every socket of its subscriber; a subscriber with no
// socket costs a map lookup.
func (b *MemoryBus) Publish(ev LiveEvent) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	for ch := range b.subs[ev.EnvironmentID+"\x00"+ev.SubscriberID] {
		select {
		case ch <- ev:
		default:
		}
	}
}

// Subscribe registers a socket of one subscriber.
func (b *MemoryBus) Subscribe(environmentID, subscriberID string) (<-chan LiveEvent, func()) {
	key := environmentID + "\x00" + subscriberID
	ch := make(chan LiveEvent, liveBuffer)
	b.mu.Lock()
	if b.subs[key] == nil {
		b.subs[key] = map[chan LiveEvent]struct{}{}
	}
	b.subs[key][ch] = struct{}{}
	b.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs[key], ch)
			if len(b.subs[key]) == 0 {
				delete(b.subs, key)
			}
			b.mu.Unlock()
		})
	}
}

// publish announces ev when the store has a bus.
func (s *Store) publish(ev LiveEvent) {
	if s.live != nil {
		s.live.Publish(ev)
	}
}
