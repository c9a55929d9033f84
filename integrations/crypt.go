package integrations

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// sealVersion is the first byte of every stored ciphertext, so the scheme can
// change later without guessing what an old row holds.
const sealVersion = 1

// newAEAD derives the AES-256 key from the installation secret (HERALD_SECRET
// or the generated one) with SHA-256 under a label of its own, so the same
// secret used elsewhere never yields this key.
func newAEAD(secret []byte) (cipher.AEAD, error) {
	if len(secret) == 0 {
		return nil, errors.New("integrations: empty credential secret")
	}
	key := sha256.Sum256(append([]byte("herald integration credentials v1\x00"), secret...))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// seal encrypts plaintext for the integration id: version, random nonce,
// ciphertext. The id is the additional data, so a ciphertext copied onto
// another row does not decrypt.
func (s *Store) seal(id string, plaintext []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce)
	out := append([]byte{sealVersion}, nonce...)
	return s.aead.Seal(out, nonce, plaintext, []byte(id))
}

// open decrypts what seal produced for the same id.
func (s *Store) open(id string, sealed []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != sealVersion {
		return nil, fmt.Errorf("credentials of integration %s: unknown format", id)
	}
	plain, err := s.aead.Open(nil, sealed[1:1+n], sealed[1+n:], []byte(id))
	if err != nil {
		return nil, fmt.Errorf("credentials of integration %s do not decrypt (was HERALD_SECRET changed?): %w", id, err)
	}
	return plain, nil
}
