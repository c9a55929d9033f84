package activity_test

import (
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/herald-notify/herald/app/apptest"
)

func TestTrigger_PayloadBounds(t *testing.T) {
	srv := apptest.NewServer(t)
	apptest.CreateHello(t, srv, "Hi {{ payload.n }}")
	big := `{"blob":"` + strings.Repeat("x", 600<<10) + `"}`
	for _, tc := range []struct {
		name, path, body, field, says string
	}{
		{"ErrNumberPastFloat64", "/v1/events/trigger", `{"name":"hello","to":"ada","payload":{"n":1e309}}`, "payload", "past the range"},
		{"ErrNegativeNumberPastFloat64", "/v1/events/trigger", `{"name":"hello","to":"ada","payload":{"a":[1,{"n":-2E+400}]}}`, "payload", "past the range"},
		{"ErrNumberInBulk", "/v1/events/trigger/bulk", `{"events":[{"name":"hello","to":"ada","payload":{"n":1e309}}]}`, "events.0.payload", "past the range"},
		{"ErrNumberInBroadcast", "/v1/events/trigger/broadcast", `{"name":"hello","payload":{"n":1e309}}`, "payload", "past the range"},
		{"ErrPayloadTooLarge", "/v1/events/trigger", `{"name":"hello","to":"ada","payload":` + big + `}`, "payload", "over the limit of 524288 (HERALD_MAX_PAYLOAD)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			res := srv.Dev.Do(t, "POST", tc.path, tc.body)
			is.Equal(res.Status, 422) // refused at the trigger
			var body struct {
				Errors map[string]struct {
					Messages []string `json:"messages"`
				} `json:"errors"`
			}
			res.Decode(t, &body)
			is.True(strings.Contains(strings.Join(body.Errors[tc.field].Messages, ""), tc.says)) // the field says why
			is.True(len(res.Body) < 8<<10)                                                       // without echoing the payload
		})
	}

	t.Run("OKLargeNumbersThatFit", func(t *testing.T) {
		is := is.New(t)
		res := srv.Dev.Do(t, "POST", "/v1/events/trigger", `{"name":"hello","to":"ada","payload":{"n":1e308,"s":"1e309","tiny":1e-400}}`)
		is.Equal(res.Status, 201) // numbers a float64 holds, and strings that look like numbers, pass
	})
}
