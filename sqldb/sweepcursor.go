package sqldb

import (
	"encoding/json"
	"fmt"
)

// SweepCursor is where a domain's sweep of one environment goes on from:
// the created_at and id of the last record it looked at, kept or deleted.
type SweepCursor struct {
	CreatedAt string `json:"c"`
	ID        string `json:"i"`
}

// ParseSweepCursor reads what SweepCursor.String wrote; "" is the start.
func ParseSweepCursor(s string) (SweepCursor, error) {
	var c SweepCursor
	if s == "" {
		return c, nil
	}
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return c, fmt.Errorf("sweep cursor %q: %w", s, err)
	}
	return c, nil
}

// String is the cursor as a sweep answers it.
func (c SweepCursor) String() string {
	b, _ := json.Marshal(c)
	return string(b)
}
