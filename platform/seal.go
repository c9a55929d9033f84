package platform

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"errors"
)

// sealer encrypts data Herald keeps at rest that may carry secrets, such as
// stored idempotent responses, which can hold an integration's decrypted
// credentials.
type sealer struct{ aead cipher.AEAD }

// newSealer derives an AES-256-GCM key for one purpose from the secret, so
// each purpose's ciphertext is useless under another's key.
func newSealer(secret []byte, purpose string) *sealer {
	if len(secret) == 0 {
		// Only a caller that forgot the secret gets here; a per-process key
		// keeps data sealed, at the cost of not reading it after a restart.
		secret = make([]byte, 32)
		rand.Read(secret)
	}
	key := sha256.Sum256(append([]byte(purpose+"\x00"), secret...))
	block, _ := aes.NewCipher(key[:]) // a 32-byte key cannot fail
	aead, _ := cipher.NewGCM(block)
	return &sealer{aead: aead}
}

// seal encrypts plain, binding it to context (a row's key) so a sealed value
// copied to another row does not open.
func (s *sealer) seal(plain, context []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, plain, context)
}

func (s *sealer) open(sealed, context []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("sealed value too short")
	}
	return s.aead.Open(nil, sealed[:n], sealed[n:], context)
}
