package subscribers

import (
	"context"
	"errors"
	"net/http"

	"github.com/herald-notify/herald/platform"
)

// bulkBody is the body of POST /v1/subscribers/bulk.
type bulkBody struct {
	Subscribers []createBody `json:"subscribers" validate:"required,min=1,max=500"`
}

// Valid runs each subscriber's own checks, keyed by its place in the array:
// as the reference platform, an invalid subscriber refuses the request.
func (b bulkBody) Valid(ctx context.Context) map[string]string {
	return platform.ValidEach(ctx, "subscribers", b.Subscribers)
}

// handleSubscriberBulk serves POST /v1/subscribers/bulk, the reference
// platform's older bulk create: each subscriber is created, or updated when
// its subscriberId exists, as POST /v1/subscribers does, and the answer
// says which (the reference's per-item result). One that a client error
// stops is listed as failed, with the reason, and the others still go in.
func handleSubscriberBulk(store *Store) http.Handler {
	type changed struct {
		SubscriberID string `json:"subscriberId"`
	}
	type failed struct {
		Message      string `json:"message"`
		SubscriberID string `json:"subscriberId"`
	}
	type result struct {
		Updated []changed `json:"updated"`
		Created []changed `json:"created"`
		Failed  []failed  `json:"failed"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		body, err := platform.Decode[bulkBody](r)
		if err != nil {
			return err
		}
		ctx, tenant := r.Context(), platform.TenantFrom(r.Context())
		out := result{Updated: []changed{}, Created: []changed{}, Failed: []failed{}}
		for i := range body.Subscribers {
			sub := &body.Subscribers[i]
			_, created, err := store.upsert(ctx, tenant, sub.SubscriberID, (*subscriberBody)(sub), createOrUpdate)
			var e *platform.Error
			switch {
			case errors.As(err, &e):
				out.Failed = append(out.Failed, failed{Message: e.Message, SubscriberID: sub.SubscriberID})
			case err != nil:
				return err
			case created:
				out.Created = append(out.Created, changed{sub.SubscriberID})
			default:
				out.Updated = append(out.Updated, changed{sub.SubscriberID})
			}
		}
		return platform.JSON(w, http.StatusCreated, out)
	})
}
