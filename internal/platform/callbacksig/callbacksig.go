// Package callbacksig is the signature of partner-bank callbacks, the one definition both sides
// use: the sandbox bank signs the callbacks it sends with Sign, and the API's callback route
// checks them with Verify and Fresh.
//
// A callback carries three headers: x-svc-timestamp (unix seconds), x-svc-nonce and
// x-svc-signature, the lowercase hex HMAC-SHA256 of "<timestamp>.<nonce>.<raw body>" under the
// secret shared with the partner. The signature covers the raw bytes, so the receiver verifies
// before it parses anything. The receiver also bounds the timestamp's age (Fresh) and remembers
// nonces; this package does neither storage nor HTTP.
package callbacksig

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
)

// Header names (the contract's "Callbacks" section).
const (
	HeaderTimestamp = "x-svc-timestamp"
	HeaderNonce     = "x-svc-nonce"
	HeaderSignature = "x-svc-signature"
)

// MaxSkewSeconds is the clock-skew window of a callback's timestamp, inclusive on both sides:
// the contract's 5 minutes.
const MaxSkewSeconds = 300

// Sign returns the lowercase hex HMAC-SHA256 of "<timestamp>.<nonce>.<body>" under secret.
func Sign(secret []byte, timestamp, nonce string, body []byte) string {
	return hex.EncodeToString(mac(secret, timestamp, nonce, body).Sum(nil))
}

// Verify reports whether sigHex is the signature of the callback under secret. The comparison
// is constant-time (hmac.Equal), so a forger learns nothing from response timing; a value that
// is not 64 hex digits never verifies. It checks the signature only (see Fresh for the
// timestamp).
func Verify(secret []byte, timestamp, nonce string, body []byte, sigHex string) bool {
	got, err := hex.DecodeString(sigHex)
	if err != nil || len(got) != sha256.Size {
		return false
	}
	return hmac.Equal(got, mac(secret, timestamp, nonce, body).Sum(nil))
}

// Fresh reports whether a callback stamped at unix second ts is inside the skew window at unix
// second now.
func Fresh(ts, now int64) bool {
	d := now - ts
	return d <= MaxSkewSeconds && d >= -MaxSkewSeconds
}

func mac(secret []byte, timestamp, nonce string, body []byte) hash.Hash {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write([]byte(nonce))
	m.Write([]byte{'.'})
	m.Write(body)
	return m
}
