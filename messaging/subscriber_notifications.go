package messaging

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/herald-notify/herald/platform"
)

// A subscriber's notifications are served twice over one store and one set
// of handlers: to the subscriber's inbox under /v1/inbox/ with its token,
// and to the server under /v2/subscribers/{subscriberId}/notifications with
// the API key (docs/inbox.md, "The same notifications from a server"). An
// action through either updates an open inbox at once: both publish the
// same live events.

// notificationRoute is how a notification route finds its subscriber and
// answers.
type notificationRoute struct {
	// owner is the subscriber whose notifications the request acts on.
	owner func(*http.Request) (platform.Subscriber, error)
	// idParam names the path value that holds the notification's id.
	idParam string
	// envelope wraps a single answer in {data: …}, as the inbox client
	// reads it; the API answers bare, as all its routes do, and
	// compatibility mode adds the reference's envelope.
	envelope bool
}

// inboxRoute serves the inbox: the subscriber of the token.
var inboxRoute = notificationRoute{
	owner:    func(r *http.Request) (platform.Subscriber, error) { return platform.SubscriberFrom(r.Context()), nil },
	idParam:  "id",
	envelope: true,
}

// apiRoute serves a server with the API key: the subscriber the path names.
func (s *Store) apiRoute() notificationRoute {
	return notificationRoute{owner: s.pathSubscriber, idParam: "notificationId"}
}

// pathSubscriber is the environment's subscriber of the path's
// subscriberId, in the query's context, or a 404.
func (s *Store) pathSubscriber(r *http.Request) (platform.Subscriber, error) {
	ctx, tenant := r.Context(), platform.TenantFrom(r.Context())
	subscriberID := r.PathValue("subscriberId")
	id, err := s.src.Subscribers.SubscriberIdentity(ctx, tenant.EnvironmentID, subscriberID)
	if errors.Is(err, platform.ErrNotFound) {
		return platform.Subscriber{}, platform.NotFound("Subscriber %s not found", subscriberID)
	}
	if err != nil {
		return platform.Subscriber{}, fmt.Errorf("read subscriber %s: %w", subscriberID, err)
	}
	// contextKeys selects the notifications of exactly that context, as an
	// inbox session's context does; without it, those of none.
	return platform.Subscriber{ID: id.ID, SubscriberID: id.SubscriberID, EnvironmentID: tenant.EnvironmentID,
		OrganizationID: tenant.OrganizationID, FirstName: deref(id.FirstName), LastName: deref(id.LastName),
		ContextKeys: r.URL.Query()["contextKeys"]}, nil
}

// answer writes v with 200, in the route's envelope.
func (rt notificationRoute) answer(w http.ResponseWriter, v any) error {
	if rt.envelope {
		return platform.JSON(w, http.StatusOK, data[any]{v})
	}
	return platform.JSON(w, http.StatusOK, v)
}

// handleSubscriberNotificationAction serves PATCH
// /v2/subscribers/{subscriberId}/notifications/{notificationId}/actions/{actionType}/complete
// and /revert: the inbox's complete and revert, with the button in the path.
func handleSubscriberNotificationAction(s *Store, status string) http.Handler {
	rt := s.apiRoute()
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		button := r.PathValue("actionType")
		if button != "primary" && button != "secondary" {
			return platform.InvalidField("actionType", button, "must be one of: primary, secondary")
		}
		who, err := rt.owner(r)
		if err != nil {
			return err
		}
		id, err := rt.notificationID(r)
		if err != nil {
			return err
		}
		return s.act(w, r, rt, who, id, button, status)
	})
}
