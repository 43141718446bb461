package bnpl_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestTransactionsReadThroughTheirIndexes: every filter of the BNPL transaction feed, for a
// business and for a merchant, from the top and after a cursor of each type, reads each source
// along its own index (sequential scans off: an index that can serve is used): the payments
// through bnpl_agreements_payments (the merchant's through bnpl_agreements_merchant_payments), the
// repayments through the repayment feed's bnpl_instalments_repaid, the write-offs through
// bnpl_write_offs_posted.
func TestTransactionsReadThroughTheirIndexes(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	window := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	filters := map[string]bnpl.TransactionFilter{
		"everything":   {},
		"payments":     {Type: bnpl.TxMerchantPayment},
		"repayments":   {Type: bnpl.TxRepayment},
		"write-offs":   {Type: bnpl.TxWriteOff},
		"paid":         {State: bnpl.SettlementPaid},
		"in flight":    {State: bnpl.SettlementPending},
		"posted":       {State: bnpl.TxPosted},
		"an agreement": {AgreementID: "bnpl_1"},
		"a window":     {From: window, To: window.AddDate(0, 1, 0)},
	}
	cursors := []bnpl.TransactionCursor{{}}
	for _, typ := range bnpl.TransactionTypes {
		cursors = append(cursors, bnpl.TransactionCursor{At: window, Type: typ, Agreement: "bnpl_1", Index: 2})
	}
	for _, view := range []struct {
		tenant  string
		v       bnpl.TransactionView
		indexes map[string]string // source type → its index
	}{
		{"biz_1", bnpl.BusinessView, map[string]string{bnpl.TxMerchantPayment: "bnpl_agreements_payments",
			bnpl.TxRepayment: "bnpl_instalments_repaid", bnpl.TxWriteOff: "bnpl_write_offs_posted"}},
		{"org_shop", bnpl.MerchantView, map[string]string{bnpl.TxMerchantPayment: "bnpl_agreements_merchant_payments"}},
	} {
		ctx := tenancy.WithTenant(context.Background(), view.tenant)
		for name, f := range filters {
			for _, after := range cursors {
				sql, args := bnpl.TransactionsSQL(ctx, view.v, f, after, 51)
				if sql == "" {
					require.Equal(t, bnpl.MerchantView, view.v, "%s: only a merchant's feed has a filter no source matches", name)
					continue
				}
				var text string
				require.NoError(t, db.InTenantTx(ctx, d.App, view.tenant, func(tx pgx.Tx) error {
					var err error
					text, err = testkit.Plan(ctx, tx, sql, args...)
					return err
				}))
				what := fmt.Sprintf("%d %s after %+v:\n%s", view.v, name, after, text)
				for _, table := range []string{"bnpl_agreements", "bnpl_instalments", "bnpl_write_offs"} {
					require.NotContains(t, text, "Seq Scan on "+table, what)
				}
				read := 0
				for typ, index := range view.indexes {
					if strings.Contains(sql, "'"+typ+"' AS type") {
						require.Contains(t, text, index, what)
						read++
					}
				}
				require.Positive(t, read, what)
			}
		}
	}
}

// TestTransactionCursor: a cursor reads back as it was written, for each type; anything else is
// refused on the field "cursor".
func TestTransactionCursor(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 9, 30, 0, 123456000, time.UTC)
	for _, c := range []bnpl.TransactionCursor{
		{At: at, Type: bnpl.TxMerchantPayment, Agreement: "bnpl_0123456789abcdef0123456789abcdef"},
		{At: at, Type: bnpl.TxRepayment, Agreement: "bnpl_x", Index: 59},
		{At: at, Type: bnpl.TxRepayment, Agreement: "bnpl_x", Index: 0},
		{At: at, Type: bnpl.TxWriteOff, Agreement: "bnpl_A-b_c"},
		{At: time.UnixMicro(0).UTC(), Type: bnpl.TxWriteOff, Agreement: "bnpl_x"},
	} {
		got, err := bnpl.ParseTransactionCursor(c.String())
		require.NoError(t, err, c.String())
		require.Equal(t, c, got)
	}
	got, err := bnpl.ParseTransactionCursor("")
	require.NoError(t, err)
	require.Equal(t, bnpl.TransactionCursor{}, got)
	for _, bad := range []string{
		"abc", "1.P", "1.P.bnpl_", "1.P.loan_x", "1.R.bnpl_x", "1.R60.bnpl_x", "1.R01.bnpl_x", "1.W0.bnpl_x", "1.P1.bnpl_x",
		"01.P.bnpl_x", "-1.P.bnpl_x", "12345678901234567.P.bnpl_x", "1.X.bnpl_x", "1.P.bnpl_x\n", "1.P.bnpl_a b",
		"1.P.bnpl_" + strings.Repeat("a", 60), "1.bnpl_x.0",
	} {
		_, err := bnpl.ParseTransactionCursor(bad)
		var fe *field.Error
		require.ErrorAs(t, err, &fe, "%q", bad)
		require.Equal(t, "cursor", fe.Field, "%q", bad)
	}
}
