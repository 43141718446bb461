package savings

import (
	"context"
	"strconv"
	"time"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// CreateAutosaveMandate is a saver's opt-in to save amount into their goal each pay period by
// payroll deduction: a PENDING SAVINGS_AUTOSAVE deduction mandate (internal/payroll/
// product_mandate.go) for the saver's employee, its reference the goal, from startPeriod (to
// endPeriod, "" until cancelled). It takes effect once a payroll approver activates it; the
// calculator takes it whole within the protection policy or not at all. Errors: field errors
// (amountSantim MinAutosaveSantim to MaxAutosaveSantim, the periods); SAVINGS_GOAL_NOT_FOUND
// (404: another saver's or organization's goal, or none); SAVINGS_GOAL_CLOSED (409);
// PAYROLL_MANDATE_EXISTS (409); PAYROLL_EMPLOYEE_TERMINATED (422).
func CreateAutosaveMandate(ctx context.Context, tx db.BunTx, employeeID, goalID string, amount int64, startPeriod, endPeriod string,
	now time.Time) (payroll.Mandate, error) {
	if err := CheckAutosaveAmount(amount); err != nil {
		return payroll.Mandate{}, err
	}
	// The goal is read locked for share until tx ends: a close, which locks it FOR UPDATE and
	// cancels the goal's live mandates, either commits first (this sees CLOSED) or waits for
	// this opt-in (and finds its mandate to cancel).
	g, err := goalOf(ctx, tx, employeeID, goalID, " FOR SHARE")
	if err != nil {
		return payroll.Mandate{}, err
	}
	if g.Status != GoalActive {
		return payroll.Mandate{}, refuse(CodeGoalClosed)
	}
	return payroll.CreateProductMandate(ctx, tx, payroll.ProductMandate{Kind: payroll.KindSavingsAutosave, EmployeeID: g.EmployeeID,
		Reference: g.ID, AmountSantim: amount, StartPeriod: startPeriod, EndPeriod: endPeriod,
		Description: "Savings auto-save by payroll deduction"}, now)
}

// CheckAutosaveAmount checks an auto-save amount's bounds (the field amountSantim).
func CheckAutosaveAmount(amount int64) error {
	if amount < MinAutosaveSantim || amount > MaxAutosaveSantim {
		return &field.Error{Field: "amountSantim", Problem: "must be " + strconv.FormatInt(MinAutosaveSantim, 10) + " to " +
			strconv.FormatInt(MaxAutosaveSantim, 10)}
	}
	return nil
}
