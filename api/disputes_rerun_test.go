package api

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger/chart"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// TestDisputeDecidedAfterItsWorkflowEnded: a reversal is posted and its record step fails (the
// database refuses it, as a step out of retries would end), so the dispute stays
// UNDER_INVESTIGATION with the disputed transaction reversed, and its workflow holds the decision:
// every other decision is refused. An operator terminates the run. The next decision starts a new
// run under the dispute's id: an adjustment (a second refund) and a no-action (the refund left
// unrecorded) are refused 409 DISPUTE_OTHER_DECISION_POSTED with nothing posted, and a reversal
// records the reversal the ledger holds, posting nothing (found by an audit: once its run had
// ended the dispute could not be decided at all, every decision answered 500).
func TestDisputeDecidedAfterItsWorkflowEnded(t *testing.T) {
	t.Parallel()
	s := newDisputeStack(t)
	d, tx := s.opened(t, 30_000)
	ctx := context.Background()
	super, err := pgx.Connect(ctx, testkit.PG(t).SuperDSN(s.d.Name))
	require.NoError(t, err)
	defer func() { _ = super.Close(ctx) }()
	_, err = super.Exec(ctx, `CREATE FUNCTION app.test_refuse_decision() RETURNS trigger LANGUAGE plpgsql
		AS $$ BEGIN RAISE EXCEPTION 'test: the decision is not recorded'; END $$;
		CREATE TRIGGER test_refuse_decision BEFORE UPDATE ON app.disputes FOR EACH ROW
		WHEN (NEW.decision IS DISTINCT FROM OLD.decision) EXECUTE FUNCTION app.test_refuse_decision()`)
	require.NoError(t, err)

	rec := s.decide(s.operator, d.ID, map[string]any{"decision": "REVERSAL", "reason": "not theirs"})
	requireStatus(t, rec, http.StatusConflict, "DISPUTE_INVALID_STATE")
	orig := s.txStatus(t, tx)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_REVERSED, orig.GetStatus(), "the reversal is posted")
	reversal := orig.GetReversedByTransactionId()
	require.Zero(t, s.balance(t, chart.EmployeeReceivable(s.emp)))
	require.Equal(t, "UNDER_INVESTIGATION", s.detail(t, d.ID).Status, "and not recorded")
	requireStatus(t, s.decide(s.operator, d.ID, map[string]any{"decision": "NO_ACTION", "reason": "x"}), http.StatusConflict,
		"DISPUTE_INVALID_STATE")

	// The operator ends the stuck run; the database takes decisions again.
	wf := disputes.WorkflowIDOf(s.tenant, d.ID)
	require.NoError(t, s.tc.TerminateWorkflow(ctx, wf, "", "test: the operator ends the stuck run"))
	_, err = super.Exec(ctx, `DROP TRIGGER test_refuse_decision ON app.disputes`)
	require.NoError(t, err)

	rec = s.admin.call(http.MethodPost, "/api/admin/disputes/"+d.ID+"/adjustment-approvals", map[string]any{"decisionReason": "refund"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	a := decode[disputeApprovalJSON](t, rec)
	adjust := map[string]any{"decision": "ADJUSTMENT", "reason": "refund",
		"approval": map[string]any{"approvedBy": a.ApprovedBy, "expiresAt": a.ExpiresAt.Format(time.RFC3339), "signature": a.Signature}}
	requireStatus(t, s.decide(s.operator, d.ID, adjust), http.StatusConflict, "DISPUTE_OTHER_DECISION_POSTED")
	requireStatus(t, s.decide(s.operator, d.ID, map[string]any{"decision": "NO_ACTION", "reason": "the advance was taken"}),
		http.StatusConflict, "DISPUTE_OTHER_DECISION_POSTED")
	require.Zero(t, s.balance(t, chart.EmployeeReceivable(s.emp)), "nothing refunded twice")
	require.Equal(t, "UNDER_INVESTIGATION", s.detail(t, d.ID).Status)

	rec = s.decide(s.operator, d.ID, map[string]any{"decision": "REVERSAL", "reason": "not theirs, recorded"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[disputeJSON](t, rec)
	require.Equal(t, "RESOLVED_REVERSAL", got.Status)
	require.NotNil(t, got.ReversalTransactionID)
	require.Equal(t, reversal, *got.ReversalTransactionID, "the reversal the ledger holds")
	require.Equal(t, reversal, s.txStatus(t, tx).GetReversedByTransactionId())
	require.Zero(t, s.balance(t, chart.EmployeeReceivable(s.emp)), "reversed once")
	held, err := (&activities.Disputes{DB: s.d.App, Ledger: s.ledger}).Postings(ctx, activities.DisputePostingsInput{
		Run: activities.Run{TenantID: s.tenant, WorkflowID: wf}, DisputeID: d.ID})
	require.NoError(t, err)
	require.Equal(t, activities.DisputePostings{ReversalTxID: reversal}, held, "no adjustment posted")
	requireLogMatches(t, s.detail(t, d.ID))
	require.Equal(t, 1, s.tenantCount(s.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'dispute.decided.v1'`))
	require.Equal(t, 2, s.tenantCount(s.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'DecideDispute' AND outcome = 'DENIED'
		AND details->>'code' = 'DISPUTE_OTHER_DECISION_POSTED'`))
}
