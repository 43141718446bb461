package payroll

import (
	"context"
	"fmt"

	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The loader's families of this file (LoadInputs' inputLoaders): the period's APPROVED one-time
// earnings and the earnings REVERSED into it (one query), and its APPROVED overtime (one query),
// mapped by CalcEarnings, CalcReversals and CalcOvertime. They read with db.Select, so they run in
// the caller's bun or pgx transaction like the other families.

type earningLoadRow struct {
	EmployeeID string `bun:"employee_id" db:"employee_id"`
	ID         string `bun:"id" db:"id"`
	Kind       string `bun:"kind" db:"kind"`
	Amount     int64  `bun:"amount" db:"amount"`
	Taxable    bool   `bun:"taxable" db:"taxable"`
	Reversal   bool   `bun:"reversal" db:"reversal"`
}

// loadOneTimeEarnings adds the period's approved earnings (Earnings, and OTHER as EARNING
// adjustments) and the reversals taken back in it (DEDUCTION adjustments). A REVERSED earning
// stays paid in its own period, as a reversed adjustment does (PostedAdjustmentsForPeriod): its
// reversal is always in a later period (the schema holds it), which takes it back. Found by an
// audit: an earning reversed before its period's run was approved (reverse follows the calendar)
// was dropped from that run and deducted again by the reversal — taken back without being paid.
func loadOneTimeEarnings(ctx context.Context, tx db.Writer, period string, opt LoadOptions, byID map[string]*paycalc.Input) error {
	tenant := tenancy.TenantID(ctx)
	rows, err := db.Select[earningLoadRow](ctx, tx, `
		SELECT employee_id, id, kind, amount_santim::bigint AS amount, taxable, false AS reversal
		FROM app.payroll_one_time_earnings
		WHERE tenant_id = ? AND period = ? AND (? = '' OR employee_id = ?)
			AND (status = 'APPROVED' OR (status = 'REVERSED' AND reversal_period > period))
		UNION ALL
		SELECT employee_id, id, kind, amount_santim::bigint, taxable, true
		FROM app.payroll_one_time_earnings
		WHERE tenant_id = ? AND reversal_period = ? AND status = 'REVERSED' AND (? = '' OR employee_id = ?)
		ORDER BY 1, 2`,
		tenant, period, opt.EmployeeID, opt.EmployeeID, tenant, period, opt.EmployeeID, opt.EmployeeID)
	if err != nil {
		return fmt.Errorf("payroll: load one-time earnings: %w", err)
	}
	for _, r := range rows {
		in := byID[r.EmployeeID]
		if in == nil {
			continue
		}
		e := []OneTimeEarning{{ID: r.ID, EmployeeID: r.EmployeeID, Kind: EarningKind(r.Kind), AmountSantim: r.Amount, Taxable: r.Taxable}}
		if r.Reversal {
			in.Adjustments = append(in.Adjustments, CalcReversals(e)...)
			continue
		}
		earnings, adjustments := CalcEarnings(e)
		in.Earnings = append(in.Earnings, earnings...)
		in.Adjustments = append(in.Adjustments, adjustments...)
	}
	return nil
}

type overtimeLoadRow struct {
	EmployeeID string `bun:"employee_id" db:"employee_id"`
	ID         string `bun:"id" db:"id"`
	Minutes    int64  `bun:"minutes" db:"minutes"`
	Multiplier int64  `bun:"multiplier" db:"multiplier"`
}

// loadOvertime adds the period's approved overtime entries.
func loadOvertime(ctx context.Context, tx db.Writer, period string, opt LoadOptions, byID map[string]*paycalc.Input) error {
	rows, err := db.Select[overtimeLoadRow](ctx, tx, `
		SELECT employee_id, id, minutes::bigint AS minutes, multiplier_basis_points::bigint AS multiplier
		FROM app.payroll_overtime_entries
		WHERE tenant_id = ? AND period = ? AND status = 'APPROVED' AND (? = '' OR employee_id = ?)
		ORDER BY 1, 2`,
		tenancy.TenantID(ctx), period, opt.EmployeeID, opt.EmployeeID)
	if err != nil {
		return fmt.Errorf("payroll: load overtime: %w", err)
	}
	for _, r := range rows {
		if in := byID[r.EmployeeID]; in != nil {
			in.Overtime = append(in.Overtime, CalcOvertime([]OvertimeEntry{{ID: r.ID, Minutes: r.Minutes, MultiplierBasisPoints: r.Multiplier}})...)
		}
	}
	return nil
}
