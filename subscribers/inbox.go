package subscribers

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/herald-notify/herald/platform"
)

// InboxProfile is the subscriber an inbox session names: its subscriberId
// and the profile fields the client may send (nil: not sent), as the
// session's subscriber object spells them.
type InboxProfile struct {
	SubscriberID string          `json:"subscriberId"`
	FirstName    *string         `json:"firstName"`
	LastName     *string         `json:"lastName"`
	Email        *string         `json:"email"`
	Phone        *string         `json:"phone"`
	Avatar       *string         `json:"avatar"`
	Locale       *string         `json:"locale"`
	Timezone     *string         `json:"timezone"`
	Data         json.RawMessage `json:"data"` // an object, or nil
}

// InboxIdentity names one subscriber, as an inbox session shows it.
type InboxIdentity struct {
	ID           string // _id
	SubscriberID string
	FirstName    string
	LastName     string
	Email        string
	Avatar       string
}

// EnsureInboxSubscriber creates the session's subscriber when it is
// missing and, when update is true (the session's subscriberHash was
// valid), writes the profile it sent onto an existing one, as the
// reference platform does; without a valid hash an existing subscriber is
// left as it is. A profile that would be refused by POST /v1/subscribers
// is refused here too, with the same 422, under "subscriber.".
func (s *Store) EnsureInboxSubscriber(ctx context.Context, tenant platform.Tenant, p InboxProfile, update bool) (id InboxIdentity, err error) {
	defer platform.Wrap(&err, "inbox subscriber")
	b := subscriberBody{SubscriberID: p.SubscriberID, FirstName: p.FirstName, LastName: p.LastName, Email: p.Email,
		Phone: p.Phone, Avatar: p.Avatar, Locale: p.Locale, Timezone: p.Timezone, Data: p.Data,
		present: map[string]bool{"subscriberId": true}}
	for key, v := range map[string]*string{"firstName": p.FirstName, "lastName": p.LastName, "email": p.Email,
		"phone": p.Phone, "avatar": p.Avatar, "locale": p.Locale, "timezone": p.Timezone} {
		b.present[key] = v != nil
	}
	b.present["data"] = p.Data != nil
	if err := platform.ValidateRequest(ctx, createBody(b)); err != nil {
		return InboxIdentity{}, prefixFields(err, "subscriber.")
	}
	env := tenant.EnvironmentID
	stored, err := s.storedWhereIn(ctx, env, "subscriber_id", []string{p.SubscriberID})
	if err != nil {
		return InboxIdentity{}, err
	}
	if len(stored) == 1 {
		if _, changed := applied(stored[0], &b, nil); !update || !changed {
			return identityOf(stored[0]), nil
		}
	}
	defer s.changed(env, p.SubscriberID)
	var sub *subscriber
	err = s.db.RetryTx(ctx, func(tx *sql.Tx) error {
		if err := s.writing(ctx, tx, env, p.SubscriberID); err != nil {
			return err
		}
		var err error
		sub, _, err = s.upsertTx(ctx, tx, tenant, p.SubscriberID, &b, nil, createOrUpdate)
		return err
	})
	if err != nil {
		return InboxIdentity{}, err
	}
	return identityOf(sub), nil
}

func identityOf(sub *subscriber) InboxIdentity {
	return InboxIdentity{ID: sub.ID, SubscriberID: sub.SubscriberID, FirstName: deref(sub.FirstName),
		LastName: deref(sub.LastName), Email: deref(sub.Email), Avatar: deref(sub.Avatar)}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// SubscriberDatabaseID returns the _id of the environment's subscriber
// subscriberID, or platform.ErrNotFound (platform.SubscriberLookup). Every
// inbox request checks its token's subscriber this way, so it reads the
// identity cache the feed reads.
func (s *Store) SubscriberDatabaseID(ctx context.Context, environmentID, subscriberID string) (string, error) {
	id, err := s.SubscriberIdentity(ctx, environmentID, subscriberID)
	if err != nil {
		return "", err
	}
	return id.ID, nil
}
