// Package equb owns the savings circles (equb): groups, their members and payout order (fixed, or
// a lottery drawn from a recorded seed anyone can draw again), their cycles with each cycle's
// escrow binding at the partner bank, and the contributions and payouts the equb sagas record.
// Its stores run inside the caller's tenant transaction (RLS applies); each change writes its
// audit row and outbox event in that transaction. It moves no money and calls no partner: the
// API verifies the escrow account through the gateway's account lookup before a binding is
// stored, and the sagas (workflows/equb_*.go) move the money and call the record steps here.
//
// A member may contribute by payroll deduction: POST /api/equb/groups/<id>/contribution-mandate
// (CreateContributionMandate) records a PENDING EQUB_CONTRIBUTION deduction mandate for the
// caller's own membership, which a payroll approver activates; each payroll run's completion then
// runs the contribution saga for the member's PAID entry with the withheld amount, the money from
// the organization's payroll account to the cycle's escrow (LoadPayrollContributionPlan), the
// contribution recorded with source PAYROLL and its mandate. The mechanism is the payroll's
// (internal/payroll/product_mandate.go).
package equb
