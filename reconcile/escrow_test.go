package reconcile

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/chart"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// CheckEscrow: the statement's net (credits less debits) against the pools' posted balance; any
// difference, either way, is DRIFT.
func TestCheckEscrow(t *testing.T) {
	for _, tc := range []struct {
		name   string
		posted int64
		lines  []int64
		drift  int64
		status string
	}{
		{"empty", 0, nil, 0, EscrowClean},
		{"contributions held", 3000, []int64{1000, 1000, 1000}, 0, EscrowClean},
		{"paid out", 0, []int64{1000, 1000, 1000, -3000}, 0, EscrowClean},
		{"someone else's money", 3000, []int64{1000, 1000, 1000, 77}, 77, EscrowDrift},
		{"a posting the bank never booked", 3000, []int64{1000, 1000}, -1000, EscrowDrift},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := CheckEscrow(EscrowCheck{PoolPostedSantim: tc.posted}, tc.lines)
			require.Equal(t, tc.drift, c.DriftSantim)
			require.Equal(t, tc.status, c.Status)
			require.Equal(t, len(tc.lines), c.StatementLines)
		})
	}
}

// SummariseEscrow: per partner in name order, absolute drift summed (a negative drift counts).
func TestSummariseEscrow(t *testing.T) {
	rep := SummariseEscrow([]EscrowCheck{
		{TenantID: "b", Partner: "zb", Status: EscrowClean},
		{TenantID: "a", Partner: "sandbox", DriftSantim: -40, Status: EscrowDrift},
		{TenantID: "b", Partner: "sandbox", DriftSantim: 2, Status: EscrowDrift},
	}, []EscrowFailure{{TenantID: "c", Error: "x"}})
	require.Equal(t, []EscrowPartnerTotal{{Partner: "sandbox", Accounts: 2, Drifted: 2, AbsDriftSantim: 42}, {Partner: "zb", Accounts: 1}}, rep.Partners)
	require.Equal(t, 3, rep.Accounts)
	require.Equal(t, 2, rep.Drifted)
	require.Equal(t, 1, rep.Errors)
}

// An escrow account bound more than the gateway's longest statement period ago (92 days) is still
// checked: its statement since the binding is fetched in pieces the gateway accepts and their
// lines add up (one request for the whole period was refused, so every run failed from the 93rd
// day on). Here 300 arrived 95 days ago and 700 today, and the pool holds the 1,000: clean.
func TestCheckTenantEscrowBoundLongAgo(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	stack := gatewaytest.Start(t, d.App, gatewaytest.Options{})
	raw := ledgertest.Serve(t, d.App, nil)
	ctx := context.Background()
	tenant, escrow := testkit.Unique("tenant"), testkit.Unique("escrow")
	cycle := "eqc_" + testkit.Unique("c")
	pool := chart.EqubPoolAccount(tenant, cycle)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	bound := today.AddDate(0, 0, -100)

	owner, err := db.Open(ctx, d.OwnerDSN, 1)
	require.NoError(t, err)
	defer owner.Close()
	// The binding, as the equb saga leaves it (the rows it hangs from, at their minimum).
	require.NoError(t, db.InTenantTx(ctx, owner, tenant, func(tx pgx.Tx) error {
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`INSERT INTO app.organizations (id, kind, name) VALUES ($1, 'BUSINESS', 'Employer PLC')`, []any{tenant}},
			{`INSERT INTO app.equb_groups (id, tenant_id, name, contribution_santim, max_members, payout_order, allow_changes_after_start,
			    escrow_partner, escrow_account_number, status, cycles_total, created_by, created_at, updated_at)
			 VALUES ('equb_g', $1, 'Group', 500, 2, 'FIXED', false, 'sandbox', $2, 'RUNNING', 2, 'test', $3, $3)`, []any{tenant, escrow, bound}},
			{`INSERT INTO app.equb_memberships (id, tenant_id, group_id, employee_id, user_id, status, position, joined_at)
			 VALUES ('eqm_m', $1, 'equb_g', 'emp', 'usr', 'ACTIVE', 1, $2)`, []any{tenant, bound}},
			{`INSERT INTO app.equb_cycles (id, tenant_id, group_id, number, recipient_id, contribution_santim, members_due, status,
			    opened_by, opened_at, due_at)
			 VALUES ($2, $1, 'equb_g', 1, 'eqm_m', 500, 2, 'OPEN', 'test', $3, $3::timestamptz + interval '168 hours')`, []any{tenant, cycle, bound}},
			{`INSERT INTO app.equb_escrow_bindings (id, tenant_id, cycle_id, partner, partner_account_id, ledger_pool_account_id, status, verified_at)
			 VALUES ('eqb_b', $1, $2, 'sandbox', $3, $4, 'ACTIVE', $5)`, []any{tenant, cycle, escrow, pool, bound}},
		} {
			if _, err := tx.Exec(ctx, q.sql, q.args...); err != nil {
				return err
			}
		}
		return nil
	}))
	// The escrow account at the bank: 300 booked 95 days ago (in the first piece), 700 today.
	stack.Account(t, escrow, "Equb Escrow", 0)
	_, err = owner.Exec(ctx, `INSERT INTO sandbox.statement_lines (account_number, kind, reference, direction, amount_santim, currency,
		    balance_after_santim, booked_at, booking_date, value_date)
		VALUES ($1, 'FUNDING', 'contribution-1', 'CRDT', 300, 'ETB', 300, $2, $3, $3)`, escrow, today.AddDate(0, 0, -95), today.AddDate(0, 0, -95))
	require.NoError(t, err)
	stack.Bank(t, http.MethodPost, "/api/v1/sandbox/accounts/"+escrow+"/fund", map[string]any{"amountSantim": 700, "reference": "contribution-2"}, http.StatusOK, nil)
	// The pool holds both contributions.
	mirror := chart.PartnerBankAccount(gateway.SandboxPartner, escrow)
	for _, n := range []string{mirror, pool} {
		_, err := raw.EnsureAccount(ctx, &ledgerv1.EnsureAccountRequest{TenantId: tenant, Name: n})
		require.NoError(t, err)
	}
	_, err = raw.PostTransaction(ctx, &ledgerv1.PostTransactionRequest{TenantId: tenant, IdempotencyKey: "contributions",
		Entries: []*ledgerv1.EntryInput{
			{AccountName: mirror, Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: 1_000},
			{AccountName: pool, Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: 1_000},
		}})
	require.NoError(t, err)

	r := &EscrowRunner{DB: d.App, Ledger: ledger.NewClient(raw, ledger.ClientOptions{}), Gateway: gatewayFetcher(stack.Gateway)}
	checks, err := r.CheckTenant(ctx, EscrowTenantRequest{TenantID: tenant, To: today.Format(time.DateOnly), WorkflowID: "wf", RunID: "run"})
	require.NoError(t, err)
	require.Len(t, checks, 1)
	c := checks[0]
	require.Equal(t, bound.Format(time.DateOnly), c.PeriodFrom)
	require.Equal(t, today.Format(time.DateOnly), c.PeriodTo)
	require.Equal(t, 2, c.StatementLines)
	require.Equal(t, int64(1_000), c.StatementNetSantim)
	require.Equal(t, int64(1_000), c.PoolPostedSantim)
	require.Equal(t, EscrowClean, c.Status)
}
