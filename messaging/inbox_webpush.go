package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/herald-notify/herald/platform"
)

// WebPushSubscriptions stores a browser's push subscription among the
// subscriber's web-push device tokens; subscribers.Store satisfies it.
type WebPushSubscriptions interface {
	AddDeviceToken(ctx context.Context, environmentID, subscriberID, providerID, token string, replaces func(old string) bool) error
}

// handleInboxWebPushKey serves GET /v1/inbox/web-push: the public key a
// page subscribes with, that of the environment's web-push integration
// (docs/web-push.md); 404 when there is none.
func handleInboxWebPushKey(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		who := platform.SubscriberFrom(r.Context())
		key, err := s.inbox.Integrations.WebPushKey(r.Context(), who.EnvironmentID)
		if errors.Is(err, platform.ErrNotFound) || err == nil && key == "" {
			return platform.NotFound("The environment has no active web-push integration")
		}
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, data[map[string]string]{map[string]string{"publicKey": key}})
	})
}

// webPushSubscription is what PushSubscription.toJSON() gives a page.
type webPushSubscription struct {
	Endpoint       string `json:"endpoint" validate:"required,max=2048"`
	ExpirationTime *int64 `json:"expirationTime"`
	Keys           struct {
		P256dh string `json:"p256dh" validate:"required,max=128"`
		Auth   string `json:"auth" validate:"required,max=64"`
	} `json:"keys"`
}

// handleInboxWebPushSubscribe serves POST /v1/inbox/web-push/subscriptions:
// the page's browser subscription becomes one of the subscriber's web-push
// device tokens, replacing an earlier one of the same endpoint.
func handleInboxWebPushSubscribe(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[webPushSubscription](r)
		if err != nil {
			return err
		}
		if u, err := url.Parse(req.Endpoint); err != nil || u.Scheme != "https" || u.Host == "" {
			return platform.BadRequest("endpoint must be the https URL of a push service")
		}
		ctx, who := r.Context(), platform.SubscriberFrom(r.Context())
		token, _ := json.Marshal(req)
		err = s.inbox.WebPush.AddDeviceToken(ctx, who.EnvironmentID, who.SubscriberID, "web-push", string(token), func(old string) bool {
			var o webPushSubscription
			return json.Unmarshal([]byte(old), &o) == nil && o.Endpoint == req.Endpoint
		})
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusCreated, data[map[string]string]{map[string]string{"endpoint": req.Endpoint}})
	})
}
