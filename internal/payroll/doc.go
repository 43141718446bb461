// Package payroll owns the payroll domain's stores and rules: the inputs a run pays from
// (one-time earnings, overtime policies and entries, protection policies, adjustments, deduction
// mandates, tenant settings and the auto-lock policy), the runs and their entries, and the runs'
// disbursement. The net-pay arithmetic is the pure package paycalc; this package loads and keeps
// what it reads.
//
// Stores are written with bun (the project's rule: bun for a domain's plain tables, raw pgx where
// every microsecond counts, see internal/platform/db.NewBun). Every method takes a db.BunTx that
// the caller opened with tenancy.InBunTx (or crosstenant.BunTx for a platform admin), so
// row-level security scopes it exactly as a pgx transaction is scoped, and every query also
// filters by the context's tenant, because a platform admin's transaction sees every tenant.
//
// Every change writes its audit row and its outbox event in the caller's transaction. A refusal
// is a *Refusal (a stable code, its HTTP status and a public message): a resource another tenant
// owns is not found, an illegal state move is a conflict (Machine). Values are checked with
// internal/platform/field; those errors are the caller's 400.
//
// Runs (run.go, entries.go) move DRAFT → … → DISBURSED → COMPLETED. A run is calculated off the
// HTTP request, by the run's calculation workflow (workflows.PayrollCalculate, one at a time per
// run: RequestCalculation marks the run, CalculateRun writes the entries and clears the mark);
// being calculated is a mark on the run, not a state (run.go says why), and approval is refused
// while it is set (PAYROLL_RUN_CALCULATING). Completion (complete.go,
// driven by workflows.PayrollComplete) applies the PAID entries' deductions to their sources: EWA
// and loan lines through the EWA and loan repayment sagas (Source PAYROLL, one per run, entry and
// obligation), product mandates' lines (an equb contribution or a savings auto-save by payroll deduction; see
// product_mandate.go, the one home of "a product obligation collected by payroll deduction")
// through the product's own saga, mandates' taken amounts here. A FAILED entry's deductions are not applied and stay
// owed at their source (complete.go says how the next run finds them).
//
// The disbursement (disburse.go, workflows/payroll_disburse.go) pays each approved entry's net
// from the employer's payroll account at the partner bank (the tenant settings' payrollAccount,
// confirmed by the account-lookup gate before anything changes) to the employee's payout account,
// through the fan-out block's bulk disbursements. An entry with net 0 is PAID without a transfer.
// An entry whose employee's payout account is at another partner is FAILED
// (PAYOUT_ACCOUNT_AT_OTHER_PARTNER) and not sent: a bulk disbursement pays within one partner.
// When every entry is PAID or FAILED the run is DISBURSED; an operator retries a FAILED entry in
// a saga of its own (a new partner reference), which closes the run when it paid the last entry.
//
// Net pay is not journaled. The platform's ledger mirrors what the platform holds, owes and is
// owed; net pay moves from the employer's own account to the employee's own account and never
// passes through an account the platform holds or owes, so a journal for it would mirror nobody's
// money. What a run does to the platform's books is its deductions, journaled when the run is
// completed (DISBURSED → COMPLETED: EWA repayment and loan instalment journals through the
// repayment sagas, workflows/payroll_complete.go). Each entry keeps the partner's reference and
// transfer id of its payment, which is what GET /api/payroll/<id>/settlement shows and what a
// statement of the payroll account is matched against.
//
// Reports (report.go, report_courtorders.go, report_render.go) read a run's entries as they are
// and write the employer's run report (JSON, CSV through csvsafe), the PAYE declaration for the
// tax authority, the pension contribution schedule and the court-order remittance report; each
// XML layout is an XSD in xsd/ (embedded as ReportSchemas) that the tests validate every
// document against. Over a range of periods (periods_report.go), the business's payroll report and
// tax view sum each final run's own report, and the employee's budget (budget.go) is their next
// pay's projection with each deduction grouped.
//
// Amounts are int64 santim (NUMERIC(20,0) in the database, JSON names ending in Santim), shares
// are basis points; both have documented bounds that the database checks again.
package payroll
