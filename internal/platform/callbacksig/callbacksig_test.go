package callbacksig

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"testing"
)

// The signature is the HMAC-SHA256 of "<ts>.<nonce>.<body>", computed here independently.
func TestSignIsHMACOfTheContractString(t *testing.T) {
	m := hmac.New(sha256.New, []byte("s3cret"))
	m.Write([]byte(`1700000000.abcd.{"a":1}`))
	want := hex.EncodeToString(m.Sum(nil))
	if got := Sign([]byte("s3cret"), "1700000000", "abcd", []byte(`{"a":1}`)); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

func TestVerify(t *testing.T) {
	secret, body := []byte("s3cret"), []byte(`{"eventId":"e1"}`)
	sig := Sign(secret, "1700000000", "abcd", body)
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(sig) {
		t.Fatalf("signature %q is not 64 lowercase hex digits", sig)
	}
	if !Verify(secret, "1700000000", "abcd", body, sig) {
		t.Fatal("own signature does not verify")
	}
	for name, ok := range map[string]bool{
		"wrong secret":    Verify([]byte("other"), "1700000000", "abcd", body, sig),
		"other timestamp": Verify(secret, "1700000001", "abcd", body, sig),
		"other nonce":     Verify(secret, "1700000000", "abce", body, sig),
		"other body":      Verify(secret, "1700000000", "abcd", append(body, ' '), sig),
		"truncated":       Verify(secret, "1700000000", "abcd", body, sig[:63]),
		"short":           Verify(secret, "1700000000", "abcd", body, sig[:10]),
		"not hex":         Verify(secret, "1700000000", "abcd", body, "zz"+sig[2:]),
		"empty":           Verify(secret, "1700000000", "abcd", body, ""),
		"ts/nonce moved":  Verify(secret, "1700000000.abcd", "", body, sig),
	} {
		if ok {
			t.Errorf("%s: verified", name)
		}
	}
}

func TestFresh(t *testing.T) {
	const now = 1_700_000_000
	for ts, want := range map[int64]bool{
		now: true, now - MaxSkewSeconds: true, now + MaxSkewSeconds: true,
		now - MaxSkewSeconds - 1: false, now + MaxSkewSeconds + 1: false, 0: false,
	} {
		if got := Fresh(ts, now); got != want {
			t.Errorf("Fresh(%d, now) = %v, want %v", ts, got, want)
		}
	}
}
