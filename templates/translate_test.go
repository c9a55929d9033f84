package templates

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"

	"github.com/matryer/is"
)

// referencePattern is the grammar of a translation reference written as a
// regular expression, which Translate's scanner must agree with.
var referencePattern = regexp.MustCompile(`\{\{\s*[tT]\.([A-Za-z0-9_\-]+(?:\.[A-Za-z0-9_\-]+)*)\s*\}\}`)

func translateByPattern(src string, keys map[string]string, missing map[string]bool) string {
	return referencePattern.ReplaceAllStringFunc(src, func(ref string) string {
		key := referencePattern.FindStringSubmatch(ref)[1]
		if v, ok := keys[key]; ok {
			return v
		}
		missing[key] = true
		return key
	})
}

// The scanner finds the same references as the pattern in strings built
// of the pieces a reference is made of, put together at random, so that
// every near miss (a brace short, an empty segment, a trailing dot, a
// space inside the key) is tried many times over.
func TestTranslate_AgreesWithThePattern(t *testing.T) {
	is := is.New(t)
	pieces := []string{"{", "{{", "}", "}}", "t", "T", ".", "a", "b-c", "_", "x.y", " ", "\t", "\n", "é", "{{t.", "}}}", "s", "1", "$"}
	keys := map[string]string{"a": "A", "x.y": "XY", "b-c": "{{ payload.n }}", "t": "tee"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		src := b.String()
		gotMissing, wantMissing := map[string]bool{}, map[string]bool{}
		got, want := Translate(src, keys, gotMissing), translateByPattern(src, keys, wantMissing)
		if got != want {
			t.Fatalf("Translate(%q) = %q, the pattern gives %q", src, got, want)
		}
		is.Equal(gotMissing, wantMissing) // the same keys missing
	}
}

// BenchmarkTranslate times Translate on a step's body that holds two
// references among ordinary Liquid, and on one that holds none.
//
//	go test -run '^$' -bench Translate ./templates
func BenchmarkTranslate(b *testing.B) {
	keys := map[string]string{"greeting": "Bonjour", "cta.open": "Ouvrir"}
	for _, c := range []struct{ name, src string }{
		{"references", `<p>{{ t.greeting }} {{ subscriber.firstName }},</p><p>Your order {{ payload.order.id }} has shipped.</p><a href="{{ payload.url }}">{{t.cta.open}}</a>`},
		{"none", `<p>Hello {{ subscriber.firstName }},</p><p>Your order {{ payload.order.id }} has shipped.</p><a href="{{ payload.url }}">Open</a>`},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				Translate(c.src, keys, nil)
			}
		})
		b.Run(c.name+"/pattern", func(b *testing.B) {
			missing := map[string]bool{}
			for b.Loop() {
				translateByPattern(c.src, keys, missing)
			}
		})
	}
}
