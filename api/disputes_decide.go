package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/uploads"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/chart"
	"github.com/wagerail/wagerail/workflows"
)

// Working a dispute (issue 27 part 1): the organization's admins attach evidence (uploads by key,
// an update of the dispute's workflow, answered once recorded), an operator decides (an update of
// the workflow: no action, chargeback, reversal or — approved by a platform admin first — an
// adjustment), and a platform admin reopens a dispute closed with no action. Nothing here writes
// to the ledger: the reversal and the adjustment are the workflow's steps.
//
// Two people approve every adjustment: a platform admin approves it (POST
// /api/admin/disputes/<id>/adjustment-approvals) and gets a signed approval naming them, the
// dispute, its amount and the exact decision reason; the operator deciding sends that approval with
// the ADJUSTMENT decision. The API verifies it (signature, expiry, approver ≠ operator) and signs
// the ledger's PostAdjustment request with the adjustment key (ledger.SignAdjustmentRequest), which
// the ledger verifies again. Keys rotate: the first of Deps.AdjustmentKeys signs, every one of them
// verifies approvals issued before a rotation.

func (s *Server) disputeWorkRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/api/disputes/:id/evidence", Auth: Org, Role: orgs.Admin,
			Summary: "Attach evidence (uploads by key) to an open dispute", Handler: s.attachDisputeEvidence},
		{Method: http.MethodPost, Path: "/api/disputes/:id/decisions", Auth: Operator, Idem: true, Resolve: s.resolveDisputeTenant,
			Summary: "Decide a dispute (operator): no action, chargeback, reversal or an approved adjustment", Handler: s.decideDispute},
		{Method: http.MethodPost, Path: "/api/admin/disputes/:id/adjustment-approvals", Auth: Platform, Resolve: s.resolveDisputeTenant,
			Summary: "Approve an adjustment of a dispute (platform admin; the second person of the decision)", Handler: s.approveDisputeAdjustment},
		{Method: http.MethodPost, Path: "/api/admin/disputes/:id/reopen", Auth: Platform, Resolve: s.resolveDisputeTenant,
			Summary: "Reopen a dispute closed with no action: a new dispute with reopensDisputeId", Handler: s.reopenDispute},
		{Method: http.MethodPost, Path: "/api/admin/disputes/:id/evidence", Auth: Platform, Resolve: s.resolveDisputeTenant,
			Summary: "Attach evidence (the organization's uploads by key) to an open dispute (platform admin)", Handler: s.attachDisputeEvidence},
		{Method: http.MethodPost, Path: "/api/admin/disputes", Auth: Operator,
			Summary: "Record a dispute a partner bank raised, or the platform's own (operator)", Handler: s.recordDispute},
	}
}

// resolveDisputeTenant puts the organization of the path's dispute into the request (the Resolve
// step of the operator and platform dispute routes, whose caller is a member of no organization):
// 400 for an id that is no identifier, 404 DISPUTE_NOT_FOUND for a dispute that is nowhere.
func (s *Server) resolveDisputeTenant(c *gin.Context) {
	s.resolveTenantOf(c, `SELECT tenant_id FROM app.disputes WHERE id = $1`, disputeRefusal(disputes.CodeNotFound))
}

// --- evidence ---

type disputeEvidenceRequest struct {
	UploadKeys []string `json:"uploadKeys"`
	Note       *string  `json:"note"`
}

type disputeEvidenceJSON struct {
	Dispute    disputeJSON `json:"dispute"`
	UploadKeys []string    `json:"uploadKeys"`
}

// attachDisputeEvidence (the organization's admins on POST /api/disputes/<id>/evidence, platform
// admins on POST /api/admin/disputes/<id>/evidence, whose Resolve finds the organization) hands
// the evidence to the dispute's workflow (Update-with-Start: a workflow whose start was missed is
// started now) once every key is an upload of the organization and the dispute is open. The
// workflow records EVIDENCE_ATTACHED (and dispute.evidence_attached.v1) in the dispute's log:
// 200 with the dispute once recorded, 202 when it took the evidence but the wait ran out before
// the record (it is recorded before any decision), 409 DISPUTE_INVALID_STATE when a decision is
// under way or made.
func (s *Server) attachDisputeEvidence(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req disputeEvidenceRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if len(req.UploadKeys) == 0 || len(req.UploadKeys) > disputes.MaxUploadKeys {
		writeError(c, fieldError(&field.Error{Field: "uploadKeys", Problem: "must list 1 to " + strconv.Itoa(disputes.MaxUploadKeys) + " upload keys"}))
		return
	}
	seen := map[string]bool{}
	for _, k := range req.UploadKeys {
		if !uploads.ValidKey(k) || seen[k] {
			writeError(c, fieldError(&field.Error{Field: "uploadKeys", Problem: "must be distinct keys of POST /api/uploads"}))
			return
		}
		seen[k] = true
	}
	note := ""
	if req.Note != nil {
		if err := field.Text("note", *req.Note, 1000); err != nil {
			writeError(c, fieldError(err))
			return
		}
		note = *req.Note
	}
	cl := callerOf(c)
	d, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (disputes.Dispute, error) {
		d, err := disputes.Get(ctx, tx, id)
		if err != nil {
			return d, err
		}
		if !d.Status.Open() {
			return d, disputes.ErrInvalidTransition
		}
		for _, k := range req.UploadKeys {
			if _, err := uploads.Lookup(ctx, tx, cl.Tenant, k); errors.Is(err, uploads.ErrNotFound) {
				e := NewError(http.StatusNotFound, "UPLOAD_NOT_FOUND", "an uploadKey names no upload of this organization (POST /api/uploads first)")
				e.Details = map[string]string{"field": "uploadKeys", "key": k}
				return d, e
			} else if err != nil {
				return d, err
			}
		}
		return d, nil
	})
	if err != nil {
		writeError(c, disputeError(err))
		return
	}
	if s.deps.Temporal == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "this route needs Temporal"))
		return
	}
	tc := s.deps.Temporal
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.sagaWait(0))
	defer cancel()
	var recorded disputes.Dispute
	updateID := uuid.NewString()
	started, err := updateWithStart(ctx, tc, func() client.UpdateWithStartWorkflowOptions {
		return client.UpdateWithStartWorkflowOptions{
			StartWorkflowOperation: tc.NewWithStartWorkflowOperation(workflows.StartOptions(d.WorkflowID, s.taskQueue(), d.TenantID, d.ID),
				workflows.DisputeWorkflowName, disputeInputOf(d, requestID(c))),
			// A fresh id per request: the request id may be the caller's, and two requests under
			// one update id would be one update (the second answered the first's result).
			UpdateOptions: client.UpdateWorkflowOptions{UpdateID: "evidence:" + updateID, UpdateName: workflows.DisputeEvidenceUpdate,
				Args:         []any{workflows.DisputeEvidence{Actor: cl.User.ID, UploadKeys: req.UploadKeys, Note: note}},
				WaitForStage: client.WorkflowUpdateStageAccepted},
		}
	}, &recorded)
	var app *temporal.ApplicationError
	switch {
	case err == nil:
		c.JSON(http.StatusOK, disputeEvidenceJSON{Dispute: toDisputeJSON(recorded, s.now()), UploadKeys: req.UploadKeys})
	case errors.As(err, &app):
		if r, ok := disputes.RefusalOf(app.Type()); ok {
			writeError(c, NewError(r.Status, r.Code, r.Message))
			return
		}
		s.deps.Log.Error("dispute evidence failed", "dispute_id", d.ID, "request_id", requestID(c), "error", err)
		writeError(c, err)
	case isWorkflowClosed(err):
		writeError(c, disputeRefusal(disputes.CodeInvalidState)) // decided meanwhile: its workflow is closed
	case started && ctx.Err() != nil && c.Request.Context().Err() == nil:
		// Accepted and still being recorded (the database is slow or down): the workflow records
		// it before any decision.
		c.JSON(http.StatusAccepted, disputeEvidenceJSON{Dispute: toDisputeJSON(d, s.now()), UploadKeys: req.UploadKeys})
	default:
		s.deps.Log.Warn("dispute evidence not sent", "dispute_id", d.ID, "request_id", requestID(c), "error", err)
		writeError(c, NewError(http.StatusServiceUnavailable, "TEMPORAL_UNAVAILABLE", "the evidence could not be handed to the dispute's workflow; nothing was attached, try again"))
	}
}

func disputeInputOf(d disputes.Dispute, correlation string) workflows.DisputeInput {
	return workflows.DisputeInput{TenantID: d.TenantID, DisputeID: d.ID, LedgerTransactionID: d.LedgerTransactionID,
		SLADeadline: d.SLADeadline, CorrelationID: correlation}
}

// --- adjustment approvals ---

// DisputeApprovalValidity is how long a platform admin's adjustment approval may be used.
const DisputeApprovalValidity = 24 * time.Hour

type disputeApprovalRequest struct {
	DecisionReason *string `json:"decisionReason"`
}

type disputeApprovalJSON struct {
	DisputeID      string    `json:"disputeId"`
	AmountSantim   int64     `json:"amountSantim"`
	DecisionReason string    `json:"decisionReason"`
	ApprovedBy     string    `json:"approvedBy"`
	ExpiresAt      time.Time `json:"expiresAt"`
	Signature      string    `json:"signature"`
}

// disputeApprovalMAC is the approval's signature under key: HMAC-SHA256 over a version tag and
// every approved field, length-prefixed (no two approvals share an encoding).
func disputeApprovalMAC(key []byte, tenant, disputeID string, amount int64, reason, approvedBy string, expires time.Time) []byte {
	var b []byte
	for _, s := range []string{"wagerail-dispute-adjustment-approval/v1", tenant, disputeID, strconv.FormatInt(amount, 10), reason,
		approvedBy, expires.UTC().Format(time.RFC3339)} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return m.Sum(nil)
}

// adjustmentKeys are the configured keys long enough to sign with (the first signs).
func (s *Server) adjustmentKeys() [][]byte {
	var keys [][]byte
	for _, k := range s.deps.AdjustmentKeys {
		if len(k) >= ledger.MinAdjustmentKeyBytes {
			keys = append(keys, k)
		}
	}
	return keys
}

func checkDecisionReason(v *string) error { return checkReasonOf(v, maxLedgerReason) }

// maxLedgerReason bounds a decision's reason: the ledger's reason of its reversal or adjustment
// is "<dispute id>:" (41 bytes) and the reason, within the ledger's field.MaxText.
const maxLedgerReason = field.MaxText - len("dsp_00000000-0000-0000-0000-000000000000:")

// checkReasonOf checks a required reason of at most max bytes of printable text.
func checkReasonOf(v *string, max int) error {
	if v == nil {
		return &field.Error{Field: "reason", Problem: "is required"}
	}
	return field.Text("reason", *v, max)
}

// approveDisputeAdjustment is a platform admin's approval of an adjustment of an open dispute for
// its amount and the decision reason given: 201 with the signed approval the operator sends with
// the decision (audited ApproveDisputeAdjustment). It moves nothing.
func (s *Server) approveDisputeAdjustment(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req disputeApprovalRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := checkDecisionReason(req.DecisionReason); err != nil {
		writeError(c, fieldError(&field.Error{Field: "decisionReason", Problem: err.(*field.Error).Problem}))
		return
	}
	keys := s.adjustmentKeys()
	if len(keys) == 0 {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "no adjustment key is configured (LEDGER_ADJUSTMENT_KEY)"))
		return
	}
	cl := callerOf(c)
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (disputeApprovalJSON, error) {
		d, err := disputes.Get(ctx, tx, id)
		if err != nil {
			return disputeApprovalJSON{}, err
		}
		if err := disputes.CheckDecidable(d, disputes.Adjustment); err != nil {
			return disputeApprovalJSON{}, err
		}
		exp := s.now().Add(DisputeApprovalValidity).UTC().Truncate(time.Second)
		sig := disputeApprovalMAC(keys[0], d.TenantID, d.ID, d.AmountSantim, *req.DecisionReason, cl.User.ID, exp)
		if err := audit.Write(ctx, tx, audit.Entry{Action: "ApproveDisputeAdjustment", Outcome: audit.Success, TargetType: "Dispute",
			TargetID: d.ID, Details: map[string]any{"amountSantim": d.AmountSantim, "expiresAt": exp}}); err != nil {
			return disputeApprovalJSON{}, err
		}
		return disputeApprovalJSON{DisputeID: d.ID, AmountSantim: d.AmountSantim, DecisionReason: *req.DecisionReason,
			ApprovedBy: cl.User.ID, ExpiresAt: exp, Signature: base64.RawURLEncoding.EncodeToString(sig)}, nil
	})
	if err != nil {
		writeError(c, disputeError(err))
		return
	}
	c.JSON(http.StatusCreated, out)
}

// --- decisions ---

type disputeApprovalRef struct {
	ApprovedBy *string `json:"approvedBy"`
	ExpiresAt  *string `json:"expiresAt"`
	Signature  *string `json:"signature"`
}

type disputeDecisionRequest struct {
	Decision             *string             `json:"decision"`
	Reason               *string             `json:"reason"`
	PartnerChargebackRef *string             `json:"partnerChargebackRef"`
	Approval             *disputeApprovalRef `json:"approval"`
}

var (
	approvalSignature = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)
	chargebackRef     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/+-]{0,127}$`)
)

// parsedApproval is a well-formed approval (not yet verified).
type parsedApproval struct {
	approvedBy string
	expires    time.Time
	sig        []byte
}

func parseDecision(req disputeDecisionRequest) (disputes.Decision, *parsedApproval, error) {
	if req.Decision == nil {
		return "", nil, &field.Error{Field: "decision", Problem: "is required"}
	}
	dec := disputes.Decision(*req.Decision)
	if !dec.Valid() {
		return "", nil, &field.Error{Field: "decision", Problem: "must be NO_ACTION, ADJUSTMENT, REVERSAL or CHARGEBACK"}
	}
	if err := checkDecisionReason(req.Reason); err != nil {
		return "", nil, err
	}
	switch {
	case dec == disputes.Chargeback && req.PartnerChargebackRef == nil:
		return "", nil, &field.Error{Field: "partnerChargebackRef", Problem: "is required with a CHARGEBACK"}
	case dec != disputes.Chargeback && req.PartnerChargebackRef != nil:
		return "", nil, &field.Error{Field: "partnerChargebackRef", Problem: "is only for a CHARGEBACK"}
	case dec == disputes.Chargeback:
		if !chargebackRef.MatchString(*req.PartnerChargebackRef) {
			return "", nil, &field.Error{Field: "partnerChargebackRef", Problem: "must be 1 to 128 letters, digits and . _ : / + - (starting with a letter or digit)"}
		}
	}
	if req.Approval == nil {
		return dec, nil, nil
	}
	if dec != disputes.Adjustment {
		return "", nil, &field.Error{Field: "approval", Problem: "is only for an ADJUSTMENT"}
	}
	a := req.Approval
	switch {
	case a.ApprovedBy == nil:
		return "", nil, &field.Error{Field: "approval.approvedBy", Problem: "is required"}
	case a.ExpiresAt == nil:
		return "", nil, &field.Error{Field: "approval.expiresAt", Problem: "is required"}
	case a.Signature == nil || !approvalSignature.MatchString(*a.Signature):
		return "", nil, &field.Error{Field: "approval.signature", Problem: "must be the signature of the approval (43 base64url characters)"}
	}
	if err := field.Identifier("approval.approvedBy", *a.ApprovedBy, 128); err != nil {
		return "", nil, err
	}
	exp, err := time.Parse(time.RFC3339, *a.ExpiresAt)
	if err != nil || len(*a.ExpiresAt) > 40 {
		return "", nil, &field.Error{Field: "approval.expiresAt", Problem: "must be an RFC 3339 time"}
	}
	sig, _ := base64.RawURLEncoding.DecodeString(*a.Signature)
	return dec, &parsedApproval{approvedBy: *a.ApprovedBy, expires: exp, sig: sig}, nil
}

// signedAdjustment verifies the platform admin's approval of an adjustment of d by operator
// with reason, and builds the ledger request signed with the current adjustment key.
func (s *Server) signedAdjustment(d disputes.Dispute, operator, reason string, a *parsedApproval) (*workflows.DisputeAdjustment, error) {
	switch {
	case a == nil:
		return nil, disputeRefusal(disputes.CodeApprovalMissing)
	case a.approvedBy == operator:
		return nil, disputeRefusal(disputes.CodeSelfApproved)
	}
	keys := s.adjustmentKeys()
	valid := false
	for _, k := range keys {
		if hmac.Equal(disputeApprovalMAC(k, d.TenantID, d.ID, d.AmountSantim, reason, a.approvedBy, a.expires), a.sig) {
			valid = true
		}
	}
	if !valid || !s.now().Before(a.expires) {
		return nil, disputeRefusal(disputes.CodeApprovalInvalid)
	}
	adj := &workflows.DisputeAdjustment{TenantID: d.TenantID, IdempotencyKey: workflows.DisputeDecisionKey(d.WorkflowID),
		Reason: d.ID + ":" + reason, ApprovedBy: a.approvedBy, RequestedBy: operator, DebitAccount: chart.MiscLoss,
		CreditAccount: d.LedgerAccountName, AmountSantim: d.AmountSantim}
	r := adj.PB()
	ledger.SignAdjustmentRequest(keys[0], r)
	adj.Signature = r.GetApprovalSignature()
	return adj, nil
}

// decideDispute takes an operator's decision through the dispute's workflow (Update-with-Start
// on the dispute's own workflow id: a workflow whose start was missed is started now): 200 with
// the decided dispute. A reversal and an adjustment are the workflow's ledger steps, their ids
// recorded with the decision in one database transaction. An open dispute whose workflow ended
// without completing (terminated, failed — maybe after its posting and before the record) is
// decided by a new run under the same id: the same decision records the posting the ledger
// holds, another is 409 DISPUTE_OTHER_DECISION_POSTED.
func (s *Server) decideDispute(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req disputeDecisionRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	dec, approval, err := parseDecision(req)
	if err != nil {
		var fe *field.Error
		if errors.As(err, &fe) {
			writeError(c, fieldError(fe))
			return
		}
		writeError(c, err)
		return
	}
	cl := callerOf(c)
	keyWF, _ := idempotency.WorkflowIDFrom(c.Request.Context())
	updateID := "decision:" + keyWF
	var decidedByThisKey bool
	d, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (disputes.Dispute, error) {
		d, err := disputes.Get(ctx, tx, id)
		if err != nil {
			return d, err
		}
		// This key's decision, made already (its answer was not stored: the process stopped, or
		// answered an error, after the workflow decided): the dispute as it decided it.
		if under, err := disputes.DecisionIDOf(ctx, tx, d); err != nil || under == updateID {
			decidedByThisKey = err == nil
			return d, err
		}
		if err := disputes.CheckDecidable(d, dec); err != nil {
			return d, err
		}
		deciders := []string{cl.User.ID}
		if approval != nil {
			deciders = append(deciders, approval.approvedBy)
		}
		return d, disputes.CheckNotOwn(ctx, tx, d, deciders...)
	})
	var e *Error
	switch {
	case decidedByThisKey:
		c.JSON(http.StatusOK, toDisputeJSON(d, s.now()))
		return
	case err != nil && errors.As(disputeError(err), &e) && e.Code != disputes.CodeNotFound:
		s.denyDecision(c, id, dec, e)
		return
	case err != nil:
		writeError(c, disputeError(err))
		return
	}
	decision := workflows.DisputeDecision{Actor: cl.User.ID, Decision: dec, Reason: *req.Reason}
	if req.PartnerChargebackRef != nil {
		decision.PartnerChargebackRef = *req.PartnerChargebackRef
	}
	if dec == disputes.Adjustment {
		adj, err := s.signedAdjustment(d, cl.User.ID, *req.Reason, approval)
		if errors.As(err, &e) {
			s.denyDecision(c, id, dec, e)
			return
		} else if err != nil {
			writeError(c, err)
			return
		}
		decision.ApprovedBy, decision.Adjustment = adj.ApprovedBy, adj
	}
	now := s.now()
	runSaga(s, c, sagaCall[disputes.Dispute, workflows.DisputeResult]{
		Workflow: workflows.DisputeWorkflowName, Input: disputeInputOf(d, requestID(c)), BusinessKey: d.ID, WorkflowID: d.WorkflowID,
		Update: workflows.DisputeDecisionUpdate, UpdateID: updateID,
		UpdateArgs: []any{decision},
		Refused: func(app *temporal.ApplicationError) (*Error, bool) {
			r, ok := disputes.RefusalOf(app.Type())
			if !ok {
				return nil, false
			}
			e := NewError(r.Status, r.Code, r.Message)
			return e, s.auditDecisionRefused(c, d.ID, dec, e)
		},
		Accepted: func(_ string, a disputes.Dispute) (int, any) { return http.StatusOK, toDisputeJSON(a, now) },
		Pending:  func(string) any { return toDisputeJSON(d, now) },
		Closed: func(string, workflows.DisputeResult) (int, any, error) {
			e := disputeRefusal(disputes.CodeInvalidState)
			if !s.auditDecisionRefused(c, d.ID, dec, e) {
				return 0, nil, errors.New("dispute decision: the refusal could not be audited")
			}
			return 0, nil, e
		},
		LogAttrs: []any{"dispute_id", d.ID},

		// The dispute is open (checked above) and its workflow is the one way to decide it: a run
		// that ended without completing (terminated by an operator, failed) — after its decision's
		// posting and before the record, maybe — is followed by a new run under the same id,
		// which records that posting for the same decision and refuses another
		// (workflows.Dispute: nothing is posted twice). A completed run decided the dispute, or
		// found it decided: its id is not reused.
		RestartFailed: true,
	})
}

// auditDecisionRefused writes the DENIED DecideDispute audit row of a refused decision (in the
// dispute's organization, the caller as actor, the refusal's code): false when it could not be
// written (logged; the caller answers an error then, not the refusal).
func (s *Server) auditDecisionRefused(c *gin.Context, id string, dec disputes.Decision, e *Error) bool {
	cl := callerOf(c)
	err := s.auditIn(c.Request.Context(), cl.Tenant, cl.User.ID, audit.Entry{Action: "DecideDispute", Outcome: audit.Denied,
		TargetType: "Dispute", TargetID: id, Details: map[string]string{"code": e.Code, "decision": string(dec)}})
	if err != nil {
		s.deps.Log.Error("dispute decision refusal not audited", "dispute_id", id, "request_id", requestID(c), "error", err)
		return false
	}
	return true
}

// denyDecision answers a decision refused before it reached the workflow, audited DENIED.
func (s *Server) denyDecision(c *gin.Context, id string, dec disputes.Decision, e *Error) {
	if !s.auditDecisionRefused(c, id, dec, e) {
		writeError(c, errors.New("dispute decision: the refusal could not be audited"))
		return
	}
	writeError(c, e)
}

// --- reopen ---

type disputeReopenRequest struct {
	Reason *string `json:"reason"`
}

type disputeReopenedJSON struct {
	Reopened disputeJSON `json:"reopened"`
	Dispute  disputeJSON `json:"dispute"`
}

// reopenDispute reopens a CLOSED_NO_ACTION dispute (new evidence): the dispute becomes REOPENED
// and a new dispute of the same transaction opens with reopensDisputeId (its own SLA from now,
// dispute.reopened.v1), in one transaction; the new dispute's workflow starts.
func (s *Server) reopenDispute(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req disputeReopenRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := checkReasonOf(req.Reason, 1000); err != nil {
		writeError(c, fieldError(err.(*field.Error)))
		return
	}
	cl := callerOf(c)
	type pair struct{ prev, next disputes.Dispute }
	p, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (pair, error) {
		prev, next, err := disputes.Reopen(ctx, tx, s.disputeCalendar(), id, cl.User.ID, *req.Reason, s.now())
		return pair{prev, next}, err
	})
	if err != nil {
		writeError(c, disputeError(err))
		return
	}
	s.startDisputeWorkflow(c, p.next)
	now := s.now()
	c.JSON(http.StatusCreated, disputeReopenedJSON{Reopened: toDisputeJSON(p.prev, now), Dispute: toDisputeJSON(p.next, now)})
}
