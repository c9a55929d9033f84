package sqldb

import "time"

// TimeLayout is how every timestamp is written, on the wire and in the
// database: UTC ISO 8601 with milliseconds. Stored this way, timestamps
// compare as strings in the same order as the instants they name.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime formats t in TimeLayout.
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
