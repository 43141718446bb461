package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/chart"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// Disputes (issue 27 part 1; the spec's "Disputes (Proposed)"): an employee disputes a ledger
// transaction on their own receivable (POST /api/me/disputes), picked from their own ledger
// transactions (GET /api/me/ledger-transactions, read from the ledger); the organization's admins
// read the disputes and their event logs (GET /api/disputes, /api/disputes/<id>). The store and
// the lifecycle are internal/disputes.

func (s *Server) disputeRoutes() []Route {
	return append([]Route{
		{Method: http.MethodGet, Path: "/api/me/ledger-transactions", Auth: Session, Summary: "The caller's own ledger transactions (their employee receivable), to dispute one", Handler: s.myLedgerTransactions},
		{Method: http.MethodPost, Path: "/api/me/disputes", Auth: Session, Summary: "Dispute a ledger transaction on the caller's own receivable", Handler: s.openMyDispute},
		{Method: http.MethodGet, Path: "/api/me/disputes", Auth: Session, Summary: "The disputes the caller raised (newest first, paged)", Handler: s.myDisputes},
		{Method: http.MethodGet, Path: "/api/disputes", Auth: Org, Role: orgs.Admin, Summary: "The organization's disputes (newest first, filtered, paged)", Handler: s.listDisputes},
		{Method: http.MethodGet, Path: "/api/disputes/:id", Auth: Org, Role: orgs.Admin, Summary: "A dispute and its event log", Handler: s.getDispute},
	}, s.disputeWorkRoutes()...)
}

// disputeCalendar is the business-day calendar SLA deadlines are counted on.
func (s *Server) disputeCalendar() *disputes.Calendar { return s.deps.DisputeCalendar }

func disputeError(err error) error {
	if code := disputes.CodeOf(err); code != "" {
		r, _ := disputes.RefusalOf(code)
		return NewError(r.Status, r.Code, r.Message)
	}
	if errors.Is(err, disputes.ErrInvalid) {
		return NewError(http.StatusBadRequest, "INVALID_REQUEST", "the request's values are not valid")
	}
	return err
}

func disputeRefusal(code string) *Error {
	r, _ := disputes.RefusalOf(code)
	return NewError(r.Status, r.Code, r.Message)
}

// --- JSON ---

type disputeJSON struct {
	ID                      string     `json:"id"`
	LedgerTransactionID     string     `json:"ledgerTransactionId"`
	LedgerAccountID         string     `json:"ledgerAccountId"`
	AmountSantim            int64      `json:"amountSantim"`
	Currency                string     `json:"currency"`
	RaisedByType            string     `json:"raisedByType"`
	RaisedBySubjectID       string     `json:"raisedBySubjectId"`
	Reason                  string     `json:"reason"`
	Status                  string     `json:"status"`
	Decision                *string    `json:"decision"`
	DecisionReason          *string    `json:"decisionReason"`
	DecisionBy              *string    `json:"decisionBy"`
	ApprovedBy              *string    `json:"approvedBy"`
	ReversalTransactionID   *string    `json:"reversalTransactionId"`
	AdjustmentTransactionID *string    `json:"adjustmentTransactionId"`
	PartnerChargebackRef    *string    `json:"partnerChargebackRef"`
	ReopensDisputeID        *string    `json:"reopensDisputeId"`
	WorkflowID              string     `json:"workflowId"`
	CustomerNotifiedAt      *time.Time `json:"customerNotifiedAt"`
	PartnerNotifiedAt       *time.Time `json:"partnerNotifiedAt"`
	SLADeadline             time.Time  `json:"slaDeadline"`
	SLABreached             bool       `json:"slaBreached"`
	SLABreachWarnedAt       *time.Time `json:"slaBreachWarnedAt"`
	OpenedAt                time.Time  `json:"openedAt"`
	ClosedAt                *time.Time `json:"closedAt"`
}

func toDisputeJSON(d disputes.Dispute, now time.Time) disputeJSON {
	out := disputeJSON{ID: d.ID, LedgerTransactionID: d.LedgerTransactionID, LedgerAccountID: d.LedgerAccountID, AmountSantim: d.AmountSantim,
		Currency: d.Currency, RaisedByType: string(d.RaisedByType), RaisedBySubjectID: d.RaisedBySubjectID, Reason: d.Reason,
		Status: string(d.Status), DecisionReason: d.DecisionReason, DecisionBy: d.DecisionBy, ApprovedBy: d.ApprovedBy,
		ReversalTransactionID: d.ReversalTransactionID, AdjustmentTransactionID: d.AdjustmentTransactionID,
		PartnerChargebackRef: d.PartnerChargebackRef, ReopensDisputeID: d.ReopensDisputeID, WorkflowID: d.WorkflowID,
		CustomerNotifiedAt: utcPtr(d.CustomerNotifiedAt), PartnerNotifiedAt: utcPtr(d.PartnerNotifiedAt), SLADeadline: d.SLADeadline.UTC(),
		SLABreached: d.Breached(now), SLABreachWarnedAt: utcPtr(d.SLABreachWarnedAt), OpenedAt: d.OpenedAt.UTC(), ClosedAt: utcPtr(d.ClosedAt)}
	if d.Decision != nil {
		v := string(*d.Decision)
		out.Decision = &v
	}
	return out
}

type disputeEventJSON struct {
	ID          int64           `json:"id"`
	EventType   string          `json:"eventType"`
	Status      string          `json:"status"`
	Payload     json.RawMessage `json:"payload"`
	ActorUserID *string         `json:"actorUserId"`
	OccurredAt  time.Time       `json:"occurredAt"`
}

type disputeDetailJSON struct {
	disputeJSON
	Events []disputeEventJSON `json:"events"`
}

type disputeListJSON struct {
	Items      []disputeJSON `json:"items"`
	NextCursor *string       `json:"nextCursor"`
}

type myLedgerTransactionJSON struct {
	TransactionID string    `json:"transactionId"`
	AccountID     string    `json:"accountId"`
	Direction     string    `json:"direction"`
	AmountSantim  int64     `json:"amountSantim"`
	Currency      string    `json:"currency"`
	CreatedAt     time.Time `json:"createdAt"`
}

type myLedgerTransactionListJSON struct {
	Items      []myLedgerTransactionJSON `json:"items"`
	NextCursor *string                   `json:"nextCursor"`
}

// --- the employee's side ---

// ledgerCursor is a ledger page token (an entry's sequence number in base 36) as the document
// states it: up to 12 digits, or 13 below "1y" (every such value fits an int64; the ledger's
// sequence never nears the ones left out).
var ledgerCursor = regexp.MustCompile(`^([0-9a-z]{1,12}|[01][0-9a-x][0-9a-z]{11})$`)

// ledgerReadError answers a ledger read's error: what the ledger does not know is 404 code, a
// ledger that cannot be asked 503.
func ledgerReadError(err error, code string) error {
	if errors.Is(err, ledger.ErrTransactionNotFound) || errors.Is(err, ledger.ErrAccountNotFound) || errors.Is(err, ledger.ErrInvalidArgument) {
		return disputeRefusal(code)
	}
	return disputeRefusal(disputes.CodeLedgerUnavailable)
}

// myLedgerTransactions lists the posted entries of the caller's employee receivable, oldest first,
// one item per entry (a transaction touches the receivable once), paged by the ledger's cursor.
func (s *Server) myLedgerTransactions(c *gin.Context) {
	limit := defaultPage
	if v, ok := singleQuery(c, "limit", false, func(v string) error { _, err := parseLimit(v); return err }); !ok {
		return
	} else if v != "" {
		limit, _ = parseLimit(v)
	}
	cursor, ok := singleQuery(c, "cursor", false, func(v string) error {
		if !ledgerCursor.MatchString(v) {
			return &field.Error{Field: "cursor", Problem: "must be the nextCursor of the previous page"}
		}
		return nil
	})
	if !ok {
		return
	}
	tenant, employeeID, ok := s.myEmployee(c)
	if !ok {
		return
	}
	if s.deps.Ledger == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "the ledger is not configured"))
		return
	}
	out := myLedgerTransactionListJSON{Items: []myLedgerTransactionJSON{}}
	resp, err := s.deps.Ledger.ListEntries(c.Request.Context(), &ledgerv1.ListEntriesRequest{TenantId: tenant,
		AccountName: chart.EmployeeReceivable(employeeID), PageSize: int32(limit), PageToken: cursor})
	switch {
	case errors.Is(err, ledger.ErrAccountNotFound):
		c.JSON(http.StatusOK, out) // nothing posted to the employee yet
		return
	case errors.Is(err, ledger.ErrInvalidArgument):
		writeError(c, fieldError(&field.Error{Field: "cursor", Problem: "must be the nextCursor of the previous page"}))
		return
	case err != nil:
		writeError(c, ledgerReadError(err, disputes.CodeTransactionNotFound))
		return
	}
	for _, e := range resp.GetEntries() {
		if e.GetPhase() != ledgerv1.EntryPhase_ENTRY_PHASE_POSTED {
			continue
		}
		out.Items = append(out.Items, myLedgerTransactionJSON{TransactionID: e.GetTransactionId(), AccountID: e.GetAccountId(),
			Direction: directionName(e.GetDirection()), AmountSantim: e.GetAmountSantim(), Currency: e.GetCurrency(),
			CreatedAt: e.GetCreatedAt().AsTime().UTC()})
	}
	if next := resp.GetNextPageToken(); next != "" {
		out.NextCursor = &next
	}
	c.JSON(http.StatusOK, out)
}

func directionName(d ledgerv1.Direction) string {
	if d == ledgerv1.Direction_DIRECTION_CREDIT {
		return "CREDIT"
	}
	return "DEBIT"
}

type openDisputeRequest struct {
	LedgerTransactionID *string `json:"ledgerTransactionId"`
	Reason              *string `json:"reason"`
}

// ownReceivableShare is what a transaction charged to the employee's receivable: its account id
// and the sum of its posted debits there (a credit — a repayment, a reversal, a dispute's own
// adjustment — charges nothing); touched is whether it has an entry on the account at all, in
// any phase (a pending transaction's are holds, a voided one's holds and releases: theirs too,
// refused as not POSTED rather than as someone else's); ok is false when the sum leaves one
// amount's bound (money.MaxAmountSantim).
func ownReceivableShare(tx *ledgerv1.Transaction, account string) (accountID string, touched bool, charged int64, ok bool) {
	ok = true
	for _, e := range tx.GetEntries() {
		if e.GetAccountName() != account {
			continue
		}
		accountID, touched = e.GetAccountId(), true
		if e.GetPhase() == ledgerv1.EntryPhase_ENTRY_PHASE_POSTED && e.GetDirection() == ledgerv1.Direction_DIRECTION_DEBIT {
			if charged, ok = money.Add(charged, e.GetAmountSantim()); !ok {
				return accountID, touched, 0, false
			}
		}
	}
	return accountID, touched, charged, ok && charged <= money.MaxAmountSantim
}

// checkLedgerTxID refuses a ledgerTransactionId that is not a ledger transaction id: a UUID in
// its 36-character text form (the ledger is never asked about anything else).
func checkLedgerTxID(v string) error {
	if _, err := uuid.Parse(v); err != nil || len(v) != 36 {
		return &field.Error{Field: "ledgerTransactionId", Problem: "must be a ledger transaction id (a UUID)"}
	}
	return nil
}

// disputedTransaction reads the ledger transaction id a dispute names in tenant (the ledger's
// not-found is 404 LEDGER_TRANSACTION_NOT_FOUND); it has answered when ok is false.
func (s *Server) disputedTransaction(c *gin.Context, tenant, id string) (*ledgerv1.Transaction, bool) {
	if s.deps.Ledger == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "the ledger is not configured"))
		return nil, false
	}
	got, err := s.deps.Ledger.GetTransaction(c.Request.Context(), &ledgerv1.GetTransactionRequest{TenantId: tenant, TransactionId: id})
	if err != nil {
		writeError(c, ledgerReadError(err, disputes.CodeTransactionNotFound))
		return nil, false
	}
	return got.GetTransaction(), true
}

// isCharge says whether ltx's share of a customer's account (amount, bounded: ownReceivableShare)
// is a charge, the only thing a dispute takes back: a transaction that only credits the account,
// a reversal or an adjustment (a dispute's own refund among them) is what a dispute gives back,
// and disputing it would give it back twice.
func isCharge(ltx *ledgerv1.Transaction, amount int64, bounded bool) bool {
	kind := ltx.GetKind()
	return amount > 0 && bounded && kind != ledgerv1.TransactionKind_TRANSACTION_KIND_REVERSAL &&
		kind != ledgerv1.TransactionKind_TRANSACTION_KIND_ADJUSTMENT
}

// openMyDispute opens a dispute of a POSTED transaction on the caller's own receivable: 201 with
// the dispute. Another employee's transaction, or one the ledger does not know, is 404
// LEDGER_TRANSACTION_NOT_FOUND (the same answer, so the route tells nothing of others' money).
func (s *Server) openMyDispute(c *gin.Context) {
	var req openDisputeRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	switch {
	case req.LedgerTransactionID == nil:
		writeError(c, fieldError(&field.Error{Field: "ledgerTransactionId", Problem: "is required"}))
		return
	case req.Reason == nil:
		writeError(c, fieldError(&field.Error{Field: "reason", Problem: "is required"}))
		return
	}
	if err := checkLedgerTxID(*req.LedgerTransactionID); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if err := field.Text("reason", *req.Reason, 1000); err != nil {
		writeError(c, fieldError(err))
		return
	}
	tenant, employeeID, ok := s.myEmployee(c)
	if !ok {
		return
	}
	ltx, ok := s.disputedTransaction(c, tenant, *req.LedgerTransactionID)
	if !ok {
		return
	}
	account := chart.EmployeeReceivable(employeeID)
	accountID, touched, amount, bounded := ownReceivableShare(ltx, account)
	if !touched {
		writeError(c, disputeRefusal(disputes.CodeTransactionNotFound))
		return
	}
	if ltx.GetStatus() != ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED {
		writeError(c, disputeRefusal(disputes.CodeTransactionNotPosted))
		return
	}
	if !isCharge(ltx, amount, bounded) {
		writeError(c, disputeRefusal(disputes.CodeNotDisputable))
		return
	}
	user := callerOf(c).User.ID
	d, err := inTenantOf(s, c, tenant, func(ctx context.Context, tx pgx.Tx) (disputes.Dispute, error) {
		return disputes.Open(ctx, tx, s.disputeCalendar(), disputes.OpenInput{TenantID: tenant,
			LedgerTransactionID: ltx.GetId(), LedgerAccountID: accountID, LedgerAccountName: account,
			AmountSantim: amount, Currency: ltx.GetCurrency(), RaisedBy: disputes.RaisedByEmployee,
			RaisedBySubjectID: employeeID, Reason: *req.Reason, ActorUserID: user}, s.now())
	})
	if err != nil {
		writeError(c, disputeError(err))
		return
	}
	s.startDisputeWorkflow(c, d)
	c.JSON(http.StatusCreated, toDisputeJSON(d, s.now()))
}

// disputeFilter reads the list filters common to both lists.
func disputeFilter(c *gin.Context) (disputes.Filter, bool) {
	limit, cursor, ok := ewaPage(c)
	if !ok {
		return disputes.Filter{}, false
	}
	f := disputes.Filter{After: cursor, Limit: limit + 1}
	status, ok := singleQuery(c, "status", false, func(v string) error {
		if !disputes.Status(v).Valid() {
			return &field.Error{Field: "status", Problem: "must be a dispute status"}
		}
		return nil
	})
	if !ok {
		return f, false
	}
	f.Status = disputes.Status(status)
	raised, ok := singleQuery(c, "raisedByType", false, func(v string) error {
		if !disputes.RaisedBy(v).Valid() {
			return &field.Error{Field: "raisedByType", Problem: "must be EMPLOYEE, PARTNER_BANK or INTERNAL"}
		}
		return nil
	})
	if !ok {
		return f, false
	}
	f.RaisedBy = disputes.RaisedBy(raised)
	if f.LedgerTransactionID, ok = singleQuery(c, "ledgerTransactionId", false, identifierCheck("ledgerTransactionId")); !ok {
		return f, false
	}
	breached, ok := singleQuery(c, "breached", false, func(v string) error {
		if v != "true" && v != "false" {
			return &field.Error{Field: "breached", Problem: "must be true or false"}
		}
		return nil
	})
	if !ok {
		return f, false
	}
	f.Breached = breached == "true"
	return f, true
}

func (s *Server) answerDisputePage(c *gin.Context, rows []disputes.Dispute, limit int) {
	out := disputeListJSON{Items: []disputeJSON{}}
	rows, out.NextCursor = pageOf(rows, limit, func(d disputes.Dispute) string { return d.ID })
	now := s.now()
	for _, d := range rows {
		out.Items = append(out.Items, toDisputeJSON(d, now))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) myDisputes(c *gin.Context) {
	f, ok := disputeFilter(c)
	if !ok {
		return
	}
	tenant, employeeID, ok := s.myEmployee(c)
	if !ok {
		return
	}
	f.RaisedBy, f.RaisedBySubjectID, f.Now = disputes.RaisedByEmployee, employeeID, s.now()
	rows, err := inTenantOf(s, c, tenant, func(ctx context.Context, tx pgx.Tx) ([]disputes.Dispute, error) {
		return disputes.List(ctx, tx, f)
	})
	if err != nil {
		writeError(c, err)
		return
	}
	for i := range rows {
		// Who decided and who approved are the platform's staff: the employee is told the
		// decision and its reason, not their user ids.
		rows[i].DecisionBy, rows[i].ApprovedBy = nil, nil
	}
	s.answerDisputePage(c, rows, f.Limit-1)
}

// --- the organization's side ---

func (s *Server) listDisputes(c *gin.Context) {
	f, ok := disputeFilter(c)
	if !ok {
		return
	}
	f.Now = s.now()
	rows, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) ([]disputes.Dispute, error) {
		return disputes.List(ctx, tx, f)
	})
	if err != nil {
		writeError(c, err)
		return
	}
	s.answerDisputePage(c, rows, f.Limit-1)
}

func disputeDetailOf(ctx context.Context, tx pgx.Tx, id string, now time.Time) (disputeDetailJSON, error) {
	d, err := disputes.Get(ctx, tx, id)
	if err != nil {
		return disputeDetailJSON{}, err
	}
	evs, err := disputes.Events(ctx, tx, id)
	if err != nil {
		return disputeDetailJSON{}, err
	}
	out := disputeDetailJSON{disputeJSON: toDisputeJSON(d, now), Events: []disputeEventJSON{}}
	for _, e := range evs {
		out.Events = append(out.Events, disputeEventJSON{ID: e.ID, EventType: string(e.EventType), Status: string(e.Status),
			Payload: e.Payload, ActorUserID: e.ActorUserID, OccurredAt: e.OccurredAt.UTC()})
	}
	return out, nil
}

func (s *Server) getDispute(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (disputeDetailJSON, error) {
		return disputeDetailOf(ctx, tx, id, s.now())
	})
	if err != nil {
		writeError(c, disputeError(err))
		return
	}
	c.JSON(http.StatusOK, out)
}

// startDisputeWorkflow starts the dispute's workflow (workflows.Dispute: investigation, SLA
// timers, evidence and decisions), found by TenantId and BusinessKey = the dispute id. The dispute
// is committed first, so the workflow reads it; a start that fails is logged and made later by
// the worker's outbox consumer of the dispute's own dispute.opened.v1 (workflows.DisputeStarter),
// written in the open's transaction; until then the dispute shows OPENED.
func (s *Server) startDisputeWorkflow(c *gin.Context, d disputes.Dispute) {
	if s.deps.Temporal == nil {
		s.deps.Log.Warn("dispute workflow not started: no Temporal client", "dispute_id", d.ID, "request_id", requestID(c))
		return
	}
	in := workflows.DisputeInput{TenantID: d.TenantID, DisputeID: d.ID, LedgerTransactionID: d.LedgerTransactionID,
		SLADeadline: d.SLADeadline, CorrelationID: requestID(c)}
	if _, err := s.deps.Temporal.ExecuteWorkflow(c.Request.Context(), workflows.StartOptions(d.WorkflowID, s.taskQueue(), d.TenantID, d.ID),
		workflows.DisputeWorkflowName, in); err != nil {
		s.deps.Log.Warn("dispute workflow not started", "dispute_id", d.ID, "request_id", requestID(c), "error", err)
	}
}
