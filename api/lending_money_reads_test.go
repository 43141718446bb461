package api

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// moneyFixture makes the approved loan ACTIVE and writes, as the sagas leave them, three
// repayments (instalment 0: POSTED then FAILED; instalment 1: PENDING) and instalment 0's
// remittance (REMITTED).
func (w *loanAPIWorld) moneyFixture(t *testing.T, l loanJSON) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, w.d.App, l.BusinessID, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE app.loans SET status = 'ACTIVE', disbursed_at = now(), disburse_workflow_id = 'wf-d',
			disburse_ledger_tx_id = 'tx-d' WHERE id = $1`, l.ID); err != nil {
			return err
		}
		for i, r := range []struct {
			idx, seq int
			status   string
		}{{0, 1, "POSTED"}, {0, 2, "FAILED"}, {1, 1, "PENDING"}} {
			if _, err := tx.Exec(ctx, `INSERT INTO app.loan_repayments (id, tenant_id, loan_id, fi_id, idx, seq, workflow_id, amount_santim,
					interest_santim, fee_santim, principal_santim, source, status, ledger_key, ledger_tx_id, failure_reason, requested_by, posted_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, 1000, 0, 0, 1000, 'MANUAL', $8, $9,
					CASE WHEN $8 = 'POSTED' THEN 'ltx-' || $1 END, CASE WHEN $8 = 'FAILED' THEN 'INVALID_AMOUNT' END, 'u1',
					CASE WHEN $8 = 'POSTED' THEN now() END)`,
				fmt.Sprintf("lrep_%s_%d", l.ID, i), l.BusinessID, l.ID, l.FIPartnerID, r.idx, r.seq, fmt.Sprintf("wf-r-%d", i), r.status,
				fmt.Sprintf("loan-repay:%s:%d:%d", l.ID, r.idx, r.seq)); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO app.loan_remittances (tenant_id, loan_id, fi_id, idx, attempt, workflow_id, amount_santim,
				from_partner, from_account_number, to_partner, to_account_number, partner_reference, ledger_key, status, ledger_tx_id,
				transfer_id, requested_by, created_at, updated_at, remitted_at)
			VALUES ($1, $2, $3, 0, 1, 'wf-m', 1000, 'sandbox', '3000000000009', 'sandbox', '3000000000002', 'wf-m.loan-remit.1',
				'loan-remit:wf-m', 'REMITTED', 'ltx-m', 'trf-m', 'u1', now(), now(), now())`, l.BusinessID, l.ID, l.FIPartnerID)
		return err
	}))
}

type loanRepaymentListAnswer struct {
	Items      []loanRepaymentRecordJSON `json:"items"`
	NextCursor *string                   `json:"nextCursor"`
}

// TestLoanMoneyReadsAPI: the business and the FI that funds the loan page through its
// repayments (every state, by instalment then seq) and its remittances; another business or FI
// gets 404, bad paging 400; answers match the document.
func TestLoanMoneyReadsAPI(t *testing.T) {
	t.Parallel()
	w := newLoanAPIWorld(t)
	l := w.originate(t, w.employee, 500_000, 12)
	rec := w.fi.call(http.MethodPost, "/api/fi/loans/"+l.ID+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	w.moneyFixture(t, l)

	for _, v := range []struct {
		c    *apiClient
		base string
	}{{w.biz, "/api/loans/"}, {w.fi, "/api/fi/loans/"}} {
		rec := v.c.call(http.MethodGet, v.base+l.ID+"/repayments?limit=2", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		page := decode[loanRepaymentListAnswer](t, rec)
		require.Len(t, page.Items, 2)
		require.Equal(t, [2][3]any{{0, 1, "POSTED"}, {0, 2, "FAILED"}},
			[2][3]any{{page.Items[0].Index, page.Items[0].Seq, page.Items[0].Status}, {page.Items[1].Index, page.Items[1].Seq, page.Items[1].Status}})
		require.Equal(t, "ltx-"+page.Items[0].ID, *page.Items[0].LedgerTxID)
		require.Equal(t, "INVALID_AMOUNT", *page.Items[1].FailureReason)
		require.NotNil(t, page.NextCursor)
		rec = v.c.call(http.MethodGet, v.base+l.ID+"/repayments?limit=2&cursor="+*page.NextCursor, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		page = decode[loanRepaymentListAnswer](t, rec)
		require.Len(t, page.Items, 1)
		require.Equal(t, [3]any{1, 1, "PENDING"}, [3]any{page.Items[0].Index, page.Items[0].Seq, page.Items[0].Status})
		require.Nil(t, page.NextCursor)

		rec = v.c.call(http.MethodGet, v.base+l.ID+"/remittances", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		rm := decode[loanRemittanceListJSON](t, rec)
		require.Len(t, rm.Items, 1)
		require.Equal(t, "REMITTED", rm.Items[0].Status)
		require.Equal(t, int64(1000), rm.Items[0].AmountSantim)
		require.Nil(t, rm.NextCursor)
		rec = v.c.call(http.MethodGet, v.base+l.ID+"/remittances?cursor=0", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Empty(t, decode[loanRemittanceListJSON](t, rec).Items)

		requireStatus(t, v.c.hostile(http.MethodGet, v.base+l.ID+"/repayments?limit=0", nil), http.StatusBadRequest, "INVALID_REQUEST")
		requireStatus(t, v.c.hostile(http.MethodGet, v.base+l.ID+"/remittances?cursor=01", nil), http.StatusBadRequest, "INVALID_REQUEST")
		requireStatus(t, v.c.call(http.MethodGet, v.base+"loan_nope/repayments", nil), http.StatusNotFound, "LOAN_NOT_FOUND")
	}
	// Another business, another FI: not found.
	requireStatus(t, w.otherBiz.call(http.MethodGet, "/api/loans/"+l.ID+"/repayments", nil), http.StatusNotFound, "LOAN_NOT_FOUND")
	requireStatus(t, w.otherBiz.call(http.MethodGet, "/api/loans/"+l.ID+"/remittances", nil), http.StatusNotFound, "LOAN_NOT_FOUND")
	requireStatus(t, w.otherFI.call(http.MethodGet, "/api/fi/loans/"+l.ID+"/repayments", nil), http.StatusNotFound, "LOAN_NOT_FOUND")
	requireStatus(t, w.otherFI.call(http.MethodGet, "/api/fi/loans/"+l.ID+"/remittances", nil), http.StatusNotFound, "LOAN_NOT_FOUND")
	// The business's form is the business's, the FI's the FI's.
	require.Equal(t, http.StatusForbidden, w.fi.call(http.MethodGet, "/api/loans/"+l.ID+"/repayments", nil).Code)
	require.Equal(t, http.StatusForbidden, w.biz.call(http.MethodGet, "/api/fi/loans/"+l.ID+"/remittances", nil).Code)
}
