package platform

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Password rules of the console's accounts (docs/console.md, "Accounts").
const (
	MinPasswordLength = 12   // characters
	maxPasswordBytes  = 1024 // argon2 hashes any length; this keeps a request from making it hash a megabyte
)

// The argon2id cost of a new hash: 19 MiB of memory and two passes, so
// each guess at a stolen hash costs what a sign-in does. A stored hash
// names its own parameters, so raising these later leaves older hashes
// readable.
const (
	argonTime    = 2
	argonMemory  = 19 * 1024 // KiB
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// PasswordProblem says why pw cannot be a console password, or "" when it
// can: at least MinPasswordLength characters, at most 1 KiB, not only
// spaces, and not the account's email.
func PasswordProblem(pw, email string) string {
	switch {
	case !utf8.ValidString(pw):
		return "must be valid text"
	case utf8.RuneCountInString(pw) < MinPasswordLength:
		return fmt.Sprintf("must be at least %d characters long", MinPasswordLength)
	case len(pw) > maxPasswordBytes:
		return fmt.Sprintf("must be at most %d bytes long", maxPasswordBytes)
	case strings.TrimFunc(pw, unicode.IsSpace) == "":
		return "must not be only spaces"
	case email != "" && strings.EqualFold(strings.TrimSpace(pw), strings.TrimSpace(email)):
		return "must not be the email address"
	}
	return ""
}

// HashPassword returns pw's argon2id hash in the PHC string format
// ($argon2id$v=19$m=…,t=…,p=…$salt$hash), which carries its parameters.
func HashPassword(pw string) string {
	salt := make([]byte, argonSaltLen)
	rand.Read(salt)
	key := argon2.IDKey([]byte(pw), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	enc := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		enc.EncodeToString(salt), enc.EncodeToString(key))
}

// errBadHash is a stored hash Herald did not write.
var errBadHash = errors.New("unreadable password hash")

// CheckPasswordHash reports whether pw matches hash, comparing in constant
// time. An empty or unreadable hash matches nothing.
func CheckPasswordHash(hash, pw string) bool {
	ok, err := checkPasswordHash(hash, pw)
	return err == nil && ok
}

func checkPasswordHash(hash, pw string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || t == 0 || p == 0 {
		return false, errBadHash
	}
	enc := base64.RawStdEncoding
	salt, err := enc.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := enc.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, errBadHash
	}
	if len(pw) > maxPasswordBytes {
		return false, nil
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// dummyHash is checked against when an email names no account, so a
// sign-in takes as long whether or not the account exists. It is made at
// the first sign-in, not at every start.
var dummyHash = sync.OnceValue(func() string { return HashPassword("herald-no-such-account") })

// GeneratePassword returns a random one-time password: 26 characters of
// base32 (128 bits), without the look-alikes 0, 1 and 8.
func GeneratePassword() string { return rand.Text() }
