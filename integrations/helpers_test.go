package integrations_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/integrations"
	"github.com/herald-notify/herald/outbound"
	"github.com/herald-notify/herald/platform/platformtest"
)

// integrationBody follows docs/api.md, "Integrations" as a client reads it.
type integrationBody struct {
	ID             string          `json:"_id"`
	EnvironmentID  string          `json:"_environmentId"`
	OrganizationID string          `json:"_organizationId"`
	Name           string          `json:"name"`
	Identifier     string          `json:"identifier"`
	ProviderID     string          `json:"providerId"`
	Channel        string          `json:"channel"`
	Credentials    map[string]any  `json:"credentials"`
	Configurations map[string]any  `json:"configurations"`
	Active         bool            `json:"active"`
	Deleted        bool            `json:"deleted"`
	DeletedAt      *string         `json:"deletedAt"`
	Primary        bool            `json:"primary"`
	Conditions     []conditionBody `json:"conditions"`
}

// conditionBody is a StepFilter as a client reads it.
type conditionBody struct {
	IsNegated bool             `json:"isNegated"`
	Type      string           `json:"type"`
	Value     string           `json:"value"`
	Children  []map[string]any `json:"children"`
}

// testCheckTimeout is the provider check's time in tests: a failed check
// waits it out, and a local receiver answers well within it.
const testCheckTimeout = time.Second

// newServer serves the integrations routes on a fresh database with both
// environments seeded, and returns the store for direct calls.
func newServer(t *testing.T) (*platformtest.Server, *integrations.Store) {
	t.Helper()
	return newServerWith(t, platformtest.Loopback)
}

// newServerWith is newServer whose checks connect where outbound allows.
func newServerWith(t *testing.T, outbound *outbound.Guard) (*platformtest.Server, *integrations.Store) {
	t.Helper()
	var store *integrations.Store
	srv := platformtest.NewServer(t, func(mux *http.ServeMux, app *platformtest.App) {
		var err error
		store, err = integrations.NewStore(app.DB, app.Secret)
		if err != nil {
			t.Fatalf("new store: %v", err)
		}
		store.WithOutbound(outbound).SetCheckTimeout(testCheckTimeout)
		if err := store.SeedEnvironment(t.Context(), app.Development); err != nil {
			t.Fatalf("seed development: %v", err)
		}
		if err := store.SeedEnvironment(t.Context(), app.Production); err != nil {
			t.Fatalf("seed production: %v", err)
		}
		integrations.AddRoutes(mux, store)
	})
	return srv, store
}

// mustCreate creates an integration through the API and returns it.
func mustCreate(t *testing.T, c platformtest.Client, body string) integrationBody {
	t.Helper()
	is := is.New(t)
	res := c.Do(t, "POST", "/v1/integrations", body)
	if res.Status != http.StatusCreated {
		t.Logf("body: %s", res.Body)
	}
	is.Equal(res.Status, http.StatusCreated) // create answers 201
	var out integrationBody
	res.Decode(t, &out)
	return out
}

// list returns GET path decoded.
func list(t *testing.T, c platformtest.Client, path string) []integrationBody {
	t.Helper()
	is := is.New(t)
	res := c.Do(t, "GET", path, "")
	is.Equal(res.Status, http.StatusOK) // list answers 200
	var out []integrationBody
	res.Decode(t, &out)
	return out
}

// byID finds id in list.
func byID(list []integrationBody, id string) (integrationBody, bool) {
	for _, in := range list {
		if in.ID == id {
			return in, true
		}
	}
	return integrationBody{}, false
}
