package platform

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Sealer seals values a domain keeps at rest that are secrets of their own
// (a subscriber's chat webhook URL, its push device tokens), with a key
// derived from the installation secret for one purpose.
type Sealer struct{ s *sealer }

// NewSealer returns a Sealer for purpose, or nil when secret is empty: a
// store without a secret keeps its values as they are rather than under a
// key no other process, nor the next start, could derive.
func NewSealer(secret []byte, purpose string) *Sealer {
	if len(secret) == 0 {
		return nil
	}
	return &Sealer{s: newSealer(secret, purpose)}
}

// SealedPrefix begins a text column that SealText wrote; base64 of the
// sealed bytes follows. A column without it was written plain, by a
// version that did not seal it, and is read as it is.
const SealedPrefix = "sealed:v1:"

// ErrNoSecret means a column is sealed and no secret was given to open it.
var ErrNoSecret = errors.New("sealed, and no secret was given to open it")

// SealText is plain sealed for a text column, bound to context (the row's
// key) so that a column copied onto another row does not open. A nil
// Sealer keeps plain as it is.
func (s *Sealer) SealText(plain, context []byte) string {
	if s == nil {
		return string(plain)
	}
	sealed := s.s.seal(plain, context)
	b := make([]byte, 0, len(SealedPrefix)+base64.RawStdEncoding.EncodedLen(len(sealed)))
	return string(base64.RawStdEncoding.AppendEncode(append(b, SealedPrefix...), sealed))
}

// OpenText is the plain text of column: opened when SealText wrote it for
// the same context, the column itself when it was written plain. It fails
// with ErrNoSecret when a nil Sealer meets a sealed column; its errors
// never hold the column.
func (s *Sealer) OpenText(column string, context []byte) ([]byte, error) {
	rest, sealed := strings.CutPrefix(column, SealedPrefix)
	if !sealed {
		return []byte(column), nil
	}
	if s == nil {
		return nil, ErrNoSecret
	}
	b, err := base64.RawStdEncoding.DecodeString(rest)
	if err != nil {
		return nil, errors.New("sealed value is not base64")
	}
	n := s.s.aead.NonceSize()
	if len(b) < n {
		return nil, errors.New("sealed value too short")
	}
	// Opened in place: the decoded bytes are this call's own.
	plain, err := s.s.aead.Open(b[n:n], b[:n], b[n:], context)
	if err != nil {
		return nil, fmt.Errorf("sealed value does not open: %w", err)
	}
	return plain, nil
}
