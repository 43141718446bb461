package paycalc

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// emp is a full-month employee hired long before the period, on the default policy.
func emp(period string, salary int64) Input {
	return Input{Period: period, MonthlySalarySantim: salary, HireDate: Date{2020, 1, 1}, Policy: DefaultPolicy()}
}

func with(in Input, f func(*Input)) Input { f(&in); return in }

func ptr[T any](v T) *T { return &v }

// golden is one hand-computed entry. lines are the deductions after PAYE and pension, in order.
type golden struct {
	name                                string
	in                                  Input
	version                             string
	gross, paye, pension, employer, net int64
	lines                               []DeductionLine
	carried                             []Carry
	check                               func(t *testing.T, e Entry)
}

// The hand computations: ETB amounts, santim in the figures. Pension 7% and employer 11% of the
// pro-rated basic unless said otherwise; "→" is the one rounding (half to even).
var goldens = []golden{
	// ---- 2025 table (periods from 2025-07) ----
	{name: "2025: 2,000.00 is the top of the 0% band", in: emp("2025-07", 200000), version: TaxTable2025,
		// PAYE 0; pension 140.00; employer 220.00; net 2,000 − 140 = 1,860.00
		gross: 200000, paye: 0, pension: 14000, employer: 22000, net: 186000},
	{name: "2025: 2,000.01", in: emp("2025-07", 200001), version: TaxTable2025,
		// PAYE 1 santim × 15% = 0.15 → 0; pension 14,000.07 → 14,000; employer 22,000.11 → 22,000
		gross: 200001, paye: 0, pension: 14000, employer: 22000, net: 186001},
	{name: "2025: 2,000.10, a half rounds to even upwards", in: emp("2025-07", 200010), version: TaxTable2025,
		// PAYE 10 × 15% = 1.5 → 2; pension 14,000.7 → 14,001; employer 22,001.1 → 22,001; net 200,010 − 2 − 14,001
		gross: 200010, paye: 2, pension: 14001, employer: 22001, net: 186007},
	{name: "2025: 2,000.30, a half rounds to even downwards", in: emp("2025-07", 200030), version: TaxTable2025,
		// PAYE 30 × 15% = 4.5 → 4; pension 14,002.1 → 14,002; employer 22,003.3 → 22,003; net 200,030 − 4 − 14,002
		gross: 200030, paye: 4, pension: 14002, employer: 22003, net: 186024},
	{name: "2025: 4,000.00", in: emp("2025-07", 400000), version: TaxTable2025,
		// PAYE 2,000 × 15% = 300.00; pension 280.00; net 4,000 − 580 = 3,420.00
		gross: 400000, paye: 30000, pension: 28000, employer: 44000, net: 342000},
	{name: "2025: 4,000.01", in: emp("2025-07", 400001), version: TaxTable2025,
		// PAYE 300.00 + 1 santim × 20% = 30,000.2 → 30,000; pension 28,000.07 → 28,000
		gross: 400001, paye: 30000, pension: 28000, employer: 44000, net: 342001},
	{name: "2025: 7,000.00", in: emp("2025-07", 700000), version: TaxTable2025,
		// PAYE 300 + 3,000 × 20% = 900.00; pension 490.00; net 7,000 − 1,390 = 5,610.00
		gross: 700000, paye: 90000, pension: 49000, employer: 77000, net: 561000},
	{name: "2025: 10,000.00", in: emp("2025-12", 1000000), version: TaxTable2025,
		// PAYE 900 + 3,000 × 25% = 1,650.00; pension 700.00; net 10,000 − 2,350 = 7,650.00
		gross: 1000000, paye: 165000, pension: 70000, employer: 110000, net: 765000},
	{name: "2025: 14,000.00", in: emp("2026-01", 1400000), version: TaxTable2025,
		// PAYE 1,650 + 4,000 × 30% = 2,850.00; pension 980.00; net 14,000 − 3,830 = 10,170.00
		gross: 1400000, paye: 285000, pension: 98000, employer: 154000, net: 1017000},
	{name: "2025: 14,000.01", in: emp("2025-07", 1400001), version: TaxTable2025,
		// PAYE 285,000 + 1 × 35% = 285,000.35 → 285,000; pension 98,000.07 → 98,000
		gross: 1400001, paye: 285000, pension: 98000, employer: 154000, net: 1017001},
	{name: "2025: 20,000.00 in the top band", in: emp("2025-07", 2000000), version: TaxTable2025,
		// PAYE 2,850 + 6,000 × 35% = 4,950.00; pension 1,400.00; net 20,000 − 6,350 = 13,650.00
		gross: 2000000, paye: 495000, pension: 140000, employer: 220000, net: 1365000},

	// ---- 2016 table (periods before 2025-07) ----
	{name: "2016: 600.00", in: emp("2025-06", 60000), version: TaxTable2016,
		// PAYE 0; pension 42.00; employer 66.00; net 558.00
		gross: 60000, paye: 0, pension: 4200, employer: 6600, net: 55800},
	{name: "2016: 600.01", in: emp("2024-01", 60001), version: TaxTable2016,
		// PAYE 1 × 10% = 0.1 → 0; pension 4,200.07 → 4,200; employer 6,600.11 → 6,600
		gross: 60001, paye: 0, pension: 4200, employer: 6600, net: 55801},
	{name: "2016: 1,650.00", in: emp("2025-06", 165000), version: TaxTable2016,
		// PAYE 1,050 × 10% = 105.00; pension 115.50; employer 181.50; net 1,650 − 220.50 = 1,429.50
		gross: 165000, paye: 10500, pension: 11550, employer: 18150, net: 142950},
	{name: "2016: 3,200.00", in: emp("2025-06", 320000), version: TaxTable2016,
		// PAYE 105 + 1,550 × 15% = 337.50; pension 224.00; net 3,200 − 561.50 = 2,638.50
		gross: 320000, paye: 33750, pension: 22400, employer: 35200, net: 263850},
	{name: "2016: 5,250.00", in: emp("2025-06", 525000), version: TaxTable2016,
		// PAYE 337.50 + 2,050 × 20% = 747.50; pension 367.50; net 5,250 − 1,115 = 4,135.00
		gross: 525000, paye: 74750, pension: 36750, employer: 57750, net: 413500},
	{name: "2016: 7,800.00", in: emp("2025-06", 780000), version: TaxTable2016,
		// PAYE 747.50 + 2,550 × 25% = 1,385.00; pension 546.00; net 7,800 − 1,931 = 5,869.00
		gross: 780000, paye: 138500, pension: 54600, employer: 85800, net: 586900},
	{name: "2016: 10,000.00 in June 2025, the last month of the old table", in: emp("2025-06", 1000000), version: TaxTable2016,
		// PAYE 1,385 + 2,200 × 30% = 2,045.00; pension 700.00; net 10,000 − 2,745 = 7,255.00
		gross: 1000000, paye: 204500, pension: 70000, employer: 110000, net: 725500},
	{name: "2016: 10,900.00", in: emp("2025-06", 1090000), version: TaxTable2016,
		// PAYE 1,385 + 3,100 × 30% = 2,315.00; pension 763.00; net 10,900 − 3,078 = 7,822.00
		gross: 1090000, paye: 231500, pension: 76300, employer: 119900, net: 782200},
	{name: "2016: 12,000.00 in the top band", in: with(emp("2000-01", 1200000), func(in *Input) { in.HireDate = Date{1999, 5, 1} }), version: TaxTable2016,
		// PAYE 2,315 + 1,100 × 35% = 2,700.00; pension 840.00; net 12,000 − 3,540 = 8,460.00
		gross: 1200000, paye: 270000, pension: 84000, employer: 132000, net: 846000},

	// ---- joiner, leaver ----
	{name: "joiner on 20 August: 12 of 31 days", in: with(emp("2025-08", 1000000), func(in *Input) { in.HireDate = Date{2025, 8, 20} }),
		// basic 10,000 × 12 ÷ 31 = 3,870.9677… → 387,097 santim
		// PAYE (387,097 − 200,000) × 15% = 28,064.55 → 28,065; pension 27,096.79 → 27,097;
		// employer 42,580.67 → 42,581; net 387,097 − 28,065 − 27,097 = 331,935
		version: TaxTable2025, gross: 387097, paye: 28065, pension: 27097, employer: 42581, net: 331935,
		check: func(t *testing.T, e Entry) {
			require.Equal(t, 12, e.DaysEmployed)
			require.Equal(t, 31, e.DaysInPeriod)
		}},
	{name: "leaver on 10 February of a leap year: 10 of 29 days", in: with(emp("2024-02", 870000), func(in *Input) { in.TerminationDate = &Date{2024, 2, 10} }),
		// basic 8,700 × 10 ÷ 29 = 3,000.00 exactly; 2016 table: PAYE 105 + 1,350 × 15% = 307.50;
		// pension 210.00; employer 330.00; net 3,000 − 517.50 = 2,482.50
		version: TaxTable2016, gross: 300000, paye: 30750, pension: 21000, employer: 33000, net: 248250,
		check: func(t *testing.T, e Entry) {
			require.Equal(t, 10, e.DaysEmployed)
			require.Equal(t, 29, e.DaysInPeriod)
		}},

	// ---- overtime: salary 10,400.00, 208 h, hourly rate 50.00 ----
	{name: "overtime 1.5 on a working day", in: with(emp("2025-07", 1040000), func(in *Input) {
		in.Overtime = []Overtime{{Reference: "ot-1", Minutes: 120, MultiplierBasisPoints: MultiplierWorkdayBasisPoints}}
	}),
		// overtime 2 h × 50 × 1.5 = 150.00; gross 10,550.00; PAYE 1,650 + 550 × 30% = 1,815.00;
		// pension on basic 728.00; employer 1,144.00; net 10,550 − 1,815 − 728 = 8,007.00
		version: TaxTable2025, gross: 1055000, paye: 181500, pension: 72800, employer: 114400, net: 800700,
		check: overtimeIs(15000)},
	{name: "overtime 1.75 at night", in: with(emp("2025-07", 1040000), func(in *Input) {
		in.Overtime = []Overtime{{Reference: "ot-1", Minutes: 90, MultiplierBasisPoints: MultiplierNightBasisPoints}}
	}),
		// overtime 1.5 h × 50 × 1.75 = 131.25; gross 10,531.25; PAYE 165,000 + 53,125 × 30% =
		// 180,937.5 → 180,938 (to even); net 1,053,125 − 180,938 − 72,800 = 799,387
		version: TaxTable2025, gross: 1053125, paye: 180938, pension: 72800, employer: 114400, net: 799387,
		check: overtimeIs(13125)},
	{name: "overtime 2.0 on the weekly rest day", in: with(emp("2025-07", 1040000), func(in *Input) {
		in.Overtime = []Overtime{{Reference: "ot-1", Minutes: 45, MultiplierBasisPoints: MultiplierRestDayBasisPoints}}
	}),
		// overtime 0.75 h × 50 × 2 = 75.00; gross 10,475.00; PAYE 165,000 + 47,500 × 30% = 179,250;
		// net 1,047,500 − 179,250 − 72,800 = 795,450
		version: TaxTable2025, gross: 1047500, paye: 179250, pension: 72800, employer: 114400, net: 795450,
		check: overtimeIs(7500)},
	{name: "overtime 2.5 on a public holiday, an hourly rate with a fraction", in: with(emp("2025-07", 1000000), func(in *Input) {
		in.Overtime = []Overtime{{Reference: "ot-1", Minutes: 7, MultiplierBasisPoints: MultiplierHolidayBasisPoints}}
	}),
		// overtime 7 × 1,000,000 × 25,000 ÷ (208 × 60 × 10,000) = 1,402.24… → 1,402 santim;
		// gross 1,001,402; PAYE 165,000 + 1,402 × 30% = 165,420.6 → 165,421;
		// net 1,001,402 − 165,421 − 70,000 = 765,981
		version: TaxTable2025, gross: 1001402, paye: 165421, pension: 70000, employer: 110000, net: 765981,
		check: overtimeIs(1402)},

	// ---- court orders, protection, EWA, carried forward ----
	{name: "court order that cannot be fully taken: the minimum net stops it, not the share", in: with(emp("2025-07", 1000000), func(in *Input) {
		in.Policy.MinNetSantim = 500000
		in.Mandates = []Mandate{{Reference: "co-1", Kind: KindCourtOrder, Method: Fixed, Amount: 300000}}
		in.Loans = []LoanInstalment{{Reference: "loan-1:0", AmountSantim: 10000}}
	}),
		// disposable 10,000 − 1,650 − 700 = 7,650; above the minimum net 7,650 − 5,000 = 2,650;
		// the court order takes 2,650.00 (more than the 1/3 share, 2,550) and carries 350.00;
		// the protected room is min(2,550, 2,650) − 2,650 < 0 → 0: the loan carries 100.00; net 5,000.00
		version: TaxTable2025, gross: 1000000, paye: 165000, pension: 70000, employer: 110000, net: 500000,
		lines:   []DeductionLine{{Kind: KindCourtOrder, Reference: "co-1", AmountSantim: 265000}},
		carried: []Carry{{Kind: KindCourtOrder, Reference: "co-1", AmountSantim: 35000}, {Kind: KindLoanInstallment, Reference: "loan-1:0", AmountSantim: 10000}}},
	{name: "a court order uses up the share before the protected tier", in: with(emp("2025-07", 1000000), func(in *Input) {
		in.Mandates = []Mandate{{Reference: "co-1", Kind: KindCourtOrder, Method: Percent, Amount: 2000}}
		in.Loans = []LoanInstalment{{Reference: "loan-1:0", AmountSantim: 100000}}
	}),
		// court order 20% of gross 10,000 = 2,000.00; share ⌊7,650 ÷ 3⌋ = 2,550.00; the loan takes
		// 2,550 − 2,000 = 550.00 and carries 450.00; net 7,650 − 2,550 = 5,100.00
		version: TaxTable2025, gross: 1000000, paye: 165000, pension: 70000, employer: 110000, net: 510000,
		lines:   []DeductionLine{{Kind: KindCourtOrder, Reference: "co-1", AmountSantim: 200000}, {Kind: KindLoanInstallment, Reference: "loan-1:0", AmountSantim: 55000}},
		carried: []Carry{{Kind: KindLoanInstallment, Reference: "loan-1:0", AmountSantim: 45000}}},
	{name: "EWA recovery capped by the protection share, rounded down", in: with(emp("2025-07", 900000), func(in *Input) {
		in.EWA = []EWARecovery{{Reference: "ewa-1", OutstandingSantim: 300000}}
	}),
		// PAYE 900 + 2,000 × 25% = 1,400.00; pension 630.00; disposable 9,000 − 2,030 = 6,970.00;
		// share 697,000 ÷ 3 = 232,333.33 → ⌊⌋ 232,333; EWA takes 232,333 and carries 67,667;
		// net 697,000 − 232,333 = 464,667
		version: TaxTable2025, gross: 900000, paye: 140000, pension: 63000, employer: 99000, net: 464667,
		lines:   []DeductionLine{{Kind: KindEWARecovery, Reference: "ewa-1", AmountSantim: 232333}},
		carried: []Carry{{Kind: KindEWARecovery, Reference: "ewa-1", AmountSantim: 67667}},
		check: func(t *testing.T, e Entry) {
			require.Equal(t, int64(232333), e.ShareCapSantim)
			require.Zero(t, e.RecoverableSantim)
		}},
	{name: "loan instalment before EWA, both in the share", in: with(emp("2025-07", 1000000), func(in *Input) {
		in.EWA = []EWARecovery{{Reference: "ewa-1", OutstandingSantim: 200000}}
		in.Loans = []LoanInstalment{{Reference: "loan-1:3", AmountSantim: 100000}}
	}),
		// share 2,550.00: the loan takes 1,000.00, EWA 1,550.00 of 2,000.00 (450.00 carried);
		// net 7,650 − 2,550 = 5,100.00
		version: TaxTable2025, gross: 1000000, paye: 165000, pension: 70000, employer: 110000, net: 510000,
		lines:   []DeductionLine{{Kind: KindLoanInstallment, Reference: "loan-1:3", AmountSantim: 100000}, {Kind: KindEWARecovery, Reference: "ewa-1", AmountSantim: 155000}},
		carried: []Carry{{Kind: KindEWARecovery, Reference: "ewa-1", AmountSantim: 45000}}},
	{name: "carried forward from last period, never taken twice", in: with(emp("2025-08", 1000000), func(in *Input) {
		in.EWA = []EWARecovery{{Reference: "ewa-1", OutstandingSantim: 45000}}
		in.Mandates = []Mandate{{Reference: "ud-1", Kind: KindUnionDues, Method: Fixed, Amount: 5000}}
		in.CarriedForward = []Carry{
			{Kind: KindEWARecovery, Reference: "ewa-1", AmountSantim: 45000},
			{Kind: KindUnionDues, Reference: "ud-1", AmountSantim: 5000},
			{Kind: KindOther, Reference: "gone-1", AmountSantim: 2500, Priority: 7},
		}
	}),
		// EWA: carried 450.00 + outstanding 450.00 capped by the outstanding → 450.00 (the
		// outstanding already includes last period's shortfall); union dues: carried 50.00 + this
		// period's 50.00 = 100.00; OTHER "gone-1" (source no longer in the input): 25.00.
		// net 7,650 − 450 − 100 − 25 = 7,075.00
		version: TaxTable2025, gross: 1000000, paye: 165000, pension: 70000, employer: 110000, net: 707500,
		lines: []DeductionLine{{Kind: KindEWARecovery, Reference: "ewa-1", AmountSantim: 45000}, {Kind: KindUnionDues, Reference: "ud-1", AmountSantim: 10000},
			{Kind: KindOther, Reference: "gone-1", AmountSantim: 2500}}},
	{name: "a mandate never takes more than its remaining total", in: with(emp("2025-07", 1000000), func(in *Input) {
		in.Mandates = []Mandate{{Reference: "cs-1", Kind: KindCostSharing, Method: Fixed, Amount: 50000, RemainingSantim: ptr(int64(12345))}}
	}),
		// 500.00 a month, 123.45 still owed → 123.45; net 7,650 − 123.45 = 7,526.55
		version: TaxTable2025, gross: 1000000, paye: 165000, pension: 70000, employer: 110000, net: 752655,
		lines: []DeductionLine{{Kind: KindCostSharing, Reference: "cs-1", AmountSantim: 12345}}},
	{name: "pre-tax catalog deduction lowers PAYE", in: with(emp("2025-07", 1000000), func(in *Input) {
		in.Deductions = []CatalogDeduction{{Reference: "pf", Method: Fixed, Amount: 50000, PreTax: true}}
	}),
		// provident fund 500.00 taken (share 2,550); PAYE on 9,500: 900 + 2,500 × 25% = 1,525.00;
		// net 10,000 − 1,525 − 700 − 500 = 7,275.00
		version: TaxTable2025, gross: 1000000, paye: 152500, pension: 70000, employer: 110000, net: 727500,
		lines: []DeductionLine{{Kind: KindCatalog, Reference: "pf", AmountSantim: 50000, PreTax: true}},
		check: func(t *testing.T, e Entry) { require.Equal(t, int64(950000), e.TaxBaseSantim) }},
	{name: "statutory alone below the minimum net: taken, nothing else", in: with(emp("2025-07", 300000), func(in *Input) {
		in.Policy.MinNetSantim = 300000
		in.Loans = []LoanInstalment{{Reference: "loan-1:0", AmountSantim: 50000}}
	}),
		// PAYE 1,000 × 15% = 150.00; pension 210.00; net 3,000 − 360 = 2,640.00 < 3,000.00:
		// the loan's 500.00 is carried
		version: TaxTable2025, gross: 300000, paye: 15000, pension: 21000, employer: 33000, net: 264000,
		carried: []Carry{{Kind: KindLoanInstallment, Reference: "loan-1:0", AmountSantim: 50000}},
		check:   func(t *testing.T, e Entry) { require.True(t, e.BelowMinimumNet) }},
	{name: "allowances (exempt fixed, taxable percent) and a bonus", in: with(emp("2025-07", 1000000), func(in *Input) {
		in.Allowances = []Allowance{{Reference: "transport", Method: Fixed, Amount: 60000}, {Reference: "housing", Method: Percent, Amount: 1000, Taxable: true}}
		in.Earnings = []OneTimeEarning{{Reference: "b-1", Kind: EarningBonus, AmountSantim: 200000, Taxable: true}}
	}),
		// gross 10,000 + 600 + 1,000 (10% of basic) + 2,000 = 13,600.00; taxable 13,000.00:
		// PAYE 1,650 + 3,000 × 30% = 2,550.00; pension on basic 700.00; net 13,600 − 3,250 = 10,350.00
		version: TaxTable2025, gross: 1360000, paye: 255000, pension: 70000, employer: 110000, net: 1035000,
		check: func(t *testing.T, e Entry) {
			require.Equal(t, int64(1300000), e.TaxableSantim)
			require.Equal(t, int64(60000), e.ExemptSantim)
		}},
}

func overtimeIs(want int64) func(t *testing.T, e Entry) {
	return func(t *testing.T, e Entry) {
		var got int64
		for _, l := range e.Earnings {
			if l.Kind == EarningOvertime {
				got += l.AmountSantim
			}
		}
		require.Equal(t, want, got)
	}
}

func TestGoldenEntries(t *testing.T) {
	t.Parallel()
	require.GreaterOrEqual(t, len(goldens), 25)
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			e, err := Calculate(g.in)
			require.NoError(t, err)
			require.Equal(t, g.version, e.TaxTableVersion)
			require.Equal(t, g.gross, e.GrossSantim, "gross")
			require.Equal(t, DeductionLine{Kind: KindPAYE, Reference: g.version, AmountSantim: g.paye}, e.Deductions[0], "PAYE")
			require.Equal(t, DeductionLine{Kind: KindPension, Reference: ReferencePension, AmountSantim: g.pension}, e.Deductions[1], "pension")
			require.Equal(t, []Contribution{{Kind: ContributionPensionEmployer, AmountSantim: g.employer}}, e.EmployerContributions)
			require.Equal(t, g.lines, nilIfEmpty(e.Deductions[2:]), "deductions after the statutory ones")
			require.Equal(t, g.carried, e.CarriedForward, "carried forward")
			require.Equal(t, g.net, e.NetSantim, "net")
			checkEntry(t, g.in, e)
			if g.check != nil {
				g.check(t, e)
			}
		})
	}
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}
