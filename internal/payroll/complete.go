package payroll

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Completion: DISBURSED → COMPLETED, the run's deductions applied to what they pay off. It is
// the payroll-completion saga's (workflows.PayrollComplete); this file holds its reads and its
// one record step.
//
// What is applied, for each PAID entry, line by line:
//
//   - EWA_RECOVERY (reference: the EWA request id) → the EWA repayment saga, Source PAYROLL
//     (journal: Dr payroll-clearing, Cr receivable-from-employee:<employee>);
//   - LOAN_INSTALLMENT with a loan reference "<loan id>#<index>" (loadLoanInstalments) → the
//     loan repayment saga, Source PAYROLL (journal: Dr payroll-clearing:<loan>, Cr
//     receivable-from-borrower:<loan> the principal part, Cr payable-to-fi-partner the interest
//     and fee parts);
//   - a mandate's line (COURT_ORDER, LOAN_INSTALLMENT, UNION_DUES, COST_SHARING, OTHER with the
//     mandate id "mdt_…" as reference) → the mandate's taken_santim grows by the line, and a
//     mandate with a total taken in full is COMPLETED (audited CompleteDeductionMandate, event
//     payroll.deduction_mandate_completed.v1) — in CompleteRun's transaction, under the run's
//     row lock, so exactly once however often the step is retried (the run is COMPLETED by the
//     same commit);
//   - a product mandate's line (EQUB_CONTRIBUTION, BNPL_INSTALLMENT, SAVINGS_AUTOSAVE with the
//     mandate id as reference) → an obligation (product_mandate.go): the product's own saga
//     records the collection with Source PAYROLL and moves the money from the payroll account to
//     where the product keeps it; the mandate's taken_santim grows as any mandate's;
//   - PAYE, pension, catalog deductions and adjustments: nothing to apply. Adjustments are
//     period-bound (a run reads its period's posted adjustments); what a run could not take of
//     one is in the entry's carried_forward, which the next period's calculation reads.
//
// A FAILED entry's deductions are NOT applied: its employee was not paid, so nothing was
// withheld. They stay owed at their source — the EWA request's outstanding, the instalment's
// repaid amount and the mandate's taken_santim are unchanged — so the next period's calculation
// finds them again in full: the EWA outstanding, the mandates' remaining and the instalment as an
// arrear of its ACTIVE loan (loadLoanInstalments). The completion event counts them (notApplied).
// An operator who pays such an employee outside the run records the repayments by the admin
// routes.
//
// A repayment a source refuses is not retried: the run still completes — holding every later
// period's calculation (PAYROLL_EARLIER_RUN_OPEN) for it would be worse — and the refusal is
// reported, line by line, in payroll.run_completed.v1 (refused) and the audit row, for an
// operator to refund the employee. When the request or instalment was partly repaid by an admin
// route between approval and completion, so the line exceeds what is still owed, the part still
// owed is applied (a second repayment of that amount) and only the excess is refused: the
// source is settled with the money the employee had withheld, and the refund is the excess.

// Codes of the completion refusals.
const (
	// CodeEntriesUnsettled: an entry is neither PAID nor FAILED (the disbursement is not done).
	CodeEntriesUnsettled = "PAYROLL_RUN_ENTRIES_UNSETTLED"
)

// completeRefusals are the completion's refusals, by code.
var completeRefusals = map[string]Refusal{
	CodeRunNotFound:      *ErrRunNotFound,
	CodeRunInvalidState:  {Code: CodeRunInvalidState, Status: http.StatusConflict, Message: "only a DISBURSED payroll run can be completed"},
	CodeEntriesUnsettled: {Code: CodeEntriesUnsettled, Status: http.StatusConflict, Message: "an entry of the run is still being paid: every entry must be PAID or FAILED"},
}

// CompleteRefusalOf is the refusal of a completion saga's code (ok false for another code).
func CompleteRefusalOf(code string) (Refusal, bool) {
	r, ok := completeRefusals[code]
	return r, ok
}

// CheckEntriesSettled refuses a run with an entry that is neither PAID nor FAILED (an entry
// being sent again: PAYROLL_RUN_ENTRIES_UNSETTLED, 409).
func CheckEntriesSettled(ctx context.Context, tx db.BunTx, runID string) error {
	totals, err := SettlementTotals(ctx, tx, runID)
	if err != nil {
		return err
	}
	for _, t := range totals {
		if t.Entries > 0 && t.Status != EntryPaid && t.Status != EntryFailed {
			rf := completeRefusals[CodeEntriesUnsettled]
			rf.Details = map[string]any{"status": t.Status, "entries": t.Entries}
			return &rf
		}
	}
	return nil
}

// Obligation kinds: the deduction lines another domain's saga applies.
const (
	ObligationEWA  = string(paycalc.KindEWARecovery)
	ObligationLoan = string(paycalc.KindLoanInstallment)
)

// Obligation is one deduction line of a PAID entry that another domain's repayment saga applies.
type Obligation struct {
	EntryID    string
	EmployeeID string
	Kind       string // ObligationEWA, ObligationLoan or a product kind (ProductKind)
	Reference  string // the line's reference
	// RequestID is the EWA request (ObligationEWA); LoanID and Index the instalment
	// (ObligationLoan).
	RequestID string `json:",omitempty"`
	LoanID    string `json:",omitempty"`
	Index     int    `json:",omitempty"`
	// ProductRef is a product mandate's object (its reference: the equb membership, the BNPL
	// agreement, the savings goal); the mandate is Reference.
	ProductRef   string `json:",omitempty"`
	AmountSantim int64
}

// ObligationPage is a page of a run's obligations, entry by entry.
type ObligationPage struct {
	Obligations []Obligation
	// Last is the last entry read ("" none): the next page reads after it.
	Last string
	// Done: no entry follows.
	Done bool
}

// MaxObligationPage bounds the entries of one page.
const MaxObligationPage = 1000

// CheckCompletable reads the run and refuses one that cannot be completed: it must be DISBURSED,
// or COMPLETED already (then there is nothing to do; the caller sees the status). Errors:
// ErrRunNotFound; PAYROLL_RUN_INVALID_STATE (409).
func CheckCompletable(ctx context.Context, tx db.BunTx, id string) (Run, error) {
	r, err := getRun(ctx, tx, id, false)
	if err != nil || r.Status == RunCompleted {
		return r, err
	}
	_, err = RunMachine.Next("completed", r.Status)
	return r, err
}

// BeginCompletion is the completion's first step: under the run's row lock, which ClaimRetry
// takes too, it checks the run may be completed (CheckCompletable: a COMPLETED run is answered
// as it is) and that every entry is PAID or FAILED (CheckEntriesSettled), and marks the run
// COMPLETING (CompletingAt, once). From then on ClaimRetry refuses (PAYROLL_RUN_COMPLETING): the
// completion reads the PAID entries' lines page by page and applies the PAID entries' mandates at
// its end, so an entry paid in between would have its mandates applied and its EWA, loan and
// product lines never repaid. A COMPLETED run carries its recorded completion (CompleteRun).
// Errors: CheckCompletable's, PAYROLL_RUN_ENTRIES_UNSETTLED (409).
func BeginCompletion(ctx context.Context, tx db.BunTx, id string) (Run, error) {
	r, err := getRun(ctx, tx, id, true)
	if err != nil || r.Status == RunCompleted {
		return r, err
	}
	if _, err := RunMachine.Next("completed", r.Status); err != nil {
		return r, err
	}
	if err := CheckEntriesSettled(ctx, tx, id); err != nil {
		return r, err
	}
	if r.CompletingAt.IsZero() {
		if err := tx.QueryRow(ctx, `UPDATE app.payroll_runs SET completing_at = now() WHERE tenant_id = $1 AND id = $2 RETURNING completing_at`,
			r.TenantID, r.ID).Scan(&r.CompletingAt); err != nil {
			return r, fmt.Errorf("payroll: begin completion: %w", err)
		}
	}
	return r, nil
}

// obligationKinds matches an entry with at least one line another saga applies.
var obligationKinds = func() string {
	s := `{"[{\"kind\":\"` + ObligationEWA + `\"}]","[{\"kind\":\"` + ObligationLoan + `\"}]"`
	for _, k := range ProductKinds {
		s += `,"[{\"kind\":\"` + k + `\"}]"`
	}
	return s + "}"
}()

// Obligations reads the EWA and loan-instalment lines of the run's PAID entries after the entry
// id after, at most limit entries (1 to MaxObligationPage), by entry id. Entries without such a
// line are skipped by the query (most employees have none). A LOAN_INSTALLMENT line whose
// reference is a mandate's is not an obligation here (CompleteRun applies it).
func Obligations(ctx context.Context, tx db.BunTx, runID, after string, limit int) (ObligationPage, error) {
	if limit < 1 || limit > MaxObligationPage {
		return ObligationPage{}, fmt.Errorf("payroll: obligations: limit %d out of 1..%d", limit, MaxObligationPage)
	}
	rows, err := db.Select[struct {
		ID         string          `bun:"id" db:"id"`
		EmployeeID string          `bun:"employee_id" db:"employee_id"`
		Deductions json.RawMessage `bun:"deductions" db:"deductions"`
	}](ctx, tx, `SELECT id, employee_id, deductions FROM app.payroll_entries
		WHERE tenant_id = ? AND run_id = ? AND status = ? AND id > ? AND deductions @> ANY (?::jsonb[])
		ORDER BY id LIMIT ?`, tenancy.TenantID(ctx), runID, EntryPaid, after, obligationKinds, limit)
	if err != nil {
		return ObligationPage{}, fmt.Errorf("payroll: obligations: %w", err)
	}
	page := ObligationPage{Obligations: []Obligation{}, Done: len(rows) < limit}
	for _, row := range rows {
		page.Last = row.ID
		var lines []DeductionLine
		if err := json.Unmarshal(row.Deductions, &lines); err != nil {
			return ObligationPage{}, fmt.Errorf("payroll: obligations of %s: %w", row.ID, err)
		}
		for _, l := range lines {
			o := Obligation{EntryID: row.ID, EmployeeID: row.EmployeeID, Kind: l.Kind, Reference: l.Reference, AmountSantim: l.AmountSantim}
			switch {
			case l.AmountSantim <= 0:
				continue
			case l.Kind == ObligationEWA:
				o.RequestID = l.Reference
			case l.Kind == ObligationLoan:
				loan, idx, ok := LoanReference(l.Reference)
				if !ok {
					continue // a LOAN_INSTALLMENT mandate's line
				}
				o.LoanID, o.Index = loan, idx
			case ProductKind(l.Kind):
				// The product object is the mandate's reference (productRefs, below).
			default:
				continue
			}
			page.Obligations = append(page.Obligations, o)
		}
	}
	return page, productRefs(ctx, tx, page.Obligations)
}

// productRefs fills the product obligations' ProductRef from their mandates (one query).
func productRefs(ctx context.Context, tx db.BunTx, obs []Obligation) error {
	var ids []string
	for _, o := range obs {
		if ProductKind(o.Kind) {
			ids = append(ids, o.Reference)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := db.Select[struct {
		ID        string `bun:"id" db:"id"`
		Reference string `bun:"reference" db:"reference"`
	}](ctx, tx, `SELECT id, reference FROM app.payroll_deduction_mandates WHERE tenant_id = ? AND id IN (?) AND reference IS NOT NULL`,
		tenancy.TenantID(ctx), bun.List(ids))
	if err != nil {
		return fmt.Errorf("payroll: product obligations: %w", err)
	}
	refs := make(map[string]string, len(rows))
	for _, r := range rows {
		refs[r.ID] = r.Reference
	}
	for i := range obs {
		if ProductKind(obs[i].Kind) {
			obs[i].ProductRef = refs[obs[i].Reference]
		}
	}
	return nil
}

// LoanReference splits a loan instalment's line reference "<loan id>#<index>" (ok false for any
// other reference, e.g. a mandate id).
func LoanReference(ref string) (loanID string, index int, ok bool) {
	i := strings.LastIndexByte(ref, '#')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(ref[i+1:])
	if err != nil || n < 0 || strconv.Itoa(n) != ref[i+1:] {
		return "", 0, false
	}
	return ref[:i], n, true
}

// Tally counts lines and their santim.
type Tally struct {
	Count  int   `json:"count"`
	Santim int64 `json:"santim"`
}

// Add counts one line of santim.
func (t *Tally) Add(santim int64) { t.Count, t.Santim = t.Count+1, t.Santim+santim }

// RefusedDeduction is an obligation its source refused (or whose journal the ledger refused):
// withheld from the employee's pay, not applied.
type RefusedDeduction struct {
	EntryID      string `json:"entryId"`
	Kind         string `json:"kind"`
	Reference    string `json:"reference"`
	AmountSantim int64  `json:"amountSantim"`
	Code         string `json:"code"`
}

// MaxReportedRefusals bounds the refusals listed in the completion event (all are counted).
const MaxReportedRefusals = 100

// CompletionOutcome is what the completion saga reports of the obligations its repayment sagas
// applied.
type CompletionOutcome struct {
	EWA   Tally // EWA recoveries recorded
	Loans Tally // loan instalment repayments recorded
	// Products are the product mandates' collections recorded by their products' sagas
	// (product_mandate.go), by kind.
	Products map[string]Tally `json:",omitempty"`
	// Refused counts every refused obligation; RefusedLines lists the first
	// MaxReportedRefusals.
	Refused      Tally
	RefusedLines []RefusedDeduction
	// Remittances is the number of remit-to-fi sagas started for instalments the run repaid.
	Remittances int
}

// The audit action and events of completion.
const (
	ActionCompleteRun = "CompletePayrollRun"
	// ActionRequestCompletion: an operator asked for a DISBURSED run's completion.
	ActionRequestCompletion = "RequestPayrollRunCompletion"
	ActionCompleteMandate   = "CompleteDeductionMandate"
	EventMandateCompleted   = "payroll.deduction_mandate_completed.v1"
)

// runCompleted is the payload of payroll.run_completed.v1.
type runCompleted struct {
	runEvent
	PaidEntries     int   `json:"paidEntries"`
	FailedEntries   int   `json:"failedEntries"`
	PaidNetSantim   int64 `json:"paidNetSantim"`
	FailedNetSantim int64 `json:"failedNetSantim"`
	EWARecovered    Tally `json:"ewaRecovered"`
	LoansRecovered  Tally `json:"loanInstalmentsRecovered"`
	// ProductsCollected: the product mandates' collections, by kind (every product kind listed).
	ProductsCollected map[string]Tally `json:"productsCollected"`
	MandatesApplied   Tally            `json:"mandatesApplied"`
	MandatesCompleted int              `json:"mandatesCompleted"`
	// NotApplied: the FAILED entries' deduction lines other than PAYE and pension (still owed).
	NotApplied   Tally              `json:"notApplied"`
	Refused      Tally              `json:"refused"`
	RefusedLines []RefusedDeduction `json:"refusedLines"`
	Remittances  int                `json:"remittancesStarted"`
}

// CompleteRun moves a DISBURSED run to COMPLETED for the saga workflowID with its outcome: the
// mandates' taken amounts brought up to date from the PAID entries (mandates taken in full
// COMPLETED, each audited and announced), the run audited CompletePayrollRun and announced
// payroll.run_completed.v1, the saga and its outcome recorded on the run (CompletionWorkflowID,
// CompletionOutcome) — one transaction under the run's row lock. A COMPLETED run is answered as
// it is and nothing is written, so a retried step is harmless: completed true when workflowID
// completed it (the step run again after its workflow task was lost, or a new execution under
// the saga's id after one that failed past this step: the run carries the outcome recorded
// then, which is the saga's answer, not what the re-run was given), false otherwise. Errors:
// ErrRunNotFound; PAYROLL_RUN_INVALID_STATE (409); PAYROLL_RUN_ENTRIES_UNSETTLED (409).
func CompleteRun(ctx context.Context, tx db.BunTx, id, workflowID string, out CompletionOutcome, now time.Time) (r Run, completed bool, err error) {
	if workflowID == "" {
		return r, false, errors.New("payroll: complete run: no workflow id")
	}
	r, err = getRun(ctx, tx, id, true)
	if err != nil || r.Status == RunCompleted {
		return r, err == nil && r.CompletionWorkflowID == workflowID, err
	}
	to, err := RunMachine.Next("completed", r.Status)
	if err != nil {
		return r, false, err
	}
	ev := runCompleted{EWARecovered: out.EWA, LoansRecovered: out.Loans, Refused: out.Refused,
		RefusedLines: out.RefusedLines, Remittances: out.Remittances, ProductsCollected: map[string]Tally{}}
	for _, k := range ProductKinds {
		ev.ProductsCollected[k] = out.Products[k]
	}
	if ev.RefusedLines == nil {
		ev.RefusedLines = []RefusedDeduction{}
	}
	if err := entryTotals(ctx, tx, r, &ev); err != nil {
		return r, false, err
	}
	now = now.UTC().Truncate(time.Microsecond) // as the database keeps it (applyMandates compares)
	if ev.MandatesApplied, ev.MandatesCompleted, err = applyMandates(ctx, tx, r, now); err != nil {
		return r, false, err
	}
	r.Status, r.UpdatedAt, r.CompletionWorkflowID, r.CompletionOutcome = to, now, workflowID, &out
	if err := updateRun(ctx, tx, &r, "status", "updated_at", "completion_workflow_id", "completion_outcome"); err != nil {
		return r, false, err
	}
	ev.runEvent = r.event(false)
	if err := recordChange(ctx, tx, ActionCompleteRun, TargetRun, r.ID, map[string]any{"period": r.Period, "status": r.Status,
		"paidEntries": ev.PaidEntries, "failedEntries": ev.FailedEntries, "ewaRecovered": ev.EWARecovered,
		"loanInstalmentsRecovered": ev.LoansRecovered, "productsCollected": ev.ProductsCollected, "mandatesApplied": ev.MandatesApplied,
		"notApplied": ev.NotApplied, "refused": ev.Refused, "remittancesStarted": ev.Remittances}, EventRunCompleted, ev); err != nil {
		return r, false, err
	}
	return r, true, nil
}

// entryTotals counts the run's entries by status into ev, refusing a run with an entry that is
// neither PAID nor FAILED.
func entryTotals(ctx context.Context, tx db.BunTx, r Run, ev *runCompleted) error {
	rows, err := db.Select[struct {
		Status string `bun:"status" db:"status"`
		N      int    `bun:"n" db:"n"`
		Net    int64  `bun:"net" db:"net"`
		Lines  int    `bun:"lines" db:"lines"`
		Owed   int64  `bun:"owed" db:"owed"`
	}](ctx, tx, `SELECT e.status, count(*) AS n, coalesce(sum(e.net_santim), 0)::bigint AS net,
			coalesce(sum(o.lines), 0)::bigint AS lines, coalesce(sum(o.owed), 0)::bigint AS owed
		FROM app.payroll_entries e CROSS JOIN LATERAL (
			SELECT count(*) AS lines, sum((d->>'amountSantim')::numeric) AS owed FROM jsonb_array_elements(e.deductions) d
			WHERE d->>'kind' NOT IN (?, ?) AND (d->>'amountSantim')::numeric > 0) o
		WHERE e.tenant_id = ? AND e.run_id = ? GROUP BY e.status`,
		string(paycalc.KindPAYE), string(paycalc.KindPension), r.TenantID, r.ID)
	if err != nil {
		return fmt.Errorf("payroll: entry totals: %w", err)
	}
	for _, row := range rows {
		switch row.Status {
		case EntryPaid:
			ev.PaidEntries, ev.PaidNetSantim = row.N, row.Net
		case EntryFailed:
			ev.FailedEntries, ev.FailedNetSantim = row.N, row.Net
			ev.NotApplied = Tally{Count: row.Lines, Santim: row.Owed}
		default:
			return &Refusal{Code: CodeEntriesUnsettled, Status: http.StatusConflict,
				Message: fmt.Sprintf("%d entries of the run are %s: every entry must be PAID or FAILED", row.N, row.Status),
				Details: map[string]any{"status": row.Status, "entries": row.N}}
		}
	}
	return nil
}

// applyMandates adds what the run's PAID entries took for each mandate to its taken_santim, and
// completes the ACTIVE mandates with a total now taken in full (a SUSPENDED or CANCELLED one
// keeps its state: it was changed after the run was approved, and what the run took of it was
// still taken). applied counts the mandates and the santim. One statement for the whole run.
func applyMandates(ctx context.Context, tx db.BunTx, r Run, now time.Time) (applied Tally, completed int, err error) {
	const taken = `SELECT d->>'reference' AS id, sum((d->>'amountSantim')::numeric) AS amount
		FROM app.payroll_entries e CROSS JOIN LATERAL jsonb_array_elements(e.deductions) d
		WHERE e.tenant_id = ? AND e.run_id = ? AND e.status = ? AND d->>'kind' IN (?) AND d->>'reference' LIKE 'mdt\_%'
			AND (d->>'amountSantim')::numeric > 0
		GROUP BY 1`
	sums, err := db.Select[struct {
		ID     string `bun:"id" db:"id"`
		Amount int64  `bun:"amount" db:"amount"`
	}](ctx, tx, `SELECT id, amount::bigint AS amount FROM (`+taken+`) AS t ORDER BY id`, r.TenantID, r.ID, EntryPaid, bun.List(MandateKinds))
	if err != nil {
		return applied, 0, fmt.Errorf("payroll: mandates taken: %w", err)
	}
	if len(sums) == 0 {
		return applied, 0, nil
	}
	for _, s := range sums {
		applied.Add(s.Amount)
	}
	var ms []Mandate
	err = tx.NewRaw(`WITH taken AS (`+taken+`)
		UPDATE app.payroll_deduction_mandates AS md SET taken_santim = md.taken_santim + t.amount, updated_at = ?,
			status = CASE WHEN md.status = ? AND md.total_santim <= md.taken_santim + t.amount THEN ? ELSE md.status END,
			completed_at = CASE WHEN md.status = ? AND md.total_santim <= md.taken_santim + t.amount THEN ? ELSE md.completed_at END
		FROM taken AS t WHERE md.tenant_id = ? AND md.id = t.id
		RETURNING md.*`,
		r.TenantID, r.ID, EntryPaid, bun.List(MandateKinds), now, MandateActive, MandateCompleted, MandateActive, now, r.TenantID).
		Scan(ctx, &ms)
	if err != nil {
		return applied, 0, fmt.Errorf("payroll: apply mandates: %w", err)
	}
	for _, m := range ms {
		// Completed by this statement: its completed_at is this completion's instant.
		if m.Status != MandateCompleted || m.CompletedAt == nil || !m.CompletedAt.Equal(now) {
			continue
		}
		completed++
		ev := mandateEvent(m)
		ev["takenSantim"], ev["runId"] = m.TakenSantim, r.ID
		if err := record(ctx, tx, ActionCompleteMandate, "DeductionMandate", m.ID, EventMandateCompleted, ev); err != nil {
			return applied, completed, err
		}
	}
	return applied, completed, nil
}
