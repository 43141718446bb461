package payroll

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Payroll entries: one per employee paid in a run's period, every figure of the calculator's
// paycalc.Entry. A calculation replaces a CALCULATED run's entries whole (they are a draft until
// the run is approved); approval fixes them (APPROVED). The disbursement moves each on to
// DISBURSING, PAID or FAILED (with its reason); a cancelled run's entries are CANCELLED.
//
// Each entry records the SHA-256 of the calculator's input it was computed from (InputsFingerprint:
// the employee's salary, dates, every input line, the carried-forward amounts and the tenant's
// policy). Reading a CALCULATED run loads the period's inputs again and compares (Staleness): an
// entry whose inputs changed since, an employee paid now without an entry, an entry for an employee
// no longer paid. Approval refuses a stale run (PAYROLL_RUN_STALE): the figures approved are the
// figures the inputs give.

// The states of an entry.
const (
	EntryCalculated = "CALCULATED"
	EntryApproved   = "APPROVED"
	EntryDisbursing = "DISBURSING"
	EntryPaid       = "PAID"
	EntryFailed     = "FAILED"
	EntryCancelled  = "CANCELLED"
)

// EntryStatuses are the entry states in the order the API lists them.
var EntryStatuses = []string{EntryCalculated, EntryApproved, EntryDisbursing, EntryPaid, EntryFailed, EntryCancelled}

// fixedEntryStatuses are the states of an entry of a run whose figures are fixed (approved, and
// neither cancelled nor replaced): what the next period's calculation takes its carry from.
var fixedEntryStatuses = []string{EntryApproved, EntryDisbursing, EntryPaid, EntryFailed}

// EarningLine, DeductionLine, Contribution and Carry are the calculator's lines as an entry stores
// and shows them.
type (
	EarningLine struct {
		Kind         string `json:"kind"`
		Reference    string `json:"reference"`
		AmountSantim int64  `json:"amountSantim"`
		Taxable      bool   `json:"taxable"`
	}
	DeductionLine struct {
		Kind         string `json:"kind"`
		Reference    string `json:"reference"`
		AmountSantim int64  `json:"amountSantim"`
		PreTax       bool   `json:"preTax"`
	}
	Contribution struct {
		Kind         string `json:"kind"`
		AmountSantim int64  `json:"amountSantim"`
	}
	Carry struct {
		Kind         string `json:"kind"`
		Reference    string `json:"reference"`
		AmountSantim int64  `json:"amountSantim"`
		Priority     int64  `json:"priority"`
		PreTax       bool   `json:"preTax"`
	}
)

// Entry is a payroll entry as stored.
type Entry struct {
	bun.BaseModel `bun:"table:app.payroll_entries,alias:pe"`

	ID                          string          `bun:"id,pk"`
	TenantID                    string          `bun:"tenant_id"`
	RunID                       string          `bun:"run_id"`
	EmployeeID                  string          `bun:"employee_id"`
	Period                      string          `bun:"period"`
	Status                      string          `bun:"status"`
	TaxTableVersion             string          `bun:"tax_table_version"`
	DaysInPeriod                int             `bun:"days_in_period"`
	DaysEmployed                int             `bun:"days_employed"`
	BasicSantim                 int64           `bun:"basic_santim"`
	GrossSantim                 int64           `bun:"gross_santim"`
	TaxableSantim               int64           `bun:"taxable_santim"`
	ExemptSantim                int64           `bun:"exempt_santim"`
	TaxBaseSantim               int64           `bun:"tax_base_santim"`
	PAYESantim                  int64           `bun:"paye_santim"`
	PensionEmployeeSantim       int64           `bun:"pension_employee_santim"`
	StatutorySantim             int64           `bun:"statutory_santim"`
	CourtOrdersSantim           int64           `bun:"court_orders_santim"`
	ProtectedSantim             int64           `bun:"protected_santim"`
	DeductionsSantim            int64           `bun:"deductions_santim"`
	NetSantim                   int64           `bun:"net_santim"`
	EmployerContributionsSantim int64           `bun:"employer_contributions_santim"`
	ShareCapSantim              int64           `bun:"share_cap_santim"`
	RecoverableSantim           int64           `bun:"recoverable_santim"`
	CarriedForwardSantim        int64           `bun:"carried_forward_santim"`
	BelowMinimumNet             bool            `bun:"below_minimum_net"`
	Earnings                    []EarningLine   `bun:"earnings,type:jsonb"`
	Deductions                  []DeductionLine `bun:"deductions,type:jsonb"`
	EmployerContributions       []Contribution  `bun:"employer_contributions,type:jsonb"`
	CarriedForward              []Carry         `bun:"carried_forward,type:jsonb"`
	InputsFingerprint           string          `bun:"inputs_fingerprint"`
	FailureReason               string          `bun:"failure_reason,nullzero"`
	// The disbursement (disburse.go): how many times it was sent, to which account, the
	// workflow owning an operator's retry, the partner's reference and transfer of the current
	// attempt's outcome, and when it was paid.
	Attempts          int       `bun:"attempts"`
	PayoutPartner     string    `bun:"payout_partner,nullzero"`
	PayoutAccount     string    `bun:"payout_account,nullzero"`
	PayoutHolderName  string    `bun:"payout_holder_name,nullzero"`
	RetryWorkflowID   string    `bun:"retry_workflow_id,nullzero"`
	TransferReference string    `bun:"transfer_reference,nullzero"`
	TransferID        string    `bun:"transfer_id,nullzero"`
	PaidAt            time.Time `bun:"paid_at,nullzero"`
	CreatedAt         time.Time `bun:"created_at"`
	UpdatedAt         time.Time `bun:"updated_at"`
}

// Fingerprint is the SHA-256 (hex) of a calculator input: equal inputs, equal fingerprints. The
// loader reads every family in a fixed order, so the same stored inputs give the same input.
func Fingerprint(in paycalc.Input) (string, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return "", fmt.Errorf("payroll: fingerprint: %w", err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), nil
}

// newEntry is the stored form of the calculator's entry e for the employee's input in.
func newEntry(ctx context.Context, run *Run, in EmployeeInput, e paycalc.Entry, now time.Time) (Entry, error) {
	fp, err := Fingerprint(in.Input)
	if err != nil {
		return Entry{}, err
	}
	out := Entry{ID: "pent_" + identity.NewID(), TenantID: tenancy.TenantID(ctx), RunID: run.ID, EmployeeID: in.EmployeeID,
		Period: run.Period, Status: EntryCalculated, TaxTableVersion: e.TaxTableVersion, DaysInPeriod: e.DaysInPeriod,
		DaysEmployed: e.DaysEmployed, BasicSantim: e.BasicSantim, GrossSantim: e.GrossSantim, TaxableSantim: e.TaxableSantim,
		ExemptSantim: e.ExemptSantim, TaxBaseSantim: e.TaxBaseSantim, StatutorySantim: e.StatutorySantim,
		CourtOrdersSantim: e.CourtOrdersSantim, ProtectedSantim: e.ProtectedSantim, DeductionsSantim: e.DeductionsSantim,
		NetSantim: e.NetSantim, ShareCapSantim: e.ShareCapSantim, RecoverableSantim: e.RecoverableSantim,
		BelowMinimumNet: e.BelowMinimumNet, InputsFingerprint: fp, PayoutPartner: in.Payout.Partner,
		PayoutAccount: in.Payout.AccountNumber, PayoutHolderName: in.Payout.HolderName, CreatedAt: now, UpdatedAt: now,
		Earnings: make([]EarningLine, 0, len(e.Earnings)), Deductions: make([]DeductionLine, 0, len(e.Deductions)),
		EmployerContributions: make([]Contribution, 0, len(e.EmployerContributions)), CarriedForward: make([]Carry, 0, len(e.CarriedForward))}
	for _, l := range e.Earnings {
		out.Earnings = append(out.Earnings, EarningLine{string(l.Kind), l.Reference, l.AmountSantim, l.Taxable})
	}
	for _, l := range e.Deductions {
		out.Deductions = append(out.Deductions, DeductionLine{string(l.Kind), l.Reference, l.AmountSantim, l.PreTax})
		switch l.Kind {
		case paycalc.KindPAYE:
			out.PAYESantim += l.AmountSantim
		case paycalc.KindPension:
			out.PensionEmployeeSantim += l.AmountSantim
		}
	}
	for _, c := range e.EmployerContributions {
		out.EmployerContributions = append(out.EmployerContributions, Contribution{string(c.Kind), c.AmountSantim})
		out.EmployerContributionsSantim += c.AmountSantim
	}
	for _, c := range e.CarriedForward {
		out.CarriedForward = append(out.CarriedForward, Carry{string(c.Kind), c.Reference, c.AmountSantim, c.Priority, c.PreTax})
		out.CarriedForwardSantim += c.AmountSantim
	}
	return out, nil
}

// entryRow is an entry as json_populate_recordset reads it (the table's column names).
type entryRow struct {
	ID                          string          `json:"id"`
	TenantID                    string          `json:"tenant_id"`
	RunID                       string          `json:"run_id"`
	EmployeeID                  string          `json:"employee_id"`
	Period                      string          `json:"period"`
	Status                      string          `json:"status"`
	TaxTableVersion             string          `json:"tax_table_version"`
	DaysInPeriod                int             `json:"days_in_period"`
	DaysEmployed                int             `json:"days_employed"`
	BasicSantim                 int64           `json:"basic_santim"`
	GrossSantim                 int64           `json:"gross_santim"`
	TaxableSantim               int64           `json:"taxable_santim"`
	ExemptSantim                int64           `json:"exempt_santim"`
	TaxBaseSantim               int64           `json:"tax_base_santim"`
	PAYESantim                  int64           `json:"paye_santim"`
	PensionEmployeeSantim       int64           `json:"pension_employee_santim"`
	StatutorySantim             int64           `json:"statutory_santim"`
	CourtOrdersSantim           int64           `json:"court_orders_santim"`
	ProtectedSantim             int64           `json:"protected_santim"`
	DeductionsSantim            int64           `json:"deductions_santim"`
	NetSantim                   int64           `json:"net_santim"`
	EmployerContributionsSantim int64           `json:"employer_contributions_santim"`
	ShareCapSantim              int64           `json:"share_cap_santim"`
	RecoverableSantim           int64           `json:"recoverable_santim"`
	CarriedForwardSantim        int64           `json:"carried_forward_santim"`
	BelowMinimumNet             bool            `json:"below_minimum_net"`
	Earnings                    []EarningLine   `json:"earnings"`
	Deductions                  []DeductionLine `json:"deductions"`
	EmployerContributions       []Contribution  `json:"employer_contributions"`
	CarriedForward              []Carry         `json:"carried_forward"`
	InputsFingerprint           string          `json:"inputs_fingerprint"`
	Attempts                    int             `json:"attempts"`
	PayoutPartner               string          `json:"payout_partner"`
	PayoutAccount               string          `json:"payout_account"`
	PayoutHolderName            string          `json:"payout_holder_name"`
	CreatedAt                   time.Time       `json:"created_at"`
	UpdatedAt                   time.Time       `json:"updated_at"`
}

// insertEntries writes es in one statement (a JSON array the server turns into rows), so a run
// of 10,000 entries is one round trip, not 10,000.
func insertEntries(ctx context.Context, tx db.BunTx, es []Entry) error {
	if len(es) == 0 {
		return nil
	}
	rows := make([]entryRow, len(es))
	for i, e := range es {
		rows[i] = entryRow{e.ID, e.TenantID, e.RunID, e.EmployeeID, e.Period, e.Status, e.TaxTableVersion, e.DaysInPeriod,
			e.DaysEmployed, e.BasicSantim, e.GrossSantim, e.TaxableSantim, e.ExemptSantim, e.TaxBaseSantim, e.PAYESantim,
			e.PensionEmployeeSantim, e.StatutorySantim, e.CourtOrdersSantim, e.ProtectedSantim, e.DeductionsSantim, e.NetSantim,
			e.EmployerContributionsSantim, e.ShareCapSantim, e.RecoverableSantim, e.CarriedForwardSantim, e.BelowMinimumNet,
			e.Earnings, e.Deductions, e.EmployerContributions, e.CarriedForward, e.InputsFingerprint, 0, e.PayoutPartner, e.PayoutAccount,
			e.PayoutHolderName, e.CreatedAt, e.UpdatedAt}
	}
	raw, err := json.Marshal(rows)
	if err != nil {
		return fmt.Errorf("payroll: entries: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO app.payroll_entries SELECT * FROM json_populate_recordset(NULL::app.payroll_entries, $1::json)`,
		string(raw)); err != nil {
		return fmt.Errorf("payroll: insert entries: %w", err)
	}
	return nil
}

// EntryFilter narrows ListEntries; zero fields do not filter.
type EntryFilter struct {
	Status, EmployeeID string
	// After is the previous page's last id; Limit the page size (rows read: Limit).
	After string
	Limit int
}

// ListEntries lists a run's entries by id (ErrRunNotFound when the run is not the tenant's).
func ListEntries(ctx context.Context, tx db.BunTx, runID string, f EntryFilter) ([]Entry, error) {
	if _, err := getRun(ctx, tx, runID, false); err != nil {
		return nil, err
	}
	out := []Entry{}
	q := tx.NewSelect().Model(&out).Where("pe.tenant_id = ?", tenancy.TenantID(ctx)).Where("pe.run_id = ?", runID)
	return out, listPage(ctx, q, "pe", map[string]string{"status": f.Status, "employee_id": f.EmployeeID}, f.After, int64(f.Limit))
}

// EntryCounts counts a run's entries by status (every status, 0 included).
func EntryCounts(ctx context.Context, tx db.Writer, runID string) (map[string]int, error) {
	rows, err := db.Select[struct {
		Status string `bun:"status" db:"status"`
		N      int    `bun:"n" db:"n"`
	}](ctx, tx, `SELECT status, count(*) AS n FROM app.payroll_entries WHERE tenant_id = ? AND run_id = ? GROUP BY status`,
		tenancy.TenantID(ctx), runID)
	if err != nil {
		return nil, fmt.Errorf("payroll: count entries: %w", err)
	}
	out := make(map[string]int, len(EntryStatuses))
	for _, s := range EntryStatuses {
		out[s] = 0
	}
	for _, r := range rows {
		out[r.Status] = r.N
	}
	return out, nil
}

// Staleness is how a CALCULATED run's entries compare with the inputs stored now.
type Staleness struct {
	// Changed are the employees whose entry was computed from other inputs than the stored ones,
	// or for another payout account than theirs now (the approver approves where pay goes too).
	Changed []string
	// Added are employees paid in the period now who have no entry; Removed, employees with an
	// entry who are no longer paid in it.
	Added, Removed []string
}

// Stale reports whether anything changed.
func (s Staleness) Stale() bool { return len(s.Changed)+len(s.Added)+len(s.Removed) > 0 }

// RunStaleness compares a run's entries with the period's inputs as stored now (each list sorted
// by employee id). A run that is not CALCULATED is never stale: its figures are fixed (or not yet
// computed), and later input changes belong to a later period.
func RunStaleness(ctx context.Context, tx db.Writer, r Run) (Staleness, error) {
	var st Staleness
	if r.Status != RunCalculated {
		return st, nil
	}
	ins, err := LoadInputs(ctx, tx, r.Period, LoadOptions{})
	if err != nil {
		return st, err
	}
	stored, err := db.Select[struct {
		EmployeeID  string `bun:"employee_id" db:"employee_id"`
		Fingerprint string `bun:"inputs_fingerprint" db:"inputs_fingerprint"`
		Partner     string `bun:"partner" db:"partner"`
		Account     string `bun:"account" db:"account"`
		Holder      string `bun:"holder" db:"holder"`
	}](ctx, tx, `SELECT employee_id, inputs_fingerprint, coalesce(payout_partner, '') AS partner,
			coalesce(payout_account, '') AS account, coalesce(payout_holder_name, '') AS holder
		FROM app.payroll_entries WHERE tenant_id = ? AND run_id = ? ORDER BY employee_id`,
		tenancy.TenantID(ctx), r.ID)
	if err != nil {
		return st, fmt.Errorf("payroll: entry fingerprints: %w", err)
	}
	// Both lists are ordered by employee id: one merge.
	i, j := 0, 0
	for i < len(ins) || j < len(stored) {
		switch {
		case j == len(stored) || (i < len(ins) && ins[i].EmployeeID < stored[j].EmployeeID):
			st.Added = append(st.Added, ins[i].EmployeeID)
			i++
		case i == len(ins) || stored[j].EmployeeID < ins[i].EmployeeID:
			st.Removed = append(st.Removed, stored[j].EmployeeID)
			j++
		default:
			fp, err := Fingerprint(ins[i].Input)
			if err != nil {
				return st, err
			}
			at := stored[j]
			if fp != at.Fingerprint || ins[i].Payout != (Account{Partner: at.Partner, AccountNumber: at.Account, HolderName: at.Holder}) {
				st.Changed = append(st.Changed, ins[i].EmployeeID)
			}
			i, j = i+1, j+1
		}
	}
	return st, nil
}

type carryRow struct {
	EmployeeID string          `bun:"employee_id" db:"employee_id"`
	Carried    json.RawMessage `bun:"carried_forward" db:"carried_forward"`
}

// loadCarriedForward reads into Input.CarriedForward what each employee's latest fixed entry of
// an earlier period could not take (an approved run's, not a cancelled or a draft one), fed back
// unchanged (paycalc: never dropped, never taken twice) — except where the source itself says
// what it is still owed and it was settled outside payroll. paycalc caps a carry merged into its
// source by the source's figure, but takes a carry whose source is not in the input on its own.
// So (this loader runs after the EWA and loan loaders): a carry of an EWA request that is not
// among the employee's recoveries is dropped, since the request's outstanding is its whole debt
// (the carry is part of it) and a request not loaded owes nothing (repaid by an admin's
// repayment); a carry of a loan instalment that is not loaded (an ACTIVE loan's unpaid ones are,
// arrears included, and the carry merges into them) is capped by what the instalment still owes
// (total − repaid; nothing once REPAID or SUPERSEDED by a restructure, whose new schedule
// carries the principal, nor once the loan is no longer ACTIVE: a DEFAULTED or WRITTEN_OFF loan
// is deducted by no run, its carry neither). Without this the carry was withheld again and refused at the
// completion as an overpayment, for an operator to refund. A deduction mandate's carry (reference
// mdt_…) is taken only while the mandate is ACTIVE: merged into it when this period loads it
// (periodMandates; paycalc caps the two by what the mandate still owes), otherwise (an ACTIVE
// mandate past its end period) capped by total − taken when it has a total; a SUSPENDED,
// CANCELLED, COMPLETED or unknown mandate's carry is dropped (found by an audit: a court order's
// carry was still deducted and remitted after the order was suspended or cancelled — and after an
// employee transfer, which cancels it and re-creates total − taken, the carry included, for the
// new employer, it was collected twice). A run approved while the mandate is suspended carries
// nothing of it, so the carry is not taken after a resume either; a mandate with a total still
// owes it (only what is taken counts against the total).
func loadCarriedForward(ctx context.Context, tx db.Writer, period string, opt LoadOptions, byID map[string]*paycalc.Input) error {
	rows, err := db.Select[carryRow](ctx, tx, `
		SELECT DISTINCT ON (employee_id) employee_id, carried_forward
		FROM app.payroll_entries
		WHERE tenant_id = ? AND period < ? AND status IN (?) AND (? = '' OR employee_id = ?)
		ORDER BY employee_id, period DESC`,
		tenancy.TenantID(ctx), period, bun.List(fixedEntryStatuses), opt.EmployeeID, opt.EmployeeID)
	if err != nil {
		return fmt.Errorf("payroll: load carried forward: %w", err)
	}
	for _, r := range rows {
		in := byID[r.EmployeeID]
		if in == nil {
			continue
		}
		var cs []Carry
		if err := json.Unmarshal(r.Carried, &cs); err != nil {
			return fmt.Errorf("payroll: carried forward of %s: %w", r.EmployeeID, err)
		}
		for _, c := range cs {
			in.CarriedForward = append(in.CarriedForward, paycalc.Carry{Kind: paycalc.DeductionKind(c.Kind), Reference: c.Reference,
				AmountSantim: c.AmountSantim, Priority: c.Priority, PreTax: c.PreTax})
		}
	}
	return settledCarries(ctx, tx, byID)
}

// settledCarries drops or caps the carries whose source was settled outside payroll (see
// loadCarriedForward).
func settledCarries(ctx context.Context, tx db.Writer, byID map[string]*paycalc.Input) error {
	// standalone reports whether carry c of in is a loan instalment's whose source is not in the
	// input, the carries whose instalment is asked what it still owes.
	standalone := func(in *paycalc.Input, c paycalc.Carry) bool {
		_, _, isInstalment := LoanReference(c.Reference)
		return c.Kind == paycalc.KindLoanInstallment && isInstalment &&
			!slices.ContainsFunc(in.Loans, func(l paycalc.LoanInstalment) bool { return l.Reference == c.Reference })
	}
	var refs []string
	for _, in := range byID {
		for _, c := range in.CarriedForward {
			if standalone(in, c) {
				refs = append(refs, c.Reference)
			}
		}
	}
	// mandateCarry reports whether carry c of in is a deduction mandate's whose mandate is not in
	// the input (not ACTIVE, or ACTIVE past its period): asked for its status and remaining.
	mandateCarry := func(in *paycalc.Input, c paycalc.Carry) bool {
		return strings.HasPrefix(c.Reference, mandateIDPrefix) && slices.Contains(MandateKinds, string(c.Kind)) &&
			!slices.ContainsFunc(in.Mandates, func(m paycalc.Mandate) bool { return m.Reference == c.Reference })
	}
	var mandateRefs []string
	for _, in := range byID {
		for _, c := range in.CarriedForward {
			if mandateCarry(in, c) {
				mandateRefs = append(mandateRefs, c.Reference)
			}
		}
	}
	type mandateOwed struct {
		ID        string `bun:"id" db:"id"`
		Active    bool   `bun:"active" db:"active"`
		Remaining *int64 `bun:"remaining" db:"remaining"` // nil: no total
	}
	mandates := map[string]mandateOwed{} // a mandate not found takes nothing
	if len(mandateRefs) > 0 {
		rows, err := db.Select[mandateOwed](ctx, tx, `SELECT id, status = 'ACTIVE' AS active,
				(total_santim - taken_santim)::bigint AS remaining
			FROM app.payroll_deduction_mandates WHERE tenant_id = ? AND id = ANY(?::text[])`,
			tenancy.TenantID(ctx), pgdialect.Array(mandateRefs))
		if err != nil {
			return fmt.Errorf("payroll: carried mandates: %w", err)
		}
		for _, r := range rows {
			mandates[r.ID] = r
		}
	}
	owed := map[string]int64{} // an instalment not found owes nothing
	if len(refs) > 0 {
		rows, err := db.Select[struct {
			Ref  string `bun:"ref" db:"ref"`
			Owed int64  `bun:"owed" db:"owed"`
		}](ctx, tx, `SELECT i.loan_id || '#' || i.idx AS ref,
				(CASE WHEN i.status IN ('REPAID', 'SUPERSEDED') OR l.status <> 'ACTIVE' THEN 0 ELSE i.total_santim - i.repaid_santim END)::bigint AS owed
			FROM app.loan_instalments i JOIN app.loans l ON l.tenant_id = i.tenant_id AND l.id = i.loan_id
			WHERE i.tenant_id = ? AND i.loan_id || '#' || i.idx = ANY(?::text[])`,
			tenancy.TenantID(ctx), pgdialect.Array(refs))
		if err != nil {
			return fmt.Errorf("payroll: carried loan instalments: %w", err)
		}
		for _, r := range rows {
			owed[r.Ref] = r.Owed
		}
	}
	for _, in := range byID {
		kept := in.CarriedForward[:0]
		for _, c := range in.CarriedForward {
			switch {
			case c.Kind == paycalc.KindEWARecovery &&
				!slices.ContainsFunc(in.EWA, func(r paycalc.EWARecovery) bool { return r.Reference == c.Reference }):
				continue
			case standalone(in, c):
				if c.AmountSantim = min(c.AmountSantim, owed[c.Reference]); c.AmountSantim <= 0 {
					continue
				}
			case mandateCarry(in, c):
				m, ok := mandates[c.Reference]
				if !ok || !m.Active {
					continue
				}
				if m.Remaining != nil {
					c.AmountSantim = min(c.AmountSantim, *m.Remaining)
				}
				if c.AmountSantim <= 0 {
					continue
				}
			}
			kept = append(kept, c)
		}
		in.CarriedForward = kept
	}
	return nil
}

// PaidThrough is the last day of the latest period for which a run of tenantID pays employeeID
// and is past its calculation (APPROVED, DISBURSING, DISBURSED or COMPLETED: its entries are
// fixed, and pay an employee still employed to the period's end); zero when there is none. An
// employment that ends earlier than that day (an employee transfer) would have those days paid
// again by the next employer's run. Each run of the employee's that is calculated or later is
// locked for share until tx ends: an approval (which locks its run for update before it checks
// that the inputs are unchanged) either committed first and is counted here, or waits and then
// finds the employment changed.
func PaidThrough(ctx context.Context, tx db.Writer, tenantID, employeeID string) (time.Time, error) {
	var last *string
	err := tx.QueryRow(ctx, `WITH runs AS MATERIALIZED (
			SELECT r.period, r.status FROM app.payroll_runs r
			WHERE r.tenant_id = $1 AND r.status IN ($3, $4, $5, $6, $7)
				AND EXISTS (SELECT 1 FROM app.payroll_entries e WHERE e.tenant_id = r.tenant_id AND e.run_id = r.id AND e.employee_id = $2)
			FOR SHARE OF r)
		SELECT max(period::text) FILTER (WHERE status <> $3) FROM runs`,
		tenantID, employeeID, RunCalculated, RunApproved, RunDisbursing, RunDisbursed, RunCompleted).Scan(&last)
	if err != nil {
		return time.Time{}, fmt.Errorf("payroll: the runs paying %s: %w", employeeID, err)
	}
	if last == nil {
		return time.Time{}, nil
	}
	start, err := time.Parse("2006-01", *last)
	if err != nil {
		return time.Time{}, fmt.Errorf("payroll: the period %q: %w", *last, err)
	}
	return start.AddDate(0, 1, -1), nil
}
