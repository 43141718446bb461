package activities

import (
	"context"
	"errors"

	"github.com/uptrace/bun"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Registered names of the equb sagas' record steps (histories reference them).
const (
	EqubContributionLoadPlanActivity   = "equb.contribution.LoadPlan"
	EqubContributionClaimActivity      = "equb.contribution.Claim"
	EqubContributionMarkPostedActivity = "equb.contribution.MarkPosted"
	EqubContributionMarkFailedActivity = "equb.contribution.MarkFailed"
	EqubPayoutLoadPlanActivity         = "equb.payout.LoadPlan"
	EqubPayoutClaimActivity            = "equb.payout.Claim"
	EqubPayoutMarkPaidActivity         = "equb.payout.MarkPaid"
	EqubPayoutMarkFailedActivity       = "equb.payout.MarkFailed"
)

// The record steps, typed (what workflows call).
var (
	EqubContributionLoadPlan   = Activity[EqubStep, equb.MoneyPlan]{EqubContributionLoadPlanActivity}
	EqubContributionClaim      = Activity[EqubStep, equb.Contribution]{EqubContributionClaimActivity}
	EqubContributionMarkPosted = Activity[EqubStep, equb.Contribution]{EqubContributionMarkPostedActivity}
	EqubContributionMarkFailed = Activity[EqubStep, equb.Contribution]{EqubContributionMarkFailedActivity}
	EqubPayoutLoadPlan         = Activity[EqubStep, equb.MoneyPlan]{EqubPayoutLoadPlanActivity}
	EqubPayoutClaim            = Activity[EqubStep, equb.Payout]{EqubPayoutClaimActivity}
	EqubPayoutMarkPaid         = Activity[EqubStep, equb.Payout]{EqubPayoutMarkPaidActivity}
	EqubPayoutMarkFailed       = Activity[EqubStep, equb.Payout]{EqubPayoutMarkFailedActivity}
)

// EqubContributionSaga is the actor of the equb sagas' steps and gates (contributions and payouts).
const EqubContributionSaga = "equb-contribution"

// The subject and target of the equb sagas' gates: the member (an employee) and their
// contribution or payout.
const (
	EqubGateSubjectType = "EMPLOYEE"
	EqubGateTargetType  = "EqubGroup"
)

// Equb holds the equb sagas' record steps: each is internal/equb's function in one tenant-scoped
// transaction through recordBunStep, acting as the saga with the HTTP request id; the store's
// refusals are non-retryable errors typed by their equb code.
type Equb struct {
	DB *bun.DB // the runtime role's pool (db.NewBun)
	// Now is the steps' clock (nil: time.Now): the rows' instants and the default rule's "is the
	// cycle due" (equb.LoadPayoutPlan, equb.ClaimPayout).
	Now Clock
	// MoneyMovement is EQUB_MONEY_MOVEMENT_ENABLED as the worker has it: off, a contribution by
	// payroll deduction (started by a payroll run's completion, not by a route) is refused at its
	// plan, before anything is written or moved (EQUB_MONEY_MOVEMENT_DISABLED; the completion
	// reports the line refused and the obligation stays owed). The routes check the API's own
	// switch before they start a saga, so the sagas they start are not asked again.
	MoneyMovement bool
}

// EqubStep names the group, the member (by their user) and the saga run; the other fields belong
// to the steps that use them.
type EqubStep struct {
	Run
	GroupID string
	UserID  string // a contribution's member
	// Payroll: a contribution by payroll deduction (the member by membership; LoadPlan).
	Payroll    *equb.PayrollSource `json:",omitempty"`
	Cycle      int                 // a payout's cycle number
	Plan       equb.MoneyPlan      // Claim
	LedgerTxID string              // Claim
	TransferID string              // MarkPosted
	// Reference is the transfer's partner reference (MarkPosted, PayoutMarkPaid; "" in runs
	// recorded before it was passed: the settled event then names none).
	Reference string `json:",omitempty"`
	Reason    string // MarkFailed: the failure's code
}

// LoadPlan reads what the contribution needs (equb.LoadContributionPlan); its refusals are
// non-retryable. A contribution this run already concluded (equb.ContributionConcludedBy: its
// steps run again after a lost workflow task) is answered first, before the switch and the plan,
// as its plan's Concluded.
func (a *Equb) LoadPlan(ctx context.Context, in EqubStep) (equb.MoneyPlan, error) {
	var p equb.MoneyPlan
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) (err error) {
		ct, done, err := equb.ContributionConcludedBy(ctx, tx, in.WorkflowID)
		if err != nil || done {
			if done {
				p = ct.ConcludedPlan()
			}
			return err
		}
		if in.Payroll != nil {
			if !a.MoneyMovement {
				return equb.RefusalError(equb.CodeMoneyMovementOff)
			}
			p, err = equb.LoadPayrollContributionPlan(ctx, tx, *in.Payroll, in.WorkflowID)
			return err
		}
		p, err = equb.LoadContributionPlan(ctx, tx, in.GroupID, in.UserID, in.WorkflowID)
		return err
	})
	return p, err
}

// Claim records the contribution PENDING with its pending pool posting; the same run again is a
// no-op, another run's contribution EQUB_ALREADY_CONTRIBUTED.
func (a *Equb) Claim(ctx context.Context, in EqubStep) (equb.Contribution, error) {
	var c equb.Contribution
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) (err error) {
		c, err = equb.ClaimContribution(ctx, tx, in.Plan, in.WorkflowID, in.LedgerTxID, a.Now.Now())
		return err
	})
	return c, err
}

// MarkPosted records the settled contribution (POSTED).
func (a *Equb) MarkPosted(ctx context.Context, in EqubStep) (equb.Contribution, error) {
	var c equb.Contribution
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) (err error) {
		c, err = equb.MarkContributionPosted(ctx, tx, in.WorkflowID, in.TransferID, in.Reference, a.Now.Now())
		return err
	})
	return c, err
}

// MarkFailed records the failed contribution (FAILED, failContribution).
func (a *Equb) MarkFailed(ctx context.Context, in EqubStep) (equb.Contribution, error) {
	var c equb.Contribution
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) (err error) {
		c, err = equb.MarkContributionFailed(ctx, tx, in.WorkflowID, in.Reason, a.Now.Now())
		return err
	})
	return c, err
}

// PayoutLoadPlan reads what the cycle's payout needs (equb.LoadPayoutPlan: the group's default
// rule allows it now, no other payout of the cycle or its recipient). A payout this run already
// concluded (equb.PayoutConcludedBy: its steps run again after a lost workflow task) is answered
// first, as its plan's Concluded: LoadPayoutPlan skips a FAILED payout and would plan the cycle
// again.
func (a *Equb) PayoutLoadPlan(ctx context.Context, in EqubStep) (equb.MoneyPlan, error) {
	var p equb.MoneyPlan
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) (err error) {
		po, done, err := equb.PayoutConcludedBy(ctx, tx, in.WorkflowID)
		if err != nil || done {
			if done {
				p = po.ConcludedPlan()
			}
			return err
		}
		p, err = equb.LoadPayoutPlan(ctx, tx, in.GroupID, in.Cycle, in.WorkflowID, a.Now.Now())
		return err
	})
	return p, err
}

// PayoutClaim records the payout PENDING (the cycle PAYING); the same run again is a no-op.
func (a *Equb) PayoutClaim(ctx context.Context, in EqubStep) (equb.Payout, error) {
	var p equb.Payout
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) (err error) {
		p, err = equb.ClaimPayout(ctx, tx, in.Plan, in.WorkflowID, in.LedgerTxID, a.Now.Now())
		return err
	})
	return p, err
}

// PayoutMarkPaid records the settled payout (PAID, the cycle PAID).
func (a *Equb) PayoutMarkPaid(ctx context.Context, in EqubStep) (equb.Payout, error) {
	var p equb.Payout
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) (err error) {
		p, err = equb.MarkPayoutPaid(ctx, tx, in.WorkflowID, in.TransferID, in.Reference, a.Now.Now())
		return err
	})
	return p, err
}

// PayoutMarkFailed records the failed payout (FAILED, the cycle OPEN again).
func (a *Equb) PayoutMarkFailed(ctx context.Context, in EqubStep) (equb.Payout, error) {
	var p equb.Payout
	err := a.inTx(ctx, in, func(ctx context.Context, tx db.BunTx) (err error) {
		p, err = equb.MarkPayoutFailed(ctx, tx, in.WorkflowID, in.Reason, a.Now.Now())
		return err
	})
	return p, err
}

// Register registers the record steps.
func (a *Equb) Register(r worker.ActivityRegistry) {
	EqubContributionLoadPlan.Register(r, a.LoadPlan)
	EqubContributionClaim.Register(r, a.Claim)
	EqubContributionMarkPosted.Register(r, a.MarkPosted)
	EqubContributionMarkFailed.Register(r, a.MarkFailed)
	EqubPayoutLoadPlan.Register(r, a.PayoutLoadPlan)
	EqubPayoutClaim.Register(r, a.PayoutClaim)
	EqubPayoutMarkPaid.Register(r, a.PayoutMarkPaid)
	EqubPayoutMarkFailed.Register(r, a.PayoutMarkFailed)
}

func (a *Equb) inTx(ctx context.Context, in EqubStep, fn func(context.Context, db.BunTx) error) error {
	subject := field.Identifier("groupId", in.GroupID, field.MaxIdentifier)
	if in.Payroll != nil && in.GroupID == "" { // a payroll deduction's plan names the membership
		subject = field.Identifier("payroll.membershipId", in.Payroll.MembershipID, field.MaxIdentifier)
	}
	return recordBunStep(ctx, a.DB, in.Run, EqubContributionSaga,
		errors.Join(subject, field.Text("reason", in.Reason, field.MaxText)),
		equbError, fn, "group_id", in.GroupID, "tx_id", in.LedgerTxID, "transfer_id", in.TransferID)
}

// equbError types the store's refusals by their equb code (non-retryable); anything else is
// temporalError's.
func equbError(err error) error {
	var r *payroll.Refusal
	if errors.As(err, &r) && equb.CodeOf(err) != "" {
		return nonRetryable(r.Message, r.Code)
	}
	return temporalError(err)
}
