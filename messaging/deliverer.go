package messaging

import (
	"time"

	"github.com/herald-notify/herald/integrations/provider"
	"github.com/herald-notify/herald/outbound"
)

// Deliverer is the delivery engine: it picks the integrations a channel step
// goes through, renders the step, sends it through the providers and
// records the message in a Store (Deliver). activity's worker calls it.
type Deliverer struct {
	messages *Store
	out      provider.Deps // how providers are reached
	obs      sendObserver  // metrics and the failed-send log (observe.go)
}

// NewDeliverer returns the engine that delivers into messages, reading the
// integrations through the store's Sources, and connecting only where
// guard allows (nil refuses private and loopback addresses).
func NewDeliverer(messages *Store, guard *outbound.Guard) *Deliverer {
	return &Deliverer{messages: messages, out: provider.Deps{Client: provider.NewHTTPClient(guard, 15*time.Second), Dial: guard.DialContext}}
}
