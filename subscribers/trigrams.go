package subscribers

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"sync"
	"time"
)

// A substring needle of three or more characters is looked up in the
// trigram index of subscribers_fts. Asking FTS5 for the needle as a phrase
// makes it walk the document list of every trigram of the needle, and a
// needle's trigrams are often in nearly every row ("use" of "user0091",
// "Fam" of "Family0012"): at 100,000 subscribers such a phrase costs
// milliseconds however few rows match. Instead the search asks for the
// needle's rarest trigrams only, ANDed (FTS5 leapfrogs from the rarest
// list), and checks the candidates with instr(), which keeps the match
// exact: every row holding the needle holds each of its trigrams.
//
// How rare a trigram is comes from a probe that counts its rows up to
// gramProbeCap, cached per column for gramTTL. The counts only choose the
// plan, never the result, so a stale one costs speed, not correctness.

const (
	gramProbeCap = 10_000          // a probe reads at most this many rows
	gramTerms    = 2               // rarest trigrams ANDed per needle
	gramTTL      = 5 * time.Minute // counts drift as subscribers change
	gramMaxCache = 100_000         // entries before the cache starts over
)

// gramStats caches probe counts by column and trigram.
type gramStats struct {
	mu       sync.Mutex
	counts   map[string]gramCount
	inflight map[string]chan struct{} // probes under way: others wait, then read the cache
}

type gramCount struct {
	n  int
	at time.Time
}

// trigrams returns the distinct three-character substrings of needle.
func trigrams(needle string) []string {
	runes := []rune(needle)
	var out []string
	for i := 0; i+3 <= len(runes); i++ {
		if g := string(runes[i : i+3]); !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// ftsString quotes s as an FTS5 string.
func ftsString(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// needleQuery returns the FTS5 query that finds the candidate rows of
// needle in column, and an upper bound of their number (gramProbeCap when
// no trigram is below it). When every trigram is common it is the whole
// needle as a phrase: the match is large then anyway.
func (s *Store) needleQuery(ctx context.Context, tx *sql.Tx, column, needle string) (string, int, error) {
	grams := trigrams(needle)
	counts := make([]int, len(grams))
	for i, g := range grams {
		n, err := s.gramCount(ctx, tx, column, g)
		if err != nil {
			return "", 0, err
		}
		counts[i] = n
	}
	order := make([]int, len(grams))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return counts[a] - counts[b] })
	var terms []string
	for _, i := range order[:min(gramTerms, len(order))] {
		if counts[i] >= gramProbeCap {
			break
		}
		terms = append(terms, "{"+column+"} : "+ftsString(grams[i]))
	}
	if len(terms) == 0 {
		return "{" + column + "} : " + ftsString(needle), gramProbeCap, nil
	}
	return strings.Join(terms, " AND "), counts[order[0]], nil
}

// gramCount returns how many rows hold g in column, counted up to
// gramProbeCap, from the cache when fresh.
func (s *Store) gramCount(ctx context.Context, tx *sql.Tx, column, g string) (int, error) {
	key := column + "\x00" + g
	now := s.now()
	st := &s.grams
	st.mu.Lock()
	c, ok := st.counts[key]
	st.mu.Unlock()
	if ok && now.Sub(c.at) < gramTTL && now.Sub(c.at) >= 0 {
		return c.n, nil
	}
	st.mu.Lock()
	if wait := st.inflight[key]; wait != nil {
		st.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		st.mu.Lock()
		c, ok := st.counts[key]
		st.mu.Unlock()
		if ok {
			return c.n, nil
		}
		// The probe failed; probe again below.
		st.mu.Lock()
	}
	done := make(chan struct{})
	if st.inflight == nil {
		st.inflight = map[string]chan struct{}{}
	}
	st.inflight[key] = done
	st.mu.Unlock()
	defer func() {
		st.mu.Lock()
		delete(st.inflight, key)
		st.mu.Unlock()
		close(done)
	}()
	var n int
	err := s.db.TxQueryRow(ctx, tx, `SELECT count(*) FROM (SELECT 1 FROM subscribers_fts
		WHERE subscribers_fts MATCH ? LIMIT ?)`, "{"+column+"} : "+ftsString(g), gramProbeCap).Scan(&n)
	if err != nil {
		return 0, err
	}
	st.mu.Lock()
	if st.counts == nil || len(st.counts) >= gramMaxCache {
		st.counts = map[string]gramCount{}
	}
	st.counts[key] = gramCount{n: n, at: now}
	st.mu.Unlock()
	return n, nil
}
