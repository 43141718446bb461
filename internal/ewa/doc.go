// Package ewa is early wage access: the tenant's EWA settings (where advances are paid from and
// what they cost), eligibility (how much an employee may draw now), the requests and their
// states, the repayments, and the record steps the disburse and repayment sagas call. Every
// state change writes its audit row and its outbox event in the same transaction as the change.
//
// Repayments (repay.go) are partial or whole: each is one run of the repayment saga
// (workflows.EwaRepay), never more than what is still owed; the request stays DISBURSED until
// its posted repayments cover principal + fee, then it is REPAID.
//
// Limits (eligibility.go): an advance's principal + fee must fit the smallest of the access cap
// (a share of the wages earned so far, less what is outstanding), the settings' optional caps
// per UTC day and per pay period (amount drawn and number of requests), and, when the wiring
// supplies Advances.Recoverable, what the next payroll can recover within the protection policy.
// Create locks the employee's row before reading any of them, so racing requests for one
// employee are checked one after the other and never pass a limit together.
//
// States: REQUESTED → DISBURSING → DISBURSED → REPAID; REQUESTED → CANCELLED (before
// disbursement); DISBURSING → FAILED (the partner rejected or failed the transfer; the pending
// ledger transaction is voided). A gate refusal (KYC, sanctions, account lookup) leaves the
// request REQUESTED: nothing moved, and it may be disbursed once the cause is fixed.
package ewa
