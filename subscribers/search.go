package subscribers

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// countCap is where totalCount stops counting (docs/api.md,
// "What strict clients check"): it reads at most this many rows, then
// reports totalCount 50,000 with totalCountCapped true.
const countCap = 50_000

// searchQuery is a parsed GET /v2/subscribers request (docs/api.md,
// "Subscriber search" and "Lists and paging").
type searchQuery struct {
	SubscriberID, Email, Phone, Name string
	Limit                            int
	OrderBy                          string // _id, createdAt or updatedAt
	Desc                             bool
	After, Before                    *cursor
	IncludeCursor                    bool
}

// searchPage is one page of results with the cursors around it.
type searchPage struct {
	Subscribers    []*subscriber
	Next, Previous *cursor
	TotalCount     int
	Capped         bool
}

// cursor is a position in one ordering: the sort value (empty for _id) and
// the _id that breaks ties. It carries the ordering it belongs to, so a
// cursor is never read against another column.
type cursor struct {
	OrderBy string `json:"o"`
	Value   string `json:"v,omitempty"`
	ID      string `json:"i"`
}

// cursorKey keys the checksum that makes a cursor tamper-evident. It is not a
// secret and needs not be: a cursor only names a position, and every query
// is scoped to the caller's environment anyway. The checksum just turns an
// edited or truncated cursor into a clear 422 instead of a silently wrong page.
var cursorKey = []byte("herald/subscribers/search-cursor/v1")

const cursorMACLen = 8

// encode returns the opaque string form: base64url(JSON ‖ MAC).
func (c cursor) encode() string {
	payload, _ := json.Marshal(c) // three strings cannot fail to marshal
	m := hmac.New(sha256.New, cursorKey)
	m.Write(payload)
	return base64.RawURLEncoding.EncodeToString(append(payload, m.Sum(nil)[:cursorMACLen]...))
}

// decodeCursor parses s for orderBy, or reports why it cannot be used.
func decodeCursor(s, orderBy string) (*cursor, string) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) <= cursorMACLen {
		return nil, "is not a valid cursor"
	}
	payload, mac := b[:len(b)-cursorMACLen], b[len(b)-cursorMACLen:]
	m := hmac.New(sha256.New, cursorKey)
	m.Write(payload)
	if !hmac.Equal(mac, m.Sum(nil)[:cursorMACLen]) {
		return nil, "is not a valid cursor"
	}
	var c cursor
	if err := json.Unmarshal(payload, &c); err != nil || !sqldb.IsID(c.ID) {
		return nil, "is not a valid cursor"
	}
	if c.OrderBy != orderBy {
		return nil, "was issued for orderBy " + c.OrderBy + ", not " + orderBy
	}
	if orderBy != "_id" {
		if _, err := time.Parse(sqldb.TimeLayout, c.Value); err != nil {
			return nil, "is not a valid cursor"
		}
	}
	return &c, ""
}

// sortColumn is the column a search orders by before breaking ties on id.
func sortColumn(orderBy string) string {
	switch orderBy {
	case "createdAt":
		return "created_at"
	case "updatedAt":
		return "updated_at"
	}
	return "" // _id: id alone
}

// cursorOf returns the cursor at sub in the given ordering.
func cursorOf(sub *subscriber, orderBy string) *cursor {
	c := &cursor{OrderBy: orderBy, ID: sub.ID}
	switch orderBy {
	case "createdAt":
		c.Value = sub.CreatedAt
	case "updatedAt":
		c.Value = sub.UpdatedAt
	}
	return c
}

// nameExpr is the text name filters search, the same the suffix index holds.
const nameExpr = `trim(coalesce(s.first_name, '') || ' ' || coalesce(s.last_name, ''))`

// filters returns the WHERE terms and arguments of q's filters, cursors
// aside, on the alias s, and the substring needles the suffix index can
// look up.
//
// Every substring needle is checked with the dialect's Substring, instr()
// on SQLite; needles of three or more characters are also looked up in the
// suffix index (see candidates), and the rarest of them names the rows a
// search may start from. A needle of one or two characters matches so many
// rows that its range of the index is no help: it is matched with instr()
// alone on the rows the other terms leave, a scan of the environment's rows
// cut short by the LIMIT of the page query (such needles match many rows,
// so a page fills quickly) and by countCap for the count
// (BenchmarkSearch/email_short_needle times it). So is a needle holding a
// NUL: SQLite's text functions stop at one, so the index holds no suffix past it.
//
// Where the dialect keeps no suffix table, its Substring is served by an
// index of its own, and filters returns no needles.
func filters(d sqldb.Dialect, environmentID string, q *searchQuery) (where []string, args []any, needles []needle) {
	where = []string{"s.environment_id = ?"}
	args = []any{environmentID}
	if q.SubscriberID != "" {
		where = append(where, "s.subscriber_id = ?")
		args = append(args, q.SubscriberID)
	}
	for _, f := range []struct {
		field        int
		expr, needle string
	}{
		{fieldEmail, "coalesce(s.email, '')", q.Email},
		{fieldPhone, "coalesce(s.phone, '')", q.Phone},
		{fieldName, nameExpr, q.Name},
	} {
		if f.needle == "" {
			continue
		}
		if d.SuffixTable() && utf8.RuneCountInString(f.needle) >= 3 && !strings.ContainsRune(f.needle, 0) {
			needles = append(needles, needle{f.field, f.needle})
		}
		var w string
		w, args = d.Substring(args, f.expr, f.needle)
		where = append(where, w)
	}
	return where, args, needles
}

// pageFromKeys answers q from keys, the sorted keys of every match. ok is
// false when a row of the page no longer meets the filters, and the caller
// must query instead.
func (s *Store) pageFromKeys(ctx context.Context, tx *sql.Tx, keys []searchKey, q *searchQuery, where []string, args []any) (page searchPage, ok bool, err error) {
	cut, hasPrev, hasNext := pageOfKeys(keys, q)
	// The rows are fetched by rowid and checked against the filters again.
	subs, ok, err := s.fetchKeys(ctx, tx, cut, where, args)
	if err != nil || !ok {
		return page, false, err
	}
	page.Subscribers, page.TotalCount = subs, len(keys)
	if hasPrev {
		page.Previous = cursorOf(subs[0], q.OrderBy)
	}
	if hasNext {
		page.Next = cursorOf(subs[len(subs)-1], q.OrderBy)
	}
	return page, true, nil
}

// keyset returns the term selecting rows on the side op of c, where op is
// one of < <= > >=, comparing (sort column, id) as a row value so the
// (environment_id, column, id) index serves it.
func keyset(orderBy, op string, c *cursor) (string, []any) {
	if col := sortColumn(orderBy); col != "" {
		return "(s." + col + ", s.id) " + op + " (?, ?)", []any{c.Value, c.ID}
	}
	return "s.id " + op + " ?", []any{c.ID}
}

// driveLimit is the number of candidates up to which a substring search
// reads its rows from the suffix index and sorts them; past it, walking the
// ordering index and skipping non-matches fills a page sooner.
const driveLimit = 5000

// searchColumns is subscriberColumns on the alias s.
var searchColumns = func() string {
	cols := strings.Split(subscriberColumns, ",")
	for i, c := range cols {
		cols[i] = "s." + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}()

// search runs q in the environment: keyset paging in both directions, no
// OFFSET, every read in one snapshot. The channels' _integrationId are
// resolved once the snapshot has ended, since that reads integrations
// through another connection: searches each holding a read connection
// while waiting for a second could take every one, and on the in-memory
// database (no WAL) a writer that is committing blocks new readers until
// the snapshot ends, which waited on the new reader.
func (s *Store) search(ctx context.Context, environmentID string, q searchQuery) (page searchPage, err error) {
	defer platform.Wrap(&err, "search subscribers")
	if page, err = s.searchSnapshot(ctx, environmentID, q); err != nil {
		return page, err
	}
	return page, s.resolveChannels(ctx, environmentID, page.Subscribers)
}

// searchSnapshot is search with every channel as stored.
func (s *Store) searchSnapshot(ctx context.Context, environmentID string, q searchQuery) (page searchPage, err error) {
	// The generation is read before the snapshot begins: a result cached
	// under it can only be older than the snapshot, never newer.
	gen := cacheFor(s.db).gen.Load()
	tx, err := s.db.BeginSnapshot(ctx)
	if err != nil {
		return page, err
	}
	defer tx.Rollback()

	where, args, needles := filters(s.db.Dialect(), environmentID, &q)
	if len(needles) > 0 {
		// A search paged through again finds its keys before counting
		// its candidates, which costs as much as reading them.
		if keys, ok := cacheFor(s.db).get(q.cacheKey(environmentID), gen); ok && keys != nil {
			if page, ok, err := s.pageFromKeys(ctx, tx, keys, &q, where, args); err != nil || ok {
				return page, err
			}
		}
	}
	match, err := s.rarest(ctx, tx, needles)
	if err != nil {
		return page, err
	}
	if match != nil && match.estimate >= cacheMinEstimate {
		// Many candidates: page from the sorted keys of the matches when
		// there are few enough to keep (keys is nil when there are more).
		keys, err := s.matchKeys(ctx, tx, gen, &q, environmentID, match, where, args)
		if err != nil {
			return page, err
		}
		if keys != nil {
			if page, ok, err := s.pageFromKeys(ctx, tx, keys, &q, where, args); err != nil || ok {
				return page, err
			}
		}
	}

	from := "subscribers s"
	if match != nil {
		if match.estimate <= driveLimit {
			// The suffix range yields the candidate rows and each is
			// looked up by rowid.
			from = candidatesFrom
		} else {
			// Many candidates: walk the ordering index and test each row
			// against the set of candidates (SQLite builds it once, with a
			// Bloom filter).
			where = append([]string{candidatesIn}, where...)
		}
		// The range's arguments come first in both forms: FROM is before
		// WHERE, and candidatesIn is WHERE's first term.
		args = append(append([]any{}, match.args...), args...)
	}

	backward := q.Before != nil
	scanDesc := q.Desc != backward // a backward page is read in reverse order
	dir := map[bool]string{true: "DESC", false: "ASC"}[scanDesc]
	order := "s.id " + dir
	if col := sortColumn(q.OrderBy); col != "" {
		order = "s." + col + " " + dir + ", " + order
	}

	pageWhere, pageArgs := where, args
	if c := q.After; c != nil || q.Before != nil {
		if c == nil {
			c = q.Before
		}
		op := map[bool]string{true: "<", false: ">"}[scanDesc]
		if q.IncludeCursor {
			op += "="
		}
		term, targs := keyset(q.OrderBy, op, c)
		pageWhere = append(append([]string{}, where...), term)
		pageArgs = append(append([]any{}, args...), targs...)
	}
	rows, err := s.db.TxQuery(ctx, tx, `SELECT `+searchColumns+` FROM `+from+`
		WHERE `+strings.Join(pageWhere, " AND ")+` ORDER BY `+order+` LIMIT ?`,
		append(append([]any{}, pageArgs...), q.Limit+1)...)
	if err != nil {
		return page, err
	}
	subs, err := s.scanAll(rows)
	if err != nil {
		return page, err
	}
	more := len(subs) > q.Limit
	subs = subs[:min(len(subs), q.Limit)]
	if q.After == nil && q.Before == nil && !more {
		// The first page holds every match: it is the count.
		page.TotalCount = len(subs)
	} else {
		err = s.db.TxQueryRow(ctx, tx, `SELECT count(*) FROM (SELECT 1 FROM `+from+` WHERE `+
			strings.Join(where, " AND ")+` LIMIT ?) AS m`, append(args, countCap+1)...).Scan(&page.TotalCount)
		if err != nil {
			return page, err
		}
		if page.TotalCount > countCap {
			page.TotalCount, page.Capped = countCap, true
		}
	}
	if backward {
		slices.Reverse(subs)
	}
	page.Subscribers = subs
	if subs == nil {
		page.Subscribers = []*subscriber{}
	}

	// exists reports whether a matching row lies beyond sub on the side op.
	exists := func(sub *subscriber, op string) (bool, error) {
		term, targs := keyset(q.OrderBy, op, cursorOf(sub, q.OrderBy))
		var one int
		err := s.db.TxQueryRow(ctx, tx, `SELECT 1 FROM `+from+` WHERE `+strings.Join(where, " AND ")+
			` AND `+term+` LIMIT 1`, append(append([]any{}, args...), targs...)...).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil
		}
		return err == nil, err
	}
	before, after := ">", "<" // the side of a row that comes earlier / later in the query's order
	if !q.Desc {
		before, after = "<", ">"
	}
	if len(subs) > 0 {
		first, last := subs[0], subs[len(subs)-1]
		hasPrev, hasNext := more, more
		if backward {
			hasNext, err = exists(last, after)
		} else if q.After != nil {
			hasPrev, err = exists(first, before)
		} else {
			hasPrev = false // no cursor: the first page
		}
		if err != nil {
			return page, err
		}
		if hasPrev {
			page.Previous = cursorOf(first, q.OrderBy)
		}
		if hasNext {
			page.Next = cursorOf(last, q.OrderBy)
		}
	}
	return page, nil
}
