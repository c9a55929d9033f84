package activity

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// withoutChannels is a subscriber object of a trigger's `to` as its
// notification keeps it: without its channels, the credentials (webhook
// URLs, device tokens) the subscriber's upsert keeps sealed, which the
// notification does not need. ok is false when object has none.
func withoutChannels(object json.RawMessage) (_ json.RawMessage, ok bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(object, &fields) != nil {
		return object, false
	}
	if _, ok := fields["channels"]; !ok {
		return object, false
	}
	delete(fields, "channels")
	b, err := json.Marshal(fields)
	if err != nil {
		return object, false
	}
	return b, true
}

// toWithoutChannels is a trigger's `to` as a fan-out keeps it to resume:
// each subscriber object without its channels. A resumed fan-out needs
// only the subscriberIds, which it leaves out of the topics' members.
func toWithoutChannels(to json.RawMessage) json.RawMessage {
	var list []json.RawMessage
	if json.Unmarshal(to, &list) != nil {
		out, _ := withoutChannels(to)
		return out
	}
	changed := false
	for i := range list {
		var ok bool
		list[i], ok = withoutChannels(list[i])
		changed = changed || ok
	}
	if !changed {
		return to
	}
	b, _ := json.Marshal(list)
	return b
}

// DropStoredChannels removes the channels an earlier version kept in the
// subscriber object its notifications were sent to (sqldb.RewriteRows),
// and returns how many notifications it changed.
func (s *Store) DropStoredChannels(ctx context.Context) (n int, err error) {
	defer platform.Wrap(&err, "drop the channels stored with notifications")
	return s.db.RewriteRows(ctx, sqldb.Rewrite{Table: "notifications", Columns: []string{"recipient"},
		Where: `recipient LIKE '%"channels"%'`,
		Value: func(_ int, _ string, v sql.NullString) (string, bool) {
			to, ok := withoutChannels(json.RawMessage(v.String))
			return string(to), ok
		}})
}
