package api

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// TestBnplSurvivesWorkerCrash (issue 29: "the worker killed mid-saga → exactly once"): over the
// real stack, the worker dies right after a step did its work and before it reported it — two
// activations, one after the settlement's PENDING posting and one after the bank accepted the
// merchant's settlement transfer, then a collection after its journal was posted. A new worker
// takes each saga over and runs the step again; the ledger's keys, the records and the
// transfer's reference make each happen exactly once: one merchant settlement per agreement at
// the sandbox (the merchant and the business's funding account exact to the santim), one
// settlement journal and one paid journal per agreement, one collection journal, one event each.
func TestBnplSurvivesWorkerCrash(t *testing.T) {
	t.Parallel()
	s := newBnplStackWith(t, ewaStackOpts{noWorker: true, sagaWait: 30 * time.Second})
	s.approveKyc(t)
	const purchase, toMerchant = int64(120_000), int64(117_000) // the merchant's discount is 2.5 %

	crashing := func(step string, call func() *httptest.ResponseRecorder, finished func(*httptest.ResponseRecorder)) *httptest.ResponseRecorder {
		return s.crashMidStep(t, step, call, finished)
	}

	var agreements []bnplActivateJSON
	for i, step := range []string{activities.LedgerPostPendingActivity, activities.InitiateTransferActivity} {
		key := testkit.Unique("bcrash")
		body := s.agreementBody(purchase, 3, testkit.Unique("crash-order"))
		var acc bnplActivateJSON
		crashing(step, func() *httptest.ResponseRecorder {
			return s.owner.call(http.MethodPost, "/api/bnpl/agreements", body, "Idempotency-Key", key)
		}, func(rec *httptest.ResponseRecorder) {
			require.Equal(t, http.StatusAccepted, rec.Code, "%s: %s", step, rec.Body.String())
			acc = decode[bnplActivateJSON](t, rec)
			s.waitAgreement(t, acc.ID, "ACTIVE")
		})
		agreements = append(agreements, acc)
		n := int64(i + 1)
		require.Equal(t, n*toMerchant, s.balance(t, s.merchantSettle), "%s: the merchant was paid once", step)
		require.Equal(t, int64(stackFundingBalance)-n*toMerchant, s.balance(t, s.funding), "%s: the business paid once", step)
		require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, s.ledgerTx(t, "bnpl-settle:"+acc.WorkflowID).GetStatus(), step)
		require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, s.ledgerTx(t, "bnpl-settle-paid:"+acc.WorkflowID).GetStatus(), step)
	}
	n := len(agreements)
	require.Equal(t, n, s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1 AND domain = 'BNPL'`, s.tenant),
		"one settlement transfer per agreement")
	require.Len(t, s.bank.Sandbox.Transfers(t), n, "the bank holds one transfer per agreement")
	require.Equal(t, n, s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1 AND idempotency_key LIKE 'bnpl-settle:%'`, s.tenant))
	require.Equal(t, n, s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1 AND idempotency_key LIKE 'bnpl-settle-paid:%'`, s.tenant))
	require.Equal(t, n, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'bnpl.activated.v1'`, s.tenant))

	// A collection whose journal was posted when the worker died: collected once.
	a := agreements[0]
	key := testkit.Unique("collect")
	rec := crashing(activities.LedgerPostActivity, func() *httptest.ResponseRecorder {
		return s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/installments/0/collect", nil, "Idempotency-Key", key)
	}, func(*httptest.ResponseRecorder) {
		require.Eventually(t, func() bool {
			return s.count(t, `SELECT count(*) FROM app.bnpl_instalments WHERE tenant_id = $1 AND agreement_id = $2 AND idx = 0
				AND status = 'COLLECTED'`, s.tenant, a.ID) == 1
		}, 60*time.Second, 50*time.Millisecond)
	})
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, rec.Code, rec.Body.String())
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1 AND idempotency_key LIKE 'bnpl-collect:%'`, s.tenant),
		"one collection journal")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'bnpl.instalment_collected.v1'`, s.tenant))
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM app.bnpl_instalments WHERE tenant_id = $1 AND agreement_id = $2 AND status = 'DUE'`,
		s.tenant, a.ID), "the other instalments are still owed")
	require.Equal(t, n, s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1`, s.tenant), "a collection moves no money at the bank")
}
