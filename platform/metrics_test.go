package platform_test

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/matryer/is"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/herald-notify/herald/platform"
)

func TestMetrics_Gauge(t *testing.T) {
	is := is.New(t)
	m := platform.NewMetrics(nil)
	sockets := 0.0
	is.NoErr(m.Gauge("herald_inbox_sockets", "Live inbox sockets.", func() float64 { return sockets })) // a part registers its level
	is.True(m.Gauge("herald_inbox_sockets", "again", func() float64 { return 0 }) != nil)               // a name is registered once
	sockets = 3
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	is.True(strings.Contains(string(body), "herald_inbox_sockets 3")) // read at the scrape

	var none *platform.Metrics
	none.ObserveRequest("GET /x", "GET", 200, 0)                // a nil registry ignores reports
	is.NoErr(none.Gauge("x", "y", func() float64 { return 0 })) // and registrations
	none.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "x", Help: "y"}))
}
