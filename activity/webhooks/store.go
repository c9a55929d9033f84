// Package webhooks is activity's outbound webhooks: the endpoints a team
// registers per environment, the events Herald raises into them in the
// transaction of the change that causes each (an outbox), and the
// durable, signed, at-least-once delivery of those events, with each
// endpoint's delivery log (docs/webhooks.md).
package webhooks

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb"
)

// Store owns the webhook tables: endpoints, events and deliveries.
type Store struct {
	db     *sqldb.DB
	now    func() time.Time
	sealer *platform.Sealer

	// wanted caches each environment's active endpoints, read on every
	// raise; its writes and the other processes' (peers) clear it.
	wanted sqldb.WriteCache[[]endpointFilter]
	peers  sqldb.Invalidations

	woken   chan struct{} // signalled after a commit that made a delivery due
	metrics *metrics      // nil counts nothing
}

// NewStore returns the webhook store on db. secret seals the endpoints'
// signing secrets at rest (nil keeps them plain); now is the clock, nil for
// time.Now.
func NewStore(db *sqldb.DB, secret []byte, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	s := &Store{db: db, now: now, sealer: platform.NewSealer(secret, "webhook endpoint secret"),
		woken: make(chan struct{}, 1)}
	s.peers = db.Invalidations("herald_webhook_endpoints", nil, s.wanted.Invalidate)
	return s
}

// wake tells the dispatcher that a delivery may be due now.
func (s *Store) wake() {
	select {
	case s.woken <- struct{}{}:
	default:
	}
}

// Endpoint is an endpoint as the API answers it (docs/webhooks.md,
// "Endpoints"). EventTypes nil means every type.
type Endpoint struct {
	ID             string   `json:"_id"`
	URL            string   `json:"url"`
	Description    string   `json:"description"`
	EventTypes     []string `json:"eventTypes"`
	Active         bool     `json:"active"`
	DisabledReason *string  `json:"disabledReason"`
	CreatedAt      string   `json:"createdAt"`
	UpdatedAt      string   `json:"updatedAt"`
}

// CreatedEndpoint is the answer to creating an endpoint: the only one
// that carries its secret.
type CreatedEndpoint struct {
	Endpoint
	Secret string `json:"secret"`
}

// EndpointInput is what creates or changes an endpoint; a nil field keeps
// (or, on create, defaults) its value. AllEvents set makes the endpoint
// take every event type again.
type EndpointInput struct {
	URL         *string
	Description *string
	EventTypes  []string
	AllEvents   bool
	Active      *bool
}

// Valid reports what is wrong with the input, by the field's JSON path:
// the store refuses an endpoint that breaks these rules, whoever asks.
func (in EndpointInput) Valid(context.Context) map[string]string {
	problems := map[string]string{}
	if in.URL != nil {
		if why := urlProblem(*in.URL); why != "" {
			problems["url"] = why
		} else if len(*in.URL) > maxURL {
			problems["url"] = fmt.Sprintf("must be at most %d characters", maxURL)
		}
	}
	if in.Description != nil && utf8.RuneCountInString(*in.Description) > maxDescription {
		problems["description"] = fmt.Sprintf("must be at most %d characters", maxDescription)
	}
	if len(in.EventTypes) > len(EventTypes) {
		problems["eventTypes"] = "must list each event type at most once"
	}
	for i, t := range in.EventTypes {
		if _, ok := knownType(t); !ok {
			problems["eventTypes."+strconv.Itoa(i)] = "must be one of the event types (GET /v2/webhooks/event-types)"
		}
	}
	return problems
}

// The longest URL and description an endpoint keeps.
const (
	maxURL         = 2048
	maxDescription = 500
)

const endpointColumns = `id, url, description, event_types, active, disabled_reason, created_at, updated_at`

func scanEndpoint(row interface{ Scan(...any) error }) (Endpoint, error) {
	var e Endpoint
	var types sql.NullString
	var reason string
	err := row.Scan(&e.ID, &e.URL, &e.Description, &types, &e.Active, &reason, &e.CreatedAt, &e.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return e, platform.ErrNotFound
	}
	if err != nil {
		return e, err
	}
	if types.Valid {
		if err := json.Unmarshal([]byte(types.String), &e.EventTypes); err != nil {
			return e, fmt.Errorf("event types of endpoint %s: %w", e.ID, err)
		}
	}
	if reason != "" {
		e.DisabledReason = &reason
	}
	return e, nil
}

// newSecret returns a new signing secret: whsec_ and the base64 of 32
// random bytes, as Standard Webhooks libraries read it.
func newSecret() string {
	var b [32]byte
	rand.Read(b[:])
	return secretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

const secretPrefix = "whsec_"

// CreateEndpoint registers an endpoint in the tenant's environment and
// returns it with its new secret, which no later answer shows.
func (s *Store) CreateEndpoint(ctx context.Context, tenant platform.Tenant, in EndpointInput) (_ CreatedEndpoint, err error) {
	if in.URL == nil {
		return CreatedEndpoint{}, platform.InvalidField("url", nil, "is required")
	}
	if err := platform.ValidateRequest(ctx, in); err != nil {
		return CreatedEndpoint{}, err
	}
	defer platform.Wrap(&err, "create webhook endpoint")
	now := sqldb.FormatTime(s.now())
	id := sqldb.NewIDAt(s.now())
	secret := newSecret()
	types, err := typesColumn(in)
	if err != nil {
		return CreatedEndpoint{}, err
	}
	active := in.Active == nil || *in.Active
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO webhook_endpoints
			(id, environment_id, organization_id, url, description, event_types, active, secret, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, tenant.EnvironmentID, tenant.OrganizationID, deref(in.URL), deref(in.Description), types,
			sqldb.Flag(active), s.sealer.SealText([]byte(secret), []byte(id)), now, now); err != nil {
			return err
		}
		return s.changed(ctx, tx)
	})
	if err != nil {
		return CreatedEndpoint{}, err
	}
	e, err := s.Endpoint(ctx, tenant.EnvironmentID, id)
	return CreatedEndpoint{Endpoint: e, Secret: secret}, err
}

// changed forgets the cached endpoints, here at once and in the other
// processes when tx commits.
func (s *Store) changed(ctx context.Context, tx *sql.Tx) error {
	s.wanted.Invalidate()
	s.db.AfterCommit(tx, s.wanted.Invalidate)
	return s.peers.Changed(ctx, tx)
}

func typesColumn(in EndpointInput) (any, error) {
	if in.EventTypes == nil || in.AllEvents {
		return nil, nil
	}
	b, err := json.Marshal(in.EventTypes)
	return string(b), err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Endpoint returns one endpoint of the environment, or
// platform.ErrNotFound.
func (s *Store) Endpoint(ctx context.Context, env, id string) (Endpoint, error) {
	return scanEndpoint(s.db.QueryRowContext(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE environment_id = ? AND id = ?`, env, id))
}

// UpdateEndpoint changes the given fields of an endpoint and returns it.
// Activating it clears why it was disabled, and the failures that counted
// towards disabling it.
func (s *Store) UpdateEndpoint(ctx context.Context, env, id string, in EndpointInput) (_ Endpoint, err error) {
	if err := platform.ValidateRequest(ctx, in); err != nil {
		return Endpoint{}, err
	}
	defer platform.Wrap(&err, "update webhook endpoint %s", id)
	cur, err := s.Endpoint(ctx, env, id)
	if err != nil {
		return Endpoint{}, err
	}
	url, desc, active := cur.URL, cur.Description, cur.Active
	if in.URL != nil {
		url = *in.URL
	}
	if in.Description != nil {
		desc = *in.Description
	}
	if in.Active != nil {
		active = *in.Active
	}
	types, err := typesColumn(in)
	if err != nil {
		return Endpoint{}, err
	}
	if in.EventTypes == nil && !in.AllEvents && cur.EventTypes != nil {
		b, _ := json.Marshal(cur.EventTypes)
		types = string(b)
	}
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET url = ?, description = ?, event_types = ?, active = ?,
			disabled_reason = CASE WHEN ? = 1 THEN '' ELSE disabled_reason END,
			failing_since = CASE WHEN ? = 1 AND active = 0 THEN '' ELSE failing_since END, updated_at = ?
			WHERE environment_id = ? AND id = ?`,
			url, desc, types, sqldb.Flag(active), sqldb.Flag(active), sqldb.Flag(active), sqldb.FormatTime(s.now()), env, id); err != nil {
			return err
		}
		return s.changed(ctx, tx)
	})
	if err != nil {
		return Endpoint{}, err
	}
	return s.Endpoint(ctx, env, id)
}

// DeleteEndpoint removes an endpoint and its delivery log.
func (s *Store) DeleteEndpoint(ctx context.Context, env, id string) error {
	return s.db.Tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE environment_id = ? AND id = ?`, env, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return platform.ErrNotFound
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE endpoint_id = ?`, id); err != nil {
			return err
		}
		return s.changed(ctx, tx)
	})
}

// secretGrace is how long a rotated secret keeps signing beside the new
// one, so receivers can switch without missing a delivery.
const secretGrace = 24 * time.Hour

// RotateSecret gives the endpoint a new secret and returns it; the old one
// still signs every delivery, beside the new, for the next 24 hours.
func (s *Store) RotateSecret(ctx context.Context, env, id string) (_ string, err error) {
	defer platform.Wrap(&err, "rotate secret of webhook endpoint %s", id)
	secret := newSecret()
	now := s.now()
	err = s.db.Tx(ctx, func(tx *sql.Tx) error {
		var old string
		err := tx.QueryRowContext(ctx, `SELECT secret FROM webhook_endpoints WHERE environment_id = ? AND id = ?`, env, id).Scan(&old)
		if errors.Is(err, sql.ErrNoRows) {
			return platform.ErrNotFound
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE webhook_endpoints SET secret = ?, previous_secret = ?, previous_until = ?, updated_at = ?
			WHERE id = ?`, s.sealer.SealText([]byte(secret), []byte(id)), old, sqldb.FormatTime(now.Add(secretGrace)),
			sqldb.FormatTime(now), id)
		return err
	})
	return secret, err
}

// Page is one page of a cursor-paged list: follow Next until it is nil.
type Page[T any] struct {
	Data     []T     `json:"data"`
	Next     *string `json:"next"`
	Previous *string `json:"previous"`
}

// Cursor is where a page of a list starts: after or before an item, newest
// first, Limit items.
type Cursor struct {
	After, Before string // an item's _id, or ""
	Limit         int
}

// keyset returns the condition and order that read the page c names, and
// whether it is read backwards (a before-page).
func (c Cursor) keyset(col string) (cond string, args []any, order string, backwards bool) {
	switch {
	case c.After != "":
		return ` AND ` + col + ` < ?`, []any{c.After}, col + ` DESC`, false
	case c.Before != "":
		return ` AND ` + col + ` > ?`, []any{c.Before}, col + ` ASC`, true
	}
	return "", nil, col + ` DESC`, false
}

// page trims rows (read with one row more than the limit) to the page and
// sets its cursors; idOf reads an item's _id.
func page[T any](rows []T, c Cursor, backwards bool, idOf func(T) string) Page[T] {
	more := len(rows) > c.Limit
	if more {
		rows = rows[:c.Limit]
	}
	if backwards {
		for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
			rows[i], rows[j] = rows[j], rows[i]
		}
	}
	p := Page[T]{Data: rows}
	if rows == nil {
		p.Data = []T{}
	}
	if len(rows) == 0 {
		return p
	}
	first, last := encodeCursor(idOf(rows[0])), encodeCursor(idOf(rows[len(rows)-1]))
	// Forwards, more lies after the page when more rows were read, and
	// before it when it started after an item; backwards, the other way.
	if backwards {
		p.Next = &last
		if more {
			p.Previous = &first
		}
		return p
	}
	if more {
		p.Next = &last
	}
	if c.After != "" {
		p.Previous = &first
	}
	return p
}

// encodeCursor and DecodeCursor keep an _id opaque on the wire.
func encodeCursor(id string) string { return base64.RawURLEncoding.EncodeToString([]byte(id)) }

// DecodeCursor reads a cursor a page gave; ok is false for one it did not.
func DecodeCursor(s string) (id string, ok bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || !sqldb.IsID(string(b)) {
		return "", false
	}
	return string(b), true
}

// Endpoints returns a page of the environment's endpoints, newest first.
func (s *Store) Endpoints(ctx context.Context, env string, c Cursor) (Page[Endpoint], error) {
	cond, args, order, backwards := c.keyset("id")
	rows, err := s.db.QueryContext(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints WHERE environment_id = ?`+cond+`
		ORDER BY `+order+` LIMIT ?`, append(append([]any{env}, args...), c.Limit+1)...)
	if err != nil {
		return Page[Endpoint]{}, fmt.Errorf("list webhook endpoints: %w", err)
	}
	defer rows.Close()
	var list []Endpoint
	for rows.Next() {
		e, err := scanEndpoint(rows)
		if err != nil {
			return Page[Endpoint]{}, err
		}
		list = append(list, e)
	}
	if err := rows.Err(); err != nil {
		return Page[Endpoint]{}, err
	}
	return page(list, c, backwards, func(e Endpoint) string { return e.ID }), nil
}
