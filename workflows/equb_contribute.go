package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
)

// The equb contribution saga's contract with its callers (the API's contribute route, tests).

// Registered names.
const (
	EqubContributeWorkflowName = "EqubContribute"
	// EqubContributeAcceptedUpdate completes once the gate has passed and the transfer is
	// initiated (EqubContributeAccepted), or with the refusal (an ApplicationError whose Type is
	// the equb code). The API sends it with Update-with-Start under EqubContributeAcceptedUpdateID.
	EqubContributeAcceptedUpdate   = "equb-contribute-accepted"
	EqubContributeAcceptedUpdateID = "accepted"
	EqubContributeStatusQuery      = "status"
)

// The contribution's outcomes besides the stages: POSTED (settled, the pool posting committed),
// FAILED (the bank refused it, the posting voided), REFUSED (nothing moved).
const (
	EqubContributePosted  = equb.MoneyPosted
	EqubContributeFailed  = equb.MoneyFailed
	EqubContributeRefused = ResultRefused
)

// EqubContributeInput starts the saga: the user's contribution to the group's OPEN cycle. The
// workflow id is idempotency.WorkflowID(tenant, route, Idempotency-Key); the transfer's partner
// reference is partnerref.Leg(partnerref.EqubContribution, workflow id, 1).
type EqubContributeInput struct {
	TenantID      string
	GroupID       string
	UserID        string // the member, by their user (the session's)
	CorrelationID string
	// Payroll is set for a contribution by payroll deduction (the payroll-completion saga,
	// internal/payroll/product_mandate.go): the member by their membership, the amount the
	// run withheld, the money from the employer's payroll account; GroupID and UserID unset.
	Payroll *EqubPayrollSource    `json:",omitempty"`
	Resume  *EqubContributeResume `json:",omitempty"`
}

// EqubPayrollSource is a payroll-deducted contribution's source (equb.PayrollSource).
type EqubPayrollSource = equb.PayrollSource

// EqubContributeResume is the state a run hands the next when it continues as new while the
// partner holds the transfer.
type EqubContributeResume = PayoutResume[equb.MoneyPlan]

// EqubContributeAccepted, EqubContributeProgress and EqubContributeResult are the update's
// answer, the status query's answer and the workflow's result (equb_money.go).
type (
	EqubContributeAccepted = EqubMoneyAccepted
	EqubContributeProgress = EqubMoneyProgress
	EqubContributeResult   = EqubMoneyResult
)

// equbContribution is the contribution saga's description.
var equbContribution = equbMove{
	workflowName: EqubContributeWorkflowName, name: "equb contribute saga",
	query: EqubContributeStatusQuery, update: EqubContributeAcceptedUpdate,
	kind: partnerref.EqubContribution, ledgerStep: "contribute", intoEscrow: true,
	recordRefusals: map[string]bool{equb.CodeGroupNotFound: true, equb.CodeNotMember: true, equb.CodeCycleNotOpen: true,
		equb.CodeContributionNotDue: true,
		equb.CodeEscrowNotActive:    true, equb.CodeAlreadyContributed: true, equb.CodeAmountMismatch: true, equb.CodePayrollAccountNotSet: true},
	paidStage: EqubContributePosted, failedStage: EqubContributeFailed,
	loadPlan:   activities.EqubContributionLoadPlan,
	claim:      equbRecord(localRecordOptions(), activities.EqubContributionClaim),
	markPaid:   equbRecord(localCatchUpRecordOptions(), activities.EqubContributionMarkPosted),
	markFailed: equbRecord(localCatchUpRecordOptions(), activities.EqubContributionMarkFailed),
	paidLog:    "equb contribution posted",
}

// EqubContribute moves one member's contribution into the cycle's escrow on the payout block
// (runEqubMove): the plan (the OPEN cycle with its ACTIVE escrow binding, the member's account),
// the account gate, a PENDING ledger transaction (Dr partner-bank:<partner>:<escrow> / Cr
// equb:pool:<tenant>:<cycle>, its bank_reference the leg reference), the claim recording the
// contribution PENDING (the database's index refuses a second one of the member for the cycle: the
// posting is voided), the transfer member → escrow, then the settlement (the bank callback's
// signal for domain EQUB, or the status lookup): SETTLED commits the posting and the contribution
// is POSTED; FAILED voids it and the contribution is FAILED (failContribution), nothing posted.
func EqubContribute(ctx workflow.Context, in EqubContributeInput) (EqubContributeResult, error) {
	return runEqubMove(ctx, equbContribution, in.TenantID, in.CorrelationID,
		activities.EqubStep{GroupID: in.GroupID, UserID: in.UserID, Payroll: in.Payroll}, in.Resume,
		func(r *EqubContributeResume) any {
			next := in
			next.Resume = r
			return next
		})
}
