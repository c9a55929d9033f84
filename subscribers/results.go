package subscribers

import (
	"context"
	"database/sql"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/herald-notify/herald/sqldb"
)

// A substring search that matches hundreds of subscribers costs the same
// on every page: the suffix index yields every candidate, each is checked,
// and all are sorted before the page is cut, and the count reads them all
// again. Paging through 1,000 matches 100 at a time did that ten times.
//
// resultCache keeps, per database, the sorted keys of such searches: the
// page is then a binary search in memory and the page's rows are fetched
// by rowid, and the count is the length of the list, exact. An entry is
// valid only for the write generation it was read under: every committed
// subscriber write bumps the generation (see Store.changed), so a search
// never answers from a list older than a write whose response was sent.
// Only substring searches with at least cacheMinEstimate candidates are
// kept, their keys only when they have at most driveLimit matches, and
// at most maxCachedResults searches.

const (
	maxCachedResults = 64
	cacheMinEstimate = 100 // fewer candidates than this: one page query is cheaper
)

// resultCache is one database's cache of search results.
type resultCache struct {
	gen      atomic.Uint64
	mu       sync.Mutex
	entries  map[string]cachedResult
	inflight map[string]*keysCall // reads of keys under way, by cache key

	// docs are subscribers by environment and subscriberId, as
	// Subscriber answers them: a trigger reads its recipient on every
	// request.
	docs sqldb.WriteCache[Subscriber]
	// preferences are what each subscriber set that bears on a workflow,
	// by environment, subscriber _id and workflow _id: every channel step
	// reads them (subscribed), and most subscribers never set any.
	preferences sqldb.WriteCache[Subscribed]
	// identities are what SubscriberIdentity answers, for feeds: small,
	// and as many as the inboxes being read, so kept where the collector
	// does not walk them one by one.
	identities sqldb.ByteCache
	// contexts are the environments' contexts by environment and
	// type:id (contextCacheKey): every trigger that names one, and every
	// step it sends, reads them, and they change only through this
	// package's writes (contextsChanged).
	contexts sqldb.WriteCache[Context]

	// written and preferencesWritten tell the other processes sharing the
	// database which subscribers a write changed, and that preferences
	// did, and bring their writes here (see listen).
	written            sqldb.Invalidations
	preferencesWritten sqldb.Invalidations
	// contextsWritten tells them which contexts a write changed.
	contextsWritten sqldb.Invalidations
}

// keysCall is one read of a search's keys that concurrent misses of the
// same search at the same generation wait for, instead of each reading
// them: 64 clients starting to page through the same match at once would
// otherwise all read it at once.
type keysCall struct {
	gen  uint64
	done chan struct{}
	keys []searchKey
	ok   bool // keys were read (the reader did not fail)
}

// cachedResult is the keys of every match of one search, ascending by
// (sort value, id), read at generation gen; nil keys when there were more
// than driveLimit.
type cachedResult struct {
	gen  uint64
	keys []searchKey
}

// searchKey is one match: its rowid and its position in the ordering.
type searchKey struct {
	seq       int64
	value, id string
}

func (k searchKey) less(o searchKey) bool {
	return k.value < o.value || (k.value == o.value && k.id < o.id)
}

// maxCachedDocs bounds the subscriber documents kept, about 4 MB of them.
const maxCachedDocs = 10_000

// maxCachedPreferences bounds the subscribers' preferences kept, one entry
// per subscriber and workflow delivered to: most are empty.
const maxCachedPreferences = 20_000

// maxCachedIdentities bounds the identities kept, about 18 MB of them in a
// ByteCache (an identity is about 110 bytes of JSON). Every feed request
// reads one, and the cache starts over when full: sized like the documents',
// it would miss most requests once more than 10,000 inboxes are read, and
// each miss is a query on the read pool (BenchmarkReads/feed reads inboxes
// at random). Held as a WriteCache, a full cache would be some 200,000 heap
// objects for the collector to mark on every cycle, which slows even the
// searches that never read it under load (scenario 4 of bench/README.md);
// a ByteCache is two.
const maxCachedIdentities = 100_000

// maxCachedContexts bounds the contexts kept; a context's data is at most
// MaxContextData, and most are a few fields.
const maxCachedContexts = 10_000

// resultCaches holds one resultCache per database, so that every Store on
// the same database sees the others' writes; resultCachesMu makes one.
var (
	resultCaches   sync.Map // *sqldb.DB → *resultCache
	resultCachesMu sync.Mutex
)

func cacheFor(db *sqldb.DB) *resultCache {
	if c, ok := resultCaches.Load(db); ok {
		return c.(*resultCache)
	}
	resultCachesMu.Lock()
	defer resultCachesMu.Unlock()
	if c, ok := resultCaches.Load(db); ok {
		return c.(*resultCache)
	}
	c := &resultCache{
		docs:        sqldb.WriteCache[Subscriber]{Limit: maxCachedDocs},
		preferences: sqldb.WriteCache[Subscribed]{Limit: maxCachedPreferences},
		identities:  sqldb.ByteCache{Limit: maxCachedIdentities},
		contexts:    sqldb.WriteCache[Context]{Limit: maxCachedContexts},
	}
	c.listen(db)
	resultCaches.Store(db, c)
	return c
}

// listen hears the subscriber and preference writes of the other processes
// sharing the database: a subscriber another one wrote is forgotten as a
// local write forgets it, and every cached search is read again; a
// preference write, or a lost listener connection, drops everything.
func (c *resultCache) listen(db *sqldb.DB) {
	c.written = db.Invalidations("herald_subscribers", func(key string) {
		c.gen.Add(1)
		c.docs.Forget(key)
		c.identities.Forget(key)
	}, func() {
		c.gen.Add(1)
		c.docs.Invalidate()
		c.identities.Reset()
	})
	c.preferencesWritten = db.Invalidations("herald_subscriber_preferences", nil, c.preferences.Invalidate)
	c.contextsWritten = db.Invalidations("herald_contexts", c.contexts.Forget, c.contexts.Invalidate)
}

// reset drops everything cached, as a write of every subscriber would.
func (c *resultCache) reset() {
	c.gen.Add(1)
	c.docs.Invalidate()
	c.identities.Reset()
	c.preferences.Invalidate()
	c.contexts.Invalidate()
}

// writing begins, in tx, a write of the environment's subscriberIDs that
// reads them first. It tells the other processes sharing the database to
// forget those subscribers when tx commits, and takes turns with their
// writes of the same subscribers: two processes that both read a
// subscriber before writing it would otherwise both create it (one then
// failing on the unique key), or each write back the row it read and lose
// the other's change. SQLite's one writer serialises them already.
func (s *Store) writing(ctx context.Context, tx *sql.Tx, environmentID string, subscriberIDs ...string) error {
	keys := make([]string, len(subscriberIDs))
	for i, id := range subscriberIDs {
		keys[i] = subscriberKey(environmentID, id)
	}
	if s.db.Shared() {
		// A trigger names up to 100 subscribers, locked in one statement.
		locks := make([]string, len(subscriberIDs))
		for i, id := range subscriberIDs {
			locks[i] = "subscribers/" + environmentID + "/" + id
		}
		if err := s.db.LockKeys(ctx, tx, locks...); err != nil {
			return err
		}
	}
	return cacheFor(s.db).written.Changed(ctx, tx, keys...)
}

// changed ends every write of the environment's subscriberIDs (deferred,
// so it runs after the commit): cached search results read before it are
// no longer used, nor are those subscribers' documents and identities.
// Every other subscriber's stay: when each write emptied them all, a
// service that kept signing up users had its triggers and feeds read their
// subscribers again after every signup.
func (s *Store) changed(environmentID string, subscriberIDs ...string) {
	c := cacheFor(s.db)
	c.gen.Add(1)
	for _, id := range subscriberIDs {
		key := subscriberKey(environmentID, id)
		c.docs.Forget(key)
		c.identities.Forget(key)
	}
}

// subscriberKey names one subscriber in the documents and identities caches.
func subscriberKey(environmentID, subscriberID string) string {
	return environmentID + "\x00" + subscriberID
}

// subscriberIDOf is the subscriberId of a subscriberKey of environmentID.
func subscriberIDOf(environmentID, key string) string {
	return key[len(environmentID)+1:]
}

func (c *resultCache) get(key string, gen uint64) ([]searchKey, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || e.gen != gen {
		return nil, false
	}
	return e.keys, true
}

func (c *resultCache) put(key string, gen uint64, keys []searchKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCachedResults {
		// Start over rather than track recency: entries are cheap to
		// rebuild, and a write makes them all useless anyway.
		c.entries = map[string]cachedResult{}
	}
	c.entries[key] = cachedResult{gen: gen, keys: keys}
}

// cacheKey names the search q in an environment, cursors and limit aside.
func (q *searchQuery) cacheKey(environmentID string) string {
	return strings.Join([]string{environmentID, q.SubscriberID, q.Email, q.Phone, q.Name, q.OrderBy}, "\x00")
}

// matchKeys returns the keys of every row among the candidates match that
// meets where, sorted, from the cache when it holds them at gen, else read in
// tx and cached. It returns nil when there are more than driveLimit, and
// remembers that too, so a large match is not read again at each request.
func (s *Store) matchKeys(ctx context.Context, tx *sql.Tx, gen uint64, q *searchQuery, environmentID string, match *candidates, where []string, args []any) ([]searchKey, error) {
	cache := cacheFor(s.db)
	key := q.cacheKey(environmentID)
	if keys, ok := cache.get(key, gen); ok {
		return keys, nil
	}
	cache.mu.Lock()
	if call := cache.inflight[key]; call != nil && call.gen == gen {
		cache.mu.Unlock()
		select {
		case <-call.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if call.ok {
			return call.keys, nil
		}
		return s.readKeys(ctx, tx, q, match, where, args)
	}
	call := &keysCall{gen: gen, done: make(chan struct{})}
	if cache.inflight == nil {
		cache.inflight = map[string]*keysCall{}
	}
	cache.inflight[key] = call
	cache.mu.Unlock()
	defer func() {
		cache.mu.Lock()
		if cache.inflight[key] == call {
			delete(cache.inflight, key)
		}
		cache.mu.Unlock()
		close(call.done)
	}()
	keys, err := s.readKeys(ctx, tx, q, match, where, args)
	if err != nil {
		return nil, err
	}
	call.keys, call.ok = keys, true
	if cache.gen.Load() == gen {
		cache.put(key, gen, keys)
	}
	return keys, nil
}

// readKeys reads the sorted keys of every row among the candidates match
// that meets where in tx, or nil when there are more than driveLimit.
func (s *Store) readKeys(ctx context.Context, tx *sql.Tx, q *searchQuery, match *candidates, where []string, args []any) ([]searchKey, error) {
	value := "''"
	if col := sortColumn(q.OrderBy); col != "" {
		value = "s." + col
	}
	rows, err := s.db.TxQuery(ctx, tx, `SELECT s.seq, `+value+`, s.id FROM `+candidatesFrom+`
		WHERE `+strings.Join(where, " AND ")+` LIMIT ?`,
		append(append(append([]any{}, match.args...), args...), driveLimit+1)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	keys := []searchKey{}
	for rows.Next() {
		var k searchKey
		if err := rows.Scan(&k.seq, &k.value, &k.id); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(keys) > driveLimit {
		keys = nil
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	return keys, nil
}

// pageOfKeys cuts q's page from keys (every match, ascending) exactly as the
// keyset queries of search would: the rows of the page in q's order, and
// whether matches lie before and after it.
func pageOfKeys(keys []searchKey, q *searchQuery) (page []searchKey, hasPrev, hasNext bool) {
	n := len(keys)
	at := func(i int) searchKey { // the i-th match in q's order
		if q.Desc {
			return keys[n-1-i]
		}
		return keys[i]
	}
	// after reports whether k comes after c in q's order (or is c, when
	// inclusive).
	after := func(k searchKey, c *cursor, inclusive bool) bool {
		ck := searchKey{value: c.Value, id: c.ID}
		if inclusive && k.value == ck.value && k.id == ck.id {
			return true
		}
		if q.Desc {
			return k.less(ck)
		}
		return ck.less(k)
	}
	var start, end int
	switch {
	case q.Before != nil:
		// The limit matches just before the cursor (before it or at it,
		// with includeCursor).
		end = sort.Search(n, func(i int) bool { return after(at(i), q.Before, !q.IncludeCursor) })
		start = max(0, end-q.Limit)
		hasPrev, hasNext = start > 0, end < n
	default:
		if q.After != nil {
			start = sort.Search(n, func(i int) bool { return after(at(i), q.After, q.IncludeCursor) })
		}
		end = min(n, start+q.Limit)
		hasPrev, hasNext = q.After != nil && start > 0, end < n
	}
	if start >= end {
		return nil, false, false
	}
	page = make([]searchKey, 0, end-start)
	for i := start; i < end; i++ {
		page = append(page, at(i))
	}
	return page, hasPrev, hasNext
}

// fetchKeys reads the rows of keys, in their order, checking each still
// matches where. ok is false when one does not (a write since the keys were
// read); the caller then searches without the cache.
func (s *Store) fetchKeys(ctx context.Context, tx *sql.Tx, keys []searchKey, where []string, args []any) (subs []*subscriber, ok bool, err error) {
	if len(keys) == 0 {
		return []*subscriber{}, true, nil
	}
	in := make([]any, 0, len(keys)+len(args))
	for _, k := range keys {
		in = append(in, k.seq)
	}
	in = append(in, args...)
	rows, err := s.db.TxQuery(ctx, tx, s.fetchByKeys+sqldb.Placeholders(len(keys))+`) AND `+strings.Join(where, " AND "), in...)
	if err != nil {
		return nil, false, err
	}
	found, err := s.scanAll(rows)
	if err != nil {
		return nil, false, err
	}
	if len(found) != len(keys) {
		return nil, false, nil
	}
	byID := make(map[string]*subscriber, len(found))
	for _, sub := range found {
		byID[sub.ID] = sub
	}
	subs = make([]*subscriber, len(keys))
	for i, k := range keys {
		if subs[i] = byID[k.id]; subs[i] == nil {
			return nil, false, nil
		}
	}
	return subs, true, nil
}
