package ewa

import (
	"errors"
	"fmt"
	"testing"
)

// Every error of the store has a code, and every code has its answer: a refusal the API could
// not translate would reach the caller as a 500.
func TestEveryStoreErrorHasAnAnswer(t *testing.T) {
	for _, s := range storeCodes {
		code := CodeOf(fmt.Errorf("step: %w", s.err))
		if code != s.code {
			t.Errorf("CodeOf(%v) = %q, want %q", s.err, code, s.code)
		}
		r, ok := RefusalOf(code)
		if !ok || r.Code != code || r.Status < 400 || r.Status > 599 || r.Message == "" {
			t.Errorf("RefusalOf(%q) = %+v, %v", code, r, ok)
		}
	}
	if code := CodeOf(&LimitError{AvailableSantim: 1}); code != CodeLimitExceeded {
		t.Errorf("CodeOf(LimitError) = %q", code)
	}
	if code := CodeOf(errors.New("connection reset")); code != "" {
		t.Errorf("CodeOf(other) = %q", code)
	}
}
