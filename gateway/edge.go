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

func checkRegistry(v string) error { return field.Identifier("registry", v, MaxPartnerName) }

// Bounds of a national id: the normalized form Wagerail stores (internal/employees), upper-case
// ASCII letters and digits, which is also a path segment of the registry's lookup URL.
const (
	MinNationalIDLen = 6
	MaxNationalIDLen = 32
)

// checkNationalID: a normalized national id, 6 to 32 of A-Z and 0-9. The caller normalizes
// (upper case, no spaces or hyphens); the gateway never guesses.
func checkNationalID(name, v string) error {
	ok := len(v) >= MinNationalIDLen && len(v) <= MaxNationalIDLen
	for i := 0; ok && i < len(v); i++ {
		c := v[i]
		ok = c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	if !ok {
		return refuse(name, fmt.Sprintf("must be %d to %d upper-case letters A-Z and digits", MinNationalIDLen, MaxNationalIDLen))
	}
	return nil
}

// checkPersonName: a required person's name (field.Name: printable, not blank, bounded, no
// invisible characters).
func checkPersonName(name, v string) error { return field.Name(name, v) }

// earliestBirth is the oldest date of birth the gateway accepts.
var earliestBirth = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)

// checkBirthDate parses a YYYY-MM-DD date of birth: a real calendar date from 1900-01-01 to
// today. "Today" is the latest date anywhere on Earth (UTC+14) at now, so a baby born today in
// any time zone, Ethiopia's included, is never refused because the gateway's clock is in UTC.
func checkBirthDate(name, v string, now time.Time) (time.Time, error) {
	d, err := parseDate(v)
	if err != nil {
		return time.Time{}, refuse(name, "must be a date YYYY-MM-DD")
	}
	y, m, dd := now.UTC().Add(14 * time.Hour).Date()
	if d.Before(earliestBirth) || d.After(time.Date(y, m, dd, 0, 0, 0, 0, time.UTC)) {
		return time.Time{}, refuse(name, "must be a date from 1900-01-01 to today")
	}
	return d, nil
}

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
