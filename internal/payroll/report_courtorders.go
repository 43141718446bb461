package payroll

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The court-order remittance report of a run: every court order's line of the run's entries (a
// deduction of kind COURT_ORDER whose reference is the mandate's id), with the court's reference
// and the payee account the employer remits it to, and the same lines grouped by payee — one
// remittance per payee account, which is what the court-order remittance pays (one transfer
// each).
//
// Withheld means kept back from a net that was paid: a line of a PAID entry. A line of an entry
// not (yet) paid is listed with its entry's status and counts in TotalSantim only; a FAILED
// entry's court orders were not withheld (its employee was not paid) and stay owed at the
// mandate (complete.go), so they are never remitted from this run.

// CourtOrderLine is one court order's deduction in one entry.
type CourtOrderLine struct {
	MandateID, EntryID, EmployeeID, EmployeeName, EntryStatus string
	// Reference is the court's reference of the order.
	Reference string
	Payee     Payee
	// AmountSantim is what the entry deducts for the order; Withheld, whether it was kept back
	// from a paid net (the entry is PAID).
	AmountSantim int64
	Withheld     bool
}

// CourtOrderPayee is the lines remitted to one payee account.
type CourtOrderPayee struct {
	Payee Payee
	// Orders counts the lines; WithheldSantim sums those withheld, TotalSantim all of them.
	Orders                      int
	WithheldSantim, TotalSantim int64
}

// CourtOrderReport is a run's court-order lines (by employee id, then mandate id), their payees
// (by partner, account number) and totals.
type CourtOrderReport struct {
	Run                         Run
	Employer                    Employer
	Lines                       []CourtOrderLine
	Payees                      []CourtOrderPayee
	WithheldSantim, TotalSantim int64
}

type courtOrderRow struct {
	MandateID    string  `bun:"mandate_id" db:"mandate_id"`
	EntryID      string  `bun:"entry_id" db:"entry_id"`
	EmployeeID   string  `bun:"employee_id" db:"employee_id"`
	FullName     string  `bun:"full_name" db:"full_name"`
	EntryStatus  string  `bun:"status" db:"status"`
	Reference    *string `bun:"reference" db:"reference"`
	Partner      *string `bun:"payee_partner" db:"payee_partner"`
	Account      *string `bun:"payee_account_number" db:"payee_account_number"`
	Holder       *string `bun:"payee_holder_name" db:"payee_holder_name"`
	AmountSantim int64   `bun:"amount_santim" db:"amount_santim"`
}

// LoadCourtOrderReport reads run id's court-order report (the refusals of LoadReport: not found,
// no figures for a DRAFT or CANCELLED run).
func LoadCourtOrderReport(ctx context.Context, tx db.BunTx, id string) (CourtOrderReport, error) {
	run, err := GetRun(ctx, tx, id)
	if err != nil {
		return CourtOrderReport{}, err
	}
	if run.Status == RunDraft || run.Status == RunCancelled {
		return CourtOrderReport{}, noFigures(run)
	}
	emp, err := LoadEmployer(ctx, tx)
	if err != nil {
		return CourtOrderReport{}, err
	}
	rows, err := db.Select[courtOrderRow](ctx, tx, `
		SELECT m.id AS mandate_id, pe.id AS entry_id, pe.employee_id, e.full_name, pe.status, m.reference,
			m.payee_partner, m.payee_account_number, m.payee_holder_name, sum((d.line->>'amountSantim')::bigint)::bigint AS amount_santim
		FROM app.payroll_entries pe
		CROSS JOIN LATERAL jsonb_array_elements(pe.deductions) AS d(line)
		JOIN app.payroll_deduction_mandates m ON m.tenant_id = pe.tenant_id AND m.id = d.line->>'reference'
		JOIN app.employees e ON e.tenant_id = pe.tenant_id AND e.id = pe.employee_id
		WHERE pe.tenant_id = ? AND pe.run_id = ? AND d.line->>'kind' = 'COURT_ORDER'
		GROUP BY m.id, pe.id, e.full_name
		HAVING sum((d.line->>'amountSantim')::bigint) > 0
		ORDER BY pe.employee_id, m.id`, tenancy.TenantID(ctx), id)
	if err != nil {
		return CourtOrderReport{}, fmt.Errorf("payroll.court_orders: %w", err)
	}
	out := CourtOrderReport{Run: run, Employer: emp, Lines: make([]CourtOrderLine, 0, len(rows)), Payees: []CourtOrderPayee{}}
	byPayee := map[Payee]*CourtOrderPayee{}
	for _, r := range rows {
		l := CourtOrderLine{MandateID: r.MandateID, EntryID: r.EntryID, EmployeeID: r.EmployeeID, EmployeeName: r.FullName,
			EntryStatus: r.EntryStatus, Reference: deref(r.Reference), AmountSantim: r.AmountSantim, Withheld: r.EntryStatus == EntryPaid,
			Payee: Payee{Partner: deref(r.Partner), AccountNumber: deref(r.Account), HolderName: deref(r.Holder)}}
		out.Lines = append(out.Lines, l)
		key := Payee{Partner: l.Payee.Partner, AccountNumber: l.Payee.AccountNumber}
		p := byPayee[key]
		if p == nil {
			// The first line's holder name stands for the account's (one account, one holder).
			p = &CourtOrderPayee{Payee: l.Payee}
			byPayee[key] = p
		}
		p.Orders++
		var ok bool
		if p.TotalSantim, ok = money.Add(p.TotalSantim, l.AmountSantim); !ok {
			return out, fmt.Errorf("payroll.court_orders: %w", money.ErrOverflow)
		}
		if out.TotalSantim, ok = money.Add(out.TotalSantim, l.AmountSantim); !ok {
			return out, fmt.Errorf("payroll.court_orders: %w", money.ErrOverflow)
		}
		if l.Withheld {
			p.WithheldSantim += l.AmountSantim // ≤ TotalSantim, which did not overflow
			out.WithheldSantim += l.AmountSantim
		}
	}
	keys := make([]Payee, 0, len(byPayee))
	for k := range byPayee {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b Payee) int {
		return cmp.Or(strings.Compare(a.Partner, b.Partner), strings.Compare(a.AccountNumber, b.AccountNumber))
	})
	for _, k := range keys {
		out.Payees = append(out.Payees, *byPayee[k])
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
