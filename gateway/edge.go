package gateway

import (
	"fmt"
	"net/url"
	"time"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// Bounds of the gateway's gRPC fields, tighter than internal/platform/field's where a partner holds less:
// a value the edge accepts must never come back from the partner as a 4xx it did not expect.
const (
	MaxPartnerName = 64
	// MaxAccountLen is the partner contract's account number bound.
	MaxAccountLen = 64
	// MaxReferenceLen is the partner contract's reference bound (transfer, item and batch
	// references).
	MaxReferenceLen = 140
	// MaxCallbackURL keeps a callback URL within a reference's bound, far below what the partner
	// stores.
	MaxCallbackURL = field.MaxReference
)

// firstInvalid returns the first refusal among checks, in the order the request lists its fields.
func firstInvalid(checks ...error) error {
	for _, err := range checks {
		if err != nil {
			return invalidInput(err)
		}
	}
	return nil
}

func refuse(name, problem string) error { return &field.Error{Field: name, Problem: problem} }

func checkPartner(v string) error { return field.Identifier("partner", v, MaxPartnerName) }

func checkTenant(name, v string) error { return field.Identifier(name, v, 0) }

// checkAccount: an account id travels in a partner's URL path, where "." and ".." are not ids
// but directions.
func checkAccount(name, v string) error {
	if err := field.Identifier(name, v, MaxAccountLen); err != nil {
		return err
	}
	if v == "." || v == ".." {
		return refuse(name, "must not be a path segment such as '.' or '..'")
	}
	return nil
}

// checkReference: a reference is looked up in a partner's URL path (by-reference/{ref}), where
// "." and ".." are not references but directions, so a transfer made under one could never be
// looked up again.
func checkReference(name, v string) error {
	if err := field.Reference(name, v, MaxReferenceLen); err != nil {
		return err
	}
	if v == "." || v == ".." {
		return refuse(name, "must not be a path segment such as '.' or '..'")
	}
	return nil
}

// checkHolderName: an expected holder name is optional; when given it must be a name.
func checkHolderName(name, v string) error {
	if v == "" {
		return nil
	}
	return field.Name(name, v)
}

func checkAmount(name string, v int64) error {
	if !money.ValidAmount(v) {
		return refuse(name, fmt.Sprintf("must be a positive number of santim of at most %d", money.MaxAmountSantim))
	}
	return nil
}

func checkDomain(name, v string) error {
	if !money.ValidDomain(v) {
		return refuse(name, "must be one of "+money.DomainList())
	}
	return nil
}

// currencyOrDefault: ETB when empty, else three capital letters.
func currencyOrDefault(name, v string) (string, error) {
	if v == "" {
		return "ETB", nil
	}
	if _, err := parseCurrency(v); err != nil {
		return "", refuse(name, "must be a three-letter ISO 4217 code such as ETB")
	}
	return v, nil
}

// checkCallbackURL: optional; an absolute http(s) URL with a host, no credentials and no
// fragment, printable and without spaces.
func checkCallbackURL(name, v string) error {
	if v == "" {
		return nil
	}
	if err := field.Reference(name, v, MaxCallbackURL); err != nil {
		return err
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return refuse(name, "must be an absolute http(s) URL with a host, without credentials or fragment")
	}
	return nil
}

// checkDate parses a YYYY-MM-DD date field.
func checkDate(name, v string) (time.Time, error) {
	t, err := parseDate(v)
	if err != nil {
		return time.Time{}, refuse(name, "must be a date YYYY-MM-DD")
	}
	return t, nil
}
