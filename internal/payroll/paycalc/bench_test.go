package paycalc

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// mixedInputs is a payroll of n employees with a deterministic mix of what a real run sees:
// joiners and leavers, allowances, overtime, one-time earnings, court orders, loans, EWA
// recoveries, mandates, catalog deductions and carries.
func mixedInputs(n int) []Input {
	out := make([]Input, n)
	for i := range out {
		in := emp("2025-09", int64(300_000+(i*7_919)%4_700_000)) // 3,000 – 50,000 ETB
		in.Policy.MinNetSantim = int64(i%3) * 100_000
		if i%17 == 0 {
			in.HireDate = Date{2025, 9, 1 + i%30}
		}
		if i%23 == 0 {
			in.TerminationDate = &Date{2025, 9, 1 + i%30}
			if in.TerminationDate.before(in.HireDate) {
				in.TerminationDate = nil
			}
		}
		in.Allowances = []Allowance{{Reference: "transport", Method: Fixed, Amount: 60_000}, {Reference: "housing", Method: Percent, Amount: 1_000, Taxable: true}}
		in.Deductions = []CatalogDeduction{{Reference: "provident", Method: Percent, Amount: 500, PreTax: i%2 == 0}}
		if i%4 == 0 {
			in.Overtime = []Overtime{
				{Reference: "ot-1", Minutes: 120, MultiplierBasisPoints: MultiplierWorkdayBasisPoints},
				{Reference: "ot-2", Minutes: 90, MultiplierBasisPoints: MultiplierNightBasisPoints},
			}
		}
		if i%5 == 0 {
			in.Earnings = []OneTimeEarning{{Reference: "bonus", Kind: EarningBonus, AmountSantim: 150_000, Taxable: true}}
		}
		if i%11 == 0 {
			in.Mandates = append(in.Mandates, Mandate{Reference: "co", Kind: KindCourtOrder, Method: Percent, Amount: 2_500})
		}
		if i%3 == 0 {
			in.Mandates = append(in.Mandates, Mandate{Reference: "dues", Kind: KindUnionDues, Method: Fixed, Amount: 5_000})
			in.Loans = []LoanInstalment{{Reference: fmt.Sprintf("loan-%d:2", i), AmountSantim: 120_000}}
		}
		if i%2 == 0 {
			in.EWA = []EWARecovery{{Reference: fmt.Sprintf("ewa-%d", i), OutstandingSantim: int64(50_000 + i%400_000)}}
		}
		if i%7 == 0 {
			in.CarriedForward = []Carry{{Kind: KindOther, Reference: "old", AmountSantim: 30_000}}
		}
		out[i] = in
	}
	return out
}

// TestBenchmarkReportCalc prints the calculator's throughput on a payroll of 10,000 mixed entries
// (make bench). It asserts the entries' invariants, never a timing.
func TestBenchmarkReportCalc(t *testing.T) {
	if os.Getenv("WAGERAIL_BENCH") == "" {
		t.Skip("set WAGERAIL_BENCH=1 (make bench)")
	}
	const n = 10_000
	ins := mixedInputs(n)
	entries := make([]Entry, n)
	best := time.Duration(1 << 62)
	for range 5 {
		start := time.Now()
		for i, in := range ins {
			e, err := Calculate(in)
			if err != nil {
				t.Fatal(err)
			}
			entries[i] = e
		}
		best = min(best, time.Since(start))
	}
	var gross, net, carried int64
	for i, e := range entries {
		checkEntry(t, ins[i], e)
		gross += e.GrossSantim
		net += e.NetSantim
		carried += int64(len(e.CarriedForward))
	}
	require.Positive(t, carried)
	fmt.Printf("\n== payroll calculator: %d mixed entries, one goroutine (best of 5) ==\n", n)
	fmt.Printf("%-44s %10s\n", "figure", "value")
	fmt.Printf("%-44s %9.1fms\n", "10,000 entries", float64(best.Microseconds())/1000)
	fmt.Printf("%-44s %10.0f\n", "entries per second", float64(n)/best.Seconds())
	fmt.Printf("%-44s %10d\n", "carried-forward items", carried)
}

func BenchmarkCalculate(b *testing.B) {
	ins := mixedInputs(1_000)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := Calculate(ins[i%len(ins)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
