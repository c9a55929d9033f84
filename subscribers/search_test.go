package subscribers_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/subscribers"
)

// pageJSON is a GET /v2/subscribers response as a client decodes it.
type pageJSON struct {
	Data             []subscriberJSON `json:"data"`
	Next             *string          `json:"next"`
	Previous         *string          `json:"previous"`
	TotalCount       *int             `json:"totalCount"`
	TotalCountCapped *bool            `json:"totalCountCapped"`
}

func (p pageJSON) ids() []string {
	out := make([]string, len(p.Data))
	for i, s := range p.Data {
		out[i] = s.SubscriberID
	}
	return out
}

func search(t *testing.T, c platformtest.Client, query string) pageJSON {
	t.Helper()
	var p pageJSON
	mustDo(t, c, "GET", "/v2/subscribers?"+query, "", 200, &p)
	if p.Data == nil || p.TotalCount == nil || p.TotalCountCapped == nil {
		t.Fatalf("search %s: a required key is missing", query)
	}
	return p
}

// seed creates n subscribers s0000… through the store, in batches of 100
// with the clock moved between batches, so createdAt has both ties (broken
// by _id) and steps.
func seed(t *testing.T, srv *platformtest.Server, store *subscribers.Store, n int) {
	t.Helper()
	tenant := platform.Tenant{OrganizationID: srv.App.Development.OrganizationID, EnvironmentID: srv.App.Development.ID}
	for start := 0; start < n; start += 100 {
		var batch []json.RawMessage
		for i := start; i < min(start+100, n); i++ {
			batch = append(batch, json.RawMessage(fmt.Sprintf(`{"subscriberId":"s%04d","email":"s%04d@example.com"}`, i, i)))
		}
		if _, err := upsertDocs(store, context.Background(), tenant, batch, nil); err != nil {
			t.Fatalf("seed: %v", err)
		}
		srv.App.Clock.Advance(time.Second)
	}
}

// walk follows next from the first page, then previous from the last page,
// and returns both lists of pages (the backward list in forward order).
func walk(t *testing.T, c platformtest.Client, query string) (forward, backward [][]string) {
	t.Helper()
	p := search(t, c, query)
	if p.Previous != nil {
		t.Fatalf("first page has a previous cursor")
	}
	forward = append(forward, p.ids())
	for p.Next != nil {
		p = search(t, c, query+"&after="+url.QueryEscape(*p.Next))
		forward = append(forward, p.ids())
	}
	backward = append(backward, p.ids())
	for p.Previous != nil {
		p = search(t, c, query+"&before="+url.QueryEscape(*p.Previous))
		backward = append(backward, p.ids())
	}
	if p.Next == nil && len(backward) > 1 {
		t.Fatalf("a page reached backward has no next cursor")
	}
	slices.Reverse(backward)
	return forward, backward
}

func TestSearch_Paging(t *testing.T) {
	srv, store := newServer(t, nil)
	seed(t, srv, store, 1000)
	for _, tc := range []struct {
		query string
		less  func(a, b string) bool // the expected order of subscriberIds
	}{
		{"limit=7", func(a, b string) bool { return a > b }},
		{"limit=7&orderBy=createdAt&orderDirection=ASC", func(a, b string) bool { return a < b }},
		{"limit=7&orderBy=updatedAt", func(a, b string) bool { return a > b }},
		{"limit=100&orderBy=_id&orderDirection=ASC", func(a, b string) bool { return a < b }},
	} {
		t.Run("OK "+tc.query, func(t *testing.T) {
			is := is.New(t)
			forward, backward := walk(t, srv.Dev, tc.query)
			is.Equal(forward, backward) // previous walks back the same pages
			var all []string
			for _, p := range forward[:len(forward)-1] {
				is.Equal(len(p), len(forward[0])) // every page but the last is full
			}
			for _, p := range forward {
				all = append(all, p...)
			}
			is.Equal(len(all), 1000) // every subscriber once
			seen := map[string]bool{}
			for _, id := range all {
				is.True(!seen[id]) // no subscriber twice
				seen[id] = true
			}
			is.True(sort.SliceIsSorted(all, func(i, j int) bool { return tc.less(all[i], all[j]) })) // in order
		})
	}

	t.Run("OK totalCount", func(t *testing.T) {
		is := is.New(t)
		p := search(t, srv.Dev, "limit=3")
		is.Equal(*p.TotalCount, 1000)        // exact count
		is.Equal(*p.TotalCountCapped, false) // under the cap
		is.Equal(len(p.Data), 3)             // one page
	})

	t.Run("OK includeCursor", func(t *testing.T) {
		is := is.New(t)
		first := search(t, srv.Dev, "limit=5")
		next := search(t, srv.Dev, "limit=5&includeCursor=true&after="+url.QueryEscape(*first.Next))
		is.Equal(next.Data[0].SubscriberID, first.Data[4].SubscriberID) // the cursor's own row comes first
		is.True(next.Previous != nil)                                   // rows lie before it
	})
}

func TestSearch_InsertBetweenPages(t *testing.T) {
	for _, dir := range []string{"DESC", "ASC"} {
		t.Run("OK "+dir, func(t *testing.T) {
			is := is.New(t)
			srv, store := newServer(t, nil)
			seed(t, srv, store, 20)
			query := "limit=6&orderBy=createdAt&orderDirection=" + dir
			p := search(t, srv.Dev, query)
			seen := p.ids()
			for i := 0; p.Next != nil; i++ {
				// New subscribers arrive between calls: newest, so first in DESC
				// and last in ASC.
				srv.App.Clock.Advance(time.Second)
				mustCreateSubscriber(t, srv.Dev, fmt.Sprintf(`{"subscriberId":"new%d"}`, i))
				p = search(t, srv.Dev, query+"&after="+url.QueryEscape(*p.Next))
				seen = append(seen, p.ids()...)
			}
			var old []string
			for _, id := range seen {
				if id[0] == 's' {
					old = append(old, id)
				}
			}
			is.Equal(len(old), 20) // every original row exactly once: none skipped, none repeated
			counts := map[string]int{}
			for _, id := range seen {
				counts[id]++
				is.Equal(counts[id], 1) // nothing twice
			}
		})
	}
}

func TestSearch_Filters(t *testing.T) {
	srv, _ := newServer(t, nil)
	for _, body := range []string{
		`{"subscriberId":"a1","firstName":"Ada","lastName":"Lovelace","email":"ada@Example.com","phone":"+44 123"}`,
		`{"subscriberId":"b1","firstName":"Bob","lastName":"Dylan","email":"bob@example.com","phone":"555-0100"}`,
		`{"subscriberId":"c1","firstName":"Adam","email":"adam@test.io"}`,
		`{"subscriberId":"d1","lastName":"Smith","phone":"12"}`,
		`{"subscriberId":"e1","firstName":"Sean","lastName":"O\"Brien"}`,
		`{"subscriberId":"f1","email":"under_score%@wild.test"}`,
		`{"subscriberId":"g1","email":"underXscoreY@wild.test"}`,
	} {
		mustCreateSubscriber(t, srv.Dev, body)
	}
	mustCreateSubscriber(t, srv.Prod, `{"subscriberId":"a1","firstName":"Ada","email":"ada@Example.com"}`)
	for _, tc := range []struct {
		name, query string
		want        []string
	}{
		{"subscriberId exact", "subscriberId=a1", []string{"a1"}},
		{"subscriberId not a substring", "subscriberId=a", []string{}},
		{"email substring", "email=Example", []string{"a1"}},
		{"email case-sensitive", "email=example", []string{"b1"}},
		{"email shared prefix", "email=ada", []string{"a1", "c1"}},
		{"email short needle", "email=io", []string{"c1"}},
		{"email one char", "email=@", []string{"a1", "b1", "c1", "f1", "g1"}},
		{"phone substring", "phone=555", []string{"b1"}},
		{"phone short needle", "phone=12", []string{"a1", "d1"}},
		{"name first", "name=Ada", []string{"a1", "c1"}},
		{"name last", "name=Smith", []string{"d1"}},
		{"name full", "name=Ada+Lovelace", []string{"a1"}},
		{"name across the space", "name=b+D", []string{"b1"}},
		{"name case-sensitive", "name=ada", []string{}},
		{"name short needle", "name=Sm", []string{"d1"}},
		{"name with a quote", "name=" + url.QueryEscape(`O"Br`), []string{"e1"}},
		{"filters combine", "name=Ada&email=test", []string{"c1"}},
		{"short and long combine", "phone=12&name=Lovelace", []string{"a1"}},
		{"id and substring combine", "subscriberId=b1&email=Example", []string{}},
		{"no match", "email=zzzz", []string{}},
		{"query syntax is literal", "email=" + url.QueryEscape(`*("NEAR AND`), []string{}},
		{"underscore is literal", "email=under_score", []string{"f1"}},                // not LIKE's any-character
		{"percent is literal", "email=" + url.QueryEscape("score%@"), []string{"f1"}}, // nor its any-string
		{"backslash is literal", "email=" + url.QueryEscape(`score\`), []string{}},
	} {
		t.Run("OK "+tc.name, func(t *testing.T) {
			is := is.New(t)
			p := search(t, srv.Dev, tc.query)
			got := p.ids()
			slices.Sort(got)
			is.Equal(got, tc.want)                // the matching subscribers of this environment
			is.Equal(*p.TotalCount, len(tc.want)) // counted the same
		})
	}
	t.Run("OK updates reach the index", func(t *testing.T) {
		is := is.New(t)
		mustDo(t, srv.Dev, "PATCH", "/v1/subscribers/a1/credentials", `{"providerId":"slack","credentials":{}}`, 200, nil)
		is.Equal(search(t, srv.Dev, "email=Example").ids(), []string{"a1"}) // a credentials-only write keeps the row indexed
		mustDo(t, srv.Dev, "PUT", "/v1/subscribers/b1", `{"email":"robert@zeta.org"}`, 200, nil)
		is.Equal(search(t, srv.Dev, "email=bob@").ids(), []string{})     // old text gone
		is.Equal(search(t, srv.Dev, "email=zeta").ids(), []string{"b1"}) // new text found
		mustDo(t, srv.Dev, "DELETE", "/v1/subscribers/b1", "", 200, nil)
		is.Equal(search(t, srv.Dev, "email=zeta").ids(), []string{}) // deleted rows leave the index
	})
}

func TestSearch_Order(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	for _, id := range []string{"x", "y", "z"} {
		mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"`+id+`"}`)
		srv.App.Clock.Advance(time.Second)
	}
	mustDo(t, srv.Dev, "PUT", "/v1/subscribers/x", `{"firstName":"X"}`, 200, nil) // x is now the latest update
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"z", "y", "x"}},
		{"orderDirection=ASC", []string{"x", "y", "z"}},
		{"orderBy=createdAt", []string{"z", "y", "x"}},
		{"orderBy=createdAt&orderDirection=ASC", []string{"x", "y", "z"}},
		{"orderBy=updatedAt", []string{"x", "z", "y"}},
		{"orderBy=updatedAt&orderDirection=ASC", []string{"y", "z", "x"}},
	} {
		is.Equal(search(t, srv.Dev, tc.query).ids(), tc.want) // ordered as asked
	}
}

func TestSearch_Errors(t *testing.T) {
	srv, store := newServer(t, nil)
	seed(t, srv, store, 30)
	first := search(t, srv.Dev, "limit=5")
	next := *first.Next
	raw, _ := base64.RawURLEncoding.DecodeString(next)
	raw[5] ^= 1
	tampered := base64.RawURLEncoding.EncodeToString(raw)
	createdAtCursor := *search(t, srv.Dev, "limit=5&orderBy=createdAt").Next
	for _, tc := range []struct {
		name, query string
		status      int
		field       string
	}{
		{"ErrTamperedCursor", "after=" + url.QueryEscape(tampered), 422, "after"},
		{"ErrTruncatedCursor", "before=" + url.QueryEscape(next[:len(next)-3]), 422, "before"},
		{"ErrGarbageCursor", "after=%21%21%21", 422, "after"},
		{"ErrCursorOfAnotherOrder", "after=" + url.QueryEscape(createdAtCursor), 422, "after"},
		{"ErrBothCursors", "after=" + url.QueryEscape(next) + "&before=" + url.QueryEscape(next), 422, "before"},
		{"ErrLimitZero", "limit=0", 422, "limit"},
		{"ErrLimitTooBig", "limit=101", 422, "limit"},
		{"ErrLimitNotNumber", "limit=ten", 400, "limit"},
		{"ErrOrderBy", "orderBy=email", 422, "orderBy"},
		{"ErrOrderDirection", "orderDirection=sideways", 422, "orderDirection"},
		{"ErrIncludeCursor", "includeCursor=perhaps", 400, "includeCursor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.Do(t, "GET", "/v2/subscribers?"+tc.query, "")
			is.Equal(res.Status, tc.status) // rejected
			var e errorJSON
			res.Decode(t, &e)
			_, ok := e.Errors[tc.field]
			is.True(ok) // the offending parameter is named
		})
	}
	t.Run("OK last page", func(t *testing.T) {
		is := is.New(t)
		p := search(t, srv.Dev, "limit=30")
		is.Equal(len(p.Data), 30) // everything
		is.Equal(p.Next, nil)     // nothing after
		is.Equal(p.Previous, nil) // first page
		p = search(t, srv.Dev, "limit=10&after="+url.QueryEscape(next))
		is.True(p.Previous != nil) // a later page has a previous
	})
	t.Run("OK Production cannot page Development", func(t *testing.T) {
		is := is.New(t)
		p := search(t, srv.Prod, "after="+url.QueryEscape(next))
		is.Equal(len(p.Data), 0)   // a cursor carries no access
		is.Equal(*p.TotalCount, 0) // nothing counted
	})
}

// A substring filter with hundreds of matches pages from the sorted keys the
// store keeps per search; the pages must be exactly the keyset queries'
// pages, in every order and both directions, and a write must show at once.
func TestSearch_PagingManyMatches(t *testing.T) {
	srv, store := newServer(t, nil)
	seed(t, srv, store, 300) // every email holds "@example.com"
	for _, tc := range []struct {
		query string
		less  func(a, b string) bool
	}{
		{"limit=7&email=%40example.com", func(a, b string) bool { return a > b }},
		{"limit=7&email=example&orderBy=createdAt&orderDirection=ASC", func(a, b string) bool { return a < b }},
		{"limit=11&email=example.c&orderBy=updatedAt", func(a, b string) bool { return a > b }},
		{"limit=100&email=.com&orderBy=_id&orderDirection=ASC", func(a, b string) bool { return a < b }},
	} {
		t.Run("OK "+tc.query, func(t *testing.T) {
			is := is.New(t)
			forward, backward := walk(t, srv.Dev, tc.query)
			is.Equal(forward, backward) // previous walks back the same pages
			var all []string
			for _, p := range forward {
				all = append(all, p...)
			}
			is.Equal(len(all), 300)                                                                  // every match once
			is.True(sort.SliceIsSorted(all, func(i, j int) bool { return tc.less(all[i], all[j]) })) // in order
			is.Equal(*search(t, srv.Dev, tc.query).TotalCount, 300)                                  // exact count
		})
	}

	t.Run("OK includeCursor", func(t *testing.T) {
		is := is.New(t)
		first := search(t, srv.Dev, "limit=5&email=example")
		next := search(t, srv.Dev, "limit=5&email=example&includeCursor=true&after="+url.QueryEscape(*first.Next))
		is.Equal(next.Data[0].SubscriberID, first.Data[4].SubscriberID) // the cursor's own row comes first
		is.True(next.Previous != nil)                                   // rows lie before it
		back := search(t, srv.Dev, "limit=5&email=example&includeCursor=true&before="+url.QueryEscape(*next.Previous))
		is.Equal(back.Data[4].SubscriberID, next.Data[0].SubscriberID) // and last going back
	})

	t.Run("OK writes show at once", func(t *testing.T) {
		is := is.New(t)
		query := "limit=10&email=example&orderBy=createdAt&orderDirection=ASC"
		p := search(t, srv.Dev, query)
		is.Equal(*p.TotalCount, 300) // before
		srv.App.Clock.Advance(time.Second)
		mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"late","email":"late@example.com"}`)
		p = search(t, srv.Dev, query+"&after="+url.QueryEscape(*p.Next))
		is.Equal(*p.TotalCount, 301) // the new match is counted
		mustDo(t, srv.Dev, "PUT", "/v1/subscribers/s0015", `{"email":"gone@elsewhere.org"}`, 200, nil)
		p = search(t, srv.Dev, query+"&after="+url.QueryEscape(*p.Next))
		is.Equal(*p.TotalCount, 300) // the changed one is not
		forward, _ := walk(t, srv.Dev, query)
		var all []string
		for _, page := range forward {
			all = append(all, page...)
		}
		is.Equal(len(all), 300)                 // the walk sees both writes
		is.Equal(all[len(all)-1], "late")       // the newest last
		is.True(!slices.Contains(all, "s0015")) // the changed one gone
	})
}

// Concurrent first searches of the same large match share one read of its
// keys; every one of them gets the full answer.
func TestSearch_ConcurrentColdStart(t *testing.T) {
	is := is.New(t)
	srv, store := newServer(t, nil)
	seed(t, srv, store, 300)
	var wg sync.WaitGroup
	pages := make([]pageJSON, 16)
	for i := range pages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := srv.Dev.Do(t, "GET", "/v2/subscribers?limit=50&email=example.com", "")
			if res.Status == 200 {
				res.Decode(t, &pages[i])
			}
		}()
	}
	wg.Wait()
	for _, p := range pages {
		is.True(p.TotalCount != nil)      // answered
		is.Equal(*p.TotalCount, 300)      // all matches counted
		is.Equal(len(p.Data), 50)         // a full page
		is.Equal(p.ids(), pages[0].ids()) // the same page for all
	}
}

// The suffix index follows every write: a changed email or name is found
// by its new value and not its old, a deleted subscriber not at all; and it
// finds what instr() finds for needles longer than the suffixes it keeps,
// with multibyte characters, or occurring twice in one value.
func TestSearch_SuffixIndex(t *testing.T) {
	is := is.New(t)
	srv, _ := newServer(t, nil)
	long := strings.Repeat("a", 40) // 40 a's: nine suffixes cut to the same 32
	mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"u1","email":"ana@old.example","firstName":"Zoë","lastName":"Ångström"}`)
	mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"u2","email":"bobbob@bob.example","firstName":"`+long+`","phone":"+15550001"}`)
	mustCreateSubscriber(t, srv.Dev, `{"subscriberId":"u3","email":"carol@old.example"}`)
	found := func(query string) []string {
		t.Helper()
		var page pageJSON
		mustDo(t, srv.Dev, "GET", "/v2/subscribers?limit=100&orderDirection=ASC&"+query, "", 200, &page)
		is.Equal(*page.TotalCount, len(page.Data)) // the count agrees with the page
		return page.ids()
	}
	is.Equal(found("email=old.example"), []string{"u1", "u3"})
	is.Equal(found("name="+url.QueryEscape("ë Å")), []string{"u1"})                   // multibyte on both sides
	is.Equal(found("name="+url.QueryEscape("Ångström")), []string{"u1"})              // a needle ending the value
	is.Equal(found("email=bob"), []string{"u2"})                                      // twice in one value, once in the answer
	is.Equal(found("name="+long), []string{"u2"})                                     // longer than a kept suffix
	is.Equal(found("name="+long+"a"), []string{})                                     // one longer than the value
	is.Equal(found("phone="+url.QueryEscape("+1555")), []string{"u2"})                // phone
	is.Equal(found("email=old.example&name=Zo"+url.QueryEscape("ë")), []string{"u1"}) // two needles

	mustDo(t, srv.Dev, "PUT", "/v1/subscribers/u1", `{"email":"ana@new.example","firstName":"Zoe"}`, 200, nil)
	is.Equal(found("email=old.example"), []string{"u3"}) // the old email is gone
	is.Equal(found("email=new.example"), []string{"u1"}) // the new one is found
	is.Equal(found("name=Zoe"), []string{"u1"})
	is.Equal(found("name="+url.QueryEscape("Zoë")), []string{})

	mustDo(t, srv.Dev, "DELETE", "/v1/subscribers/u2", "", 200, nil)
	is.Equal(found("email=bob"), []string{}) // deleted
	is.Equal(found("name="+long), []string{})
}
