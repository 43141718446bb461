package api

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
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

// landingLedger is the worker's way to the ledger, in which an ended run's posting lands right
// after the new run has looked the dispute's decision key up and found nothing: armed with a key,
// the first look-up of it that finds nothing runs land, once (an attempt of the ended run's
// ledger step still on its way when the new run looked).
type landingLedger struct {
	ledgerv1.LedgerServiceClient
	mu   sync.Mutex
	key  string
	land func() error
	err  error // land's answer
}

func (l *landingLedger) arm(key string, land func() error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.key, l.land, l.err = key, land, nil
}

func (l *landingLedger) landed() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

func (l *landingLedger) GetTransaction(ctx context.Context, in *ledgerv1.GetTransactionRequest, opts ...grpc.CallOption) (*ledgerv1.GetTransactionResponse, error) {
	resp, err := l.LedgerServiceClient.GetTransaction(ctx, in, opts...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.land != nil && in.GetIdempotencyKey() == l.key && grpcstatus.Code(err) == codes.NotFound {
		l.err, l.land = l.land(), nil
	}
	return resp, err
}

// TestDisputeDecisionMeetsAnEndedRunsPostingInFlight: an ended run's reversal lands in the ledger
// just after a new run under the dispute's id looked the dispute's keys up (the window
// DISPUTE_OTHER_DECISION_POSTED's look-up alone left open, up to the ledger step's timeout). An
// adjustment decided then posts under the same decision key and is refused
// DISPUTE_OTHER_DECISION_POSTED, the employee refunded once; a no-action decided then finds the
// reversal when it closes the key and is refused too; the reversal, decided next, records the
// posting that landed. A reversal landing after a no-action closed the key is refused by the
// ledger (KEY_VOIDED) and moves nothing; a reversal decided after an ended run closed the key for a
// no-action it never recorded is refused DISPUTE_POSTING_CLOSED, whose message names the
// decisions left. Found by an audit: with a key per kind both the reversal
// and the adjustment posted, and the no-action closed the dispute with the money moved.
func TestDisputeDecisionMeetsAnEndedRunsPostingInFlight(t *testing.T) {
	t.Parallel()
	ll := &landingLedger{}
	s := newDisputeStackWith(t, func(c ledgerv1.LedgerServiceClient) ledgerv1.LedgerServiceClient {
		ll.LedgerServiceClient = c
		return ll
	})
	ctx := context.Background()
	receivable := chart.EmployeeReceivable(s.emp)
	endedRunsReversal := func(tx, key string) func() error {
		return func() error {
			_, err := s.ledger.Reverse(ctx, &ledgerv1.ReverseRequest{TenantId: s.tenant, TransactionId: tx,
				Reason: "the ended run's reversal", IdempotencyKey: key})
			return err
		}
	}
	reversed := func(d disputeJSON, tx string) {
		t.Helper()
		rec := s.decide(s.operator, d.ID, map[string]any{"decision": "REVERSAL", "reason": "recorded"})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		got := decode[disputeJSON](t, rec)
		require.Equal(t, "RESOLVED_REVERSAL", got.Status)
		require.NotNil(t, got.ReversalTransactionID)
		require.Equal(t, s.txStatus(t, tx).GetReversedByTransactionId(), *got.ReversalTransactionID, "the reversal that landed")
		requireLogMatches(t, s.detail(t, d.ID))
	}

	// An adjustment.
	d, tx := s.opened(t, 30_000)
	key := activities.DisputeDecisionKey(disputes.WorkflowIDOf(s.tenant, d.ID))
	ll.arm(key, endedRunsReversal(tx, key))
	rec := s.admin.call(http.MethodPost, "/api/admin/disputes/"+d.ID+"/adjustment-approvals", map[string]any{"decisionReason": "refund"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	a := decode[disputeApprovalJSON](t, rec)
	requireStatus(t, s.decide(s.operator, d.ID, map[string]any{"decision": "ADJUSTMENT", "reason": "refund",
		"approval": map[string]any{"approvedBy": a.ApprovedBy, "expiresAt": a.ExpiresAt.Format(time.RFC3339), "signature": a.Signature}}),
		http.StatusConflict, "DISPUTE_OTHER_DECISION_POSTED")
	require.NoError(t, ll.landed())
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_REVERSED, s.txStatus(t, tx).GetStatus())
	require.Zero(t, s.balance(t, receivable), "refunded once: no adjustment beside the reversal")
	require.Zero(t, s.balance(t, chart.MiscLoss))
	require.Equal(t, "UNDER_INVESTIGATION", s.detail(t, d.ID).Status)
	requireStatus(t, s.decide(s.operator, d.ID, map[string]any{"decision": "NO_ACTION", "reason": "x"}), http.StatusConflict,
		"DISPUTE_OTHER_DECISION_POSTED")
	reversed(d, tx)
	// This run's history and the no-action's below (WAGERAIL_RECORD_HISTORY=1), replayed by
	// workflows.TestDisputeReplay.
	testkit.RecordHistory(t, s.tc, disputes.WorkflowIDOf(s.tenant, d.ID), "", "../workflows/testdata/dispute_key_conflict_history.json")

	// A no-action.
	d2, tx2 := s.opened(t, 20_000)
	key2 := activities.DisputeDecisionKey(disputes.WorkflowIDOf(s.tenant, d2.ID))
	ll.arm(key2, endedRunsReversal(tx2, key2))
	requireStatus(t, s.decide(s.operator, d2.ID, map[string]any{"decision": "NO_ACTION", "reason": "payslip"}), http.StatusConflict,
		"DISPUTE_OTHER_DECISION_POSTED")
	require.NoError(t, ll.landed())
	require.Equal(t, "UNDER_INVESTIGATION", s.detail(t, d2.ID).Status, "not closed with the money moved")
	reversed(d2, tx2)
	require.Zero(t, s.balance(t, receivable))

	// A reversal landing after a no-action closed the key.
	d3, tx3 := s.opened(t, 10_000)
	key3 := activities.DisputeDecisionKey(disputes.WorkflowIDOf(s.tenant, d3.ID))
	rec = s.decide(s.operator, d3.ID, map[string]any{"decision": "NO_ACTION", "reason": "payslip"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "CLOSED_NO_ACTION", decode[disputeJSON](t, rec).Status)
	testkit.RecordHistory(t, s.tc, disputes.WorkflowIDOf(s.tenant, d3.ID), "", "../workflows/testdata/dispute_no_action_history.json")
	require.ErrorIs(t, endedRunsReversal(tx3, key3)(), ledger.ErrKeyVoided)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, s.txStatus(t, tx3).GetStatus(), "nothing reversed")
	require.EqualValues(t, 10_000, s.balance(t, receivable))

	// An ended run closed the key for a no-action it never recorded: a reversal is refused and
	// moves nothing, the no-action is recorded.
	d4, tx4 := s.opened(t, 5_000)
	key4 := activities.DisputeDecisionKey(disputes.WorkflowIDOf(s.tenant, d4.ID))
	voided, err := s.ledger.VoidPending(ctx, &ledgerv1.VoidPendingRequest{TenantId: s.tenant, IdempotencyKey: key4, Reason: "the ended run's no-action"})
	require.NoError(t, err)
	require.True(t, voided.GetKeyVoided())
	rec = s.decide(s.operator, d4.ID, map[string]any{"decision": "REVERSAL", "reason": "x"})
	requireStatus(t, rec, http.StatusConflict, "DISPUTE_POSTING_CLOSED")
	require.Contains(t, rec.Body.String(), "decide NO_ACTION or CHARGEBACK")
	require.Equal(t, 1, s.tenantCount(s.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'DecideDispute'
		AND outcome = 'DENIED' AND target_id = '`+d4.ID+`' AND details->>'code' = 'DISPUTE_POSTING_CLOSED'`))
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, s.txStatus(t, tx4).GetStatus())
	rec = s.decide(s.operator, d4.ID, map[string]any{"decision": "NO_ACTION", "reason": "payslip"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.EqualValues(t, 15_000, s.balance(t, receivable))
	require.Equal(t, 2, s.tenantCount(s.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'dispute.decided.v1' AND payload->>'decision' = 'REVERSAL'`))
	require.Equal(t, 2, s.tenantCount(s.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'dispute.decided.v1' AND payload->>'decision' = 'NO_ACTION'`))
}
