package ledger

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/money"
)

func TestParseAccountName(t *testing.T) {
	t.Parallel()
	good := map[string]AccountType{
		"payroll-clearing":                    Asset,
		"receivable-from-employee":            Asset,
		"receivable-from-employee:emp_42":     Asset,
		"receivable-from-borrower:b-1:loan-9": Asset,
		"payable-to-fi-partner[fi-7]":         Liability,
		"payable-to-fi-partner[fi-7]:loan-1":  Liability,
		"misc-loss":                           Expense,
		"equb:pool:tenant-1:cycle-3":          Liability,
		"partner-bank:cbe:1000123456":         Asset,
		"partner-bank:cbe:escrow:equb-1":      Asset,
		"fee-income":                          Income,
		"opening-balance-equity":              Equity,
	}
	for name, typ := range good {
		got, err := ParseAccountName(name)
		require.NoError(t, err, name)
		require.Equal(t, typ, got, name)
	}
	for _, name := range []string{
		"", "cash", "cash:main", "payable-to-fi-partner", "payable-to-fi-partner[]", "misc-loss[x]",
		"equb:pool", "equb:pool:t1", "equb:pool:t1:c1:extra", "partner-bank", "partner-bank:cbe",
		"receivable-from-employee:", "receivable-from-employee::x", "receivable-from-employee:a b",
		"receivable-from-employee:a:b:c", "fee-income:" + string(make([]byte, 300)),
		"payable-to-fi-partner[a b]", "payable-to-fi-partner[fi-7]x", "[fi-7]", "payable-to-fi-partner[[fi-7]",
		"payable-to-fi-partner[" + strings.Repeat("q", 65) + "]", "receivable-from-employee:" + strings.Repeat("e", 129),
	} {
		_, err := ParseAccountName(name)
		require.ErrorIs(t, err, ErrInvalidAccountName, "%q", name)
	}
}

func valid() Posting {
	return Posting{TenantID: "t", IdempotencyKey: "k", Status: Posted, Kind: Standard, Entries: []EntryInput{
		{AccountName: "payroll-clearing", Direction: Debit, AmountSantim: 10},
		{AccountName: "fee-income", Direction: Credit, AmountSantim: 10},
	}}
}

func TestValidatePosting(t *testing.T) {
	t.Parallel()
	require.NoError(t, ValidatePosting(valid()))
	cases := []struct {
		name string
		mut  func(*Posting)
		want error
	}{
		{"no tenant", func(p *Posting) { p.TenantID = " " }, ErrMissingTenant},
		{"no key", func(p *Posting) { p.IdempotencyKey = "" }, ErrMissingIdempotencyKey},
		{"one entry", func(p *Posting) { p.Entries = p.Entries[:1] }, ErrTooFewEntries},
		{"zero", func(p *Posting) { p.Entries[0].AmountSantim, p.Entries[1].AmountSantim = 0, 0 }, ErrInvalidAmount},
		{"negative", func(p *Posting) { p.Entries[1].AmountSantim = -10 }, ErrInvalidAmount},
		{"unbalanced", func(p *Posting) { p.Entries[1].AmountSantim = 9 }, ErrUnbalanced},
		// Amounts whose sum would overflow are refused before any sum: each is past the bound.
		{"overflow", func(p *Posting) {
			p.Entries = []EntryInput{
				{AccountName: "payroll-clearing", Direction: Debit, AmountSantim: math.MaxInt64},
				{AccountName: "payroll-clearing", Direction: Debit, AmountSantim: 1},
				{AccountName: "fee-income", Direction: Credit, AmountSantim: math.MaxInt64},
			}
		}, ErrAmountOutOfRange},
		{"bad direction", func(p *Posting) { p.Entries[0].Direction = "SIDEWAYS" }, ErrInvalidArgument},
		{"bad status", func(p *Posting) { p.Status = Voided }, ErrInvalidArgument},
		{"no account", func(p *Posting) { p.Entries[0].AccountName = "" }, ErrInvalidArgument},
		{"bad account id", func(p *Posting) { p.Entries[0] = EntryInput{AccountID: "x", Direction: Debit, AmountSantim: 10} }, ErrInvalidArgument},
		{"unknown name", func(p *Posting) { p.Entries[0].AccountName = "cash" }, ErrInvalidAccountName},
		{"pending adjustment", func(p *Posting) {
			p.Kind, p.Status = AdjustmentKind, Pending
			p.Adjustment = &Adjustment{Source: "s", Reason: "r", ApprovedBy: "a", RequestedBy: "b"}
		}, ErrInvalidArgument},
		{"self-approved adjustment", func(p *Posting) {
			p.Kind = AdjustmentKind
			p.Adjustment = &Adjustment{Source: "s", Reason: "r", ApprovedBy: "a", RequestedBy: "a"}
		}, ErrSelfApproved},
		{"adjustment without reason", func(p *Posting) {
			p.Kind = AdjustmentKind
			p.Adjustment = &Adjustment{Source: "s", ApprovedBy: "a", RequestedBy: "b"}
		}, ErrInvalidArgument},
		{"invalid utf-8 metadata", func(p *Posting) { p.Metadata = map[string]string{"k": "\xff"} }, ErrInvalidArgument},
	}
	for _, c := range cases {
		p := valid()
		c.mut(&p)
		require.ErrorIs(t, ValidatePosting(p), c.want, c.name)
	}
}

func TestAdjustmentSignature(t *testing.T) {
	t.Parallel()
	r := AdjustmentRequest{TenantID: "t", IdempotencyKey: "k",
		Adjustment: Adjustment{Source: "dispute", Reason: "d1:ok", ApprovedBy: "admin", RequestedBy: "op"},
		Entries:    valid().Entries}
	sig := SignAdjustment(testAdjustmentKey, r)
	require.NoError(t, VerifyAdjustment(testAdjustmentKey, r, sig))
	require.ErrorIs(t, VerifyAdjustment(testAdjustmentKey, r, nil), ErrSignatureMissing)
	require.ErrorIs(t, VerifyAdjustment([]byte("short"), r, sig), ErrSignatureInvalid, "a too-short key verifies nothing")
	// Every field is covered: changing any one breaks the signature.
	for _, mut := range []func(*AdjustmentRequest){
		func(a *AdjustmentRequest) { a.TenantID = "t2" },
		func(a *AdjustmentRequest) { a.IdempotencyKey = "k2" },
		func(a *AdjustmentRequest) { a.Adjustment.Source = "other" },
		func(a *AdjustmentRequest) { a.Adjustment.Reason = "d1:changed" },
		func(a *AdjustmentRequest) { a.Adjustment.ApprovedBy = "admin2" },
		func(a *AdjustmentRequest) { a.Adjustment.RequestedBy = "op2" },
		func(a *AdjustmentRequest) { a.Entries = []EntryInput{a.Entries[0], a.Entries[1], a.Entries[1]} },
		func(a *AdjustmentRequest) { a.Entries = []EntryInput{a.Entries[1], a.Entries[0]} },
		// field boundaries are length-prefixed: moving bytes between fields is not the same request
		func(a *AdjustmentRequest) { a.Adjustment.Source, a.Adjustment.Reason = "disputed1", ":ok" },
	} {
		c := r
		c.Entries = append([]EntryInput(nil), r.Entries...)
		mut(&c)
		require.ErrorIs(t, VerifyAdjustment(testAdjustmentKey, c, sig), ErrSignatureInvalid)
	}
}

func TestErrorRoundTrip(t *testing.T) {
	t.Parallel()
	for _, r := range []Reason{ReasonUnbalanced, ReasonAccountNotFound, ReasonIdempotencyConflict, ReasonAlreadyPosted, ReasonSignatureInvalid} {
		sent := errorf(r, "detail %d", 1)
		back := FromStatus(ToStatus(sent).Err())
		require.ErrorIs(t, back, &Error{Reason: r})
		require.Equal(t, "detail 1", back.(*Error).Message)
	}
	// Internal errors keep their text on the server.
	st := ToStatus(errors.New("pq: password authentication failed for user x"))
	require.NotContains(t, st.Message(), "password")
	require.ErrorIs(t, FromStatus(st.Err()), ErrInternal)
}

// FuzzValidatePosting throws arbitrary postings at the validator: it must never panic, and
// whatever it accepts must really be a valid posting (two or more legs, positive amounts,
// balanced within the bounds of internal/platform/money, accounts named by the chart or a uuid, more
// than one account).
func FuzzValidatePosting(f *testing.F) {
	f.Add("t", "k", "payroll-clearing", "fee-income", int64(10), int64(10), true, false, "")
	f.Add("t", "k", "partner-bank:cbe:1", "equb:pool:t:c", int64(1), int64(2), false, true, "x")
	f.Add("", "", "cash", "", int64(0), int64(-1), true, true, "")
	f.Add("t", "k", "payable-to-fi-partner[fi]", "misc-loss", int64(math.MaxInt64), int64(math.MaxInt64), true, false, "6f1c1d7e-64b4-4d8f-9d0c-1a5e3b1f2a77")
	f.Fuzz(func(t *testing.T, tenant, key, a1, a2 string, amt1, amt2 int64, debitFirst, pending bool, id string) {
		d1, d2 := Debit, Credit
		if !debitFirst {
			d1, d2 = Credit, Debit
		}
		p := Posting{TenantID: tenant, IdempotencyKey: key, Kind: Standard, Status: Posted, Entries: []EntryInput{
			{AccountName: a1, Direction: d1, AmountSantim: amt1},
			{AccountName: a2, Direction: d2, AmountSantim: amt2},
		}}
		if pending {
			p.Status = Pending
		}
		if id != "" {
			p.Entries = append(p.Entries, EntryInput{AccountID: id, Direction: d2, AmountSantim: amt1})
			p.Entries = append(p.Entries, EntryInput{AccountID: id, Direction: d1, AmountSantim: amt1})
		}
		err := ValidatePosting(p)
		if err != nil {
			var le *Error
			if !errors.As(err, &le) || le.Reason.Code() == 0 {
				t.Fatalf("validator error without a reason: %v", err)
			}
			return
		}
		var debits, credits int64
		accounts := map[string]bool{}
		for _, e := range p.Entries {
			accounts[e.AccountName+"/"+e.AccountID] = true
			if e.AmountSantim <= 0 || e.AmountSantim > money.MaxAmountSantim {
				t.Fatalf("accepted amount %d", e.AmountSantim)
			}
			if e.AccountName != "" {
				if _, err := ParseAccountName(e.AccountName); err != nil {
					t.Fatalf("accepted account name %q: %v", e.AccountName, err)
				}
			}
			var ok bool
			if e.Direction == Debit {
				debits, ok = money.Add(debits, e.AmountSantim)
			} else {
				credits, ok = money.Add(credits, e.AmountSantim)
			}
			if !ok {
				t.Fatal("accepted an overflowing posting")
			}
		}
		if debits != credits || debits > money.MaxTransactionSantim {
			t.Fatalf("accepted posting with debits %d, credits %d", debits, credits)
		}
		if len(accounts) < 2 {
			t.Fatal("accepted a posting on one account")
		}
		if tenant == "" || key == "" {
			t.Fatal("accepted a posting without tenant or key")
		}
	})
}
