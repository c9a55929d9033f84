package app_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
	"github.com/herald-notify/herald/platform/platformtest"
)

// TestMetrics_StoredBytesPerEnvironment: /metrics reports the bytes each
// environment's records hold, and a large payload stored in one shows in
// its figure, not in the other's.
func TestMetrics_StoredBytesPerEnvironment(t *testing.T) {
	is := is.New(t)
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hello {{ payload.name }}")
	blob := strings.Repeat("x", 200<<10)
	tx := apptest.Trigger(t, srv, `{"name":"hello","to":"ada","payload":{"name":"Ada","blob":"`+blob+`"}}`)
	apptest.WaitJobs(t, srv, tx, "trigger:completed", "in_app:completed")

	families := platformtest.Scrape(t, srv.URL+"/metrics")
	dev, ok := platformtest.Sample(families, "herald_environment_stored_bytes", map[string]string{"environment": srv.App.Development.ID})
	is.True(ok)                       // the environment's figure is reported
	is.True(dev > float64(len(blob))) // with the payload it stored
	prod, _ := platformtest.Sample(families, "herald_environment_stored_bytes", map[string]string{"environment": srv.App.Production.ID})
	is.True(prod < float64(len(blob))) // and not in the other environment's
}
