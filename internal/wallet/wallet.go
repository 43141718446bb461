// Package wallet is an employee's wallet as the ledger sees it. There is no wallet table and no
// stored balance: a wallet is one ledger account, and its balance and transactions are read from
// that account's entries (ledger GetBalance and ListEntries) every time.
//
// Which accounts make a wallet: the wallet of employee E of tenant T is the ledger account
// payable-to-employee:E of tenant T (a liability of the chart, ledger/chart: money the tenant's
// partner-bank accounts hold for the employee and owe them). Money in is a credit to it, money out
// a debit; its balance is credits − debits of POSTED entries, and what may be spent ("available")
// is that minus the open holds (PENDING debits) of transfers still in flight. Nothing else —
// savings goals (savings-held:<goal>), EWA advances (receivable-from-employee:E) or loans — is part
// of the wallet.
package wallet

import (
	"strconv"
	"time"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/ledger/chart"
)

// Account is the ledger account that is employee's wallet: payable-to-employee:<employee>.
func Account(employeeID string) string { return chart.PayableToEmployee + ":" + employeeID }

// Direction filters a wallet's transactions: money in (credits to the wallet), money out
// (debits), or both.
type Direction string

const (
	In   Direction = "in"
	Out  Direction = "out"
	Both Direction = ""
)

// ParseDirection reads the direction query value: "in", "out" or "" (both).
func ParseDirection(v string) (Direction, error) {
	switch Direction(v) {
	case In, Out, Both:
		return Direction(v), nil
	}
	return "", &field.Error{Field: "direction", Problem: "must be in or out"}
}

// Keeps reports whether an entry on the wallet's account belongs to d: a credit is money in, a
// debit money out.
func (d Direction) Keeps(credit bool) bool {
	switch d {
	case In:
		return credit
	case Out:
		return !credit
	}
	return true
}

// Of is the wallet direction of an entry on the wallet's account (credit: money in).
func Of(credit bool) Direction {
	if credit {
		return In
	}
	return Out
}

// MaxCursor bounds a cursor (a ledger entry sequence number).
const MaxCursor = int64(1) << 62

// ParseCursor reads a transactions cursor: the sequence number of the last entry of the previous
// page, a whole number written plainly ("" is the start, 0).
func ParseCursor(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || n > MaxCursor || strconv.FormatInt(n, 10) != v {
		return 0, &field.Error{Field: "cursor", Problem: "must be the nextCursor of a previous page"}
	}
	return n, nil
}

// Cursor is the cursor naming the page after the entry with sequence number seq.
func Cursor(seq int64) string { return strconv.FormatInt(seq, 10) }

// LedgerToken is the ledger's ListEntries page token resuming after sequence number seq ("" for 0).
func LedgerToken(seq int64) string {
	if seq <= 0 {
		return ""
	}
	return strconv.FormatInt(seq, 36)
}

// ParseRange reads the from and to query values (RFC 3339 instants; either may be empty): from is
// inclusive, to exclusive, and from must be before to.
func ParseRange(fromRaw, toRaw string) (from, to *time.Time, err error) {
	parse := func(name, v string) (*time.Time, error) {
		if v == "" {
			return nil, nil
		}
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil || len(v) > 64 || t.Year() < 2000 || t.Year() > 9999 {
			return nil, &field.Error{Field: name, Problem: "must be an RFC 3339 date-time (e.g. 2026-01-31T00:00:00Z) from year 2000"}
		}
		t = t.UTC()
		return &t, nil
	}
	if from, err = parse("from", fromRaw); err != nil {
		return nil, nil, err
	}
	if to, err = parse("to", toRaw); err != nil {
		return nil, nil, err
	}
	if from != nil && to != nil && !from.Before(*to) {
		return nil, nil, &field.Error{Field: "to", Problem: "must be after from"}
	}
	return from, to, nil
}
