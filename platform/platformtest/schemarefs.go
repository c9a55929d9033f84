package platformtest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// SchemaRefs are places a client's JSON Schema $ref could point outside
// itself, for tests that the server loads from neither: a schema served over
// HTTP (Fetched counts its requests), one in a local file, and the test's
// working directory, which no error message may show.
type SchemaRefs struct {
	URL     string // a schema served over HTTP
	File    string // the path of a schema on the local disk
	Dir     string // the working directory
	Fetched *atomic.Int32
}

// NewSchemaRefs serves and writes the schemas until t ends.
func NewSchemaRefs(t testing.TB) SchemaRefs {
	t.Helper()
	refs := SchemaRefs{Fetched: new(atomic.Int32), File: filepath.Join(t.TempDir(), "schema.json")}
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		refs.Fetched.Add(1)
		w.Write([]byte(`{"type":"object"}`))
	}))
	t.Cleanup(remote.Close)
	refs.URL = remote.URL + "/schema.json"
	if err := os.WriteFile(refs.File, []byte(`{"type":"object"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var err error
	if refs.Dir, err = os.Getwd(); err != nil {
		t.Fatal(err)
	}
	return refs
}
