package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/herald-notify/herald/platform"
)

// eventTypes is an endpoint's eventTypes as a request gives it: absent
// (keep, or all on create), null (all), or a list.
type eventTypes struct {
	set  bool
	list []string
}

func (e *eventTypes) UnmarshalJSON(b []byte) error {
	e.set = true
	return json.Unmarshal(b, &e.list)
}

// endpointRequest is the body of POST /v2/webhooks/endpoints and PATCH
// /v2/webhooks/endpoints/{endpointId} (docs/webhooks.md, "Endpoints").
type endpointRequest struct {
	URL         *string    `json:"url" validate:"omitempty,max=2048"`
	Description *string    `json:"description" validate:"omitempty,max=500"`
	EventTypes  eventTypes `json:"eventTypes"`
	Active      *bool      `json:"active"`
}

// Valid checks the URL and the event types, which the tags cannot: the
// rules the store holds every change to.
func (r endpointRequest) Valid(ctx context.Context) map[string]string { return r.input().Valid(ctx) }

// urlProblem says what is wrong with an endpoint URL, or "". Where it may
// connect is the outbound guard's to decide, when it connects
// (docs/webhooks.md, "Delivery").
func urlProblem(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "":
		return "must be an absolute http or https URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "must be an http or https URL"
	case u.User != nil:
		return "must not carry credentials"
	}
	return ""
}

func (r endpointRequest) input() EndpointInput {
	in := EndpointInput{URL: r.URL, Description: r.Description, Active: r.Active}
	if r.EventTypes.set {
		in.EventTypes, in.AllEvents = r.EventTypes.list, r.EventTypes.list == nil
	}
	return in
}

// handleEndpointCreate serves POST /v2/webhooks/endpoints: 201 with the
// endpoint and its secret, shown this once.
func handleEndpointCreate(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[endpointRequest](r)
		if err != nil {
			return err
		}
		e, err := s.CreateEndpoint(r.Context(), platform.TenantFrom(r.Context()), req.input())
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusCreated, e)
	})
}

// cursor reads a list's limit, after and before.
func cursor(q *platform.Query) Cursor {
	c := Cursor{Limit: q.Int("limit", 10, 1, 100)}
	for _, p := range []struct {
		name string
		dst  *string
	}{{"after", &c.After}, {"before", &c.Before}} {
		if v := q.String(p.name); v != "" {
			id, ok := DecodeCursor(v)
			if !ok {
				q.Fail(p.name, v, "is not a cursor this list gave")
			}
			*p.dst = id
		}
	}
	if c.After != "" && c.Before != "" {
		q.Fail("before", q.String("before"), "cannot be combined with after")
	}
	return c
}

// handleEndpointList serves GET /v2/webhooks/endpoints: the environment's
// endpoints, newest first, cursor-paged.
func handleEndpointList(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		q := platform.NewQuery(r)
		c := cursor(q)
		if err := q.Err(); err != nil {
			return err
		}
		p, err := s.Endpoints(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, c)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, p)
	})
}

// endpointNotFound is the 404 of an endpoint the environment lacks.
func endpointNotFound(err error, id string) error {
	if errors.Is(err, platform.ErrNotFound) {
		return platform.NotFound("Webhook endpoint %s was not found", id)
	}
	return err
}

// handleEndpointGet serves GET /v2/webhooks/endpoints/{endpointId}.
func handleEndpointGet(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("endpointId")
		e, err := s.Endpoint(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, id)
		if err != nil {
			return endpointNotFound(err, id)
		}
		return platform.JSON(w, http.StatusOK, e)
	})
}

// handleEndpointUpdate serves PATCH /v2/webhooks/endpoints/{endpointId}:
// only the fields given change; eventTypes null takes every type again.
func handleEndpointUpdate(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[endpointRequest](r)
		if err != nil {
			return err
		}
		id := r.PathValue("endpointId")
		e, err := s.UpdateEndpoint(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, id, req.input())
		if err != nil {
			return endpointNotFound(err, id)
		}
		return platform.JSON(w, http.StatusOK, e)
	})
}

// handleEndpointDelete serves DELETE /v2/webhooks/endpoints/{endpointId}:
// 204, the endpoint and its delivery log gone.
func handleEndpointDelete(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("endpointId")
		if err := s.DeleteEndpoint(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, id); err != nil {
			return endpointNotFound(err, id)
		}
		return platform.NoContent(w)
	})
}

// handleSecretRotate serves POST
// /v2/webhooks/endpoints/{endpointId}/secret/rotate: {secret}, the new
// one; the old one signs beside it for 24 hours.
func handleSecretRotate(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("endpointId")
		secret, err := s.RotateSecret(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, id)
		if err != nil {
			return endpointNotFound(err, id)
		}
		return platform.JSON(w, http.StatusOK, map[string]string{"secret": secret})
	})
}

// handleEndpointTest serves POST /v2/webhooks/endpoints/{endpointId}/test:
// {eventType} queues a sample event for the endpoint alone; 202 with its
// delivery.
func handleEndpointTest(s *Store) http.Handler {
	type body struct {
		EventType string `json:"eventType" validate:"required,max=100"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[body](r)
		if err != nil {
			return err
		}
		id := r.PathValue("endpointId")
		d, err := s.SendTest(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, id, req.EventType)
		if err != nil {
			return endpointNotFound(err, id)
		}
		return platform.JSON(w, http.StatusAccepted, d)
	})
}

// handleDeliveryList serves GET
// /v2/webhooks/endpoints/{endpointId}/deliveries: the endpoint's delivery
// log, newest first, cursor-paged.
func handleDeliveryList(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		q := platform.NewQuery(r)
		c := cursor(q)
		if err := q.Err(); err != nil {
			return err
		}
		id := r.PathValue("endpointId")
		p, err := s.Deliveries(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, id, c)
		if err != nil {
			return endpointNotFound(err, id)
		}
		return platform.JSON(w, http.StatusOK, p)
	})
}

// handleDeliveryReplay serves POST
// /v2/webhooks/endpoints/{endpointId}/deliveries/{deliveryId}/replay: 202
// with the delivery, due again under the same webhook-id.
func handleDeliveryReplay(s *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		id, delivery := r.PathValue("endpointId"), r.PathValue("deliveryId")
		d, err := s.Replay(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, id, delivery)
		if errors.Is(err, platform.ErrNotFound) {
			return platform.NotFound("Webhook delivery %s of endpoint %s was not found", delivery, id)
		}
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusAccepted, d)
	})
}

// handleReplaySince serves POST /v2/webhooks/endpoints/{endpointId}/replay:
// {since} makes every delivery of the endpoint since then due again; 202
// with {replayed}, how many.
func handleReplaySince(s *Store) http.Handler {
	type body struct {
		Since string `json:"since" validate:"required,max=64"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		req, err := platform.Decode[body](r)
		if err != nil {
			return err
		}
		since, err := time.Parse(time.RFC3339Nano, req.Since)
		if err != nil {
			return platform.InvalidField("since", req.Since, "must be a time in ISO 8601 (2026-01-02T15:04:05Z)")
		}
		id := r.PathValue("endpointId")
		n, err := s.ReplaySince(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, id, since)
		if err != nil {
			return endpointNotFound(err, id)
		}
		return platform.JSON(w, http.StatusAccepted, map[string]int64{"replayed": n})
	})
}

// handleEventTypes serves GET /v2/webhooks/event-types: the catalogue,
// as a list of one page.
func handleEventTypes() http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		return platform.JSON(w, http.StatusOK, Page[EventType]{Data: EventTypes})
	})
}
