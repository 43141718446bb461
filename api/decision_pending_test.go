package api

import (
	"net/http"
	"net/http/httptest"
	"time"
)

// untilDecided sends a NoPendingAnswer saga call (do, the same Idempotency-Key every time) again
// while it answers 503 DECISION_PENDING (the wait ran out before the saga decided; not stored),
// as a client does, up to a minute; the first other answer is returned.
func untilDecided(do func() *httptest.ResponseRecorder) *httptest.ResponseRecorder {
	deadline := time.Now().Add(time.Minute)
	for {
		rec := do()
		if rec.Code != http.StatusServiceUnavailable || errCode(rec) != "DECISION_PENDING" || time.Now().After(deadline) {
			return rec
		}
		time.Sleep(100 * time.Millisecond)
	}
}
