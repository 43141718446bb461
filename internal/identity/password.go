package identity

import (
	"errors"
	"sync"
	"unicode/utf8"

	"github.com/alexedwards/argon2id"
)

// Password bounds. The maximum is checked before hashing, so a caller cannot make us hash a
// megabyte; 128 bytes is longer than any passphrase a manager holds.
const (
	MinPasswordBytes = 10
	MaxPasswordBytes = 128
)

// Params are OWASP's argon2id recommendation (19 MiB, 2 passes, 1 lane): memory-hard for an
// attacker, about tens of milliseconds for us, and bounded in memory under a burst of sign-ins.
var passwordParams = productionPasswordParams

var productionPasswordParams = &argon2id.Params{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// UseCheapPasswordHashesForTests lowers the argon2id cost of new hashes to the minimum, for a
// test binary that signs many users up and in (call it from TestMain, before any test). Under the
// race detector one 19 MiB hash takes seconds, and the API's suite makes thousands. The hashes are
// still argon2id PHC strings made and checked by the same code (a hash carries its own cost), so
// what a test proves about sign-up and sign-in is unchanged; identity's own tests keep the
// production cost and pin it (TestPasswordHashesUseTheProductionCost). Nothing else calls it.
func UseCheapPasswordHashesForTests() {
	passwordParams = &argon2id.Params{Memory: 64, Iterations: 1, Parallelism: 1, SaltLength: 16, KeyLength: 32}
}

// ErrWeakPassword is a password outside the bounds; its message is safe to show.
var ErrWeakPassword = errors.New("password must be 10 to 128 bytes of valid UTF-8")

// CheckPassword validates a password's shape (not its strength beyond length: length is what
// matters, and composition rules push people to worse passwords).
func CheckPassword(pw string) error {
	if len(pw) < MinPasswordBytes || len(pw) > MaxPasswordBytes || !utf8.ValidString(pw) {
		return ErrWeakPassword
	}
	return nil
}

// HashPassword returns the argon2id PHC string for pw (call CheckPassword first).
func HashPassword(pw string) (string, error) {
	return argon2id.CreateHash(pw, passwordParams)
}

// dummyHash is verified against when the account does not exist, so sign-in costs the same
// whether or not the e-mail is known (no account enumeration by timing).
// It is made on first use, not at start-up: every process that imports this package (workers,
// CLI commands) would otherwise pay an argon2id hash to start.
var dummyHash = sync.OnceValue(func() string {
	h, err := HashPassword("not-a-real-password-for-timing")
	if err != nil {
		panic(err)
	}
	return h
})

// VerifyPassword reports whether pw matches hash (constant time); an empty hash (no password set)
// is verified against a dummy so the cost is the same, and never matches.
func VerifyPassword(pw, hash string) bool {
	if hash == "" {
		_, _ = argon2id.ComparePasswordAndHash(pw, dummyHash())
		return false
	}
	ok, err := argon2id.ComparePasswordAndHash(pw, hash)
	return err == nil && ok
}
