package subscribers_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/matryer/is"
)

func TestSubscriberListV1(t *testing.T) {
	srv, _ := newServer(t, nil)
	c := srv.Dev
	for i := range 3 {
		mustCreateSubscriber(t, c, fmt.Sprintf(`{"subscriberId":"s%d","firstName":"N%d"}`, i, i))
		srv.App.Clock.Advance(time.Second) // distinct creation times, so newest first is s2, s1, s0
	}
	mustCreateSubscriber(t, srv.Prod, `{"subscriberId":"prod-only"}`)
	type page struct {
		Page     int              `json:"page"`
		HasMore  bool             `json:"hasMore"`
		PageSize int              `json:"pageSize"`
		Data     []subscriberJSON `json:"data"`
	}

	t.Run("OK", func(t *testing.T) {
		is := is.New(t)
		var p page
		mustDo(t, c, "GET", "/v1/subscribers?page=0&limit=2", "", 200, &p)
		is.Equal(p.Page, 0)                    // the first page
		is.Equal(p.PageSize, 2)                // two on it
		is.True(p.HasMore)                     // a third waits
		is.Equal(p.Data[0].SubscriberID, "s2") // newest first
		is.Equal(*p.Data[0].FirstName, "N2")   // whole subscribers
		mustDo(t, c, "GET", "/v1/subscribers?page=1&limit=2", "", 200, &p)
		is.Equal(p.PageSize, 1)                // the last one
		is.True(!p.HasMore)                    // nothing after it
		is.Equal(p.Data[0].SubscriberID, "s0") // the oldest
		mustDo(t, c, "GET", "/v1/subscribers", "", 200, &p)
		is.Equal(p.PageSize, 3) // the default limit holds all of Development's, none of Production's
		mustDo(t, c, "GET", "/v1/subscribers?page=9", "", 200, &p)
		is.Equal(len(p.Data), 0) // past the end: an empty page
		is.True(p.Data != nil)   // as an empty list
	})

	for _, tc := range []struct {
		name, query string
		status      int
	}{
		{"ErrLimitZero", "limit=0", 422},
		{"ErrLimitOver", "limit=101", 422},
		{"ErrLimitNotNumber", "limit=ten", 400},
		{"ErrPageNegative", "page=-1", 422},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := c.Do(t, "GET", "/v1/subscribers?"+tc.query, "")
			is.Equal(res.Status, tc.status) // refused, never a 500
		})
	}
}
