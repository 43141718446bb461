package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/savings"
	"github.com/wagerail/wagerail/ledger"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// Savings goals (issue 29; rules in internal/savings): the business sets its savings escrow
// account (GET/PUT /api/savings/settings); a saver — the employee linked to the caller in the
// active organization — creates goals (POST /api/savings/goals), lists them with their progress
// (GET /api/me/savings/goals: the saved amount is the ledger's balance of savings-held:<goal>,
// read on every call) and moves money in and out (POST /api/savings/goals/<id>/deposit and
// /withdraw, Idem: the SavingsMove saga, workflows/savings.go, through runSaga). Another
// saver's or organization's goal is 404 SAVINGS_GOAL_NOT_FOUND. A saver opts in to auto-save
// into a goal by payroll deduction (POST /api/savings/goals/<id>/autosave-mandate: a PENDING
// SAVINGS_AUTOSAVE deduction mandate a payroll approver activates); the goal's listing shows its
// live auto-save.

func (s *Server) savingsRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/savings/settings", Auth: Org, Role: orgs.Admin, Summary: "The organization's savings escrow account", Handler: s.getSavingsSettings},
		{Method: http.MethodPut, Path: "/api/savings/settings", Auth: Org, Role: orgs.Admin, Summary: "Set the organization's savings escrow account", Handler: s.putSavingsSettings},
		{Method: http.MethodPost, Path: "/api/savings/goals", Auth: Session, Resolve: s.resolveSaver, Summary: "Create one of the caller's savings goals", Handler: s.createSavingsGoal},
		{Method: http.MethodPost, Path: "/api/savings/goals/:id/deposit", Auth: Session, Resolve: s.resolveSaver, Idem: true,
			Summary: "Deposit into one of the caller's goals (saga: payout account → savings escrow)", Handler: s.depositSavings},
		{Method: http.MethodPost, Path: "/api/savings/goals/:id/withdraw", Auth: Session, Resolve: s.resolveSaver, Idem: true,
			Summary: "Withdraw from one of the caller's goals (saga: savings escrow → payout account)", Handler: s.withdrawSavings},
		{Method: http.MethodGet, Path: "/api/me/savings/goals", Auth: Session, Summary: "The caller's savings goals with their progress (from the ledger)", Handler: s.mySavingsGoals},
		{Method: http.MethodPost, Path: "/api/savings/goals/:id/autosave-mandate", Auth: Session, Resolve: s.resolveSaver,
			Summary: "Opt in to save into one of the caller's goals by payroll deduction (a PENDING deduction mandate)", Handler: s.createSavingsAutosaveMandate},
		{Method: http.MethodPost, Path: "/api/savings/goals/:id/close", Auth: Session, Resolve: s.resolveSaver, Body: BodyNone,
			Summary: "Close one of the caller's goals that holds nothing (its auto-save cancelled)", Handler: s.closeSavingsGoal},
	}
}

// saverKey is the gin context key of the caller's employee id, set by resolveSaver.
const saverKey = "savings.saver"

// resolveSaver puts the caller's employee (in the active organization, or their only one) and its
// organization into the request: the tenant the goal routes act in and the idempotency scope.
func (s *Server) resolveSaver(c *gin.Context) {
	tenant, emp, ok := s.myEmployee(c)
	if !ok {
		c.Abort()
		return
	}
	callerOf(c).Tenant = tenant
	c.Set(saverKey, emp)
	c.Request = c.Request.WithContext(tenancy.WithTenant(c.Request.Context(), tenant))
	c.Next()
}

type savingsSettingsJSON struct {
	EscrowAccount *partnerAccountJSON `json:"escrowAccount"`
	LedgerAccount *string             `json:"ledgerAccount"`
	UpdatedAt     *time.Time          `json:"updatedAt"`
}

// savingsEscrowSetting is the savings one-account setting (account_setting.go): the escrow
// account, audited SetSavingsSettings, savings.settings_updated.v1.
var savingsEscrowSetting = accountSetting[savings.Settings, savingsSettingsJSON]{
	Check: accountCheck{Field: "escrowAccount", What: "the savings escrow account",
		PartnerUnknown: "SAVINGS_ESCROW_PARTNER_UNKNOWN", NotFound: "SAVINGS_ESCROW_ACCOUNT_NOT_FOUND"},
	Valid: func(partner, number string) error {
		return savings.ValidAccount("escrowAccount", savings.BankAccount{Partner: partner, AccountNumber: number})
	},
	Get: savings.GetSettings,
	Put: func(ctx context.Context, tx pgx.Tx, partner, number, actor string) (savings.Settings, error) {
		return savings.PutSettings(ctx, tx, savings.BankAccount{Partner: partner, AccountNumber: number}, actor)
	},
	JSON: toSavingsSettingsJSON,
}

func toSavingsSettingsJSON(st savings.Settings, ok bool) savingsSettingsJSON {
	if !ok {
		return savingsSettingsJSON{}
	}
	mirror := savings.Plan{Escrow: st.Escrow}.EscrowMirror()
	at := st.UpdatedAt.UTC()
	return savingsSettingsJSON{EscrowAccount: &partnerAccountJSON{Partner: st.Escrow.Partner, AccountNumber: st.Escrow.AccountNumber},
		LedgerAccount: &mirror, UpdatedAt: &at}
}

func (s *Server) getSavingsSettings(c *gin.Context) { getAccountSetting(s, c, savingsEscrowSetting) }

type savingsSettingsRequest struct {
	EscrowAccount *partnerAccountJSON `json:"escrowAccount"`
}

// putSavingsSettings sets the escrow account once the partner has confirmed it exists and is
// active (the account lookup); audited SetSavingsSettings, savings.settings_updated.v1.
func (s *Server) putSavingsSettings(c *gin.Context) {
	var req savingsSettingsRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	putAccountSetting(s, c, savingsEscrowSetting, req.EscrowAccount)
}

type savingsGoalJSON struct {
	ID                      string     `json:"id"`
	EmployeeID              string     `json:"employeeId"`
	Name                    string     `json:"name"`
	TargetSantim            int64      `json:"targetSantim"`
	TargetDate              *string    `json:"targetDate"`
	Status                  string     `json:"status"`
	LedgerAccount           string     `json:"ledgerAccount"`
	SavedSantim             int64      `json:"savedSantim"`
	AvailableSantim         int64      `json:"availableSantim"`
	PendingDepositSantim    int64      `json:"pendingDepositSantim"`
	PendingWithdrawalSantim int64      `json:"pendingWithdrawalSantim"`
	ProgressBasisPoints     int64      `json:"progressBasisPoints"`
	CreatedAt               time.Time  `json:"createdAt"`
	ClosedAt                *time.Time `json:"closedAt"`

	// Autosave is the goal's live auto-save mandate (PENDING, ACTIVE or SUSPENDED), null when none.
	Autosave *savingsAutosaveJSON `json:"autosave"`
}

type savingsAutosaveJSON struct {
	MandateID    string `json:"mandateId"`
	AmountSantim int64  `json:"amountSantim"`
	Status       string `json:"status"`
}

type savingsGoalListJSON struct {
	Items      []savingsGoalJSON `json:"items"`
	NextCursor *string           `json:"nextCursor"`
}

// goalJSON is g with its figures from the ledger (a goal nothing moved into yet has no account:
// zero). A ledger that cannot answer is errLedgerUnavailable.
func (s *Server) goalJSON(ctx context.Context, tenant string, g savings.Goal) (savingsGoalJSON, error) {
	out := savingsGoalJSON{ID: g.ID, EmployeeID: g.EmployeeID, Name: g.Name, TargetSantim: g.TargetSantim, Status: g.Status,
		LedgerAccount: savings.Account(g.ID), CreatedAt: g.CreatedAt.UTC()}
	if g.ClosedAt != nil {
		at := g.ClosedAt.UTC()
		out.ClosedAt = &at
	}
	if g.TargetDate != nil {
		d := g.TargetDate.Format(time.DateOnly)
		out.TargetDate = &d
	}
	resp, err := s.deps.Ledger.GetBalance(ctx, &ledgerv1.GetBalanceRequest{TenantId: tenant, AccountName: savings.Account(g.ID)})
	switch {
	case errors.Is(err, ledger.ErrAccountNotFound):
	case err != nil:
		s.deps.Log.Warn("savings goal: ledger read failed", "goal_id", g.ID, "error", err)
		return out, errLedgerUnavailable
	default:
		b := resp.GetBalance()
		out.SavedSantim, out.AvailableSantim = b.GetPostedSantim(), b.GetAvailableSantim()
		out.PendingDepositSantim, out.PendingWithdrawalSantim = b.GetPendingCreditsSantim(), b.GetPendingDebitsSantim()
	}
	out.ProgressBasisPoints = savings.Progress(out.SavedSantim, out.TargetSantim)
	return out, nil
}

type savingsGoalRequest struct {
	Name         string  `json:"name"`
	TargetSantim int64   `json:"targetSantim"`
	TargetDate   *string `json:"targetDate"`
}

// createSavingsGoal creates a goal for the caller's employee (audit CreateSavingsGoal,
// savings.goal_created.v1); 201 with its (zero) figures.
func (s *Server) createSavingsGoal(c *gin.Context) {
	var req savingsGoalRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if !s.ledgerReady(c) {
		return
	}
	in := savings.NewGoal{EmployeeID: c.GetString(saverKey), Name: req.Name, TargetSantim: req.TargetSantim, CreatedBy: callerOf(c).User.ID}
	if req.TargetDate != nil {
		d, err := time.Parse(time.DateOnly, *req.TargetDate)
		if err != nil {
			writeError(c, fieldError(&field.Error{Field: "targetDate", Problem: "must be a date (YYYY-MM-DD)"}))
			return
		}
		in.TargetDate = &d
	}
	tenant := callerOf(c).Tenant
	g, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (savings.Goal, error) {
		return savings.CreateGoal(ctx, tx, in, s.now())
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	out, err := s.goalJSON(c.Request.Context(), tenant, g)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusCreated, out)
}

// mySavingsGoals pages the caller's goals (by id), each with its figures from the ledger.
func (s *Server) mySavingsGoals(c *gin.Context) {
	limit, cursor, ok := ewaPage(c)
	if !ok {
		return
	}
	if !s.ledgerReady(c) {
		return
	}
	tenant, emp, ok := s.myEmployee(c)
	if !ok {
		return
	}
	ctx := tenancy.WithTenant(c.Request.Context(), tenant)
	var rows []savings.Goal
	var autosaves map[string]payroll.LiveProductMandate
	out := savingsGoalListJSON{Items: []savingsGoalJSON{}}
	if err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) (err error) {
		if rows, err = savings.ListGoals(ctx, tx, emp, cursor, limit+1); err != nil {
			return err
		}
		rows, out.NextCursor = pageOf(rows, limit, func(g savings.Goal) string { return g.ID })
		ids := make([]string, len(rows))
		for i, g := range rows {
			ids[i] = g.ID
		}
		autosaves, err = payroll.LiveProductMandates(ctx, tx, payroll.KindSavingsAutosave, ids)
		return err
	}); err != nil {
		writeError(c, err)
		return
	}
	for _, g := range rows {
		j, err := s.goalJSON(c.Request.Context(), tenant, g)
		if err != nil {
			writeError(c, err)
			return
		}
		if m, ok := autosaves[g.ID]; ok {
			j.Autosave = &savingsAutosaveJSON{MandateID: m.ID, AmountSantim: m.AmountSantim, Status: m.Status}
		}
		out.Items = append(out.Items, j)
	}
	c.JSON(http.StatusOK, out)
}

type savingsAutosaveMandateRequest struct {
	AmountSantim *int64 `json:"amountSantim"`
	productMandatePeriods
}

// createSavingsAutosaveMandate records the caller's opt-in to save amountSantim into their own
// ACTIVE goal each pay period by payroll deduction: a PENDING SAVINGS_AUTOSAVE deduction mandate
// (savings.CreateAutosaveMandate; internal/payroll/product_mandate.go), answered as the payroll
// mandate routes answer a mandate (201). A payroll approver activates it; the calculator takes it
// whole within the protection policy or not at all, and the run's completion deposits it (the
// SavingsMove saga with a payroll source). Another saver's or organization's goal is 404
// SAVINGS_GOAL_NOT_FOUND; a closed goal 409 SAVINGS_GOAL_CLOSED; a second live opt-in 409
// PAYROLL_MANDATE_EXISTS; bad input 400 with nothing written.
func (s *Server) createSavingsAutosaveMandate(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req savingsAutosaveMandateRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := pmRequired("amountSantim", req.AmountSantim == nil); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if err := savings.CheckAutosaveAmount(*req.AmountSantim); err != nil {
		writeError(c, fieldError(err))
		return
	}
	start, end, e := req.periods()
	if e != nil {
		writeError(c, e)
		return
	}
	emp := c.GetString(saverKey)
	m, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.Mandate, error) {
		return savings.CreateAutosaveMandate(ctx, tx, emp, id, *req.AmountSantim, start, end, s.now())
	})
	if err != nil {
		s.payrollAnswer(c, "CreateDeductionMandate", savings.TargetGoal, id, err)
		return
	}
	c.JSON(http.StatusCreated, toMandateJSON(m))
}

// goalHoldings reads a goal's money from the ledger (nothing when its account does not exist
// yet); a ledger that cannot answer is errLedgerUnavailable.
func (s *Server) goalHoldings(ctx context.Context, tenant, goalID string) (savings.Holdings, error) {
	resp, err := s.deps.Ledger.GetBalance(ctx, &ledgerv1.GetBalanceRequest{TenantId: tenant, AccountName: savings.Account(goalID)})
	switch {
	case errors.Is(err, ledger.ErrAccountNotFound):
		return savings.Holdings{}, nil
	case err != nil:
		s.deps.Log.Warn("savings goal: ledger read failed", "goal_id", goalID, "error", err)
		return savings.Holdings{}, errLedgerUnavailable
	}
	b := resp.GetBalance()
	return savings.Holdings{PostedSantim: b.GetPostedSantim(), PendingInSantim: b.GetPendingCreditsSantim(),
		PendingOutSantim: b.GetPendingDebitsSantim()}, nil
}

// closeSavingsGoal closes the caller's own goal (savings.CloseGoal): 200 with the goal CLOSED,
// its figures zero and its auto-save gone (the mandate cancelled in the same transaction). A goal
// that holds money or has a movement in flight is 409 SAVINGS_GOAL_NOT_EMPTY (withdraw first); one
// whose auto-save a payroll run not yet completed may still deposit 409
// SAVINGS_GOAL_AUTOSAVE_IN_RUN (both audited DENIED, nothing else written); a CLOSED goal is
// answered as it is (200, nothing written), so a retry after a lost answer sees the same; another
// saver's or organization's goal 404 SAVINGS_GOAL_NOT_FOUND. The ledger is read with the goal's
// row locked; a ledger that cannot answer is 503 with nothing written.
func (s *Server) closeSavingsGoal(c *gin.Context) {
	id, ok := pathID(c)
	if !ok || !s.ledgerReady(c) {
		return
	}
	tenant, emp := callerOf(c).Tenant, c.GetString(saverKey)
	held := func(ctx context.Context) (savings.Holdings, error) { return s.goalHoldings(ctx, tenant, id) }
	g, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (savings.Goal, error) {
		g, _, err := savings.CloseGoal(ctx, tx, emp, id, held, s.now())
		return g, err
	})
	if err != nil {
		s.payrollAnswer(c, "CloseSavingsGoal", savings.TargetGoal, id, err)
		return
	}
	out, err := s.goalJSON(c.Request.Context(), tenant, g)
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

type savingsMoveRequest struct {
	AmountSantim int64 `json:"amountSantim"`
}

type savingsMoveJSON struct {
	GoalID       string `json:"goalId"`
	Kind         string `json:"kind"`
	AmountSantim int64  `json:"amountSantim"`
	Status       string `json:"status"`
	WorkflowID   string `json:"workflowId"`
}

func (s *Server) depositSavings(c *gin.Context)  { s.moveSavings(c, savings.Deposit) }
func (s *Server) withdrawSavings(c *gin.Context) { s.moveSavings(c, savings.Withdrawal) }

// moveSavings starts the SavingsMove saga and answers once its gates have passed and its transfer
// is initiated (202 DISBURSING, or SETTLED / FAILED when the partner answered at once), or with
// the refusal from internal/savings's table of codes. The pre-check answers a goal that is not
// the caller's (404 SAVINGS_GOAL_NOT_FOUND) and an organization without an escrow account (409
// SAVINGS_ESCROW_NOT_SET) from the database; the balance check of a withdrawal is the saga's (it
// holds the goal's lock while it checks and reserves), and the call waits for it: a withdrawal is
// never answered 202 before its reservation (NoPendingAnswer: 503 DECISION_PENDING, not stored,
// when the wait runs out; the retry with the same key gets the saga's answer). A key whose saga
// recorded another movement (another goal or amount: its idempotency record expired) is 422
// IDEMPOTENCY_KEY_REUSED.
func (s *Server) moveSavings(c *gin.Context, kind savings.Kind) {
	id := c.Param("id")
	if err := field.Identifier("id", id, 0); err != nil {
		writeError(c, fieldError(err))
		return
	}
	var req savingsMoveRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if req.AmountSantim < 1 || req.AmountSantim > savings.MaxAmountSantim {
		writeError(c, fieldError(&field.Error{Field: "amountSantim", Problem: "must be 1 to 100000000000"}))
		return
	}
	caller := callerOf(c)
	emp := c.GetString(saverKey)
	body := func(wfID, status string) savingsMoveJSON {
		return savingsMoveJSON{GoalID: id, Kind: string(kind), AmountSantim: req.AmountSantim, Status: status, WorkflowID: wfID}
	}
	runSaga(s, c, sagaCall[workflows.SavingsAccepted, workflows.SavingsMoveResult]{
		Workflow: workflows.SavingsMoveWorkflowName,
		Input: workflows.SavingsMoveInput{TenantID: caller.Tenant, GoalID: id, EmployeeID: emp, Kind: kind, AmountSantim: req.AmountSantim,
			ActorID: caller.User.ID, CorrelationID: requestID(c)},
		BusinessKey: id,
		Update:      workflows.SavingsAcceptedUpdate, UpdateID: workflows.SavingsAcceptedUpdateID,
		Refused: func(app *temporal.ApplicationError) (*Error, bool) { return savingsRefusal(app.Type()) },
		Precheck: func(ctx context.Context, tx pgx.Tx, wfID string) (sagaPrecheck, error) {
			if m, ok, err := savings.MovementOf(ctx, tx, wfID); err != nil || ok {
				if ok && !m.Answers(id, kind, req.AmountSantim) {
					// The key's saga moved other money (its idempotency record has expired
					// since): that movement is no answer to this request.
					return sagaPrecheck{}, errIdemKeyOtherSavingsMove
				}
				return sagaPrecheck{Owner: m.WorkflowID}, err
			}
			if _, err := savings.GoalOf(ctx, tx, emp, id); err != nil {
				return sagaPrecheck{}, payrollError(err)
			}
			if _, ok, err := savings.GetSettings(ctx, tx); err != nil || !ok {
				if err == nil {
					e, _ := savingsRefusal(savings.CodeEscrowNotSet)
					err = e
				}
				return sagaPrecheck{}, err
			}
			return sagaPrecheck{}, nil
		},
		Accepted: func(wfID string, a workflows.SavingsAccepted) (int, any) {
			return http.StatusAccepted, body(wfID, a.Status)
		},
		Pending: func(wfID string) any { return body(wfID, workflows.StageDisbursing) },
		// A withdrawal is answered 202 only once the saga has reserved it under the goal's lock:
		// never "pending" before the balance check, which may still refuse it.
		NoPendingAnswer: kind == savings.Withdrawal,
		Closed: func(wfID string, r workflows.SavingsMoveResult) (int, any, error) {
			if r.Status != workflows.SavingsRefused {
				return http.StatusAccepted, body(wfID, r.Status), nil
			}
			if e, ok := savingsRefusal(r.Code); ok {
				return 0, nil, e
			}
			return 0, nil, errors.New("savings: the saga was refused with an unknown code " + r.Code)
		},
		LogAttrs: []any{"goal_id", id, "kind", string(kind)},
	})
}

var errIdemKeyOtherSavingsMove = keyReused("moved another amount or goal")

// savingsRefusal is the answer to a savings code, from internal/savings's table; ok is false for
// a code that is not savings'.
func savingsRefusal(code string) (*Error, bool) {
	r, ok := savings.RefusalOf(code)
	if !ok {
		return nil, false
	}
	return NewError(r.Status, r.Code, r.Message), true
}
