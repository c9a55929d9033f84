package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/subscribers"
)

// handleInboxSession serves POST /v1/inbox/session: the environment named
// by its public identifier, the subscriber (created when the in-app
// integration allows it, updated when the hash is valid), and a token for
// the rest of the inbox (docs/inbox.md, "What the routes do").
func handleInboxSession(s *Store) http.Handler {
	type request struct {
		ApplicationIdentifier string          `json:"applicationIdentifier" validate:"max=256"`
		Subscriber            json.RawMessage `json:"subscriber"`
		SubscriberID          string          `json:"subscriberId" validate:"max=256"`
		SubscriberHash        string          `json:"subscriberHash" validate:"max=256"`
		Context               json.RawMessage `json:"context"`
		ContextHash           string          `json:"contextHash" validate:"max=256"`
	}
	type response struct {
		Token                  string         `json:"token"`
		TotalUnreadCount       int            `json:"totalUnreadCount"`
		UnreadCount            severityCounts `json:"unreadCount"`
		RemoveNovuBranding     bool           `json:"removeNovuBranding"`
		MaxSnoozeDurationHours int            `json:"maxSnoozeDurationHours"`
		IsDevelopmentMode      bool           `json:"isDevelopmentMode"`
		ApplicationIdentifier  string         `json:"applicationIdentifier"`
		ContextKeys            []string       `json:"contextKeys"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		ctx, in := r.Context(), s.inbox
		req, err := platform.Decode[request](r)
		if err != nil {
			return err
		}
		var p subscribers.InboxProfile
		if raw := strings.TrimSpace(string(req.Subscriber)); raw != "" && raw != "null" {
			if raw[0] == '"' {
				json.Unmarshal(req.Subscriber, &p.SubscriberID)
			} else if err := json.Unmarshal(req.Subscriber, &p); err != nil {
				return platform.InvalidField("subscriber", nil, "must be a subscriberId or a subscriber object")
			}
		}
		if p.SubscriberID == "" {
			p.SubscriberID = req.SubscriberID
		}
		if req.ApplicationIdentifier == "" {
			if p.SubscriberID != "" {
				return platform.InvalidField("applicationIdentifier", nil, "is required")
			}
			return platform.BadRequest("Please provide a valid application identifier")
		}
		if p.SubscriberID == "" {
			return platform.InvalidField("subscriber.subscriberId", nil, "Subscriber ID is required")
		}
		refs, err := subscribers.ParseContexts(req.Context)
		if err != nil {
			return platform.InvalidField("context", nil, "%s", err.Error())
		}
		env, err := in.Auth.EnvironmentByIdentifier(ctx, req.ApplicationIdentifier)
		if errors.Is(err, platform.ErrNotFound) {
			return platform.BadRequest("Please provide a valid application identifier")
		}
		if err != nil {
			return err
		}
		generation, err := in.Auth.TokenGeneration(ctx, env.ID)
		if err != nil {
			return err
		}
		app, err := s.inAppIntegration(ctx, env.ID)
		if err != nil {
			return err
		}
		exists, err := subscriberExists(ctx, in.Subscribers, env.ID, p.SubscriberID)
		if err != nil {
			return err
		}
		if err := platform.AdmitSession(ctx, !exists); err != nil {
			return err
		}
		hashValid, err := checkSessionHash(ctx, in.Auth, env.ID, app, p.SubscriberID, req.SubscriberHash)
		if err != nil {
			return err
		}
		if err := checkContextHash(ctx, in.Auth, env.ID, app, refs, req.Context, req.ContextHash); err != nil {
			return err
		}
		if !exists && !createsSubscribers(app, env) {
			return platform.NotFound("Subscriber %s does not exist, and this environment's in-app integration does not let "+
				"an inbox session create it (credentials.autoCreateSubscribers)", p.SubscriberID)
		}
		tenant := env.Tenant()
		who, err := in.Subscribers.EnsureInboxSubscriber(ctx, tenant, p, hashValid)
		if err != nil {
			return err
		}
		if err := in.Subscribers.EnsureContexts(ctx, tenant, refs); err != nil {
			return err
		}
		session := platform.Subscriber{ID: who.ID, SubscriberID: who.SubscriberID,
			EnvironmentID: env.ID, OrganizationID: env.OrganizationID, FirstName: who.FirstName, LastName: who.LastName,
			Email: who.Email, ContextKeys: subscribers.ContextKeys(refs)}
		token, err := in.Auth.IssueToken(session, generation)
		if err != nil {
			return err
		}
		sev, err := in.Workflows.WorkflowSeverities(ctx, env.ID)
		if err != nil {
			return err
		}
		counts, err := s.unreadBySeverity(ctx, scopeOf(session), sev)
		if err != nil {
			return err
		}
		maxHours := 0
		if in.Snoozes != nil {
			maxHours = int(in.MaxSnooze / time.Hour)
		}
		return platform.JSON(w, http.StatusCreated, data[response]{response{
			Token: token, TotalUnreadCount: counts.Total, UnreadCount: counts, MaxSnoozeDurationHours: maxHours,
			IsDevelopmentMode: !strings.EqualFold(env.Name, platform.Production), ApplicationIdentifier: env.Identifier,
			ContextKeys: session.ContextKeys,
		}})
	})
}

// subscriberExists reports whether the environment has the subscriber a
// session names.
func subscriberExists(ctx context.Context, subs InboxSubscribers, env, subscriberID string) (bool, error) {
	_, err := subs.SubscriberDatabaseID(ctx, env, subscriberID)
	if errors.Is(err, platform.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// createsSubscribers reports whether a session may create the subscriber
// it names: as the in-app integration says, and unless it says, everywhere
// but in Production.
func createsSubscribers(app integration, env platform.Environment) bool {
	if c := app.Credentials.AutoCreateSubscribers; c != nil {
		return *c
	}
	return !strings.EqualFold(env.Name, platform.Production)
}

// checkSessionHash checks a session's subscriberHash: whether it is valid,
// and the reference platform's 400 when the integration asks for one and
// it is not.
func checkSessionHash(ctx context.Context, auth *platform.SubscriberAuth, env string, app integration, subscriberID, hash string) (bool, error) {
	hmacOn := app.Credentials.HMAC != nil && *app.Credentials.HMAC
	valid := false
	if hash != "" {
		var err error
		valid, err = auth.CheckSubscriberHash(ctx, env, subscriberID, hash)
		if errors.Is(err, platform.ErrNoSealedKey) {
			if hmacOn {
				return false, platform.BadRequest("Please provide a valid HMAC hash: every API key of this environment was " +
					"made before Herald kept keys sealed and exists only as a digest, so no HMAC can be checked; " +
					"configure a key again (HERALD_API_KEY) or make a new one (docs/inbox.md)")
			}
			err = nil
		}
		if err != nil {
			return false, err
		}
	}
	if hmacOn && !valid {
		return false, platform.BadRequest("Please provide a valid HMAC hash")
	}
	return valid, nil
}

// checkContextHash checks a session's contextHash when the integration asks
// for HMACs and the session names a context: the HMAC, as for the
// subscriber, of the context's canonical JSON as the session sent it.
func checkContextHash(ctx context.Context, auth *platform.SubscriberAuth, env string, app integration,
	refs []subscribers.ContextRef, raw json.RawMessage, hash string) error {
	if len(refs) == 0 || app.Credentials.HMAC == nil || !*app.Credentials.HMAC {
		return nil
	}
	refused := platform.BadRequest("Please provide a valid context HMAC hash")
	canonical, err := canonicalJSON(raw)
	if err != nil || hash == "" {
		return refused
	}
	valid, err := auth.CheckSubscriberHash(ctx, env, string(canonical), hash)
	if err != nil {
		return err // the subscriber's hash was checked first: a key can be used
	}
	if !valid {
		return refused
	}
	return nil
}

// inAppIntegration is the environment's active in_app integration, or the
// reference platform's 404.
func (s *Store) inAppIntegration(ctx context.Context, env string) (integration, error) {
	app, err := s.inbox.Integrations.InboxIntegration(ctx, env)
	if errors.Is(err, platform.ErrNotFound) {
		return integration{}, platform.NotFound("The active in-app integration could not be found")
	}
	return app, err
}
