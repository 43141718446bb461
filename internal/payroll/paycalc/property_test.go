package paycalc

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/wagerail/wagerail/internal/platform/money"
)

// checkEntry asserts the invariants every entry keeps, from the entry and its input alone.
func checkEntry(t require.TestingT, in Input, e Entry) {
	// Gross is the earnings; net = gross − Σ deductions ≥ 0.
	var earned, taxable int64
	for _, l := range e.Earnings {
		require.Positive(t, l.AmountSantim+boolInt(l.Kind == EarningBasic), "an earning line of 0 other than basic")
		earned += l.AmountSantim
		if l.Taxable {
			taxable += l.AmountSantim
		}
	}
	require.Equal(t, e.GrossSantim, earned)
	require.Equal(t, e.TaxableSantim, taxable)
	require.Equal(t, e.GrossSantim, e.TaxableSantim+e.ExemptSantim)
	var deducted, court, protected, pretax int64
	for i, d := range e.Deductions {
		require.GreaterOrEqual(t, d.AmountSantim, int64(0))
		deducted += d.AmountSantim
		switch {
		case i < 2:
		case d.Kind == KindCourtOrder:
			court += d.AmountSantim
		default:
			protected += d.AmountSantim
		}
		if d.PreTax {
			pretax += d.AmountSantim
		}
		if i >= 2 {
			require.Positive(t, d.AmountSantim)
		}
	}
	require.Equal(t, KindPAYE, e.Deductions[0].Kind)
	require.Equal(t, KindPension, e.Deductions[1].Kind)
	require.Equal(t, e.DeductionsSantim, deducted)
	require.Equal(t, e.StatutorySantim, e.Deductions[0].AmountSantim+e.Deductions[1].AmountSantim)
	require.Equal(t, e.CourtOrdersSantim, court)
	require.Equal(t, e.ProtectedSantim, protected)
	require.Equal(t, e.NetSantim, e.GrossSantim-deducted)
	require.GreaterOrEqual(t, e.NetSantim, int64(0))

	// PAYE is the table's tax on the taxable income less the pre-tax deductions taken.
	table, err := TableFor(in.Period)
	require.NoError(t, err)
	require.Equal(t, table.Version, e.TaxTableVersion)
	require.Equal(t, max(0, e.TaxableSantim-pretax), e.TaxBaseSantim)
	require.Equal(t, referenceTax(table, e.TaxBaseSantim), e.Deductions[0].AmountSantim)

	// The minimum net holds unless the statutory deductions alone break it, and then nothing else
	// is taken.
	p := in.Policy
	if e.BelowMinimumNet {
		require.Zero(t, court+protected)
	} else {
		require.GreaterOrEqual(t, e.NetSantim, p.MinNetSantim)
	}
	// The protected tier stays within the share of the final disposable wage, less the court orders.
	shareCap := new(big.Int).Div(new(big.Int).Mul(big.NewInt(e.GrossSantim-e.StatutorySantim), big.NewInt(p.ShareNumerator)), big.NewInt(p.ShareDenominator)).Int64()
	require.LessOrEqual(t, protected, max(0, shareCap-court), "protected tier beyond the share")
	require.GreaterOrEqual(t, e.RecoverableSantim, int64(0))

	// Every deduction and carry is one source's; taken + carried = due, never more than owed.
	due := dues(in)
	seen := map[carryKey]int64{}
	for _, d := range e.Deductions[2:] {
		k := carryKey{d.Kind, d.Reference}
		_, ok := due[k]
		require.True(t, ok, "a deduction with no source: %v", k)
		seen[k] += d.AmountSantim
	}
	for _, c := range e.CarriedForward {
		k := carryKey{c.Kind, c.Reference}
		_, ok := due[k]
		require.True(t, ok, "a carry with no source: %v", k)
		require.Positive(t, c.AmountSantim)
		seen[k] += c.AmountSantim
	}
	for k, d := range due {
		require.Equal(t, d, seen[k], "taken + carried for %v", k)
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// dues is what each source is due this period, from the input, by the documented rule.
func dues(in Input) map[carryKey]int64 {
	var gross int64
	e, err := Calculate(in)
	if err == nil {
		gross = e.GrossSantim
	}
	carried := map[carryKey]int64{}
	for _, c := range in.CarriedForward {
		carried[carryKey{c.Kind, c.Reference}] = c.AmountSantim
	}
	out := map[carryKey]int64{}
	add := func(k DeductionKind, ref string, amount, owed int64) {
		key := carryKey{k, ref}
		d := amount + carried[key]
		delete(carried, key)
		if owed >= 0 {
			d = min(d, owed)
		}
		out[key] = d
	}
	pct := func(m Method, a int64) int64 {
		if m == Fixed {
			return a
		}
		v, _ := money.ApplyBasisPoints(gross, a)
		return v
	}
	for _, m := range in.Mandates {
		owed := int64(-1)
		if m.RemainingSantim != nil {
			owed = *m.RemainingSantim
		}
		add(m.Kind, m.Reference, pct(m.Method, m.Amount), owed)
	}
	for _, l := range in.Loans {
		add(KindLoanInstallment, l.Reference, l.AmountSantim, l.AmountSantim)
	}
	for _, r := range in.EWA {
		add(KindEWARecovery, r.Reference, r.OutstandingSantim, r.OutstandingSantim)
	}
	for _, d := range in.Deductions {
		add(KindCatalog, d.Reference, pct(d.Method, d.Amount), -1)
	}
	for _, a := range in.Adjustments {
		if a.Direction == AdjustDeduction {
			add(KindAdjustment, a.Reference, a.AmountSantim, a.AmountSantim)
		}
	}
	for k, v := range carried {
		out[k] = v
	}
	return out
}

// referenceTax is PAYE from the definition, with big.Rat: Σ band portion × rate, then rounded to
// the nearest santim, half to even.
func referenceTax(t TaxTable, taxable int64) int64 {
	sum := new(big.Rat)
	var lower int64
	for _, b := range t.Bands {
		upper := b.UpToSantim
		if upper == 0 {
			upper = taxable
		}
		if part := min(upper, taxable) - lower; part > 0 {
			sum.Add(sum, new(big.Rat).SetFrac64(part*b.RateBasisPoints, 10_000))
		}
		lower = upper
	}
	fl := new(big.Int).Div(sum.Num(), sum.Denom())
	frac := new(big.Rat).Sub(sum, new(big.Rat).SetInt(fl))
	if c := frac.Cmp(big.NewRat(1, 2)); c > 0 || (c == 0 && fl.Bit(0) == 1) {
		fl.Add(fl, big.NewInt(1))
	}
	return fl.Int64()
}

// genInput draws a valid input that reaches every rule: joiners and leavers, both tables, every
// kind of earning and deduction, carries with and without their source, tight minimum nets.
func genInput(t *rapid.T) Input {
	ref := func(prefix string, i int) string { return fmt.Sprintf("%s-%d", prefix, i) }
	y := rapid.IntRange(2024, 2026).Draw(t, "year")
	m := time.Month(rapid.IntRange(1, 12).Draw(t, "month"))
	in := Input{
		Period:              fmt.Sprintf("%04d-%02d", y, int(m)),
		MonthlySalarySantim: rapid.OneOf(rapid.Int64Range(0, 5_000_000), rapid.Int64Range(0, 100_000_000)).Draw(t, "salary"),
		HireDate:            Date{2020, 1, 1},
		Policy:              DefaultPolicy(),
	}
	if rapid.Bool().Draw(t, "joiner") {
		in.HireDate = Date{y, m, rapid.IntRange(1, daysIn(y, m)).Draw(t, "hireDay")}
	}
	if rapid.Bool().Draw(t, "leaver") {
		d := Date{y, m, rapid.IntRange(1, daysIn(y, m)).Draw(t, "termDay")}
		if !d.before(in.HireDate) {
			in.TerminationDate = &d
		}
	}
	in.Policy.EmployeePensionBasisPoints = rapid.SampledFrom([]int64{0, 700, 1_000, MaxEmployeePensionBasisPoints}).Draw(t, "pension")
	in.Policy.MonthlyHours = rapid.SampledFrom([]int64{DefaultMonthlyHours, 160, 1, MaxMonthlyHours}).Draw(t, "hours")
	in.Policy.ShareDenominator = rapid.Int64Range(1, 10).Draw(t, "den")
	in.Policy.ShareNumerator = rapid.Int64Range(0, in.Policy.ShareDenominator).Draw(t, "num")
	in.Policy.MinNetSantim = rapid.OneOf(rapid.Just(int64(0)), rapid.Int64Range(0, 3_000_000)).Draw(t, "minNet")
	amt := func(name string) int64 { return rapid.Int64Range(1, 2_000_000).Draw(t, name) }
	method := func(name string) (Method, int64) {
		if rapid.Bool().Draw(t, name+"Pct") {
			return Percent, rapid.Int64Range(1, money.HundredPercent).Draw(t, name+"Bp")
		}
		return Fixed, amt(name)
	}
	for i := range rapid.IntRange(0, 3).Draw(t, "allowances") {
		mt, a := method("allowance")
		in.Allowances = append(in.Allowances, Allowance{Reference: ref("al", i), Method: mt, Amount: a, Taxable: rapid.Bool().Draw(t, "alTax")})
	}
	for i := range rapid.IntRange(0, 3).Draw(t, "deductions") {
		mt, a := method("deduction")
		if mt == Percent {
			a = min(a, 2_000)
		}
		in.Deductions = append(in.Deductions, CatalogDeduction{Reference: ref("de", i), Method: mt, Amount: a, PreTax: rapid.Bool().Draw(t, "pretax")})
	}
	for i := range rapid.IntRange(0, 2).Draw(t, "earnings") {
		in.Earnings = append(in.Earnings, OneTimeEarning{Reference: ref("ea", i), Kind: rapid.SampledFrom([]EarningKind{EarningBonus, EarningArrears, EarningCommission}).Draw(t, "eaKind"),
			AmountSantim: amt("earning"), Taxable: rapid.Bool().Draw(t, "eaTax")})
	}
	for i := range rapid.IntRange(0, 4).Draw(t, "overtime") {
		in.Overtime = append(in.Overtime, Overtime{Reference: ref("ot", i), Minutes: rapid.Int64Range(1, MaxOvertimeMinutesPerEntry).Draw(t, "minutes"),
			MultiplierBasisPoints: rapid.Int64Range(MinMultiplierBasisPoints, MaxMultiplierBasisPoints).Draw(t, "mult")})
	}
	for i := range rapid.IntRange(0, 2).Draw(t, "adjustments") {
		in.Adjustments = append(in.Adjustments, Adjustment{Reference: ref("ad", i), Direction: rapid.SampledFrom([]Direction{AdjustEarning, AdjustDeduction}).Draw(t, "dir"),
			AmountSantim: amt("adjustment"), Taxable: rapid.Bool().Draw(t, "adTax")})
	}
	kinds := []DeductionKind{KindCourtOrder, KindLoanInstallment, KindUnionDues, KindCostSharing, KindOther}
	for i := range rapid.IntRange(0, 4).Draw(t, "mandates") {
		mt, a := method("mandate")
		if mt == Percent {
			a = min(a, 3_000)
		}
		md := Mandate{Reference: ref("md", i), Kind: rapid.SampledFrom(kinds).Draw(t, "mdKind"), Method: mt, Amount: a, Priority: rapid.Int64Range(0, 3).Draw(t, "prio")}
		if rapid.Bool().Draw(t, "remaining") {
			md.RemainingSantim = ptr(rapid.Int64Range(0, 3_000_000).Draw(t, "remainingSantim"))
		}
		in.Mandates = append(in.Mandates, md)
	}
	for i := range rapid.IntRange(0, 3).Draw(t, "ewa") {
		in.EWA = append(in.EWA, EWARecovery{Reference: ref("ewa", i), OutstandingSantim: amt("ewa"), Priority: rapid.Int64Range(0, 3).Draw(t, "prio")})
	}
	for i := range rapid.IntRange(0, 3).Draw(t, "loans") {
		in.Loans = append(in.Loans, LoanInstalment{Reference: ref("loan", i), AmountSantim: amt("loan"), Priority: rapid.Int64Range(0, 3).Draw(t, "prio")})
	}
	// Carries: some for existing sources, some for sources that are gone.
	for i := range rapid.IntRange(0, 3).Draw(t, "carries") {
		c := Carry{Kind: rapid.SampledFrom(append(kinds, KindEWARecovery, KindCatalog, KindAdjustment)).Draw(t, "cKind"),
			AmountSantim: amt("carry"), Priority: rapid.Int64Range(0, 3).Draw(t, "prio"), PreTax: rapid.Bool().Draw(t, "cPre")}
		c.Reference = rapid.SampledFrom([]string{ref("gone", i), "md-0", "ewa-0", "loan-0", "de-0", "ad-0"}).Draw(t, "cRef")
		in.CarriedForward = append(in.CarriedForward, c)
	}
	return in
}

// validOrSkip keeps drawn inputs that pass Validate (a carry's reference may repeat).
func validOrSkip(t *rapid.T, in Input) {
	if err := in.Validate(); err != nil {
		t.Skip(err)
	}
}

func TestEntryInvariants(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		in := genInput(t)
		validOrSkip(t, in)
		e, err := Calculate(in)
		require.NoError(t, err)
		checkEntry(t, in, e)
	})
}

// The same input gives the same entry, whatever the order of its slices.
func TestEntryIsDeterministic(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		in := genInput(t)
		validOrSkip(t, in)
		e1, err := Calculate(in)
		require.NoError(t, err)
		e2, err := Calculate(in)
		require.NoError(t, err)
		require.Equal(t, e1, e2)
		r := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 1))
		sh := in
		sh.Allowances, sh.Deductions, sh.Earnings, sh.Overtime = shuffled(r, in.Allowances), shuffled(r, in.Deductions), shuffled(r, in.Earnings), shuffled(r, in.Overtime)
		sh.Adjustments, sh.Mandates, sh.EWA, sh.Loans, sh.CarriedForward = shuffled(r, in.Adjustments), shuffled(r, in.Mandates), shuffled(r, in.EWA), shuffled(r, in.Loans), shuffled(r, in.CarriedForward)
		e3, err := Calculate(sh)
		require.NoError(t, err)
		require.Equal(t, e1, e3)
	})
}

func shuffled[T any](r *rand.Rand, s []T) []T {
	out := append([]T(nil), s...)
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// What Project reports as recoverable is: an EWA recovery of that amount added to the input is
// taken in full, and changes nothing else but the net.
func TestRecoverableIsRecoverable(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		in := genInput(t)
		validOrSkip(t, in)
		p, err := Project(in)
		require.NoError(t, err)
		require.Equal(t, p.Entry.NetSantim, p.NetSantim)
		if p.RecoverableSantim == 0 {
			return
		}
		r := rapid.Int64Range(1, p.RecoverableSantim).Draw(t, "advance")
		more := in
		more.EWA = append(append([]EWARecovery(nil), in.EWA...), EWARecovery{Reference: "ewa-new", OutstandingSantim: r})
		e, err := Calculate(more)
		require.NoError(t, err)
		require.Equal(t, p.NetSantim-r, e.NetSantim)
		require.Equal(t, p.Entry.CarriedForward, e.CarriedForward)
		require.Equal(t, p.RecoverableSantim-r, e.RecoverableSantim)
		var got int64
		for _, d := range e.Deductions {
			if d.Kind == KindEWARecovery && d.Reference == "ewa-new" {
				got = d.AmountSantim
			}
		}
		require.Equal(t, r, got)
	})
}

// Several periods in a row, each fed the last one's carried-forward amounts and the stores'
// updated balances: for every source, what was owed = what was taken + what is still owed.
func TestCarriedForwardIsConserved(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		in := emp("2025-05", rapid.Int64Range(0, 3_000_000).Draw(t, "salary"))
		in.Policy.MinNetSantim = rapid.Int64Range(0, 1_500_000).Draw(t, "minNet")
		amt := func(name string) int64 { return rapid.Int64Range(1, 1_500_000).Draw(t, name) }
		// Debts with a total (the stores reduce it by what is taken) ...
		court := amt("courtTotal")
		in.Mandates = []Mandate{
			{Reference: "co", Kind: KindCourtOrder, Method: Fixed, Amount: amt("court"), RemainingSantim: ptr(court)},
			{Reference: "ud", Kind: KindUnionDues, Method: Fixed, Amount: amt("dues")}, // ... and one without: owed grows each period
		}
		in.EWA = []EWARecovery{{Reference: "ewa", OutstandingSantim: amt("ewa")}}
		in.Loans = []LoanInstalment{{Reference: "loan:0", AmountSantim: amt("loan")}}
		in.Adjustments = []Adjustment{{Reference: "adj", Direction: AdjustDeduction, AmountSantim: amt("adj")}}
		owed := map[string]int64{"ewa": in.EWA[0].OutstandingSantim, "loan:0": in.Loans[0].AmountSantim, "adj": in.Adjustments[0].AmountSantim}
		taken := map[string]int64{}
		for period := range rapid.IntRange(1, 8).Draw(t, "periods") {
			in.Period = fmt.Sprintf("2025-%02d", 5+period)
			owed["ud"] += in.Mandates[1].Amount
			// The court order is owed its instalments so far, up to its total.
			owed["co"] = min(int64(period+1)*in.Mandates[0].Amount, court)
			e, err := Calculate(in)
			require.NoError(t, err)
			checkEntry(t, in, e)
			for _, d := range e.Deductions[2:] {
				taken[d.Reference] += d.AmountSantim
			}
			// The next period: the stores' balances fall by what was taken; the adjustment is
			// applied once, its rest continues as a carry; the carries are fed back.
			next := in
			next.Mandates = []Mandate{in.Mandates[0], in.Mandates[1]}
			next.Mandates[0].RemainingSantim = ptr(court - taken["co"])
			next.EWA, next.Loans = nil, nil
			if left := owed["ewa"] - taken["ewa"]; left > 0 {
				next.EWA = []EWARecovery{{Reference: "ewa", OutstandingSantim: left}}
			}
			if left := owed["loan:0"] - taken["loan:0"]; left > 0 {
				next.Loans = []LoanInstalment{{Reference: "loan:0", AmountSantim: left}}
			}
			next.Adjustments = nil
			next.CarriedForward = e.CarriedForward
			carried := map[string]int64{}
			for _, c := range e.CarriedForward {
				carried[c.Reference] += c.AmountSantim
			}
			for ref, o := range owed {
				require.Equal(t, o, taken[ref]+carried[ref], "%s after period %d: owed = taken + carried", ref, period)
			}
			in = next
		}
	})
}
