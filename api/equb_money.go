package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/workflows"
)

// The equb money routes (Idem): a member's contribution to the group's OPEN cycle (the
// contribution saga, workflows/equb_contribute.go) through runSaga. Everything here is behind the
// master switch EQUB_MONEY_MOVEMENT_ENABLED: off, the route answers 503
// EQUB_MONEY_MOVEMENT_DISABLED before the idempotency gate, so nothing at all is written.

func (s *Server) equbMoneyRoutes() []Route {
	biz := func(r Route) Route { r.Handler = s.forKind(orgs.Business, r.Handler); return r }
	return []Route{
		biz(Route{Method: http.MethodPost, Path: "/api/equb/groups/:id/contribute", Auth: Org, Role: orgs.PlainMember, Idem: true, Body: BodyNone,
			Resolve: s.equbMoneySwitch, Summary: "Contribute to the group's open cycle (member → escrow)", Handler: s.contributeEqub}),
		biz(Route{Method: http.MethodPost, Path: "/api/equb/groups/:id/payout/:cycle", Auth: Org, Role: orgs.Admin, Idem: true, Body: BodyNone,
			Resolve: s.equbMoneySwitch, Summary: "Pay a cycle's pot to its recipient (escrow → member; organizer)", Handler: s.payOutEqub}),
		biz(Route{Method: http.MethodPost, Path: "/api/equb/groups/:id/contribution-mandate", Auth: Org, Role: orgs.PlainMember,
			Resolve: s.equbMoneySwitch, Summary: "Opt in to contribute by payroll deduction (a PENDING deduction mandate)", Handler: s.createEqubContributionMandate}),
	}
}

// createEqubContributionMandate records the caller's opt-in to contribute to the group by payroll
// deduction: a PENDING EQUB_CONTRIBUTION deduction mandate for their own membership
// (equb.CreateContributionMandate; internal/payroll/product_mandate.go), answered as the payroll
// mandate routes answer a mandate (201). A payroll approver activates it.
func (s *Server) createEqubContributionMandate(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	start, end, ok := bindProductMandate(c)
	if !ok {
		return
	}
	cl := callerOf(c)
	m, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (payroll.Mandate, error) {
		return equb.CreateContributionMandate(ctx, tx, id, cl.User.ID, start, end, s.now())
	})
	if err != nil {
		s.payrollAnswer(c, "CreateDeductionMandate", "EqubGroup", id, err)
		return
	}
	c.JSON(http.StatusCreated, toMandateJSON(m))
}

// equbMoneySwitch refuses every equb money route while the master switch is off.
func (s *Server) equbMoneySwitch(c *gin.Context) {
	if !s.deps.EqubMoneyMovement {
		writeError(c, equbRefusal(equb.CodeMoneyMovementOff))
	}
}

func equbRefusal(code string) *Error {
	r, ok := equb.RefusalOf(code)
	if !ok {
		return nil
	}
	return NewError(r.Status, r.Code, r.Message)
}

type equbContributeJSON struct {
	GroupID    string `json:"groupId"`
	CycleID    string `json:"cycleId"`
	Status     string `json:"status"`
	WorkflowID string `json:"workflowId"`
}

// contributeEqub starts the contribution saga and answers once the member's account has passed
// the lookup and the transfer member → escrow is initiated (202 DISBURSING, or POSTED / FAILED
// when the partner answered at once; 503 DECISION_PENDING, not stored, when the wait ran out
// before the saga decided), or with the refusal from internal/equb's table. The
// pre-check refuses in the database what the saga would (not a member: 404; no OPEN cycle, no
// ACTIVE escrow binding, already contributed: 409 audited DENIED) — unless the contribution is
// held by the saga this key names, whose answer is then the answer. A key whose saga recorded a
// contribution to another group or by another member, or answered another group (its
// idempotency record expired, and the key is sent again for a new request), is 422
// IDEMPOTENCY_KEY_REUSED, nothing started.
func (s *Server) contributeEqub(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	cl := callerOf(c)
	wfID, _ := idempotency.WorkflowIDFrom(c.Request.Context())
	plan, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (equb.MoneyPlan, error) {
		return equb.LoadContributionPlan(ctx, tx, id, cl.User.ID, wfID)
	})
	if equb.CodeOf(err) == equb.CodeKeyReused {
		writeError(c, equbRefusal(equb.CodeKeyReused)) // no audit: the key is the caller's mistake
		return
	}
	if err != nil && (plan.Owner == "" || plan.Owner != wfID) {
		s.payrollAnswer(c, "ContributeEqub", "EqubGroup", id, err)
		return
	}
	runSaga(s, c, sagaCall[workflows.EqubContributeAccepted, workflows.EqubContributeResult]{
		Workflow: workflows.EqubContributeWorkflowName,
		Input: workflows.EqubContributeInput{TenantID: cl.Tenant, GroupID: id, UserID: cl.User.ID,
			CorrelationID: requestID(c)},
		BusinessKey: id,
		Update:      workflows.EqubContributeAcceptedUpdate, UpdateID: workflows.EqubContributeAcceptedUpdateID,
		Refused: func(app *temporal.ApplicationError) (*Error, bool) {
			e := equbRefusal(app.Type())
			return e, e != nil
		},
		KeyReused: equbRefusal(equb.CodeKeyReused),
		Accepted: func(wfID string, a workflows.EqubContributeAccepted) (int, any) {
			// The group only: a run this call started plans the OPEN cycle again, which may have
			// moved on since the pre-check read it.
			if a.GroupID != id {
				return keyReusedAnswer(c, equbRefusal(equb.CodeKeyReused)) // the key's saga's answer to another
			}
			return http.StatusAccepted, equbContributeJSON{GroupID: id, CycleID: a.CycleID, Status: a.Status, WorkflowID: wfID}
		},
		// Never "DISBURSING" before the saga's claim, which may still refuse: 503
		// DECISION_PENDING, not stored, and the retry with the key gets the saga's answer.
		NoPendingAnswer: true,
		Closed: func(wfID string, r workflows.EqubContributeResult) (int, any, error) {
			if otherEqubMove(r.GroupID, r.CycleID, id, plan.CycleID) {
				return 0, nil, equbRefusal(equb.CodeKeyReused)
			}
			if r.Status != workflows.EqubContributeRefused {
				return http.StatusAccepted, equbContributeJSON{GroupID: id, CycleID: r.CycleID, Status: r.Status, WorkflowID: wfID}, nil
			}
			if e := equbRefusal(r.Code); e != nil {
				return 0, nil, e
			}
			return 0, nil, errors.New("equb contribute: the saga was refused with an unknown code " + r.Code)
		},
		LogAttrs: []any{"group_id", id},
	})
}

// payOutEqub starts the payout saga of the group's cycle and answers once the transfer escrow →
// recipient is initiated (202 DISBURSING, or PAID / FAILED when the partner answered at once; 503
// DECISION_PENDING, not stored, when the wait ran out before the saga decided).
// The pre-check refuses what the saga would: an unknown cycle 404; contributions not all POSTED
// while the group's default rule does not let the cycle pay what was collected (409
// EQUB_CONTRIBUTIONS_OUTSTANDING), a cycle or recipient already paid or being paid (409
// EQUB_ALREADY_PAID_OUT), audited DENIED — unless the payout is this key's saga's. A key whose
// saga recorded, or answered, another group's or cycle's payout is 422 IDEMPOTENCY_KEY_REUSED,
// nothing started.
func (s *Server) payOutEqub(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	raw := c.Param("cycle")
	number, err := strconv.Atoi(raw)
	if err != nil || number < 1 || number > equb.MaxMembers || strconv.Itoa(number) != raw {
		writeError(c, fieldError(&field.Error{Field: "cycle", Problem: "must be a cycle number from 1 to 50"}))
		return
	}
	cl := callerOf(c)
	wfID, _ := idempotency.WorkflowIDFrom(c.Request.Context())
	plan, err := inTenantBunValue(s, c, func(ctx context.Context, tx db.BunTx) (equb.MoneyPlan, error) {
		return equb.LoadPayoutPlan(ctx, tx, id, number, wfID, s.now())
	})
	if equb.CodeOf(err) == equb.CodeKeyReused {
		writeError(c, equbRefusal(equb.CodeKeyReused)) // no audit: the key is the caller's mistake
		return
	}
	if err != nil && (plan.Owner == "" || plan.Owner != wfID) {
		s.payrollAnswer(c, "PayOutEqub", "EqubGroup", id, err)
		return
	}
	runSaga(s, c, sagaCall[workflows.EqubPayoutAccepted, workflows.EqubPayoutResult]{
		Workflow:    workflows.EqubPayoutWorkflowName,
		Input:       workflows.EqubPayoutInput{TenantID: cl.Tenant, GroupID: id, Cycle: number, ActorID: cl.User.ID, CorrelationID: requestID(c)},
		BusinessKey: id,
		Update:      workflows.EqubPayoutAcceptedUpdate, UpdateID: workflows.EqubPayoutAcceptedUpdateID,
		Refused: func(app *temporal.ApplicationError) (*Error, bool) {
			e := equbRefusal(app.Type())
			return e, e != nil
		},
		KeyReused: equbRefusal(equb.CodeKeyReused),
		Accepted: func(wfID string, a workflows.EqubPayoutAccepted) (int, any) {
			if otherEqubMove(a.GroupID, a.CycleID, id, plan.CycleID) {
				return keyReusedAnswer(c, equbRefusal(equb.CodeKeyReused)) // the key's saga's answer to another
			}
			return http.StatusAccepted, equbContributeJSON{GroupID: id, CycleID: a.CycleID, Status: a.Status, WorkflowID: wfID}
		},
		// Never "DISBURSING" before the saga's claim, which may still refuse: 503
		// DECISION_PENDING, not stored, and the retry with the key gets the saga's answer.
		NoPendingAnswer: true,
		Closed: func(wfID string, r workflows.EqubPayoutResult) (int, any, error) {
			if otherEqubMove(r.GroupID, r.CycleID, id, plan.CycleID) {
				return 0, nil, equbRefusal(equb.CodeKeyReused)
			}
			if r.Status != workflows.EqubPayoutRefused {
				return http.StatusAccepted, equbContributeJSON{GroupID: id, CycleID: r.CycleID, Status: r.Status, WorkflowID: wfID}, nil
			}
			if e := equbRefusal(r.Code); e != nil {
				return 0, nil, e
			}
			return 0, nil, errors.New("equb payout: the saga was refused with an unknown code " + r.Code)
		},
		LogAttrs: []any{"group_id", id, "cycle", number},
	})
}

// otherEqubMove reports whether a saga's answer (its update's or its result's group and cycle) is
// another request's than the call's for group groupID and cycle cycleID (the pre-check's plan: the
// cycle the call names, or the one this key's saga recorded): another group, or another cycle. A
// cycle not known on either side ("": a run refused before it planned) is not compared.
func otherEqubMove(group, cycle, groupID, cycleID string) bool {
	return group != groupID || cycle != "" && cycleID != "" && cycle != cycleID
}
