package workflows_test

import (
	"testing"
	"time"

	"github.com/herald-notify/herald/sqldb"
	"github.com/herald-notify/herald/workflows"
	"github.com/matryer/is"
)

// Two records of a trigger that reach the writer out of order leave the
// later time (two stores stand for two writes a second apart).
func TestTriggered_KeepsTheLaterTime(t *testing.T) {
	is := is.New(t)
	srv, store := newServer(t, nil)
	w := mustCreate(t, srv.Dev, `{"name":"T","workflowId":"t","steps":[]}`)
	dev := srv.App.Development.ID
	later := time.Date(2026, 11, 24, 12, 0, 2, 0, time.UTC)
	is.NoErr(store.Triggered(t.Context(), dev, w.ID, later))
	is.NoErr(workflows.NewStore(srv.App.DB).Triggered(t.Context(), dev, w.ID, later.Add(-time.Second)))
	var got struct {
		LastTriggeredAt string `json:"lastTriggeredAt"`
	}
	srv.Dev.Do(t, "GET", "/v2/workflows/t", "").Decode(t, &got)
	is.Equal(got.LastTriggeredAt, sqldb.FormatTime(later)) // the later time stays
}
