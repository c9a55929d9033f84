package platform

import "time"

// TimeLayout is how every timestamp is written, on the wire and in the
// database: UTC ISO 8601 with milliseconds (docs/api.md,
// "Identifiers and timestamps"). Stored this way, timestamps compare as
// strings in the same order as the instants they name.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime formats t as the "Identifiers and timestamps" section of
// docs/api.md requires.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTime reads an ISO 8601 timestamp as clients send it: with or without
// fractional seconds, in any zone.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return t.UTC(), nil
}
