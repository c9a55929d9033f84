package messaging

import (
	"time"

	"github.com/herald-notify/herald/integrations/provider"
)

// Deliverer is the delivery engine: it picks the integrations a channel step
// goes through, renders the step, sends it through the providers and
// records the message in a Store (Deliver). activity's worker calls it.
type Deliverer struct {
	messages *Store
	out      provider.Deps // how providers are reached
}

// NewDeliverer returns the engine that delivers into messages, reading the
// integrations through the store's Sources.
func NewDeliverer(messages *Store) *Deliverer {
	return &Deliverer{messages: messages, out: provider.Deps{Client: provider.NewHTTPClient(15 * time.Second)}}
}
