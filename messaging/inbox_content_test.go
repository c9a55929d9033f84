package messaging

import (
	"encoding/json"
	"testing"
)

// TestContentText_AsDecoded checks that contentText's shortcut for strings
// with nothing escaped answers what decoding the stored JSON answers, and
// that what is not a JSON string is shown as it is stored.
func TestContentText_AsDecoded(t *testing.T) {
	for _, raw := range []string{
		`"Your order 12 has shipped."`, `""`, `"caf\u00e9"`, `"café"`, `"a\"b"`, `"line\nbreak"`,
		`"<b>bold</b> & more"`, "\"bad \xff utf-8\"", "\"raw \x01 control\"", `"unterminated`, `42`, `null`, ``,
		`{"a":1}`, `"\\"`, `"emoji 🎉"`,
	} {
		want := raw
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil {
			want = s
		}
		if got := contentText([]byte(raw)); got != want {
			t.Errorf("contentText(%q) = %q, want %q", raw, got, want)
		}
	}
}
