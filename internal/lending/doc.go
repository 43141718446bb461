// Package lending owns salary-backed lending's stores and rules: a financial institution's
// accounts at its partner bank (FIAccounts), the loan products it offers (Product), a business's
// opt-ins to them (OptIn), the quote of a loan for an employee (Quote) and the loans with their
// instalments (Loan, loans.go: origination, the FI's approval or rejection, cancellation; their
// states are documented there), and the record steps of the money sagas' workflows: disbursement
// (disburse.go), repayment (repay.go), remittance to the FI (remit.go), delinquency, restructure
// and write-off (delinquency.go, restructure.go, writeoff.go); the amortisation arithmetic is the
// pure package schedule, the refusal codes one table (codes.go).
//
// # Who owns what
//
// A financial institution is an organization of kind FI. Its accounts and its products are its
// tenant's rows, changed by its own members (the API guards them with the FI permission module
// "loans": view to read, edit to change). A product is offered to every business: any
// organization may read the ACTIVE products of every FI, and the products it has opted in to
// (the database's "offered" policy; the queries here state the same rule, so a platform admin's
// transaction, which sees every row, answers alike). A business's opt-in is the business's row;
// only a product it has an ACTIVE opt-in to is quoted, originated, approved and paid out for its
// employees (a withdrawal stops the loans not yet paid out at the FI's approval and at the
// disbursement; an opt-in made again lets them go on). Another FI's product, another business's
// opt-in, a product neither on offer nor opted in to: not found.
//
// # Affordability
//
// A loan is affordable when its largest instalment (schedule.Schedule.MaxInstalmentSantim) fits
// BOTH limits, the smaller binding:
//
//   - the product's debt-service share: all the borrower's loan instalments together take at
//     most MaxDebtServiceBasisPoints of the net pay they are taken from, so the new instalment is
//     at most ⌊(net + existing instalments) × share ÷ 10,000⌋ − existing instalments, where net is
//     the projected net pay after every deduction (existing instalments included) — rounded down,
//     a limit (money.MulDivFloor);
//   - what the next payroll can still recover within the protection policy (the share of the
//     wage and the minimum net after PAYE, pension, court orders, existing instalments and EWA
//     recoveries: paycalc.Projection.RecoverableSantim), so every instalment can be deducted.
//
// The projection is not this package's: the API wiring supplies a ProjectFunc (the payroll
// loader's projection of the employee's next run).
//
// # When the schedule starts
//
// The schedule is computed when the loan is requested, from that day's next run. The payout
// starts it (MarkDisbursed, disburse.go's startSchedule): when the first due period has passed or
// its run has already fixed its figures, the whole schedule moves, amounts unchanged, to the
// first period a run can still deduct it in, and loan.disbursed.v1 says by how many months
// (scheduleMovedMonths). A run deducts only ACTIVE loans, each instalment only in its own period,
// so a late approval or payout would otherwise leave instalments overdue and never deducted.
//
// # Journals
//
// The ledger of a loan is the business's (its tenant): the business services the loan for the FI
// and its books hold what the borrower owes, what is owed on to the FI, and the payroll money in
// transit between them. The FI's funding and settlement accounts are the FI's, not the business's,
// so the business's ledger does not mirror them (a partner-bank:<partner>:<account> mirror is an
// account the tenant holds; reconciliation reads exactly those). Every subledger closes: when a
// loan is REPAID and every instalment remitted, its accounts receivable-from-borrower:<loan>,
// payable-to-fi-partner[<fi>]:<loan> and payroll-clearing:<loan> are at zero (the names come
// from chart.BorrowerReceivable, chart.FIPayable and chart.LoanClearing).
//
//	Disburse P (PENDING while the transfer FI funding → borrower is in flight; committed when it
//	settles, voided when it fails; bank_reference = the transfer's leg reference):
//	    Dr receivable-from-borrower:<loan>     P
//	    Cr payable-to-fi-partner[<fi>]:<loan>  P    the FI's advance, owed back as it is collected
//	Repay a on instalment k (POSTED; applied to k's outstanding interest, then fee, then principal):
//	    Dr payroll-clearing:<loan>             a    the instalment, as the spec's journal
//	    Cr receivable-from-borrower:<loan>     a_principal
//	    Cr payable-to-fi-partner[<fi>]:<loan>  a_interest + a_fee   the FI's earnings, owed once collected
//	Remit instalment k, c = what was repaid on k (PENDING while the transfer business payroll
//	account → FI settlement account is in flight; bank_reference = its leg reference):
//	    Dr payable-to-fi-partner[<fi>]:<loan>  c
//	    Cr payroll-clearing:<loan>             c
//	Write off R, the principal outstanding (the FI's approval recorded: the FI bears it):
//	    Dr payable-to-fi-partner[<fi>]:<loan>  R
//	    Cr receivable-from-borrower:<loan>     R
//
// Interest and fees are never recognised before they are collected: the receivable is the
// principal outstanding, so an early repayment, a restructure or a write-off never leaves
// unearned interest behind. The spec's remittance amount ("principal") is the principal of the
// remittance, what was collected on the instalment; for an interest-free, fee-free product the
// two are the same.
//
// # Changes
//
// Every change writes its audit row and its outbox event (lending.*.v1) in the caller's
// transaction; refusals are *payroll.Refusal (the domain stores' one refusal type, so the API
// answers them alike), field errors are the caller's 400.
package lending
