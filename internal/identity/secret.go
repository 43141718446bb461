package identity

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"math/big"

	"github.com/google/uuid"
)

// tokenBytes is the entropy of every bearer token we mint (sessions, reset and magic-link tokens,
// invitations): 256 bits, so guessing one is not an attack worth rate-limiting.
const tokenBytes = 32

// NewToken returns a fresh random token, URL-safe (it travels in links and cookies).
func NewToken() string {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("identity: crypto/rand: %v", err)) // the OS has no entropy: nothing is safe
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// HashSecret is what we store for a token or code: SHA-256. Tokens carry 256 bits of entropy so a
// fast hash is enough; short codes (OTPs, backup codes) are additionally bounded by attempt limits.
func HashSecret(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// SameSecret compares a presented secret with a stored hash in constant time.
func SameSecret(presented string, stored []byte) bool {
	return subtle.ConstantTimeCompare(HashSecret(presented), stored) == 1
}

// NewCode returns n random decimal digits (OTP codes).
func NewCode(n int) string {
	b := make([]byte, n)
	for i := range b {
		d, err := rand.Int(rand.Reader, big.NewInt(10))
		if err != nil {
			panic(fmt.Sprintf("identity: crypto/rand: %v", err))
		}
		b[i] = byte('0' + d.Int64())
	}
	return string(b)
}

// NewID returns a time-ordered id (UUIDv7): stable across retries when chosen once, index-friendly.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }
