package platform_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform"
	"github.com/herald-notify/herald/sqldb/sqldbtest"
)

// TestDocs_RendererByAcceptEncoding: the renderer's bundle, stored gzipped,
// reaches a client that takes gzip as it is and one that does not
// inflated, the same script both ways.
func TestDocs_RendererByAcceptEncoding(t *testing.T) {
	db := sqldbtest.NewDB(t)
	hs := httptest.NewServer(platform.NewHandler(slog.New(slog.DiscardHandler), db, http.NewServeMux(),
		platform.ServerConfig{OpenAPI: []byte(`{}`)}))
	defer hs.Close()
	fetch := func(t *testing.T, acceptEncoding string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", hs.URL+"/docs/redoc.standalone.js", nil)
		req.Header.Set("Accept-Encoding", acceptEncoding) // set, so the client does not inflate on its own
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res, body
	}
	is := is.New(t)
	res, plain := fetch(t, "identity")
	is.Equal(res.StatusCode, 200)                                              // served
	is.Equal(res.Header.Get("Content-Encoding"), "")                           // inflated for a client without gzip
	is.True(bytes.Contains(plain[:200], []byte("license information")))        // the script itself
	is.Equal(res.Header.Get("Content-Type"), "text/javascript; charset=utf-8") // as a script
	for _, accept := range []string{"gzip", "br, gzip;q=0.5", "*"} {
		res, packed := fetch(t, accept)
		is.Equal(res.Header.Get("Content-Encoding"), "gzip") // gzipped for a client that takes it
		zr, err := gzip.NewReader(bytes.NewReader(packed))
		is.NoErr(err) // a gzip stream
		inflated, err := io.ReadAll(zr)
		is.NoErr(err)                         // that inflates
		is.True(bytes.Equal(inflated, plain)) // to the same script
	}
	res, _ = fetch(t, "gzip;q=0, br")
	is.Equal(res.Header.Get("Content-Encoding"), "") // gzip refused by a weight of zero
}
