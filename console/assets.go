package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
)

// The console's scripts, styles and icons, embedded. htmx.min.js is htmx
// 2.0.11, as its npm package ships it (dist/htmx.min.js), under the licence
// in htmx.LICENSE (docs/console.md, "How it is built").
//
//go:embed assets
var assetFS embed.FS

// asset is one embedded file, ready to serve: its bytes, gzipped when
// first asked for, and a fingerprint of its content for its URL.
type asset struct {
	body    []byte
	gzipped func() []byte
	kind    string
	version string
}

// assets are the embedded files by name, read once at start. Each is
// gzipped on its first request rather than at start: the best compression
// allocates about a megabyte of state per file, work every start paid for
// a console that may never be opened.
var assets = loadAssets()

func loadAssets() map[string]asset {
	out := map[string]asset{}
	files, _ := fs.ReadDir(assetFS, "assets")
	for _, f := range files {
		body, _ := assetFS.ReadFile("assets/" + f.Name())
		sum := sha256.Sum256(body)
		kind := mime.TypeByExtension(path.Ext(f.Name()))
		if kind == "" {
			kind = "text/plain; charset=utf-8"
		}
		out[f.Name()] = asset{body: body, gzipped: sync.OnceValue(func() []byte { return gzipBytes(body) }),
			kind: kind, version: hex.EncodeToString(sum[:6])}
	}
	return out
}

func gzipBytes(body []byte) []byte {
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(body)
	zw.Close()
	return gz.Bytes()
}

// assetURL is the URL of an embedded file, fingerprinted by its content, so
// a browser may keep it as long as it likes: a new build changes the URL.
func assetURL(name string) string {
	return "/console/assets/" + name + "?v=" + assets[name].version
}

// handleAsset serves GET /console/assets/{name}: an embedded file,
// gzipped to a client that takes it.
func handleAsset() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := assets[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.kind)
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
		h.Set("Vary", "Accept-Encoding")
		body := a.body
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			h.Set("Content-Encoding", "gzip")
			body = a.gzipped()
		}
		w.Write(body)
	})
}
