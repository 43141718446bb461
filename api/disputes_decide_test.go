package api

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notifications"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/chart"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// disputeStack is the dispute world with the embedded Temporal server and a worker running the
// dispute workflow over the real activities (Postgres, the ledger over gRPC), a platform
// operator, two platform admins, and the adjustment key configured.
type disputeStack struct {
	*disputeWorld
	tc              client.Client
	operator, admin *apiClient
	admin2          *apiClient
}

func newDisputeStack(t testing.TB) *disputeStack {
	t.Helper()
	return newDisputeStackWith(t, nil)
}

// newDisputeStackWith is the dispute stack whose worker reaches the ledger through wrap's client
// (nil: the ledger's own).
func newDisputeStackWith(t testing.TB, wrap func(ledgerv1.LedgerServiceClient) ledgerv1.LedgerServiceClient) *disputeStack {
	t.Helper()
	s := &disputeStack{disputeWorld: newDisputeWorld(t)}
	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace(),
		Logger: sdklog.NewStructuredLogger(slog.New(stackLogHandler()))})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	queue := testkit.Unique("disputes")
	s.tc = tc
	s.srv.deps.Temporal, s.srv.deps.TaskQueue = tc, queue
	s.srv.deps.AdjustmentKeys = [][]byte{disputeAdjustmentKey}
	wk := worker.New(tc, queue, workflows.WorkerOptions())
	steps := s.ledger
	if wrap != nil {
		steps = ledger.NewClient(wrap(s.ledgerRPC), ledger.ClientOptions{})
	}
	workflows.Register(wk, workflows.Deps{Disputes: &activities.Disputes{DB: s.d.App, Ledger: steps}})
	require.NoError(t, wk.Start())
	t.Cleanup(wk.Stop)
	s.operator = s.authFixture.operator("support@dsp.test")
	s.admin = s.platformAdmin("admin@dsp.test")
	s.admin2 = s.platformAdmin("admin2@dsp.test")
	return s
}

// opened opens a dispute of a new transaction of amount on the employee's receivable and waits
// for its workflow to start the investigation.
func (s *disputeStack) opened(t *testing.T, amount int64) (disputeJSON, string) {
	t.Helper()
	tx := s.post(t, s.tenant, s.emp, amount)
	rec := s.open(t, s.me, tx)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	d := decode[disputeJSON](t, rec)
	require.Eventually(t, func() bool { return s.detail(t, d.ID).Status == "UNDER_INVESTIGATION" }, 20*time.Second, 50*time.Millisecond)
	return d, tx
}

func (s *disputeStack) detail(t *testing.T, id string) disputeDetailJSON {
	t.Helper()
	rec := s.owner.call(http.MethodGet, "/api/disputes/"+id, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return decode[disputeDetailJSON](t, rec)
}

// requireLogMatches: the state read back is the latest event's, and every event's status is a
// state the dispute went through in order.
func requireLogMatches(t *testing.T, d disputeDetailJSON) {
	t.Helper()
	require.NotEmpty(t, d.Events)
	require.Equal(t, d.Status, d.Events[len(d.Events)-1].Status, "the latest event is the effective state")
	require.Equal(t, "OPENED", d.Events[0].EventType)
}

func (s *disputeStack) decide(who *apiClient, id string, body map[string]any) *httptest.ResponseRecorder {
	return who.call(http.MethodPost, "/api/disputes/"+id+"/decisions", body, "Idempotency-Key", loanKey())
}

func (s *disputeStack) txStatus(t *testing.T, id string) *ledgerv1.Transaction {
	t.Helper()
	got, err := s.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: s.tenant, TransactionId: id})
	require.NoError(t, err)
	return got.GetTransaction()
}

func (s *disputeStack) balance(t *testing.T, account string) int64 {
	t.Helper()
	res, err := s.ledger.GetBalance(context.Background(), &ledgerv1.GetBalanceRequest{TenantId: s.tenant, AccountName: account})
	require.NoError(t, err)
	return res.GetBalance().GetPostedDebitsSantim() - res.GetBalance().GetPostedCreditsSantim()
}

// TestDisputeEvidenceAndDecisions: evidence through the workflow's update (200 once recorded); every decision, its
// ledger effect (none, a reversal) and its event; the role matrix; every illegal move refused with
// its code; reopen.
func TestDisputeEvidenceAndDecisions(t *testing.T) {
	t.Parallel()
	s := newDisputeStack(t)
	d, tx := s.opened(t, 250_000)

	// Evidence: an upload of the organization, by key.
	rec := uploadsSend(s.owner, "", uploadsFile("receipt.pdf", "application/pdf", uploadsPDF))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	key := decode[uploadJSON](t, rec).Key
	rec = uploadsSend(s.other, "", uploadsFile("theirs.pdf", "application/pdf", uploadsPDF))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	theirKey := decode[uploadJSON](t, rec).Key
	ev := func(who *apiClient, id string, keys ...string) *httptest.ResponseRecorder {
		return who.call(http.MethodPost, "/api/disputes/"+id+"/evidence", map[string]any{"uploadKeys": keys, "note": "payslip shows no advance"})
	}
	requireStatus(t, ev(s.owner, d.ID, theirKey), http.StatusNotFound, "UPLOAD_NOT_FOUND")
	requireStatus(t, ev(s.other, d.ID, theirKey), http.StatusNotFound, "DISPUTE_NOT_FOUND")
	require.Equal(t, http.StatusForbidden, ev(s.me, d.ID, key).Code, "an employee is no admin")
	rec = ev(s.owner, d.ID, key)
	require.Equal(t, http.StatusOK, rec.Code, "answered once recorded: %s", rec.Body.String())
	require.Equal(t, "UNDER_INVESTIGATION", decode[disputeEvidenceJSON](t, rec).Dispute.Status)
	evs := s.detail(t, d.ID).Events
	require.Equal(t, "EVIDENCE_ATTACHED", evs[len(evs)-1].EventType)
	require.Equal(t, 1, s.tenantCount(s.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'dispute.evidence_attached.v1'`))
	// Two pieces sent under one caller-chosen X-Request-Id are two pieces, both recorded (the
	// request id is the caller's correlation, not the update's identity).
	for _, name := range []string{"letter-1.pdf", "letter-2.pdf"} {
		rec = uploadsSend(s.owner, "", uploadsFile(name, "application/pdf", uploadsPDF))
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		k := decode[uploadJSON](t, rec).Key
		rec = s.owner.call(http.MethodPost, "/api/disputes/"+d.ID+"/evidence", map[string]any{"uploadKeys": []string{k}}, "X-Request-Id", "req-evidence-1")
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Equal(t, []string{k}, decode[disputeEvidenceJSON](t, rec).UploadKeys)
	}
	require.Equal(t, 3, s.tenantCount(s.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'dispute.evidence_attached.v1'`))

	// Deciding: operators and platform admins only.
	noAction := map[string]any{"decision": "NO_ACTION", "reason": "the advance was taken"}
	requireStatus(t, s.decide(s.owner, d.ID, noAction), http.StatusForbidden, "OPERATOR_REQUIRED")
	requireStatus(t, s.decide(s.me, d.ID, noAction), http.StatusForbidden, "OPERATOR_REQUIRED")
	requireStatus(t, s.decide(s.operator, "dsp_nope", noAction), http.StatusNotFound, "DISPUTE_NOT_FOUND")
	rec = s.decide(s.operator, d.ID, noAction)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	closed := decode[disputeJSON](t, rec)
	require.Equal(t, "CLOSED_NO_ACTION", closed.Status)
	require.Equal(t, "NO_ACTION", *closed.Decision)
	require.NotNil(t, closed.ClosedAt)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, s.txStatus(t, tx).GetStatus(), "no ledger entry")
	require.EqualValues(t, 250_000, s.balance(t, chart.EmployeeReceivable(s.emp)))
	got := s.detail(t, d.ID)
	requireLogMatches(t, got)
	require.Equal(t, "DECIDED", got.Events[len(got.Events)-1].EventType)
	require.Equal(t, 1, s.tenantCount(s.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'dispute.decided.v1'`))
	require.Equal(t, 1, s.tenantCount(s.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'dispute.decided.v1' AND payload->>'decision' = 'NO_ACTION'`))
	require.Nil(t, got.CustomerNotifiedAt, "not told yet")

	// The decision reaches its customer, the employee who raised it (the notification consumer
	// over the event the decision wrote): the dispute records when, as a NOTIFIED event that
	// leaves its state as it was; a second delivery records nothing more.
	var decided outbox.Event
	require.NoError(t, db.InTenantTx(context.Background(), s.d.App, s.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT event_id::text, type, payload FROM app.outbox WHERE type = 'dispute.decided.v1'`).
			Scan(&decided.ID, &decided.Type, &decided.Payload)
	}))
	decided.TenantID = s.tenant
	told := &notify.Memory{}
	consumer := &notifications.Consumer{DB: s.d.App, Mailer: told, Texter: told}
	for range 2 {
		require.NoError(t, consumer.Consume(context.Background(), decided))
	}
	require.Len(t, told.Emails(), 1)
	require.Equal(t, "Your dispute has been decided", told.Emails()[0].Subject)
	got = s.detail(t, d.ID)
	requireLogMatches(t, got)
	require.NotNil(t, got.CustomerNotifiedAt)
	require.Nil(t, got.PartnerNotifiedAt)
	require.Equal(t, "NOTIFIED", got.Events[len(got.Events)-1].EventType)
	require.Equal(t, "CLOSED_NO_ACTION", got.Status)
	require.Equal(t, 1, s.tenantCount(s.tenant, `SELECT count(*) FROM app.dispute_events WHERE dispute_id = $1 AND event_type = 'NOTIFIED'`, d.ID))

	// The same key answers the same; a second decision, evidence, an approval: refused.
	k := loanKey()
	// (a fresh key on a decided dispute)
	requireStatus(t, s.operator.call(http.MethodPost, "/api/disputes/"+d.ID+"/decisions", noAction, "Idempotency-Key", k), http.StatusConflict, "DISPUTE_INVALID_STATE")
	requireStatus(t, s.decide(s.operator, d.ID, map[string]any{"decision": "REVERSAL", "reason": "x"}), http.StatusConflict, "DISPUTE_INVALID_STATE")
	requireStatus(t, ev(s.owner, d.ID, key), http.StatusConflict, "DISPUTE_INVALID_STATE")
	requireStatus(t, s.admin.call(http.MethodPost, "/api/admin/disputes/"+d.ID+"/adjustment-approvals", map[string]any{"decisionReason": "x"}),
		http.StatusConflict, "DISPUTE_INVALID_STATE")

	// Reopen: platform admins only, once, CLOSED_NO_ACTION only.
	reopen := func(who *apiClient, id string) *httptest.ResponseRecorder {
		return who.call(http.MethodPost, "/api/admin/disputes/"+id+"/reopen", map[string]any{"reason": "a new payslip shows the deduction twice"})
	}
	require.Equal(t, http.StatusForbidden, reopen(s.operator, d.ID).Code)
	require.Equal(t, http.StatusForbidden, reopen(s.owner, d.ID).Code)
	requireStatus(t, reopen(s.admin, "dsp_nope"), http.StatusNotFound, "DISPUTE_NOT_FOUND")
	rec = reopen(s.admin, d.ID)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	re := decode[disputeReopenedJSON](t, rec)
	require.Equal(t, "REOPENED", re.Reopened.Status)
	require.Equal(t, d.ID, *re.Dispute.ReopensDisputeID)
	require.Equal(t, tx, re.Dispute.LedgerTransactionID)
	require.Equal(t, 1, s.tenantCount(s.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'dispute.reopened.v1'`))
	requireStatus(t, reopen(s.admin, d.ID), http.StatusConflict, "DISPUTE_ALREADY_REOPENED")
	requireLogMatches(t, s.detail(t, d.ID))
	require.Eventually(t, func() bool { return s.detail(t, re.Dispute.ID).Status == "UNDER_INVESTIGATION" }, 20*time.Second, 50*time.Millisecond)

	// Reversal of the reopened dispute's transaction, through the workflow: its id recorded.
	rec = s.decide(s.admin, re.Dispute.ID, map[string]any{"decision": "REVERSAL", "reason": "deducted twice"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rev := decode[disputeJSON](t, rec)
	require.Equal(t, "RESOLVED_REVERSAL", rev.Status)
	require.NotNil(t, rev.ReversalTransactionID)
	orig := s.txStatus(t, tx)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_REVERSED, orig.GetStatus())
	require.Equal(t, *rev.ReversalTransactionID, orig.GetReversedByTransactionId())
	require.Zero(t, s.balance(t, chart.EmployeeReceivable(s.emp)))
	// The posting is found by its key (what the workflow asks when the step's answer is lost);
	// a key that posted nothing finds nothing.
	steps := &activities.Disputes{DB: s.d.App, Ledger: s.ledger}
	wf := disputes.WorkflowIDOf(s.tenant, re.Dispute.ID)
	run := activities.Run{TenantID: s.tenant, WorkflowID: wf}
	found, err := steps.PostingOf(context.Background(), activities.DisputePostingInput{Run: run, DisputeID: re.Dispute.ID,
		IdempotencyKey: activities.DisputeDecisionKey(wf)})
	require.NoError(t, err)
	require.Equal(t, *rev.ReversalTransactionID, found)
	found, err = steps.PostingOf(context.Background(), activities.DisputePostingInput{Run: run, DisputeID: re.Dispute.ID,
		IdempotencyKey: wf + ":adjustment"})
	require.NoError(t, err)
	require.Empty(t, found)
	requireLogMatches(t, s.detail(t, re.Dispute.ID))
	requireStatus(t, reopen(s.admin, re.Dispute.ID), http.StatusConflict, "DISPUTE_INVALID_STATE")

	// Chargeback: the partner's reference, no ledger entry.
	c, ctx := s.opened(t, 3_000)
	noRef := map[string]any{"decision": "CHARGEBACK", "reason": "card network"}
	require.Error(t, s.operator.documentVerdict(http.MethodPost, "/api/disputes/"+c.ID+"/decisions", noRef, "Idempotency-Key", loanKey()),
		"the document refuses a chargeback without its reference")
	requireStatus(t, s.operator.hostile(http.MethodPost, "/api/disputes/"+c.ID+"/decisions", noRef, "Idempotency-Key", loanKey()),
		http.StatusBadRequest, "INVALID_REQUEST")
	rec = s.decide(s.operator, c.ID, map[string]any{"decision": "CHARGEBACK", "reason": "card network", "partnerChargebackRef": "CB-2026-0001"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	cb := decode[disputeJSON](t, rec)
	require.Equal(t, "ESCALATED_TO_PARTNER", cb.Status)
	require.Equal(t, "CB-2026-0001", *cb.PartnerChargebackRef)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, s.txStatus(t, ctx).GetStatus())
	requireLogMatches(t, s.detail(t, c.ID))
	require.Equal(t, 3, s.tenantCount(s.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'dispute.decided.v1'`))
}

// TestDisputeAdjustmentTwoPeople: an adjustment is refused with one approver, with the same person
// twice, with a forged or mismatched signature; approved by a platform admin and decided by an
// operator it posts Dr misc-loss / Cr the employee's receivable with the dispute's reason, its id
// stored with the decision; the key rotates.
func TestDisputeAdjustmentTwoPeople(t *testing.T) {
	t.Parallel()
	s := newDisputeStack(t)
	d, tx := s.opened(t, 40_000)
	const why = "advance not recoverable"
	approve := func(who *apiClient, reason string) disputeApprovalJSON {
		rec := who.call(http.MethodPost, "/api/admin/disputes/"+d.ID+"/adjustment-approvals", map[string]any{"decisionReason": reason})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		return decode[disputeApprovalJSON](t, rec)
	}
	adjust := func(who *apiClient, reason string, a *disputeApprovalJSON) *httptest.ResponseRecorder {
		body := map[string]any{"decision": "ADJUSTMENT", "reason": reason}
		if a != nil {
			body["approval"] = map[string]any{"approvedBy": a.ApprovedBy, "expiresAt": a.ExpiresAt.Format(time.RFC3339), "signature": a.Signature}
		}
		return s.decide(who, d.ID, body)
	}
	require.Equal(t, http.StatusForbidden, s.operator.call(http.MethodPost, "/api/admin/disputes/"+d.ID+"/adjustment-approvals",
		map[string]any{"decisionReason": why}).Code, "an operator does not approve")

	// One approver.
	requireStatus(t, adjust(s.operator, why, nil), http.StatusUnprocessableEntity, "DISPUTE_APPROVAL_REQUIRED")
	// The same person twice: the approving admin decides.
	a := approve(s.admin, why)
	require.EqualValues(t, 40_000, a.AmountSantim)
	requireStatus(t, adjust(s.admin, why, &a), http.StatusUnprocessableEntity, "DISPUTE_SELF_APPROVAL")
	// A forged signature, another reason than approved, another approver named, an expired one.
	forged := a
	forged.Signature = strings.Repeat("A", 43)
	requireStatus(t, adjust(s.operator, why, &forged), http.StatusUnprocessableEntity, "DISPUTE_APPROVAL_INVALID")
	requireStatus(t, adjust(s.operator, why+" (edited)", &a), http.StatusUnprocessableEntity, "DISPUTE_APPROVAL_INVALID")
	other := a
	other.ApprovedBy = "usr_someone_else"
	requireStatus(t, adjust(s.operator, why, &other), http.StatusUnprocessableEntity, "DISPUTE_APPROVAL_INVALID")
	// Rotation: an approval made under the old key, verified after the new key took over;
	// a key taken out of the list verifies nothing.
	old := []byte("the-previous-adjustment-key-of-32-bytes-at-least")
	s.srv.deps.AdjustmentKeys = [][]byte{old}
	underOld := approve(s.admin2, why)
	s.srv.deps.AdjustmentKeys = [][]byte{disputeAdjustmentKey}
	requireStatus(t, adjust(s.operator, why, &underOld), http.StatusUnprocessableEntity, "DISPUTE_APPROVAL_INVALID")
	s.advance(25 * time.Hour)
	s.operator, s.owner = s.signIn("support@dsp.test"), s.signIn("owner@dsp.test")
	requireStatus(t, adjust(s.operator, why, &a), http.StatusUnprocessableEntity, "DISPUTE_APPROVAL_INVALID") // expired
	require.Equal(t, 0, s.tenantCount(s.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'dispute.decided.v1'`))
	require.EqualValues(t, 40_000, s.balance(t, chart.EmployeeReceivable(s.emp)), "nothing posted")
	require.Equal(t, "UNDER_INVESTIGATION", s.detail(t, d.ID).Status)

	s.admin2 = s.signIn("admin2@dsp.test")
	s.srv.deps.AdjustmentKeys = [][]byte{old}
	fresh := approve(s.admin2, why)
	s.srv.deps.AdjustmentKeys = [][]byte{disputeAdjustmentKey, old} // the ledger's key signs, the old one still verifies
	rec := adjust(s.operator, why, &fresh)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	done := decode[disputeJSON](t, rec)
	require.Equal(t, "RESOLVED_ADJUSTMENT", done.Status)
	require.Equal(t, fresh.ApprovedBy, *done.ApprovedBy)
	require.NotEqual(t, *done.DecisionBy, *done.ApprovedBy, "two people")
	require.NotNil(t, done.AdjustmentTransactionID)
	adj := s.txStatus(t, *done.AdjustmentTransactionID)
	require.Equal(t, ledgerv1.TransactionKind_TRANSACTION_KIND_ADJUSTMENT, adj.GetKind())
	require.Equal(t, activities.DisputeAdjustmentSource, adj.GetAdjustment().GetSource())
	require.Equal(t, d.ID+":"+why, adj.GetAdjustment().GetReason())
	require.Equal(t, fresh.ApprovedBy, adj.GetAdjustment().GetApprovedBy())
	require.Equal(t, *done.DecisionBy, adj.GetAdjustment().GetRequestedBy())
	require.Zero(t, s.balance(t, chart.EmployeeReceivable(s.emp)), "the receivable is cleared")
	require.EqualValues(t, 40_000, s.balance(t, chart.MiscLoss))
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, s.txStatus(t, tx).GetStatus(), "the disputed transaction is not changed")
	got := s.detail(t, d.ID)
	requireLogMatches(t, got)
	require.Equal(t, 1, s.tenantCount(s.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'dispute.decided.v1' AND payload->>'decision' = 'ADJUSTMENT'`))
	require.Equal(t, 3, s.tenantCount(s.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'ApproveDisputeAdjustment'`))
	// The employee sees the decision and its reason, not the staff's user ids.
	rec = s.me.call(http.MethodGet, "/api/me/disputes", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	mine := decode[disputeListJSON](t, rec)
	require.Len(t, mine.Items, 1)
	require.Equal(t, "RESOLVED_ADJUSTMENT", mine.Items[0].Status)
	require.Nil(t, mine.Items[0].DecisionBy)
	require.Nil(t, mine.Items[0].ApprovedBy)
	require.NotContains(t, rec.Body.String(), fresh.ApprovedBy)
}

// TestDisputeWorkHostileInput: each field of the new routes refused with a 400, nothing moved.
func TestDisputeWorkHostileInput(t *testing.T) {
	t.Parallel()
	s := newDisputeStack(t)
	d, _ := s.opened(t, 1_000)
	sig := strings.Repeat("A", 43)
	for name, body := range map[string]any{
		"no decision":            map[string]any{"reason": "x"},
		"unknown decision":       map[string]any{"decision": "REFUND", "reason": "x"},
		"no reason":              map[string]any{"decision": "NO_ACTION"},
		"control in reason":      map[string]any{"decision": "NO_ACTION", "reason": "a\u0007b"},
		"reason too long":        map[string]any{"decision": "NO_ACTION", "reason": strings.Repeat("x", 1001)},
		"ref without chargeback": map[string]any{"decision": "NO_ACTION", "reason": "x", "partnerChargebackRef": "CB1"},
		"ref with a space":       map[string]any{"decision": "CHARGEBACK", "reason": "x", "partnerChargebackRef": "CB 1"},
		"approval not adjust":    map[string]any{"decision": "NO_ACTION", "reason": "x", "approval": map[string]any{"approvedBy": "u", "expiresAt": "2027-01-01T00:00:00Z", "signature": sig}},
		"approval bad time":      map[string]any{"decision": "ADJUSTMENT", "reason": "x", "approval": map[string]any{"approvedBy": "u", "expiresAt": "tomorrow", "signature": sig}},
		"approval bad sig":       map[string]any{"decision": "ADJUSTMENT", "reason": "x", "approval": map[string]any{"approvedBy": "u", "expiresAt": "2027-01-01T00:00:00Z", "signature": "!!"}},
		"approval no approver":   map[string]any{"decision": "ADJUSTMENT", "reason": "x", "approval": map[string]any{"expiresAt": "2027-01-01T00:00:00Z", "signature": sig}},
		"unknown field":          map[string]any{"decision": "NO_ACTION", "reason": "x", "amountSantim": 5},
	} {
		require.Error(t, s.operator.documentVerdict(http.MethodPost, "/api/disputes/"+d.ID+"/decisions", body, "Idempotency-Key", loanKey()),
			"%s: the document refuses it too", name)
		rec := s.operator.hostile(http.MethodPost, "/api/disputes/"+d.ID+"/decisions", body, "Idempotency-Key", loanKey())
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", name, rec.Body.String())
	}
	for name, body := range map[string]any{
		"no keys":        map[string]any{"uploadKeys": []string{}},
		"not a key":      map[string]any{"uploadKeys": []string{"../etc/passwd"}},
		"twice the same": map[string]any{"uploadKeys": []string{"upl_01890000-0000-7000-8000-000000000000", "upl_01890000-0000-7000-8000-000000000000"}},
		"too many":       map[string]any{"uploadKeys": make([]string, 21)},
		"bad note":       map[string]any{"uploadKeys": []string{"upl_01890000-0000-7000-8000-000000000000"}, "note": "\u0000"},
	} {
		rec := s.owner.hostile(http.MethodPost, "/api/disputes/"+d.ID+"/evidence", body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", name, rec.Body.String())
	}
	for _, path := range []string{"/api/admin/disputes/" + d.ID + "/reopen", "/api/admin/disputes/" + d.ID + "/adjustment-approvals"} {
		for _, body := range []any{map[string]any{}, map[string]any{"reason": "", "decisionReason": ""}, map[string]any{"reason": 5, "decisionReason": 5}} {
			rec := s.admin.hostile(http.MethodPost, path, body)
			require.Equal(t, http.StatusBadRequest, rec.Code, "%s %v: %s", path, body, rec.Body.String())
		}
	}
	require.Equal(t, "UNDER_INVESTIGATION", s.detail(t, d.ID).Status)
	require.Zero(t, s.tenantCount(s.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'dispute.decided.v1'`))
}

// TestDisputePlatformEvidenceAndRefusalsAudited: a platform admin attaches evidence (an upload
// they made for the organization) through POST /api/admin/disputes/<id>/evidence, recorded by the
// workflow with them as actor; the route is theirs alone. Every refused decision — before the
// workflow (no approval, self-approval) and by it (decided already) — is audited DENIED
// DecideDispute with its code, and nothing is decided by a refusal.
func TestDisputePlatformEvidenceAndRefusalsAudited(t *testing.T) {
	t.Parallel()
	s := newDisputeStack(t)
	d, _ := s.opened(t, 7_000)
	rec := s.admin.call(http.MethodPost, "/api/admin/disputes/"+d.ID+"/adjustment-approvals", map[string]any{"decisionReason": "probe"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	adminID := decode[disputeApprovalJSON](t, rec).ApprovedBy

	rec = uploadsSend(s.admin, "?tenantId="+s.tenant, uploadsFile("bank-letter.pdf", "application/pdf", uploadsPDF))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	key := decode[uploadJSON](t, rec).Key
	rec = uploadsSend(s.other, "", uploadsFile("theirs.pdf", "application/pdf", uploadsPDF))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	theirKey := decode[uploadJSON](t, rec).Key
	ev := func(who *apiClient, id string, keys ...string) *httptest.ResponseRecorder {
		return who.call(http.MethodPost, "/api/admin/disputes/"+id+"/evidence", map[string]any{"uploadKeys": keys, "note": "the bank's letter"})
	}
	requireStatus(t, ev(s.owner, d.ID, key), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
	requireStatus(t, ev(s.operator, d.ID, key), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
	requireStatus(t, ev(s.admin, "dsp_nope", key), http.StatusNotFound, "DISPUTE_NOT_FOUND")
	requireStatus(t, ev(s.admin, d.ID, theirKey), http.StatusNotFound, "UPLOAD_NOT_FOUND")
	rec = ev(s.admin, d.ID, key)
	require.Equal(t, http.StatusOK, rec.Code, "answered once recorded: %s", rec.Body.String())
	require.Equal(t, []string{key}, decode[disputeEvidenceJSON](t, rec).UploadKeys)
	evs := s.detail(t, d.ID).Events
	last := evs[len(evs)-1]
	require.Equal(t, "EVIDENCE_ATTACHED", last.EventType)
	require.NotNil(t, last.ActorUserID)
	require.Equal(t, adminID, *last.ActorUserID)
	require.Equal(t, 1, s.tenantCount(s.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'dispute.evidence_attached.v1'`))

	denied := func(code string) int {
		return s.tenantCount(s.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'DecideDispute' AND outcome = 'DENIED'
			AND target_id = '`+d.ID+`' AND details->>'code' = '`+code+`'`)
	}
	adjust := map[string]any{"decision": "ADJUSTMENT", "reason": "not recoverable"}
	requireStatus(t, s.decide(s.operator, d.ID, adjust), http.StatusUnprocessableEntity, "DISPUTE_APPROVAL_REQUIRED")
	require.Equal(t, 1, denied("DISPUTE_APPROVAL_REQUIRED"))
	rec = s.admin.call(http.MethodPost, "/api/admin/disputes/"+d.ID+"/adjustment-approvals", map[string]any{"decisionReason": "not recoverable"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	a := decode[disputeApprovalJSON](t, rec)
	adjust["approval"] = map[string]any{"approvedBy": a.ApprovedBy, "expiresAt": a.ExpiresAt.Format(time.RFC3339), "signature": a.Signature}
	requireStatus(t, s.decide(s.admin, d.ID, adjust), http.StatusUnprocessableEntity, "DISPUTE_SELF_APPROVAL")
	require.Equal(t, 1, denied("DISPUTE_SELF_APPROVAL"))
	require.Equal(t, "UNDER_INVESTIGATION", s.detail(t, d.ID).Status, "a refusal decides nothing")
	require.Zero(t, s.tenantCount(s.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'DecideDispute' AND outcome = 'SUCCESS'`))

	rec = s.decide(s.operator, d.ID, map[string]any{"decision": "NO_ACTION", "reason": "the advance was taken"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	// Decided already: refused, audited.
	requireStatus(t, s.decide(s.operator, d.ID, map[string]any{"decision": "REVERSAL", "reason": "x"}), http.StatusConflict, "DISPUTE_INVALID_STATE")
	require.Equal(t, 1, denied("DISPUTE_INVALID_STATE"))
	require.Equal(t, 1, s.tenantCount(s.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'DecideDispute' AND outcome = 'SUCCESS'`))
	require.Equal(t, 3, s.tenantCount(s.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'DecideDispute' AND outcome = 'DENIED'`))
}

// Only a charge to the employee's account is disputed, for the sum of its debits there. A
// dispute's own refund (the reversal it posted) is refused DISPUTE_TRANSACTION_NOT_DISPUTABLE:
// found by an audit, it was disputed and refunded a second time (receivable −40,000). A
// transaction that both debits and credits the account is disputed for its debits only (the
// audit saw 800 for a 500 charge), and one whose debits there pass one amount's bound is
// refused with the same code, not a 500.
func TestDisputeOnlyCharges(t *testing.T) {
	t.Parallel()
	s := newDisputeStack(t)
	d, _ := s.opened(t, 40_000)
	rec := s.decide(s.operator, d.ID, map[string]any{"decision": "REVERSAL", "reason": "not theirs"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rev := decode[disputeJSON](t, rec)
	require.NotNil(t, rev.ReversalTransactionID)
	requireStatus(t, s.open(t, s.me, *rev.ReversalTransactionID), http.StatusConflict, "DISPUTE_TRANSACTION_NOT_DISPUTABLE")
	require.Zero(t, s.balance(t, chart.EmployeeReceivable(s.emp)))

	post := func(entries ...*ledgerv1.EntryInput) string {
		resp, err := s.ledger.PostCreatingAccounts(context.Background(), &ledgerv1.PostTransactionRequest{TenantId: s.tenant,
			IdempotencyKey: testkit.Unique("dsp-post"), Entries: entries})
		require.NoError(t, err)
		return resp.GetTransaction().GetId()
	}
	receivable := chart.EmployeeReceivable(s.emp)
	leg := func(account string, dir ledgerv1.Direction, amount int64) *ledgerv1.EntryInput {
		return &ledgerv1.EntryInput{AccountName: account, Direction: dir, AmountSantim: amount}
	}
	debit, credit := ledgerv1.Direction_DIRECTION_DEBIT, ledgerv1.Direction_DIRECTION_CREDIT
	mixed := post(leg(receivable, debit, 500), leg(receivable, credit, 300), leg(chart.PayrollClearing, credit, 200))
	rec = s.open(t, s.me, mixed)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.EqualValues(t, 500, decode[disputeJSON](t, rec).AmountSantim)
	huge := post(leg(receivable, debit, 600_000_000_000), leg(receivable, debit, 600_000_000_000),
		leg(chart.PayrollClearing, credit, 600_000_000_000), leg(chart.PayrollClearing, credit, 600_000_000_000))
	requireStatus(t, s.open(t, s.me, huge), http.StatusConflict, "DISPUTE_TRANSACTION_NOT_DISPUTABLE")
	credited := post(leg(chart.PayrollClearing, debit, 700), leg(receivable, credit, 700))
	requireStatus(t, s.open(t, s.me, credited), http.StatusConflict, "DISPUTE_TRANSACTION_NOT_DISPUTABLE")
}

// A decision's reason is bounded so that the ledger's reason of its reversal (the dispute's id
// and the reason) fits the ledger's bound: the longest reason the API takes is posted. Found by an
// audit: a 1,000-byte reason passed the API and was refused by the ledger (409
// DISPUTE_LEDGER_REFUSED) for good, a signed adjustment approval with it unusable.
func TestDisputeDecisionReasonFitsTheLedger(t *testing.T) {
	t.Parallel()
	s := newDisputeStack(t)
	d, tx := s.opened(t, 12_000)
	requireStatus(t, s.operator.hostile(http.MethodPost, "/api/disputes/"+d.ID+"/decisions",
		map[string]any{"decision": "REVERSAL", "reason": strings.Repeat("r", maxLedgerReason+1)}, "Idempotency-Key", loanKey()),
		http.StatusBadRequest, "INVALID_REQUEST")
	rec := s.decide(s.operator, d.ID, map[string]any{"decision": "REVERSAL", "reason": strings.Repeat("r", maxLedgerReason)})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_REVERSED, s.txStatus(t, tx).GetStatus())
}

// TestDisputeNotDecidedByTheEmployeeItRefunds: an operator who is also the employee who raised
// the dispute may not decide it (403 DISPUTE_OWN_DECISION, audited DENIED, nothing reversed);
// another operator may (found by an audit: a reversal needs no second approver, so one person
// could refund their own advance). The same key asking again after its answer was lost is
// answered the decision.
func TestDisputeNotDecidedByTheEmployeeItRefunds(t *testing.T) {
	t.Parallel()
	s := newDisputeStack(t)
	d, tx := s.opened(t, 5_000)
	rec := s.me.call(http.MethodGet, "/api/auth/get-session", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	self := decode[sessionResult](t, rec).User.ID
	_, created, err := identity.GrantOperator(context.Background(), s.d.Platform(t), self, self, time.Now())
	require.NoError(t, err)
	require.True(t, created)

	reverse := map[string]any{"decision": "REVERSAL", "reason": "my own advance"}
	requireStatus(t, s.decide(s.me, d.ID, reverse), http.StatusForbidden, "DISPUTE_OWN_DECISION")
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, s.txStatus(t, tx).GetStatus())
	require.Equal(t, "UNDER_INVESTIGATION", s.detail(t, d.ID).Status)
	require.Equal(t, 1, s.tenantCount(s.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'DecideDispute' AND outcome = 'DENIED'
		AND details->>'code' = 'DISPUTE_OWN_DECISION'`))

	key := loanKey()
	rec = s.operator.call(http.MethodPost, "/api/disputes/"+d.ID+"/decisions", reverse, "Idempotency-Key", key)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "RESOLVED_REVERSAL", decode[disputeJSON](t, rec).Status)

	// The decision's answer lost before it was stored (the process stopped after the workflow
	// decided): the same key is answered the decision it made, not 409 and a DENIED row (found
	// by an audit); another key is refused.
	super, err := pgx.Connect(context.Background(), testkit.PG(t).SuperDSN(s.d.Name))
	require.NoError(t, err)
	defer func() { _ = super.Close(context.Background()) }()
	tag, err := super.Exec(context.Background(), `DELETE FROM app.idempotency_records WHERE key = $1`, key)
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())
	rec = s.operator.call(http.MethodPost, "/api/disputes/"+d.ID+"/decisions", reverse, "Idempotency-Key", key)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	again := decode[disputeJSON](t, rec)
	require.Equal(t, "RESOLVED_REVERSAL", again.Status)
	require.NotNil(t, again.ReversalTransactionID)
	require.Equal(t, 1, s.tenantCount(s.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'DecideDispute' AND outcome = 'DENIED'`),
		"only the employee's own attempt")
	requireStatus(t, s.decide(s.operator, d.ID, reverse), http.StatusConflict, "DISPUTE_INVALID_STATE")
}
