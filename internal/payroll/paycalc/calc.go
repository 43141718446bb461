package paycalc

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wagerail/wagerail/internal/platform/money"
)

// Entry is one employee's computed pay for one period. Every amount is integer santim.
//
// Invariants (tested): NetSantim = GrossSantim − DeductionsSantim ≥ 0; DeductionsSantim is the sum
// of Deductions; GrossSantim the sum of Earnings = TaxableSantim + ExemptSantim.
type Entry struct {
	Period string
	// TaxTableVersion names the PAYE table used (also the PAYE line's Reference).
	TaxTableVersion string
	// DaysInPeriod and DaysEmployed: basic salary and fixed allowances are pro-rated by
	// DaysEmployed ÷ DaysInPeriod (calendar days).
	DaysInPeriod, DaysEmployed int

	// BasicSantim is the pro-rated basic salary: the pension base.
	BasicSantim int64
	// Earnings: BASIC first, then allowances, overtime, one-time earnings and earning adjustments,
	// each sorted by reference. Lines of 0 santim other than BASIC are left out.
	Earnings      []EarningLine
	GrossSantim   int64
	TaxableSantim int64 // taxable earnings
	ExemptSantim  int64 // earnings exempt from PAYE
	// TaxBaseSantim is the income PAYE was computed on: TaxableSantim − the pre-tax deductions
	// taken (never below 0).
	TaxBaseSantim int64

	// Deductions in the order they were taken: PAYE and PENSION_EMPLOYEE always (even at 0), then
	// every other deduction that took more than 0.
	Deductions       []DeductionLine
	DeductionsSantim int64
	// StatutorySantim = PAYE + employee pension; CourtOrdersSantim and ProtectedSantim are the
	// other two tiers (see the package doc).
	StatutorySantim   int64
	CourtOrdersSantim int64
	ProtectedSantim   int64

	// EmployerContributions are reported, never deducted.
	EmployerContributions []Contribution

	NetSantim int64

	// ShareCapSantim is the protection share of this entry: ⌊(gross − statutory before pre-tax
	// relief) × numerator ÷ denominator⌋.
	ShareCapSantim int64
	// RecoverableSantim is how much more the protected tier could have taken within the share and
	// the minimum net (see Project).
	RecoverableSantim int64
	// BelowMinimumNet: the statutory deductions alone took the net below Policy.MinNetSantim, so
	// nothing else was taken.
	BelowMinimumNet bool

	// CarriedForward is what was due and could not be taken, one item per source, sorted like
	// the deductions; feed it back as the next period's Input.CarriedForward.
	CarriedForward []Carry
}

// EarningLine is one earning of an entry.
type EarningLine struct {
	Kind         EarningKind
	Reference    string // "BASIC" for basic salary
	AmountSantim int64
	Taxable      bool
}

// DeductionLine is one deduction of an entry: its kind, the reference of its source (a mandate,
// request, instalment, definition or adjustment; the table version for PAYE; "PENSION" for the
// pension) and the amount taken.
type DeductionLine struct {
	Kind         DeductionKind
	Reference    string
	AmountSantim int64
	PreTax       bool
}

// ContributionKind names an employer contribution.
type ContributionKind string

// ContributionPensionEmployer is the employer's pension contribution.
const ContributionPensionEmployer ContributionKind = "PENSION_EMPLOYER"

// Contribution is an amount the employer pays on top of gross (reported, not deducted).
type Contribution struct {
	Kind         ContributionKind
	AmountSantim int64
}

// ErrInvariant means the calculator found its own result inconsistent; it cannot happen for a
// valid input, and is returned rather than an entry that breaks net = gross − deductions ≥ 0.
var ErrInvariant = errors.New("paycalc: invariant broken")

// Reference of the basic salary earning line and the employee pension deduction line.
const (
	ReferenceBasic   = "BASIC"
	ReferencePension = "PENSION"
)

// groups: the order of the non-statutory deductions. 0 is "not carried" (PAYE, pension).
const (
	groupCourt = 1 + iota
	groupLoan
	groupEWA
	groupMandate
	groupCatalog
	groupAdjustment
)

func groupOf(k DeductionKind) int {
	switch k {
	case KindCourtOrder:
		return groupCourt
	case KindLoanInstallment:
		return groupLoan
	case KindEWARecovery:
		return groupEWA
	case KindUnionDues, KindCostSharing, KindOther, KindEqubContribution, KindBnplInstallment, KindSavingsAutosave:
		return groupMandate
	case KindCatalog:
		return groupCatalog
	case KindAdjustment:
		return groupAdjustment
	}
	return 0
}

// source is one thing that wants a deduction this period.
type source struct {
	kind     DeductionKind
	ref      string
	priority int64
	preTax   bool
	group    int
	due      int64 // this period's amount + carried, capped by what is owed
}

type carryKey struct {
	kind DeductionKind
	ref  string
}

// Calculate computes the entry for in. It is a pure function: the same input (in any order of
// its slices) gives the same entry. A bad input is a *field.Error (see Validate).
func Calculate(in Input) (Entry, error) {
	return calculate(&in)
}

func calculate(in *Input) (Entry, error) {
	if err := in.Validate(); err != nil {
		return Entry{}, err
	}
	y, m, _ := parsePeriod(in.Period)
	days := daysIn(y, m)
	employed := daysEmployed(in.HireDate, in.TerminationDate, y, m, days)
	e := Entry{Period: in.Period, DaysInPeriod: days, DaysEmployed: employed}
	pol := in.Policy
	fail := func(err error) (Entry, error) { return Entry{}, fmt.Errorf("paycalc: %w", err) }

	// Earnings.
	basic, err := money.MulDiv(in.MonthlySalarySantim, int64(employed), int64(days))
	if err != nil {
		return fail(err)
	}
	e.BasicSantim = basic
	e.Earnings = append(e.Earnings, EarningLine{Kind: EarningBasic, Reference: ReferenceBasic, AmountSantim: basic, Taxable: true})
	earn := func(k EarningKind, ref string, amt int64, taxable bool) {
		if amt > 0 {
			e.Earnings = append(e.Earnings, EarningLine{Kind: k, Reference: ref, AmountSantim: amt, Taxable: taxable})
		}
	}
	for _, a := range sortedBy(in.Allowances, func(a Allowance) string { return a.Reference }) {
		var amt int64
		if a.Method == Fixed {
			amt, err = money.MulDiv(a.Amount, int64(employed), int64(days))
		} else {
			amt, err = money.ApplyBasisPoints(basic, a.Amount)
		}
		if err != nil {
			return fail(err)
		}
		earn(EarningAllowance, a.Reference, amt, a.Taxable)
	}
	overtimeDen := pol.MonthlyHours * overtimeDenominatorPerHourBasis
	for _, o := range sortedBy(in.Overtime, func(o Overtime) string { return o.Reference }) {
		// minutes × salary ≤ 1,440 × 1e12: inside int64; the multiplier goes through MulDiv's
		// 128-bit product, so the one rounding is at the end.
		amt, err := money.MulDiv(o.Minutes*in.MonthlySalarySantim, o.MultiplierBasisPoints, overtimeDen)
		if err != nil {
			return fail(err)
		}
		earn(EarningOvertime, o.Reference, amt, true)
	}
	for _, o := range sortedBy(in.Earnings, func(o OneTimeEarning) string { return o.Reference }) {
		earn(o.Kind, o.Reference, o.AmountSantim, o.Taxable)
	}
	adjustments := sortedBy(in.Adjustments, func(a Adjustment) string { return a.Reference })
	for _, a := range adjustments {
		if a.Direction == AdjustEarning {
			earn(EarningAdjustment, a.Reference, a.AmountSantim, a.Taxable)
		}
	}
	for _, l := range e.Earnings {
		// Each line ≤ 1e12 and at most a few thousand lines: the sums stay far inside int64;
		// the bound below keeps every later product inside it too.
		e.GrossSantim += l.AmountSantim
		if l.Taxable {
			e.TaxableSantim += l.AmountSantim
		} else {
			e.ExemptSantim += l.AmountSantim
		}
	}
	if e.GrossSantim > money.MaxAmountSantim {
		return Entry{}, refuse("gross", "(the period's earnings) must add up to at most %d santim", money.MaxAmountSantim)
	}

	// Statutory: PAYE on the whole taxable income first (the pre-tax relief comes at the end).
	table := tableFor(in.Period)
	e.TaxTableVersion = table.Version
	paye, err := table.Tax(e.TaxableSantim)
	if err != nil {
		return fail(err)
	}
	pension, err := money.ApplyBasisPoints(basic, pol.EmployeePensionBasisPoints)
	if err != nil {
		return fail(err)
	}
	employer, err := money.ApplyBasisPoints(basic, pol.EmployerPensionBasisPoints)
	if err != nil {
		return fail(err)
	}
	e.EmployerContributions = []Contribution{{Kind: ContributionPensionEmployer, AmountSantim: employer}}
	disposable := e.GrossSantim - paye - pension
	if disposable < 0 {
		return fail(fmt.Errorf("%w: statutory deductions %d exceed gross %d", ErrInvariant, paye+pension, e.GrossSantim))
	}
	e.ShareCapSantim, err = money.MulDivFloor(disposable, pol.ShareNumerator, pol.ShareDenominator)
	if err != nil {
		return fail(err)
	}
	aboveMin := max(0, disposable-pol.MinNetSantim)
	e.BelowMinimumNet = disposable < pol.MinNetSantim

	// Everything else, in order.
	sources, err := buildSources(in, e.GrossSantim, adjustments)
	if err != nil {
		return fail(err)
	}
	// Court orders: limited only by the minimum net. Then the protected tier: limited by what the
	// share leaves after the court orders, and by the minimum net.
	var pretax int64
	var taken []DeductionLine
	take := func(s source, room *int64, total *int64) {
		t := min(s.due, *room)
		if Whole(s.kind) && t < s.due {
			return // taken whole or not at all, never carried (Whole)
		}
		*room -= t
		*total += t
		if t > 0 {
			taken = append(taken, DeductionLine{Kind: s.kind, Reference: s.ref, AmountSantim: t, PreTax: s.preTax})
			if s.preTax {
				pretax += t
			}
		}
		if left := s.due - t; left > 0 {
			e.CarriedForward = append(e.CarriedForward, Carry{Kind: s.kind, Reference: s.ref, AmountSantim: left, Priority: s.priority, PreTax: s.preTax})
		}
	}
	courtRoom := aboveMin
	i := 0
	for ; i < len(sources) && sources[i].group == groupCourt; i++ {
		take(sources[i], &courtRoom, &e.CourtOrdersSantim)
	}
	protectedRoom := max(0, min(e.ShareCapSantim, aboveMin)-e.CourtOrdersSantim)
	for ; i < len(sources); i++ {
		take(sources[i], &protectedRoom, &e.ProtectedSantim)
	}
	e.RecoverableSantim = protectedRoom

	// Pre-tax relief: PAYE again on the taxable income less the pre-tax deductions taken. It can
	// only fall, so the net only rises and every limit above still holds.
	e.TaxBaseSantim = max(0, e.TaxableSantim-pretax)
	if pretax > 0 {
		if paye, err = table.Tax(e.TaxBaseSantim); err != nil {
			return fail(err)
		}
	}
	e.StatutorySantim = paye + pension
	e.Deductions = append([]DeductionLine{
		{Kind: KindPAYE, Reference: table.Version, AmountSantim: paye},
		{Kind: KindPension, Reference: ReferencePension, AmountSantim: pension},
	}, taken...)
	e.DeductionsSantim = e.StatutorySantim + e.CourtOrdersSantim + e.ProtectedSantim
	e.NetSantim = e.GrossSantim - e.DeductionsSantim
	if e.NetSantim < 0 || (!e.BelowMinimumNet && e.NetSantim < pol.MinNetSantim) {
		return fail(fmt.Errorf("%w: net %d", ErrInvariant, e.NetSantim))
	}
	return e, nil
}

// buildSources lists every non-statutory deduction due, carried-forward amounts merged into their
// source, sorted by (group, priority, reference, kind).
func buildSources(in *Input, gross int64, adjustments []Adjustment) ([]source, error) {
	carried := make(map[carryKey]Carry, len(in.CarriedForward))
	for _, c := range in.CarriedForward {
		carried[carryKey{c.Kind, c.Reference}] = c
	}
	sources := make([]source, 0, len(in.Mandates)+len(in.EWA)+len(in.Loans)+len(in.Deductions)+len(adjustments)+len(in.CarriedForward))
	// add merges the carry of the same kind and reference: due = amount + carried, capped by owed
	// (< 0: nothing stated) — the source's own figure of what is owed is the truth.
	add := func(k DeductionKind, ref string, prio int64, preTax bool, amount, owed int64) {
		key := carryKey{k, ref}
		due := amount
		if c, ok := carried[key]; ok {
			due += c.AmountSantim // both ≤ 1e12
			delete(carried, key)
		}
		if owed >= 0 {
			due = min(due, owed)
		}
		sources = append(sources, source{kind: k, ref: ref, priority: prio, preTax: preTax, group: groupOf(k), due: due})
	}
	for _, m := range in.Mandates {
		amt := m.Amount
		if m.Method == Percent {
			var err error
			if amt, err = money.ApplyBasisPoints(gross, m.Amount); err != nil {
				return nil, err
			}
		}
		owed := int64(-1)
		if m.RemainingSantim != nil {
			owed = *m.RemainingSantim
		}
		add(m.Kind, m.Reference, m.Priority, false, amt, owed)
	}
	for _, l := range in.Loans {
		add(KindLoanInstallment, l.Reference, l.Priority, false, l.AmountSantim, l.AmountSantim)
	}
	for _, r := range in.EWA {
		add(KindEWARecovery, r.Reference, r.Priority, false, r.OutstandingSantim, r.OutstandingSantim)
	}
	for _, d := range in.Deductions {
		amt := d.Amount
		if d.Method == Percent {
			var err error
			if amt, err = money.ApplyBasisPoints(gross, d.Amount); err != nil {
				return nil, err
			}
		}
		add(KindCatalog, d.Reference, 0, d.PreTax, amt, -1)
	}
	for _, a := range adjustments {
		if a.Direction == AdjustDeduction {
			add(KindAdjustment, a.Reference, 0, a.Taxable, a.AmountSantim, a.AmountSantim)
		}
	}
	// Carries whose source is not in this input: still owed, taken in their kind's place.
	for _, c := range in.CarriedForward {
		if _, ok := carried[carryKey{c.Kind, c.Reference}]; ok {
			sources = append(sources, source{kind: c.Kind, ref: c.Reference, priority: c.Priority, preTax: c.PreTax, group: groupOf(c.Kind), due: c.AmountSantim})
		}
	}
	slices.SortFunc(sources, func(a, b source) int {
		return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.priority, b.priority),
			cmp.Compare(a.ref, b.ref), cmp.Compare(a.kind, b.kind))
	})
	return sources, nil
}

// daysEmployed counts the days of the period from the hire date to the termination date, both
// inclusive.
func daysEmployed(hire Date, term *Date, y int, m time.Month, days int) int {
	first, last := Date{y, m, 1}, Date{y, m, days}
	from, to := first, last
	if from.before(hire) {
		from = hire
	}
	if term != nil && term.before(to) {
		to = *term
	}
	if to.before(from) {
		return 0
	}
	// Both are in the period's month now.
	return to.Day - from.Day + 1
}

// sortedBy returns a copy of s sorted by key (stable, so equal keys keep their order; keys are
// unique after Validate).
func sortedBy[T any](s []T, key func(T) string) []T {
	out := slices.Clone(s)
	slices.SortStableFunc(out, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	return out
}
