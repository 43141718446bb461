package paycalc_test

import (
	"fmt"

	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// An employee on 10,000 ETB a month with a court order, a loan instalment and an EWA advance to
// recover; the protection share (one third of the wage after PAYE and pension) limits what the
// loan and the advance may take, and the rest is carried forward to the next period.
func ExampleCalculate() {
	in := paycalc.Input{
		Period:              "2025-09",
		MonthlySalarySantim: 1_000_000,
		HireDate:            paycalc.Date{Year: 2023, Month: 3, Day: 1},
		Mandates:            []paycalc.Mandate{{Reference: "mdt_court", Kind: paycalc.KindCourtOrder, Method: paycalc.Fixed, Amount: 100_000}},
		Loans:               []paycalc.LoanInstalment{{Reference: "loan_7:3", AmountSantim: 120_000}},
		EWA:                 []paycalc.EWARecovery{{Reference: "ewa_42", OutstandingSantim: 51_500}},
		Policy:              paycalc.DefaultPolicy(),
	}
	e, err := paycalc.Calculate(in)
	if err != nil {
		panic(err)
	}
	fmt.Println("gross", money.FormatETB(e.GrossSantim), "table", e.TaxTableVersion)
	for _, d := range e.Deductions {
		fmt.Println(" ", d.Kind, d.Reference, money.FormatETB(d.AmountSantim))
	}
	for _, c := range e.EmployerContributions {
		fmt.Println("employer", c.Kind, money.FormatETB(c.AmountSantim))
	}
	fmt.Println("net", money.FormatETB(e.NetSantim))
	for _, c := range e.CarriedForward {
		fmt.Println("carried", c.Kind, c.Reference, money.FormatETB(c.AmountSantim))
	}
	p, _ := paycalc.Project(in)
	fmt.Println("recoverable", money.FormatETB(p.RecoverableSantim))
	// Output:
	// gross 10,000.00 ETB table ET-PAYE-2025-07
	//   PAYE ET-PAYE-2025-07 1,650.00 ETB
	//   PENSION_EMPLOYEE PENSION 700.00 ETB
	//   COURT_ORDER mdt_court 1,000.00 ETB
	//   LOAN_INSTALLMENT loan_7:3 1,200.00 ETB
	//   EWA_RECOVERY ewa_42 350.00 ETB
	// employer PENSION_EMPLOYER 1,100.00 ETB
	// net 5,100.00 ETB
	// carried EWA_RECOVERY ewa_42 165.00 ETB
	// recoverable 0.00 ETB
}
