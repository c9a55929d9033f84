package messaging

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// DefaultPageCache is the memory a Store keeps feed and inbox pages in
// (KeepPages). It is mapped apart from the Go heap (mapRing), so the pages
// it holds do not raise how far the heap grows between collections, which
// is a multiple of what each collection keeps (app.TuneGC).
const DefaultPageCache = 24 << 20

// pageStripes is how many epochs a pageCache keeps (stripe):
// a write forgets its owners' pages and bumps their stripes' epochs only,
// so that a busy service's deliveries to some subscribers do not keep
// every other subscriber's page from being kept.
const pageStripes = 256

// pagesPerOwner is the most queries a pageCache keeps for one subscriber:
// an inbox shows a few tabs (all, unread, archived), each its own query.
const pagesPerOwner = 4

// pageCache keeps the pages of subscribers' feeds and inboxes read lately,
// until a write changes that subscriber's messages. A client reads its
// inbox far more often than the inbox changes: on open, on every focus,
// after every mark. Each page is kept under its owner (pageOwner) and
// the query that read it, whose text and arguments decide its rows,
// encoded (encodeRows) in a ring: a page written at its end wraps to its
// start, over the oldest pages.
//
// A read takes its owner's epoch before it asks the database, and keeps
// its answer only if no write to that owner (or to another of its stripe)
// was forgotten meanwhile (forget bumps the epoch): an answer read while
// a write commits is never kept past it. Writers forget after they
// commit (Store.pagesChanged), so a read that starts later sees their
// rows.
type pageCache struct {
	size   atomic.Int64 // bytes of the ring; 0 keeps nothing
	mu     sync.Mutex
	epochs [pageStripes]uint64
	ring   []byte // mapped on the first keep (mapRing)
	lap    uint64 // times the ring was wrapped
	pos    int    // where the next page goes; [0, pos) is this lap's
	owners map[string]map[string]pageRef
}

// pageRef is where a page lies in the ring.
type pageRef struct {
	lap    uint64
	off, n int
}

// pageOwner is the key of one subscriber's pages.
func pageOwner(env, subscriberID string) string { return env + "\x00" + subscriberID }

// stripe is the index of owner's epoch: an FNV-1a hash of it.
func stripe(owner string) int {
	h := uint32(2166136261)
	for i := 0; i < len(owner); i++ {
		h = (h ^ uint32(owner[i])) * 16777619
	}
	return int(h % pageStripes)
}

// get returns a copy of the page query read for owner, if it is kept,
// and the epoch to keep an answer read now with.
func (c *pageCache) get(owner, query string) ([]byte, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	epoch := c.epochs[stripe(owner)]
	ref, ok := c.owners[owner][query]
	if !ok || !c.intact(ref) {
		return nil, false, epoch
	}
	return bytes.Clone(c.ring[ref.off : ref.off+ref.n]), true, epoch
}

// intact reports whether no later page was written over ref: one of this
// lap, or of the last one past where this lap has reached.
func (c *pageCache) intact(ref pageRef) bool {
	return ref.lap == c.lap || ref.lap+1 == c.lap && ref.off >= c.pos
}

// keep holds page as owner's answer to query, read at epoch; an answer
// read before a write forgotten since is dropped, and so is a page
// larger than a sixteenth of the ring.
func (c *pageCache) keep(owner, query string, epoch uint64, page []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	size := int(c.size.Load())
	if epoch != c.epochs[stripe(owner)] || len(page) > size/16 {
		return
	}
	if len(c.ring) != size { // the first page, or KeepPages changed the size
		ring, err := mapRing(size)
		if err != nil {
			return
		}
		unmapRing(c.ring)
		c.ring, c.lap, c.pos, c.owners = ring, c.lap+2, 0, nil
	}
	if c.pos+len(page) > len(c.ring) {
		c.lap, c.pos = c.lap+1, 0
		c.dropOverwritten()
	}
	ref := pageRef{lap: c.lap, off: c.pos, n: len(page)}
	c.pos += copy(c.ring[c.pos:], page)
	if c.owners == nil {
		c.owners = map[string]map[string]pageRef{}
	}
	pages := c.owners[owner]
	if pages == nil || len(pages) >= pagesPerOwner {
		pages = map[string]pageRef{}
		c.owners[owner] = pages
	}
	pages[query] = ref
}

// dropOverwritten forgets the pages the new lap will write over: those
// of the lap before last, so that the index does not outgrow the ring.
func (c *pageCache) dropOverwritten() {
	for owner, pages := range c.owners {
		for q, ref := range pages {
			if ref.lap+1 < c.lap {
				delete(pages, q)
			}
		}
		if len(pages) == 0 {
			delete(c.owners, owner)
		}
	}
}

// forget drops the pages of owners; none drops every page.
func (c *pageCache) forget(owners ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(owners) == 0 {
		for i := range c.epochs {
			c.epochs[i]++
		}
		c.owners = nil
		return
	}
	for _, o := range owners {
		c.epochs[stripe(o)]++
		delete(c.owners, o)
	}
}

// pageReads counts how feed and inbox pages were answered: kept, from
// the page cache, or read from the database; nothing until observePages.
type pageReads struct{ kept, read prometheus.Counter }

func (r pageReads) count(kept bool) {
	switch {
	case r.kept == nil:
	case kept:
		r.kept.Inc()
	default:
		r.read.Inc()
	}
}

// observePages counts the store's page reads in m.
func (s *Store) observePages(m *platform.Metrics) {
	if m == nil {
		return
	}
	reads := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_inbox_pages_total",
		Help: "Pages of feeds and inboxes answered from the pages kept in memory (kept) or read from the database (read).",
	}, []string{"result"})
	m.MustRegister(reads)
	s.pageReads = pageReads{kept: reads.WithLabelValues("kept"), read: reads.WithLabelValues("read")}
}

// pagesChannel carries, between the processes sharing a database, the
// subscribers whose pages a write changed (sqldb.Invalidations). A new
// in-app message needs none: the insert that stores it notifies the live
// channel, which listenPages hears too.
const pagesChannel = "herald_pages"

// processPages is the key of the database's page cache among what its
// users share (sqldb.DB.ProcessWide).
type processPages struct{}

// sharedPages is what every Store of this process on one database shares:
// the kept pages, and the channel that carries the other processes'
// writes.
type sharedPages struct {
	cache   *pageCache
	changes sqldb.Invalidations
}

// listenPages gives s the database's page cache, made and, on a shared
// database, made to hear the other processes' writes on first use: their
// announcements on pagesChannel, and their new messages on the live
// channel. A lost listener connection drops every page.
func (s *Store) listenPages() {
	shared := s.db.ProcessWide(processPages{}, func() any {
		c := &pageCache{}
		c.size.Store(DefaultPageCache)
		p := sharedPages{cache: c}
		if !s.db.Shared() {
			return p
		}
		reset := func() { c.forget() }
		p.changes = s.db.Invalidations(pagesChannel, func(owner string) { c.forget(owner) }, reset)
		s.db.Listen(liveChannel, sqldb.Listener{
			Notified: func(payload string) {
				var evs []liveWire
				if json.Unmarshal([]byte(payload), &evs) != nil {
					reset()
					return
				}
				for _, ev := range evs {
					// Other kinds follow writes that announce themselves on
					// pagesChannel, in their transaction; live events are sent
					// after it, and may be dropped.
					if ev.K == LiveReceived {
						c.forget(pageOwner(ev.E, ev.S))
					}
				}
			},
			Reset: reset,
		})
		return p
	}).(sharedPages)
	s.pages, s.pageChanges = shared.cache, shared.changes
}

// KeepPages sets how many bytes of memory keep feed and inbox pages
// between writes (DefaultPageCache unless set); 0 keeps none. Every Store
// of this process on the database shares the pages.
func (s *Store) KeepPages(bytes int) *Store {
	s.pages.size.Store(int64(max(bytes, 0)))
	return s
}

// cachesPages reports whether s keeps pages: always on a database of its
// own; on a shared one only with a SharedBus, whose live channel carries
// the other processes' new messages.
func (s *Store) cachesPages() bool {
	if !s.db.Shared() {
		return true
	}
	_, ok := s.live.(*SharedBus)
	return ok
}

// pagesChanged forgets the pages of the environment's subscribers once tx
// commits (now, when tx is nil), and, on a shared database, tells the
// other processes in tx.
func (s *Store) pagesChanged(ctx context.Context, tx *sql.Tx, env string, subscriberIDs ...string) error {
	if len(subscriberIDs) == 0 {
		return nil
	}
	owners := make([]string, len(subscriberIDs))
	for i, id := range subscriberIDs {
		owners[i] = pageOwner(env, id)
	}
	return s.forgetPages(ctx, tx, owners)
}

// allPagesChanged is pagesChanged for a write that may have changed any
// subscriber's pages.
func (s *Store) allPagesChanged(ctx context.Context, tx *sql.Tx) error {
	return s.forgetPages(ctx, tx, nil)
}

func (s *Store) forgetPages(ctx context.Context, tx *sql.Tx, owners []string) error {
	forget := func() { s.pages.forget(owners...) }
	if tx == nil {
		forget()
	} else {
		s.db.AfterCommit(tx, forget)
	}
	return s.pageChanges.Changed(ctx, tx, owners...)
}

// cachedPageOf returns owner's answer to query: the kept one, or read's,
// which is kept when it has no error.
func cachedPageOf[V any](s *Store, owner, query string, read func() (V, error),
	encode func(V, []byte) []byte, decode func([]byte) (V, error)) (V, error) {
	if query == "" || s.pages.size.Load() == 0 || !s.cachesPages() {
		return read()
	}
	page, ok, epoch := s.pages.get(owner, query)
	if ok {
		if v, err := decode(page); err == nil {
			s.pageReads.count(true)
			return v, nil
		}
	}
	s.pageReads.count(false)
	v, err := read()
	if err == nil {
		s.pages.keep(owner, query, epoch, encode(v, nil))
	}
	return v, err
}

// pageQuery is the key of a page under its owner: the statement's
// condition and arguments, which decide its rows, and the rest of what
// the read was asked, as their SHA-256, so that the index holds 32 bytes
// a page rather than the statement's text.
func pageQuery(cond string, args []any, rest ...any) string {
	b, err := json.Marshal(append(append([]any{cond}, args...), rest...))
	if err != nil { // not kept: "" is no query (cachedPageOf)
		return ""
	}
	sum := sha256.Sum256(b)
	return string(sum[:])
}

// inAppChanged is pagesChanged for m's subscriber, when m is in-app: no
// other message shows in a feed or an inbox.
func (s *Store) inAppChanged(ctx context.Context, tx *sql.Tx, m *message) error {
	if m.Channel != "in_app" {
		return nil
	}
	return s.pagesChanged(ctx, tx, m.EnvironmentID, m.SubscriberID)
}

// forgetPagesHere forgets owners' pages in this process once tx commits,
// for a write the other processes hear of otherwise.
func (s *Store) forgetPagesHere(tx *sql.Tx, owners ...string) {
	s.db.AfterCommit(tx, func() { s.pages.forget(owners...) })
}
