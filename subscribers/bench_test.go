package subscribers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/platform/platformtest"
	"github.com/herald-notify/herald/subscribers"
)

var (
	benchFirst = []string{"Ada", "Grace", "Alan", "Barbara", "Edsger", "Donald", "Frances", "Ken", "Radia", "Tim"}
	benchLast  = []string{"Lovelace", "Hopper", "Turing", "Liskov", "Dijkstra", "Knuth", "Allen", "Thompson", "Perlman", "Berners-Lee"}
)

// seedBench writes n subscribers through the store in batches of 1,000: the
// first and last names cycle through ten each, emails are unique.
func seedBench(b *testing.B, srv *platformtest.Server, store *subscribers.Store, n int) {
	b.Helper()
	tenant := platform.Tenant{OrganizationID: srv.App.Development.OrganizationID, EnvironmentID: srv.App.Development.ID}
	for start := 0; start < n; start += 1000 {
		batch := make([]json.RawMessage, 0, 1000)
		for i := start; i < min(start+1000, n); i++ {
			batch = append(batch, json.RawMessage(fmt.Sprintf(
				`{"subscriberId":"user-%06d","firstName":%q,"lastName":%q,"email":"user%06d@mail%d.example.com","phone":"+1 555 %07d"}`,
				i, benchFirst[i%10], benchLast[(i/10)%10], i, i%50, i)))
		}
		if _, err := upsertDocs(store, context.Background(), tenant, batch, nil); err != nil {
			b.Fatalf("seed: %v", err)
		}
		srv.App.Clock.Advance(time.Second)
	}
}

// BenchmarkSearch measures GET /v2/subscribers over HTTP at 100,000
// subscribers. Every request also counts its matches (up to 50,000).
func BenchmarkSearch(b *testing.B) {
	const n = 100_000
	srv, store := newServer(b, nil)
	start := time.Now()
	seedBench(b, srv, store, n)
	b.Logf("seeded %d subscribers in %s", n, time.Since(start).Round(time.Millisecond))

	get := func(b *testing.B, query string) pageJSON {
		res := srv.Dev.Do(b, "GET", "/v2/subscribers?"+query, "")
		if res.Status != 200 {
			b.Fatalf("%s: %d %s", query, res.Status, res.Body)
		}
		var p pageJSON
		res.Decode(b, &p)
		return p
	}
	for _, bc := range []struct {
		name, query string
		want        int // expected totalCount
	}{
		{"subscriberId", "subscriberId=user-054321", 1},
		{"email_substring_rare", "email=r054321@", 1},
		{"email_substring_common", "email=@mail7.", n / 50},
		{"email_short_needle", "email=9@", n / 10},
		{"name_substring", "name=race+Hop", n / 100},
		{"name_substring_common", "name=Lovelace", n / 10},
		{"first_page", "limit=10", 50_000},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				p := get(b, bc.query)
				if *p.TotalCount != bc.want {
					b.Fatalf("%s: totalCount %d, want %d", bc.query, *p.TotalCount, bc.want)
				}
			}
		})
	}
	b.Run("cursor_paging", func(b *testing.B) {
		// Each iteration is one page: the walk goes deep into the table by
		// following next, restarting from the first page after 1,000 pages.
		var next *string
		for i := 0; b.Loop(); i++ {
			query := "limit=100&orderBy=createdAt"
			if next != nil && i%1000 != 0 {
				query += "&after=" + url.QueryEscape(*next)
			}
			p := get(b, query)
			if len(p.Data) != 100 {
				b.Fatalf("page %d has %d rows", i, len(p.Data))
			}
			next = p.Next
		}
	})
	// Last, as it adds subscribers: what the substring index costs a write,
	// a subscriber with an email, a phone and a name created over HTTP.
	b.Run("create", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			body := fmt.Sprintf(`{"subscriberId":"new-%07d","firstName":"Katherine","lastName":"Johnson","email":"new%07d@mail.example.com","phone":"+1 555 %07d"}`, i, i, i)
			if res := srv.Dev.Do(b, "POST", "/v1/subscribers", body); res.Status != 201 {
				b.Fatalf("create: %d %s", res.Status, res.Body)
			}
		}
	})
}
