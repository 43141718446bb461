package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
)

// The equb payout saga's contract with its callers (the API's payout route, tests).

// Registered names.
const (
	EqubPayoutWorkflowName = "EqubPayout"
	// EqubPayoutAcceptedUpdate completes once the transfer escrow → recipient is initiated
	// (EqubPayoutAccepted), or with the refusal (an ApplicationError typed by the equb code).
	EqubPayoutAcceptedUpdate   = "equb-payout-accepted"
	EqubPayoutAcceptedUpdateID = "accepted"
	EqubPayoutStatusQuery      = "status"
)

// The payout's outcomes besides the stages.
const (
	EqubPayoutPaid    = equb.MoneyPaid
	EqubPayoutFailed  = equb.MoneyFailed
	EqubPayoutRefused = ResultRefused
)

// EqubPayoutInput starts the saga: the payout of the group's cycle number. The workflow id is
// idempotency.WorkflowID(tenant, route, Idempotency-Key); the transfer's partner reference is
// partnerref.Leg(partnerref.EqubPayout, workflow id, 1).
type EqubPayoutInput struct {
	TenantID      string
	GroupID       string
	Cycle         int
	ActorID       string
	CorrelationID string
	Resume        *EqubPayoutResume `json:",omitempty"`
}

// EqubPayoutResume is the state a run hands the next when it continues as new.
type EqubPayoutResume = PayoutResume[equb.MoneyPlan]

// EqubPayoutAccepted, EqubPayoutProgress and EqubPayoutResult are the update's answer, the
// status query's answer and the workflow's result (equb_money.go).
type (
	EqubPayoutAccepted = EqubMoneyAccepted
	EqubPayoutProgress = EqubMoneyProgress
	EqubPayoutResult   = EqubMoneyResult
)

// equbPayout is the payout saga's description.
var equbPayout = equbMove{
	workflowName: EqubPayoutWorkflowName, name: "equb payout saga",
	query: EqubPayoutStatusQuery, update: EqubPayoutAcceptedUpdate,
	kind: partnerref.EqubPayout, ledgerStep: "payout",
	recordRefusals: map[string]bool{equb.CodeGroupNotFound: true, equb.CodeCycleNotFound: true, equb.CodeCycleNotOpen: true,
		equb.CodeEscrowNotActive: true, equb.CodeContributionsPending: true, equb.CodeAlreadyPaidOut: true},
	paidStage: EqubPayoutPaid, failedStage: EqubPayoutFailed,
	loadPlan:   activities.EqubPayoutLoadPlan,
	claim:      equbRecord(localRecordOptions(), activities.EqubPayoutClaim),
	markPaid:   equbRecord(localCatchUpRecordOptions(), activities.EqubPayoutMarkPaid),
	markFailed: equbRecord(localCatchUpRecordOptions(), activities.EqubPayoutMarkFailed),
	paidLog:    "equb payout paid",
}

// EqubPayout pays a cycle's pot to its recipient on the payout block (runEqubMove), only once
// every contribution the cycle waits for is POSTED: the plan (the pool = the POSTED contributions,
// the recipient's account), the account gate on it, a PENDING ledger transaction (Dr
// equb:pool:<tenant>:<cycle> / Cr partner-bank:<partner>:<escrow>, bank_reference the leg
// reference), the claim (the payout PENDING, the cycle PAYING; the database's indexes allow one
// payout per cycle and one per member of the group: a refused claim voids the posting), the
// transfer escrow → recipient, then the settlement: SETTLED commits the posting (the pool mirror
// back to zero), the payout PAID and the cycle PAID (the group COMPLETED after its last);
// FAILED voids it, the payout FAILED and the cycle OPEN again for a new key.
func EqubPayout(ctx workflow.Context, in EqubPayoutInput) (EqubPayoutResult, error) {
	return runEqubMove(ctx, equbPayout, in.TenantID, in.CorrelationID,
		activities.EqubStep{GroupID: in.GroupID, Cycle: in.Cycle}, in.Resume,
		func(r *EqubPayoutResume) any {
			next := in
			next.Resume = r
			return next
		})
}
