package workflows

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// ewaRepayHistoryFile is a recorded history of a real repayment run (WAGERAIL_RECORD_HISTORY=1
// rewrites it).
const ewaRepayHistoryFile = "testdata/ewa_repay_history.json"

// TestEwaRepayRealActivities: the saga over its real activities, real Postgres, the real ledger
// over gRPC and the embedded Temporal server: a part, then the rest, of a disbursed request. The
// first leaves it DISBURSED, the second makes it REPAID; each posts one journal under its own
// ledger key; a third is refused as more than is owed, with nothing posted.
func TestEwaRepayRealActivities(t *testing.T) {
	ctx := context.Background()
	d := testkit.NewDB(t)
	tenant := orgs.NewOrganizationID()
	sctx := tenancy.With(ctx, tenancy.Scope{TenantID: tenant, Actor: tenancy.System("repay-test")})
	var req ewa.Request
	require.NoError(t, tenancy.InTx(sctx, d.App, func(tx pgx.Tx) error {
		if _, _, err := orgs.Create(sctx, tx, orgs.NewOrganization{ID: tenant, Name: "Biz", Kind: orgs.Business}, ""); err != nil {
			return err
		}
		e, err := employees.Create(sctx, tx, tenant, employees.Employee{FirstName: "Abebe", LastName: "Kebede", NationalID: "ET10000001",
			HireDate: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), GrossMonthlySalarySantim: 1_000_000_00,
			Payout: employees.PayoutAccount{Partner: "sandbox", AccountNumber: "1000123456789", HolderName: "Abebe Kebede"}})
		if err != nil {
			return err
		}
		if req, err = ewa.Create(sctx, tx, tenant, e.ID, 10_000, time.Now()); err != nil {
			return err
		}
		wf := "wf-disburse-" + req.ID
		if _, err := ewa.Claim(sctx, tx, req.ID, wf); err != nil {
			return err
		}
		if err := ewa.SetLedgerTx(sctx, tx, req.ID, wf, "ltx-"+req.ID); err != nil {
			return err
		}
		req, err = ewa.MarkDisbursed(sctx, tx, req.ID, wf, "tr-"+req.ID, "")
		return err
	}))
	led := ledger.NewClient(ledgertest.Serve(t, d.App, nil), ledger.ClientOptions{})

	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	defer tc.Close()
	queue := testkit.Unique("ewa-repay")
	w := worker.New(tc, queue, worker.Options{DeadlockDetectionTimeout: time.Minute})
	Register(w, Deps{Money: &activities.Money{Ledger: led}, EwaRepay: &activities.EwaRepay{DB: d.App}})
	require.NoError(t, w.Start())
	defer w.Stop()

	repay := func(amount int64) (EwaRepayResult, client.WorkflowRun) {
		t.Helper()
		run, err := tc.ExecuteWorkflow(ctx, StartOptions(testkit.Unique("idem-repay"), queue, tenant, req.ID), EwaRepayWorkflowName,
			EwaRepayInput{TenantID: tenant, RequestID: req.ID, AmountSantim: amount, Source: ewa.SourcePayroll, ActorID: "user-1",
				CorrelationID: "http-1"})
		require.NoError(t, err)
		var res EwaRepayResult
		require.NoError(t, run.Get(ctx, &res))
		return res, run
	}
	first, _ := repay(4_000)
	require.Equal(t, RepayRecorded, first.Status)
	require.Equal(t, ewa.Disbursed, first.Request.Status)
	require.EqualValues(t, 4_000, first.Request.RepaidAmountSantim)
	total := req.PrincipalSantim + req.FeeSantim
	rest, run := repay(total - 4_000)
	require.Equal(t, RepayRecorded, rest.Status)
	require.Equal(t, ewa.Repaid, rest.Request.Status)
	require.Equal(t, total, rest.Request.RepaidAmountSantim)
	require.Equal(t, 2, rest.Repayment.Seq)
	testkit.RecordHistory(t, tc, run.GetID(), run.GetRunID(), ewaRepayHistoryFile)
	over, _ := repay(1)
	require.Equal(t, EwaRepayResult{RequestID: req.ID, Status: RepayRefused, Code: ewa.CodeNotDisbursed}, over)

	for seq, amount := range map[int]int64{1: 4_000, 2: total - 4_000} {
		got, err := led.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: tenant, IdempotencyKey: ewa.RepaymentLedgerKey(req.ID, seq)})
		require.NoError(t, err, "repayment %d", seq)
		tx := got.GetTransaction()
		require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetStatus())
		var lines []string
		for _, e := range tx.GetEntries() {
			lines = append(lines, fmt.Sprintf("%s %s %d", e.GetDirection(), e.GetAccountName(), e.GetAmountSantim()))
		}
		require.ElementsMatch(t, []string{fmt.Sprintf("DIRECTION_DEBIT payroll-clearing %d", amount),
			fmt.Sprintf("DIRECTION_CREDIT receivable-from-employee:%s %d", req.EmployeeID, amount)}, lines)
	}
}

// TestEwaRepayReplay replays the recorded history against the current code.
func TestEwaRepayReplay(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	registerWorkflows(r)
	require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, ewaRepayHistoryFile))
}
