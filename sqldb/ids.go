package sqldb

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"sync/atomic"
	"time"
)

// Ids follow the MongoDB ObjectId layout: 4 bytes of Unix seconds, 5 random
// bytes chosen once per process, and a 3-byte counter that starts at a
// random value. They are unique, roughly time-ordered, and valid wherever a
// client expects a "database object id".
var (
	idProcess [5]byte
	idCounter atomic.Uint32
)

func init() {
	var seed [4]byte
	rand.Read(idProcess[:])
	rand.Read(seed[:])
	idCounter.Store(binary.BigEndian.Uint32(seed[:]))
}

// NewID returns a new 24-character lowercase hex id stamped with the current time.
func NewID() string { return NewIDAt(time.Now()) }

// NewIDAt returns a new id stamped with t, for stores running on an injected clock.
func NewIDAt(t time.Time) string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[0:4], uint32(t.Unix()))
	copy(b[4:9], idProcess[:])
	n := idCounter.Add(1)
	b[9], b[10], b[11] = byte(n>>16), byte(n>>8), byte(n)
	return hex.EncodeToString(b[:])
}

// IsID reports whether s is a well-formed id: 24 lowercase hex characters.
func IsID(s string) bool {
	if len(s) != 24 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
