package api

import (
	"context"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/ledger"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// TestEwaPartialRepayments: a request repaid in parts over HTTP, each part a saga. It stays
// DISBURSED with the sum so far until the parts cover principal + fee, then it is REPAID; a part
// over what is owed is 422 with the outstanding; eight parts racing under eight keys cannot
// overpay; each part posts its own journal under its own ledger key; a retry of a key whose
// stored answer was lost gets the saga's answer, not a refusal.
func TestEwaPartialRepayments(t *testing.T) {
	t.Parallel()
	w := newEwaWorld(t, ewaSalary)
	w.settings(500, 250, 50)
	r := w.created(w.employee, 100_000) // fee 500 + 2,500: total 103,000
	w.disburse(r.ID)
	path := "/api/ewa/requests/" + r.ID + "/record-repayment"
	repay := func(amount int64, source, key string) ewaRequestJSON {
		t.Helper()
		rec := w.owner.call(http.MethodPost, path, map[string]any{"ewaRequestId": r.ID, "repaidAmountSantim": amount, "source": source},
			"Idempotency-Key", key)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[ewaRequestJSON](t, rec)
	}

	// A first part: DISBURSED, the sum so far, the part's source and journal.
	k1 := ewaKey()
	first := repay(40_000, "EMPLOYER", k1)
	require.Equal(t, ewa.Disbursed, first.Status)
	require.EqualValues(t, 40_000, *first.RepaidAmountSantim)
	require.Equal(t, "EMPLOYER", *first.RepaymentSource)
	require.Nil(t, first.RepaidAt)
	require.EqualValues(t, r.TotalSantim-40_000, w.eligibility(w.employee).OutstandingSantim, "eligibility counts what is still owed")

	// More than is owed: refused before anything moves, with what may still be repaid.
	rec := w.owner.call(http.MethodPost, path, map[string]any{"ewaRequestId": r.ID, "repaidAmountSantim": 63_001, "source": "PAYROLL"},
		"Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	require.Equal(t, "EWA_REPAYMENT_EXCEEDS_OUTSTANDING", errCode(rec))
	require.JSONEq(t, `{"outstandingSantim":63000}`, string(decode[errBody](t, rec).Error.Details))

	// Eight parts of 20,000 under eight keys at once: three fit in the 63,000 owed.
	const n = 8
	answers := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			rec := w.owner.call(http.MethodPost, path, map[string]any{"ewaRequestId": r.ID, "repaidAmountSantim": 20_000, "source": "PAYROLL"},
				"Idempotency-Key", ewaKey())
			answers[i] = strconv.Itoa(rec.Code) + " " + errCode(rec)
		})
	}
	wg.Wait()
	sort.Strings(answers)
	over := "422 EWA_REPAYMENT_EXCEEDS_OUTSTANDING"
	require.Equal(t, []string{"200 ", "200 ", "200 ", over, over, over, over, over}, answers)
	rec = w.owner.call(http.MethodGet, "/api/ewa/requests/"+r.ID, nil)
	mid := decode[ewaRequestJSON](t, rec)
	require.Equal(t, ewa.Disbursed, mid.Status)
	require.EqualValues(t, 100_000, *mid.RepaidAmountSantim)

	// The last 3,000 completes it.
	last := repay(3_000, "PAYROLL", ewaKey())
	require.Equal(t, ewa.Repaid, last.Status)
	require.EqualValues(t, 103_000, *last.RepaidAmountSantim)
	require.NotNil(t, last.RepaidAt)
	require.Zero(t, w.eligibility(w.employee).OutstandingSantim)
	rec = w.owner.call(http.MethodPost, path, map[string]any{"ewaRequestId": r.ID, "repaidAmountSantim": 1, "source": "PAYROLL"},
		"Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "EWA_NOT_DISBURSED", errCode(rec))

	// Five journals, one per part, each under its own key, together the whole.
	ctx := context.Background()
	entries, err := w.ledger.ListEntries(ctx, &ledgerv1.ListEntriesRequest{TenantId: w.tenant, AccountName: "payroll-clearing"})
	require.NoError(t, err)
	var debited int64
	for _, e := range entries.GetEntries() {
		require.Equal(t, ledgerv1.Direction_DIRECTION_DEBIT, e.GetDirection())
		debited += e.GetAmountSantim()
	}
	require.Len(t, entries.GetEntries(), 5)
	require.EqualValues(t, 103_000, debited)
	for seq, amount := range map[int]int64{1: 40_000, 5: 3_000} {
		got, err := w.ledger.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: w.tenant, IdempotencyKey: ewa.RepaymentLedgerKey(r.ID, seq)})
		require.NoError(t, err, "repayment %d", seq)
		require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, got.GetTransaction().GetStatus())
		for _, e := range got.GetTransaction().GetEntries() {
			require.Equal(t, amount, e.GetAmountSantim())
		}
	}
	require.Equal(t, *last.RepaymentLedgerTxID, func() string {
		got, err := w.ledger.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: w.tenant, IdempotencyKey: ewa.RepaymentLedgerKey(r.ID, 5)})
		require.NoError(t, err)
		return got.GetTransaction().GetId()
	}(), "the request names the latest journal")
	require.Equal(t, 5, w.count(w.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'ewa.repayment_recorded.v1'`))
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'ewa.repaid.v1'`))
	require.Equal(t, 5, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'RecordEwaRepayment' AND outcome = 'SUCCESS'`))

	// The first part's answer was never stored (a crash before it): its key's retry gets the
	// saga's answer — the request as that part left it — and posts nothing more, although the
	// request is REPAID now and a new key would be refused.
	require.NoError(t, db.InTenantTx(ctx, w.d.Platform(t), w.tenant, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM app.idempotency_records WHERE key = $1`, k1)
		if err == nil && tag.RowsAffected() != 1 {
			t.Errorf("deleted %d idempotency records", tag.RowsAffected())
		}
		return err
	}))
	again := repay(40_000, "EMPLOYER", k1)
	require.Equal(t, first, again)
	entries, err = w.ledger.ListEntries(ctx, &ledgerv1.ListEntriesRequest{TenantId: w.tenant, AccountName: "payroll-clearing"})
	require.NoError(t, err)
	require.Len(t, entries.GetEntries(), 5, "nothing posted again")
}

// TestEwaRepaymentLedgerDownAnswersPending: the ledger is down when the repayment is asked for.
// The caller gets 202 PENDING at once (not a 503 to retry by hand), the amount stays reserved
// (a second repayment cannot take it), and once a worker with the ledger takes the saga over the
// repayment is posted once and recorded. The key's retry replays the stored 202 (what the caller
// was told stays what it is told); the request shows the repayment.
func TestEwaRepaymentLedgerDownAnswersPending(t *testing.T) {
	t.Parallel()
	dead, err := ledger.Dial("127.0.0.1:1", ledger.ClientOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = dead.Close() })
	w := newEwaWorldWith(t, ewaSalary, dead)
	w.settings(500, 250, 50)
	r := w.created(w.employee, 100_000) // total 103,000
	w.disburse(r.ID)
	path := "/api/ewa/requests/" + r.ID + "/record-repayment"
	body := map[string]any{"ewaRequestId": r.ID, "repaidAmountSantim": 100_000, "source": "PAYROLL"}

	k := ewaKey()
	rec := w.owner.call(http.MethodPost, path, body, "Idempotency-Key", k)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	pending := decode[ewaRepaymentPendingJSON](t, rec)
	require.Equal(t, ewaRepaymentPendingJSON{ID: r.ID, Status: "PENDING", WorkflowID: pending.WorkflowID}, pending)
	require.NotEmpty(t, pending.WorkflowID)
	rec = w.owner.call(http.MethodPost, path, map[string]any{"ewaRequestId": r.ID, "repaidAmountSantim": 3_001, "source": "PAYROLL"},
		"Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "the pending repayment holds its amount")
	require.JSONEq(t, `{"outstandingSantim":3000}`, string(decode[errBody](t, rec).Error.Details))

	// The ledger is back: a worker that reaches it takes over the saga.
	w.worker.Stop()
	startEwaWorldWorker(t, w.tc, w.queue, workflows.Deps{Money: &activities.Money{Ledger: w.ledger}, EwaRepay: &activities.EwaRepay{DB: w.d.App}})
	var res workflows.EwaRepayResult
	require.NoError(t, w.tc.GetWorkflow(context.Background(), pending.WorkflowID, "").Get(context.Background(), &res))
	require.Equal(t, workflows.RepayRecorded, res.Status)

	rec = w.owner.call(http.MethodPost, path, body, "Idempotency-Key", k)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Equal(t, "true", rec.Header().Get("Idempotent-Replayed"))
	rec = w.owner.call(http.MethodGet, "/api/ewa/requests/"+r.ID, nil)
	got := decode[ewaRequestJSON](t, rec)
	require.Equal(t, ewa.Disbursed, got.Status)
	require.EqualValues(t, 100_000, *got.RepaidAmountSantim)
	entries, err := w.ledger.ListEntries(context.Background(), &ledgerv1.ListEntriesRequest{TenantId: w.tenant, AccountName: "payroll-clearing"})
	require.NoError(t, err)
	require.Len(t, entries.GetEntries(), 1, "posted once")
}
