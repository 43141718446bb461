package api

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/reconcile"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// TestReconcileMatchesOwnDisbursements is issue 21's walk-through on the real stack (Postgres,
// the embedded Temporal server, the ledger and the gateway over gRPC, the sandbox over HTTP):
// EWA advances disbursed through the API — two settled, one failed at the bank after it held the
// money — then the day's reconciliation, run as `wagerail reconcile --fetch` runs it. Every line
// of the funding account pairs with the saga's own posting by the one reference both carry, the
// account's opening balance is its recorded baseline, not drift: no flag, no drift. Then a
// credit nobody told the ledger about appears at the bank: exactly that line is flagged, and the
// drift is its amount.
func TestReconcileMatchesOwnDisbursements(t *testing.T) {
	t.Parallel()
	s := newEwaStack(t, ewaStackOpts{})
	s.approveKyc(t)
	ctx := context.Background()
	const principal int64 = 4_000 // 40 ETB each: three fit under the access cap on any day

	type advance struct {
		id, wfID string
		status   string
	}
	var advances []advance
	disburse := func(want string) {
		req := s.request(t, principal)
		key := testkit.Unique("disburse")
		rec := s.disburse(req.ID, key)
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
		s.waitStatus(t, req.ID, want)
		advances = append(advances, advance{id: req.ID, wfID: idempotency.WorkflowID(s.tenant, "POST /api/ewa/requests/:id/disburse", key), status: want})
	}
	disburse("DISBURSED")
	// The bank accepts the next transfer, holds the money, then fails it and refunds the hold.
	s.bank.Fault(t, stackEmployeeAcct, map[string]any{"settleFailureCode": "BENEFICIARY_BANK_REJECTED"})
	disburse("FAILED")
	s.bank.Sandbox.ClearFault(t, stackEmployeeAcct)
	disburse("DISBURSED")

	// One reference from the saga to the bank: the transfer's, the posting's bank_reference.
	for _, a := range advances {
		ref := partnerref.Leg(partnerref.EwaDisburse, a.wfID, 1)
		require.Equal(t, 1, s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1 AND reference = $2`, s.tenant, ref))
		tx, err := s.ledger.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: s.tenant, IdempotencyKey: "ewa-disburse:" + a.wfID})
		require.NoError(t, err)
		require.Equal(t, ref, tx.GetTransaction().GetMetadata()[partnerref.LedgerMetadataKey])
	}
	// The funding account's balance before its first transfer is its baseline.
	base, ok, err := s.bank.Store.MirrorBaseline(ctx, s.tenant, "sandbox", s.funding)
	require.NoError(t, err)
	require.True(t, ok, "the gateway records the baseline before the account's first transfer")
	require.Equal(t, int64(stackFundingBalance), base.BalanceSantim)
	require.NotEmpty(t, base.AsOfEntryRef, "the opening balance line is in it")

	store := reconcile.NewStore(s.d.App)
	runner := &reconcile.Runner{Ledger: s.ledger, Statements: s.bank.Store, Store: store, Gateway: s.gateway}
	day := time.Now().UTC().Format(time.DateOnly)
	run := func() reconcile.Report {
		return reconcile.Run(reconcile.Request{Tenants: []string{s.tenant}, Partners: []string{"sandbox"}, From: day, To: day, FetchStatements: true},
			reconcile.Steps{
				Fetch:     func(p reconcile.PairRequest) (reconcile.FetchCounts, error) { return runner.FetchStatements(ctx, p) },
				Reconcile: func(p reconcile.PairRequest) (reconcile.PairSummary, error) { return runner.ReconcilePair(ctx, p) },
			})
	}

	rep := run()
	require.Len(t, rep.Pairs, 1)
	p := rep.Pairs[0]
	t.Logf("clean run: %d scanned, %d matched, %d flagged, drift %d santim", p.Scanned, p.Matched, p.Flagged, p.DriftSantim)
	require.Zero(t, p.Errors, "%v", p.ErrorDetails)
	require.Equal(t, 1, p.Accounts, "the funding account, the tenant's one mirror")
	// Four bank lines (two settled transfers, the failed one's hold and refund; the opening
	// balance is the baseline's) and two ledger movements (the committed postings; the voided
	// one moved nothing in the books and explains the hold and the refund).
	require.Equal(t, 6, p.Scanned)
	require.Equal(t, p.Scanned, p.Matched, "every line matched")
	require.Zero(t, p.Flagged, "%v", p.FlagsByKind)
	require.Zero(t, p.DriftSantim)
	require.Zero(t, rep.Aggregate.Flagged)
	require.Equal(t, "none: every pair reconciled clean", rep.Aggregate.NextAction)

	// A credit the ledger knows nothing about.
	const injected int64 = 123_45
	s.bank.Bank(t, http.MethodPost, "/api/v1/sandbox/accounts/"+s.funding+"/fund",
		map[string]any{"amountSantim": injected, "reference": "CASH-DEPOSIT-7"}, http.StatusOK, nil)

	rep = run()
	p = rep.Pairs[0]
	t.Logf("after the injected line: %d scanned, %d matched, %d flagged, drift %d santim", p.Scanned, p.Matched, p.Flagged, p.DriftSantim)
	require.Zero(t, p.Errors, "%v", p.ErrorDetails)
	require.Equal(t, 7, p.Scanned)
	require.Equal(t, 6, p.Matched)
	require.Equal(t, 1, p.Flagged)
	require.Equal(t, map[reconcile.FlagKind]int{reconcile.UnknownBankLine: 1}, p.FlagsByKind)
	require.Equal(t, injected, p.DriftSantim)
	flags, err := store.Flags(tenancy.With(ctx, tenancy.Scope{TenantID: s.tenant, Actor: tenancy.System("reconcile")}), "sandbox", true)
	require.NoError(t, err)
	require.Len(t, flags, 1)
	require.Equal(t, "CASH-DEPOSIT-7", flags[0].Reference)
	require.Equal(t, s.funding, flags[0].Account)
	lines, err := s.bank.Store.StatementLines(ctx, s.tenant, "sandbox", s.funding, time.Now().UTC().Truncate(24*time.Hour), time.Now().UTC().Truncate(24*time.Hour))
	require.NoError(t, err)
	require.Equal(t, lines[len(lines)-1].EntryRef, flags[0].EntryRef, "the injected line, the statement's last")
	require.Equal(t, gateway.Credit, lines[len(lines)-1].Direction)
}
