package platform_test

import (
	"encoding/json"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/platform"
)

func TestCompatResponse_Rules(t *testing.T) {
	for _, tc := range []struct {
		name, bare, want string
		ok               bool
	}{
		{"OK record wrapped", `{"_id":"a","providerId":"service","origin":"service-cloud"}`,
			`{"data":{"_id":"a","providerId":"novu","origin":"novu-cloud"}}`, true},
		{"OK record with data wrapped", `{"_id":"a","data":{"providerId":"service"}}`,
			`{"data":{"_id":"a","data":{"providerId":"service"}}}`, true},
		{"OK page left bare, its records respelled", `{"data":[{"providerId":"service-slack"}],"hasMore":false}`,
			`{"data":[{"providerId":"novu-slack"}],"hasMore":false}`, true},
		{"OK empty page left bare: [] is truthy", `{"data":[],"page":0}`, `{"data":[],"page":0}`, true},
		{"OK null data wrapped", `{"data":null,"page":0}`, `{"data":{"data":null,"page":0}}`, true},
		{"OK array wrapped", `[{"providerId":"service-email"}]`, `{"data":[{"providerId":"novu-email"}]}`, true},
		{"OK boolean wrapped", `true`, `{"data":true}`, true},
		{"OK number wrapped, as written", `12345678901234567890`, `{"data":12345678901234567890}`, true},
		{"OK user data never respelled", `{"_id":"a","payload":{"providerId":"service"},"firstName":"service","overrides":{"origin":"service-cloud"}}`,
			`{"data":{"_id":"a","payload":{"providerId":"service"},"firstName":"service","overrides":{"origin":"service-cloud"}}}`, true},
		{"OK other values untouched", `{"_id":"a","providerId":"services","origin":"external"}`,
			`{"data":{"_id":"a","providerId":"services","origin":"external"}}`, true},
		{"OK error not wrapped", `{"statusCode":404,"message":"service"}`, `{"statusCode":404,"message":"service"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			got, err := platform.CompatResponse([]byte(tc.bare), tc.ok)
			is.NoErr(err) // rewritten
			var g, w any
			is.NoErr(json.Unmarshal(got, &g))             // JSON out
			is.NoErr(json.Unmarshal([]byte(tc.want), &w)) // the expectation is JSON
			is.Equal(g, w)                                // as the reference answers
			if tc.ok {
				back, err := platform.CompatUnwrap(got)
				is.NoErr(err) // and back
				var b, bare any
				json.Unmarshal(back, &b)
				json.Unmarshal([]byte(tc.bare), &bare)
				is.Equal(b, bare) // unwrapping gives Herald's answer again
			}
		})
	}
}

func TestCheckCompat(t *testing.T) {
	is := is.New(t)
	is.NoErr(platform.CheckCompat(""))     // the default
	is.NoErr(platform.CheckCompat("novu")) // the reference platform
	err := platform.CheckCompat("Novu")
	is.True(err != nil) // modes are spelled exactly
}
