// Package employeetransfer moves an employee from one business of the platform to another
// (POST /api/employees/<id>/transfer) with everything the employee owes handled explicitly,
// never silently dropped.
//
// # What a transfer does
//
// In one database transaction on the audited cross-tenant path (internal/platform/crosstenant:
// the platform role, every statement filtered on the tenant it means):
//
//   - the employee's record in the source business is locked, and must be a running employment
//     (not TERMINATED, not deleted);
//   - every obligation of that record is listed (see below) and checked against the plan the
//     caller stated; anything in flight, unhandled or handled in a way its kind does not allow
//     refuses the whole transfer (Blocked, listing each blocking obligation) and nothing is
//     written;
//   - otherwise the source record becomes TERMINATED with the effective date as its last day;
//     a new record is created in the target business (same person: names, contact, national id,
//     TIN, payout account; the salary the caller states or the old one; hired the day after
//     the effective date, so no day is paid by both payrolls; the employer-specific catalog
//     fields empty, for the new employer to fill in);
//   - deduction mandates are cancelled in the source and, when carried over, re-created PENDING
//     for the new record in the target with what is left of them (the target's admins activate
//     them under their own four-eyes rule), through internal/payroll, which writes their audit
//     rows and events;
//   - one employee_transfers row on each side (OUT in the source, IN in the target) names the
//     other side and lists every obligation with its handling, with an audit row
//     (TransferEmployeeOut / TransferEmployeeIn) and an employee.transferred.v1 event in each
//     tenant, in the same transaction (crosstenant adds its own CrossTenantAccess row).
//
// No money moves in a transfer: obligations either stay where their money is (the source
// business's books) or their collection instruction (a mandate) is moved. So a single
// transaction is enough and there is no saga: a failure anywhere rolls back every write on
// both sides.
//
// # Obligations and the handlings each kind allows
//
//	kind               what counts                                 allowed handling
//	EWA_ADVANCE        a DISBURSED request (owed to the source)    RETAIN_WITH_SOURCE
//	LOAN               an ACTIVE or DEFAULTED loan                  RETAIN_WITH_SOURCE
//	DEDUCTION_MANDATE  a PENDING, ACTIVE or SUSPENDED mandate       CARRY_OVER (not for a product's), CANCEL (not for COURT_ORDER)
//	BNPL_AGREEMENT     an ACTIVE or DEFAULTED agreement             RETAIN_WITH_SOURCE
//	EQUB_MEMBERSHIP    ACTIVE in a FORMING or RUNNING group         RETAIN_WITH_SOURCE
//
// RETAIN_WITH_SOURCE keeps the obligation on the old record in the source business, where its
// receivable is booked: the advance is still collected by record-repayment, the loan by its
// repayment routes, the BNPL instalments by their collect route, and the equb membership runs on.
// Carrying an advance or a loan to the new employer would move a receivable between two
// tenants' books, which is a money move and would need a saga; it is not offered. A loan's
// instalment deduction is a mandate (kind LOAN_INSTALLMENT) and can be carried over, so the new
// employer deducts it. A court order binds the person, not the employer: it can only be carried
// over. Savings goals are the employee's own money, not an obligation: they stay with the old
// record (and do not block); a savings auto-save or a BNPL collection by payroll, when it is a
// deduction mandate, follows the mandate rule.
//
// A product mandate (savings auto-save, BNPL instalment, equb contribution) names an object of
// the source business (the goal, the agreement, the group), which the target cannot collect for:
// it can only be cancelled.
//
// In flight (always blocking, no handling can be stated: wait for it, or cancel it first): an
// EWA request REQUESTED or DISBURSING, a loan REQUESTED, APPROVED or DISBURSING, a BNPL agreement
// ACCEPTED, a savings movement PENDING, an equb contribution or payout PENDING, and a deduction
// mandate a payroll run of the source that has not ended may still take (its completion adds what
// the run withheld, so what is left to carry is not known before).
//
// The effective date may be in the past or in the current month, not in a later month: the
// mandates move at once, so the source's runs of the months until then would withhold nothing.
//
// The same listing (Obligations) guards the end of an employment outside a transfer: the API
// refuses TERMINATED while money is in flight and a delete while the record owes anything.
//
// It must not write HTTP responses. Concurrency: the source record is locked first (FOR UPDATE),
// so of two racing transfers of one employee the second finds it TERMINATED and is refused
// (ErrNotTransferable). Every path that creates an obligation locks the same row in its own
// transaction, in a mode that conflicts with FOR UPDATE, and reads the employee's status under
// that lock: an EWA request (ewa's eligibility, FOR UPDATE), a loan (lending's lockBorrower, FOR
// NO KEY UPDATE, then QuoteLoan's status), a deduction mandate (payroll.PayableEmployee, FOR
// SHARE), a BNPL agreement (bnpl.CreateAgreement, FOR SHARE, in the saga's record step: the
// plan read before it is a step behind) and an equb membership (equb.Join, FOR SHARE). So a
// create racing a transfer either commits before the transfer reads the obligations (which then
// handle it: in flight blocks, a mandate follows the plan) or waits for the lock, reads the
// record TERMINATED and is refused with its kind's not-active code (EWA_EMPLOYEE_NOT_ACTIVE,
// LOAN_EMPLOYEE_NOT_ACTIVE, PAYROLL_EMPLOYEE_TERMINATED, BNPL_EMPLOYEE_NOT_ACTIVE,
// EQUB_EMPLOYEE_NOT_ACTIVE). A foreign key alone would not do: it waits for the lock, then
// accepts the terminated row. A payroll calculation of the source locks every employee it pays
// FOR SHARE before it reads their inputs (payroll.LoadOptions.Lock): it either commits first, and
// the transfer then finds the mandates it withheld in flight, or waits for the transfer and
// reads them cancelled — a carried-over order is never withheld by the old run as well.
//
// The self-service link of the old record is left as it is (the person still sees what stays
// with the old employer) and the new record starts unlinked (the new employer invites them).
package employeetransfer
