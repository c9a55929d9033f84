package messaging

import (
	"context"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/herald-notify/herald/integrations/provider"
	"github.com/herald-notify/herald/outbound"
)

// Deliverer is the delivery engine: it picks the integrations a channel step
// goes through, renders the step, sends it through the providers and
// records the message in a Store (Deliver). activity's worker calls it.
type Deliverer struct {
	messages *Store
	out      provider.Deps       // how providers are reached
	obs      sendObserver        // metrics and the failed-send log (observe.go)
	files    *semaphore.Weighted // bytes of files the sends under way may hold (maxFilesInFlight)
}

// maxFilesInFlight bounds the bytes of files the emails being sent carry
// together: each send builds a request holding its files, and a
// broadcast's hundreds of emails at once would hold hundreds of copies.
const maxFilesInFlight = 64 << 20

// holdFiles waits until an email's files fit beside those of the sends
// under way, and returns what lets them go; a send without files waits for
// nothing.
func (e *Deliverer) holdFiles(ctx context.Context, files []Attachment) (release func(), err error) {
	var n int64
	for _, f := range files {
		n += int64(len(f.Content))
	}
	n = min(n, maxFilesInFlight)
	if n == 0 {
		return func() {}, nil
	}
	if err := e.files.Acquire(ctx, n); err != nil {
		return nil, err
	}
	return func() { e.files.Release(n) }, nil
}

// NewDeliverer returns the engine that delivers into messages, reading the
// integrations through the store's Sources, and connecting only where
// guard allows (nil refuses private and loopback addresses).
func NewDeliverer(messages *Store, guard *outbound.Guard) *Deliverer {
	return &Deliverer{messages: messages, out: provider.Deps{Client: provider.NewHTTPClient(guard, 15*time.Second), Dial: guard.DialContext},
		files: semaphore.NewWeighted(maxFilesInFlight)}
}
