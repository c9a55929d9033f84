package messaging

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/sqldb"
)

// TestPackLive: the events waiting to be notified go in as few payloads
// as fit PostgreSQL's limit, each a JSON array the receiver reads back in
// order.
func TestPackLive(t *testing.T) {
	is := is.New(t)
	var evs []LiveEvent
	for i := range 500 {
		evs = append(evs, LiveEvent{EnvironmentID: "6b07f5ea7199599b9606baf4", SubscriberID: fmt.Sprintf("sub-%04d", i),
			MessageID: fmt.Sprintf("msg-%04d", i), Kind: LiveKind(1 + i%3)})
	}
	payloads := packLive(evs)
	is.True(len(payloads) > 1) // 500 events take more than one notification
	var got []LiveEvent
	for _, p := range payloads {
		is.True(len(p) <= sqldb.NotifyLimit) // each fits
		var wire []liveWire
		is.NoErr(json.Unmarshal([]byte(p), &wire)) // a JSON array
		for _, w := range wire {
			got = append(got, LiveEvent{EnvironmentID: w.E, SubscriberID: w.S, MessageID: w.M, Kind: w.K})
		}
	}
	is.Equal(got, evs)           // every event, in order
	is.Equal(packLive(nil), nil) // nothing to send, no notification
}
