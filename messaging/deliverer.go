package messaging

import (
	"net/http"
	"time"

	"github.com/herald-notify/herald/platform"
)

// Deliverer is the delivery engine: it picks the integrations a channel step
// goes through, renders the step, sends it through the providers and
// records the message in a Store (Deliver). activity's worker calls it.
type Deliverer struct {
	messages *Store
	client   *http.Client // outbound webhooks
	senders  map[string]func(integration) (Provider, error)

	integrations platform.ParseCache[integration] // active integrations, by environment, channel and rank
}

// NewDeliverer returns the engine that delivers into messages, reading the
// integrations through the store's Sources.
func NewDeliverer(messages *Store) *Deliverer {
	d := &Deliverer{messages: messages, client: NewHTTPClient(15 * time.Second)}
	d.senders = providerFactories(d.client)
	return d
}
