package platform

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

// Seal encrypts plain bound to context (the row's key), so a sealed value
// copied onto another row does not open.
func (s *Sealer) Seal(plain, context []byte) []byte { return s.s.seal(plain, context) }

// Open decrypts what Seal returned for the same context.
func (s *Sealer) Open(sealed, context []byte) ([]byte, error) { return s.s.open(sealed, context) }
