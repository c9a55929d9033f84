package subscribers

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/herald-notify/herald/platform"
)

// handleSubscriberCreate serves POST /v1/subscribers and POST /v2/subscribers:
// create, or update when the subscriberId exists (201 either way, as the
// reference platform answers). Under v2, ?failIfExists=true turns an existing
// subscriberId into a 409.
func handleSubscriberCreate(store *Store, v2 bool) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		mode := createOrUpdate
		if v2 {
			q := platform.NewQuery(r)
			fail := q.Bool("failIfExists")
			if err := q.Err(); err != nil {
				return err
			}
			if fail != nil && *fail {
				mode = createOnly
			}
		}
		body, err := platform.Decode[createBody](r)
		if err != nil {
			return err
		}
		sub, _, err := store.upsert(r.Context(), platform.TenantFrom(r.Context()), body.SubscriberID, (*subscriberBody)(&body), mode)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusCreated, sub.toResponse(true))
	})
}

// handleSubscriberGet serves GET /v1/subscribers/{subscriberId} and GET
// /v2/subscribers/{subscriberId}.
func handleSubscriberGet(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("subscriberId")
		sub, err := store.get(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, id)
		if errors.Is(err, platform.ErrNotFound) {
			return platform.NotFound("Subscriber %q not found", id)
		}
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, sub.toResponse(true))
	})
}

// handleSubscriberUpdate serves PUT /v1/subscribers/{subscriberId} and PATCH
// /v2/subscribers/{subscriberId}: the fields sent change (null clears one),
// the rest stay; channels sent are merged as PATCH credentials does.
func handleSubscriberUpdate(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		body, err := platform.Decode[subscriberBody](r)
		if err != nil {
			return err
		}
		sub, _, err := store.upsert(r.Context(), platform.TenantFrom(r.Context()), r.PathValue("subscriberId"), &body, updateOnly)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, sub.toResponse(true))
	})
}

// handleSubscriberDelete serves DELETE /v1/subscribers/{subscriberId} and
// DELETE /v2/subscribers/{subscriberId}; the subscriber's credentials go with it.
func handleSubscriberDelete(store *Store) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		err := store.delete(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("subscriberId"))
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, deleteResponse{Acknowledged: true, Status: "deleted"})
	})
}

// handleCredentialsUpdate serves PATCH /v1/subscribers/{subscriberId}/credentials
// (docs/api.md, "Channel credentials": upsert, credentials merge, a supplied
// deviceTokens replaces) and, with replace, PUT on the same path (the whole
// channel entry is replaced).
func handleCredentialsUpdate(store *Store, replace bool) http.Handler {
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		body, err := platform.Decode[channelRequest](r)
		if err != nil {
			return err
		}
		sub, err := store.setChannel(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("subscriberId"), body, replace)
		if err != nil {
			return err
		}
		return platform.JSON(w, http.StatusOK, sub.toResponse(true))
	})
}

// handleCredentialsDelete serves DELETE
// /v1/subscribers/{subscriberId}/credentials/{providerId}: 204, also when the
// subscriber had no entry for that provider.
func handleCredentialsDelete(store *Store) http.Handler {
	allowed := strings.Fields(providerIDs)
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		provider := r.PathValue("providerId")
		if !slices.Contains(allowed, provider) {
			return platform.InvalidField("providerId", provider, "must be one of: %s", strings.Join(allowed, ", "))
		}
		err := store.deleteChannel(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, r.PathValue("subscriberId"), provider)
		if err != nil {
			return err
		}
		return platform.NoContent(w)
	})
}

// handleSubscriberSearch serves GET /v2/subscribers (docs/api.md,
// "Subscriber search", "Lists and paging" and "What strict clients check"):
// filters, keyset cursors in both directions, and a capped exact count.
func handleSubscriberSearch(store *Store) http.Handler {
	type response struct {
		Data             []Subscriber `json:"data"`
		Next             *string      `json:"next"`
		Previous         *string      `json:"previous"`
		TotalCount       int          `json:"totalCount"`
		TotalCountCapped bool         `json:"totalCountCapped"`
	}
	return platform.Handle(func(w http.ResponseWriter, r *http.Request) error {
		sq, err := readSearchQuery(platform.NewQuery(r))
		if err != nil {
			return err
		}
		page, err := store.search(r.Context(), platform.TenantFrom(r.Context()).EnvironmentID, sq)
		if err != nil {
			return err
		}
		res := response{Data: make([]Subscriber, len(page.Subscribers)), TotalCount: page.TotalCount, TotalCountCapped: page.Capped}
		for i, sub := range page.Subscribers {
			res.Data[i] = sub.toResponse(false)
		}
		if page.Next != nil {
			s := page.Next.encode()
			res.Next = &s
		}
		if page.Previous != nil {
			s := page.Previous.encode()
			res.Previous = &s
		}
		return platform.JSON(w, http.StatusOK, res)
	})
}

// readSearchQuery reads the query of GET /v2/subscribers: the filters, the
// page's size and order, and its cursor (docs/api.md, "Subscriber search").
func readSearchQuery(q *platform.Query) (searchQuery, error) {
	pq := readPageQuery(q)
	sq := searchQuery{
		SubscriberID: q.String("subscriberId"),
		Email:        q.String("email"),
		Phone:        q.String("phone"),
		Name:         q.String("name"),
		Limit:        pq.limit,
		OrderBy:      pq.orderBy,
		Desc:         pq.desc,
		After:        pq.after,
		Before:       pq.before,
	}
	if b := q.Bool("includeCursor"); b != nil {
		sq.IncludeCursor = *b
	}
	return sq, q.Err()
}
