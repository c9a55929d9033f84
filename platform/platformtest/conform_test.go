package platformtest

import (
	"fmt"
	"testing"

	"github.com/matryer/is"
)

// recordingTB keeps the failures Conform reports instead of failing.
type recordingTB struct {
	testing.TB
	failures []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Errorf(format string, a ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, a...))
}

func TestConform(t *testing.T) {
	fields := []Field{
		{Name: "_id", Kind: "id", Required: true},
		{Name: "createdAt", Kind: "time", Required: true},
		{Name: "status", Kind: "string", Enum: []string{"sent", "error"}},
		{Name: "data", Kind: "object", Nullable: true},
	}
	for _, tc := range []struct {
		name     string
		obj      map[string]any
		failures int
	}{
		{"OK", map[string]any{"_id": "6b0232d7bb3984cacb163f2c", "createdAt": "2026-11-21T10:04:05.123Z", "status": "sent", "data": nil}, 0},
		{"ErrMissingRequired", map[string]any{"createdAt": "2026-11-21T10:04:05.123Z"}, 1},
		{"ErrBadID", map[string]any{"_id": "ABC", "createdAt": "2026-11-21T10:04:05.123Z"}, 1},
		{"ErrTimeWithoutMillis", map[string]any{"_id": "6b0232d7bb3984cacb163f2c", "createdAt": "2026-11-21T10:04:05Z"}, 1},
		{"ErrEnum", map[string]any{"_id": "6b0232d7bb3984cacb163f2c", "createdAt": "2026-11-21T10:04:05.123Z", "status": "Sent"}, 1},
		{"ErrNull", map[string]any{"_id": nil, "createdAt": "2026-11-21T10:04:05.123Z"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := is.New(t)
			rec := &recordingTB{TB: t}
			Conform(rec, tc.name, tc.obj, fields)
			is.Equal(len(rec.failures), tc.failures) // each bad field reported once
		})
	}
}
