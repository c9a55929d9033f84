package messaging

import (
	"context"
	"database/sql"
	"encoding/json"
	"sync"

	"github.com/herald-notify/herald/sqldb"
)

// pageCacheBytes bounds what a pageCache holds, by pageSize's estimate;
// past it, the cache starts over.
const pageCacheBytes = 24 << 20

// pagesPerOwner is the most queries a pageCache keeps for one subscriber:
// an inbox shows a few tabs (all, unread, archived), each its own query.
const pagesPerOwner = 4

// pageCache keeps the pages of subscribers' feeds and inboxes read lately,
// until a write changes that subscriber's messages. A client reads its
// inbox far more often than the inbox changes: on open, on every focus,
// after every mark. Each page is kept under its owner (pageOwner) and
// the query that read it, whose text and arguments decide its rows.
//
// A read takes the cache's epoch before it asks the database, and keeps
// its answer only if no write was forgotten meanwhile (forget bumps the
// epoch): an answer read while a write commits is never kept past it.
// Writers forget after they commit (Store.pagesChanged), so a read that
// starts later sees their rows.
type pageCache struct {
	mu     sync.Mutex
	epoch  uint64
	owners map[string]map[string]cachedPage
	bytes  int
}

type cachedPage struct {
	value any
	size  int
}

// pageOwner is the key of one subscriber's pages.
func pageOwner(env, subscriberID string) string { return env + "\x00" + subscriberID }

// get returns the page query read for owner, if it is kept, and the epoch
// to keep an answer read now with.
func (c *pageCache) get(owner, query string) (any, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.owners[owner][query]
	return p.value, ok, c.epoch
}

// keep holds value, of size bytes, as owner's answer to query, read at
// epoch; an answer read before a write forgotten since is dropped.
func (c *pageCache) keep(owner, query string, epoch uint64, value any, size int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if epoch != c.epoch || size > pageCacheBytes/64 {
		return
	}
	if c.owners == nil || c.bytes+size > pageCacheBytes {
		c.owners, c.bytes = map[string]map[string]cachedPage{}, 0
	}
	pages := c.owners[owner]
	if len(pages) >= pagesPerOwner {
		c.dropLocked(owner)
		pages = nil
	}
	if pages == nil {
		pages = map[string]cachedPage{}
		c.owners[owner] = pages
	}
	pages[query] = cachedPage{value: value, size: size}
	c.bytes += size
}

// forget drops the pages of owners; none drops every page.
func (c *pageCache) forget(owners ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	if len(owners) == 0 {
		c.owners, c.bytes = nil, 0
		return
	}
	for _, o := range owners {
		c.dropLocked(o)
	}
}

func (c *pageCache) dropLocked(owner string) {
	for _, p := range c.owners[owner] {
		c.bytes -= p.size
	}
	delete(c.owners, owner)
}

// pagesChannel carries, between the processes sharing a database, the
// subscribers whose pages a write changed (sqldb.Invalidations). A new
// in-app message needs none: the insert that stores it notifies the live
// channel, which listenPages hears too.
const pagesChannel = "herald_pages"

// listenPages makes s's page cache hear the other processes' writes, on a
// shared database: their announcements on pagesChannel, and their new
// messages on the live channel. A lost listener connection drops every
// page.
func (s *Store) listenPages() {
	if !s.db.Shared() {
		return
	}
	reset := func() { s.pages.forget() }
	s.pageChanges = s.db.Invalidations(pagesChannel, func(owner string) { s.pages.forget(owner) }, reset)
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
					s.pages.forget(pageOwner(ev.E, ev.S))
				}
			}
		},
		Reset: reset,
	})
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

// cachedPageOf returns owner's answer to query: the cached one, or
// read's, which is kept when it has no error. size estimates an answer's
// bytes.
func cachedPageOf[V any](s *Store, owner, query string, read func() (V, error), size func(V) int) (V, error) {
	if query == "" || !s.cachesPages() {
		return read()
	}
	cached, ok, epoch := s.pages.get(owner, query)
	if ok {
		return cached.(V), nil
	}
	v, err := read()
	if err == nil {
		s.pages.keep(owner, query, epoch, v, size(v))
	}
	return v, err
}

// pageQuery is the key of a page under its owner: the statement's
// condition and arguments, which decide its rows, and the rest of what
// the read was asked.
func pageQuery(cond string, args []any, rest ...any) string {
	b, err := json.Marshal(append(append([]any{cond}, args...), rest...))
	if err != nil { // not kept: "" is no query (cachedPageOf)
		return ""
	}
	return string(b)
}

// rowBytes is a page row's estimated bytes beyond its texts.
const rowBytes = 400

// size estimates m's bytes in memory.
func (m *message) size() int {
	n := rowBytes + len(m.ID) + len(m.EnvironmentID) + len(m.OrganizationID) + len(m.JobID) + len(m.NotificationID) +
		len(m.SubscriberID) + len(m.TemplateID) + len(m.MessageTemplateID) + len(m.TemplateIdentifier) +
		len(m.TransactionID) + len(m.ProviderID) + len(m.Content) + len(m.CTA) + len(m.Payload) + len(m.Overrides) +
		len(m.Data) + len(m.Tags) + len(m.Actor) + len(m.SubscriberSummary) + len(m.DeliveredAt) + len(m.CreatedAt) + len(m.UpdatedAt)
	for _, p := range []*string{m.Subject, m.Avatar, m.LastReadDate, m.LastSeenDate} {
		if p != nil {
			n += len(*p)
		}
	}
	return n
}

// size estimates m's bytes in memory.
func (m *inboxMessage) size() int {
	n := rowBytes + len(m.ID) + len(m.OrganizationID) + len(m.NotificationID) + len(m.SubscriberID) + len(m.TemplateID) +
		len(m.TransactionID) + len(m.Content) + len(m.CTA) + len(m.Data) + len(m.Tags) + len(m.DeliveredAt) +
		len(m.CreatedAt) + len(m.UpdatedAt)
	for _, p := range []*string{m.Subject, m.Avatar, m.LastReadDate, m.LastSeenDate, m.FirstSeenDate, m.ArchivedAt, m.SnoozedUntil} {
		if p != nil {
			n += len(*p)
		}
	}
	return n
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
