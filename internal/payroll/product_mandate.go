package payroll

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Product mandates: the one mechanism by which another product's obligation is collected by
// payroll deduction (issues 28 and 29). A product mandate is a deduction mandate (mandate.go) of
// a product kind whose reference names the product's object:
//
//   - EQUB_CONTRIBUTION — reference: the equb membership (eqm_…); the amount the group's
//     contribution. Collected: the member's contribution to the group's OPEN cycle.
//   - BNPL_INSTALLMENT — reference: the BNPL agreement; the amount an instalment's (its earliest
//     DUE one's at the opt-in, POST /api/bnpl/agreements/<id>/installment-mandate). Each period's
//     line is the agreement's earliest DUE instalment's amount at the calculation, never more
//     than the mandate's (what the employer activated), and there is none once no instalment is
//     DUE: instalments split to the santim differ by one (money.Allocate), a restructure may
//     make them smaller, and a settled agreement owes nothing. Collected: the agreement's
//     earliest DUE instalment, when its amount is the line's (a restructure into larger
//     instalments needs a new mandate).
//   - SAVINGS_AUTOSAVE — reference: the savings goal; the amount the saver chose.
//
// Who creates one: the member or customer, opting in through a route of the product for their
// own object (e.g. POST /api/equb/groups/<id>/contribution-mandate: the caller's own ACTIVE
// membership, never another member's; another organization's group is 404). The product checks
// the object and calls CreateProductMandate in its transaction: the mandate is PENDING, created
// by the member, and is activated like every mandate (payroll.approve, by another user than its
// creator: POST /api/payroll/deduction-mandates/<id>/activate) — the employer agrees to withhold
// it. Suspend, resume and cancel are the payroll routes' as for every mandate. At most one live
// (PENDING, ACTIVE or SUSPENDED) mandate per product object (PAYROLL_MANDATE_EXISTS, 409). The
// payroll's own create route refuses the product kinds (they need their product's check).
//
// The calculator (paycalc) takes a product mandate in the voluntary mandates' place (after court
// orders, loan instalments and EWA recoveries), within the protection policy (the share cap and
// the minimum net), and whole or not at all (paycalc.Whole): the product records only the whole
// amount; one the room does not cover is neither taken nor carried forward, and stays owed at
// its product (the member contributes by the product's own route).
//
// Completion (complete.go, workflows.PayrollCompleteBatch): each PAID entry's product line is an
// obligation of the run, applied exactly once per (run, entry, mandate) by the product's own
// saga with Source PAYROLL under PayrollProductWorkflowID (a hash of the key, so the transfer's
// partner reference stays bounded): the money moves from the employer's payroll account at the
// partner bank (where the withheld pay stayed, as for a loan remittance) to where the product
// keeps it — an equb contribution to the cycle's escrow account (workflows.EqubContribute, the
// pool mirror's journal as for a member's own contribution); a BNPL instalment by the collection
// saga (workflows.BnplCollect), the money staying in the payroll account, since the business is
// the creditor (internal/bnpl/doc.go, "Collected by payroll deduction"); a savings auto-save to
// the savings escrow account as a deposit into the goal (workflows.SavingsMove with a payroll
// source, the deposit's journal, the movement's source PAYROLL with the mandate). A FAILED
// entry's product line is not applied (nothing was withheld): the obligation stays owed at the
// product. A product that
// refuses the collection (no OPEN cycle, already contributed, a different amount) is reported
// line by line in payroll.run_completed.v1 (refused) for an operator to refund the employee, as
// for loans.

// ProductKinds are the product mandate kinds.
var ProductKinds = []string{KindEqubContribution, KindBnplInstallment, KindSavingsAutosave}

// ProductKind reports whether kind is a product mandate kind.
func ProductKind(kind string) bool {
	for _, k := range ProductKinds {
		if k == kind {
			return true
		}
	}
	return false
}

// CodeMandateExists: a live mandate already collects the product object.
const CodeMandateExists = "PAYROLL_MANDATE_EXISTS"

// CodeProductNotCollected is a completion's refusal code for a product line whose product does
// not take payroll collections (reported in payroll.run_completed.v1, the line still owed).
const CodeProductNotCollected = "PAYROLL_PRODUCT_NOT_COLLECTED"

// ProductMandate is what a product's opt-in records.
type ProductMandate struct {
	Kind         string // a product kind
	EmployeeID   string // the member's or customer's employee
	Reference    string // the product object
	AmountSantim int64  // per period
	StartPeriod  string
	EndPeriod    string // "" until cancelled
	Description  string
}

// CreateProductMandate records a PENDING product mandate (audited CreateDeductionMandate, event
// payroll.deduction_mandate_created.v1, as every mandate): the product has checked that the
// object is the caller's. Errors: field errors; ErrEmployeeNotFound; PAYROLL_EMPLOYEE_TERMINATED
// (422); PAYROLL_MANDATE_EXISTS (409) when a live mandate collects the object already.
func CreateProductMandate(ctx context.Context, tx db.BunTx, in ProductMandate, now time.Time) (Mandate, error) {
	if !ProductKind(in.Kind) {
		return Mandate{}, fmt.Errorf("payroll: %q is not a product mandate kind", in.Kind) // a programming error
	}
	amount := in.AmountSantim
	nm := NewMandate{EmployeeID: in.EmployeeID, Kind: in.Kind, AmountSantim: &amount, StartPeriod: in.StartPeriod,
		EndPeriod: in.EndPeriod, Reference: in.Reference, Description: in.Description}
	if err := nm.check(true); err != nil {
		return Mandate{}, err
	}
	// One live mandate per object: racing opt-ins wait here (the unique index is the backstop).
	if err := lockTenantKey(ctx, tx, "product-mandate:"+in.Kind+":"+in.Reference); err != nil {
		return Mandate{}, err
	}
	var live string
	err := tx.QueryRow(ctx, `SELECT coalesce(min(id), '') FROM app.payroll_deduction_mandates
		WHERE tenant_id = $1 AND kind = $2 AND reference = $3 AND status IN ($4, $5, $6)`,
		tenancy.TenantID(ctx), in.Kind, in.Reference, MandatePending, MandateActive, MandateSuspended).Scan(&live)
	if err != nil {
		return Mandate{}, fmt.Errorf("payroll.create_product_mandate: %w", err)
	}
	if live != "" {
		return Mandate{}, &Refusal{Code: CodeMandateExists, Status: http.StatusConflict,
			Message: "a deduction mandate already collects this by payroll deduction (cancel it first)",
			Details: map[string]any{"mandateId": live}}
	}
	return createMandate(ctx, tx, nm, now)
}

// LiveProductMandate is a product object's live (PENDING, ACTIVE or SUSPENDED) mandate.
type LiveProductMandate struct {
	ID           string `bun:"id" db:"id"`
	Reference    string `bun:"reference" db:"reference"`
	AmountSantim int64  `bun:"amount_santim" db:"amount_santim"`
	Status       string `bun:"status" db:"status"`
}

// LiveProductMandates reads the live mandate of kind of each of the product objects refs (at most
// one each), by reference: what a product shows its member next to the object.
func LiveProductMandates(ctx context.Context, tx db.Writer, kind string, refs []string) (map[string]LiveProductMandate, error) {
	out := map[string]LiveProductMandate{}
	if len(refs) == 0 {
		return out, nil
	}
	rows, err := db.Select[LiveProductMandate](ctx, tx, `SELECT id, reference, amount_santim::bigint AS amount_santim, status
		FROM app.payroll_deduction_mandates WHERE tenant_id = ? AND kind = ? AND reference IN (?) AND status IN (?)`,
		tenancy.TenantID(ctx), kind, bun.List(refs), bun.List(LiveMandateStatuses))
	if err != nil {
		return nil, fmt.Errorf("payroll.live_product_mandates: %w", err)
	}
	for _, r := range rows {
		out[r.Reference] = r
	}
	return out, nil
}

// MandateInOpenRun reports whether a payroll run that has not ended yet may still take employee's
// mandate: a run being calculated (its figures are not written yet), or a calculated, approved,
// disbursing or disbursed run one of whose entries of the employee withheld an amount under the
// mandate (its completion still applies it). A product that ends what the mandate pays for (a
// savings goal's close) waits for such a run, so no withheld pay is left with nowhere to go.
func MandateInOpenRun(ctx context.Context, tx db.Writer, employeeID, mandateID string) (bool, error) {
	return inOpenRun(ctx, tx, employeeID, mandateID, `e.deductions @> jsonb_build_array(jsonb_build_object('reference', $3::text))`)
}

// LoanInOpenRun reports whether a payroll run that has not ended yet may still take a loan's
// instalment: a run being calculated, or a calculated, approved, disbursing or disbursed run one
// of whose entries of the employee withheld a LOAN_INSTALLMENT line of the loan (reference
// <loan>#<index>; its completion still applies it). A change to the loan's schedule (a
// restructure, a write-off) waits for such a run, so the withheld instalment is applied where it
// was owed.
func LoanInOpenRun(ctx context.Context, tx db.Writer, employeeID, loanID string) (bool, error) {
	return inOpenRun(ctx, tx, employeeID, loanID, `EXISTS (SELECT 1 FROM jsonb_array_elements(e.deductions) d
		WHERE d->>'kind' = 'LOAN_INSTALLMENT' AND starts_with(d->>'reference', $3::text || '#'))`)
}

// EwaInOpenRun reports whether a payroll run that has not ended yet may still recover an EWA
// advance: a run being calculated, or a calculated, approved, disbursing or disbursed run one of
// whose entries of the employee withheld an EWA_RECOVERY line of the request (its completion still
// applies it). A repayment recorded by hand waits for such a run, so the withheld recovery is
// applied to the advance instead of being refused at completion with the employee charged twice.
func EwaInOpenRun(ctx context.Context, tx db.Writer, employeeID, requestID string) (bool, error) {
	return inOpenRun(ctx, tx, employeeID, requestID, `e.deductions @> jsonb_build_array(jsonb_build_object('kind', $8::text, 'reference', $3::text))`,
		string(paycalc.KindEWARecovery))
}

// RefuseInOpenRun answers refusal while a payroll run that has not completed withheld, or may
// still withhold, product object ref under any mandate of kind (a product kind), whatever the
// mandate's status now: a mandate cancelled after a run withheld under it still has that line
// applied at the run's completion (MandateInOpenRun for every such mandate). A product that
// changes what the object owes or takes (a manual collection, a restructure, a write-off, a
// close) waits for such a run, so the withheld line is applied to what it was withheld for.
func RefuseInOpenRun(ctx context.Context, tx db.Writer, employeeID, kind, ref string, refusal error) error {
	// An object no mandate ever collected is in no run (not even one being calculated).
	var any bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM app.payroll_deduction_mandates WHERE tenant_id = $1 AND kind = $2 AND reference = $3)`,
		tenancy.TenantID(ctx), kind, ref).Scan(&any); err != nil {
		return fmt.Errorf("payroll: the mandates of %s: %w", ref, err)
	}
	if !any {
		return nil
	}
	open, err := inOpenRun(ctx, tx, employeeID, ref, `EXISTS (SELECT 1 FROM app.payroll_deduction_mandates m
		WHERE m.tenant_id = e.tenant_id AND m.kind = $8 AND m.reference = $3
			AND e.deductions @> jsonb_build_array(jsonb_build_object('reference', m.id)))`, kind)
	if err != nil || !open {
		return err
	}
	return refusal
}

// inOpenRun is whether a run is being calculated, or a run not yet completed has an entry of
// employeeID one of whose lines matches line (SQL over e.deductions, $3 being ref; extra are
// $8 on).
func inOpenRun(ctx context.Context, tx db.Writer, employeeID, ref, line string, extra ...any) (bool, error) {
	var open bool
	args := append([]any{tenancy.TenantID(ctx), employeeID, ref, RunCalculated, RunApproved, RunDisbursing, RunDisbursed}, extra...)
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM app.payroll_runs r WHERE r.tenant_id = $1 AND r.calculating_at IS NOT NULL)
		OR EXISTS (SELECT 1 FROM app.payroll_entries e JOIN app.payroll_runs r ON r.tenant_id = e.tenant_id AND r.id = e.run_id
			WHERE e.tenant_id = $1 AND e.employee_id = $2 AND r.status IN ($4, $5, $6, $7) AND `+line+`)`, args...).Scan(&open)
	if err != nil {
		return false, fmt.Errorf("payroll: a run not yet completed: %w", err)
	}
	return open, nil
}
