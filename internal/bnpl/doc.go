// Package bnpl owns buy-now-pay-later: merchants (organizations of kind MERCHANT) and their
// settlement accounts at a partner bank (merchants.go), the quote of a purchase for an employee
// (quote.go: the plan offer and its affordability, no state change), the agreements with their
// instalments (agreements.go) and the record steps of the two money sagas: activation
// (activate.go, workflows/bnpl_activate.go) and the collection of one instalment (collect.go,
// workflows/bnpl_collect.go). Refusal codes are one table (codes.go).
//
// # Who owns what
//
// A merchant's row (its settlement account and its discount rate) is the merchant's tenant's and
// every organization reads it. An agreement is the BUSINESS's row (tenant: the business whose
// employee buys), as a loan is: the business fronts the purchase to the merchant from its
// advance funding account (the EWA funding account, PUT /api/ewa/settings) and recovers it from
// the employee's pay, instalment by instalment. A merchant reads the agreements bought from it
// as its orders (orders.go, GET /api/bnpl/merchant/orders: the purchase, whether and when it was
// paid, what it reported; not the customer or the instalments) and changes none, and its
// settlement statement (settlements.go, GET /api/bnpl/merchant/settlements: by calendar day, what
// it was paid; what is in flight and what failed, a failure on its failed_at, which MarkFailed
// sets with the state and nothing moves after).
//
// # States
//
//	(none)   --POST /api/bnpl/agreements, gates passed, posting recorded--> ACCEPTED
//	ACCEPTED --the merchant's settlement transfer SETTLED-->                 ACTIVE
//	ACCEPTED --the settlement transfer FAILED (posting voided)-->           FAILED (terminal: nothing owed)
//	ACTIVE   --the last instalment collected-->                             SETTLED
//	ACTIVE   --DEFAULTED is reserved for servicing (not reached by any route yet)
//	ACTIVE, DEFAULTED --an operator's restructure (restructure.go)-->         ACTIVE
//	ACTIVE, DEFAULTED --the merchant reversed the order, an operator's write-off
//	                    saga recorded (writeoff.go)-->                       WRITTEN_OFF (terminal: nothing owed)
//
// There is no CANCELLED state. Cancellation (POST /api/bnpl/agreements/<id>/cancel) is allowed
// only before activation, and the activation saga records the agreement in the run that sends
// the merchant's settlement right after its gates: no agreement exists whose merchant is not
// paid or being paid. So a cancellation is refused (CancelRefusal): BNPL_SETTLEMENT_SENT for
// ACCEPTED, ACTIVE, SETTLED and DEFAULTED, BNPL_INVALID_STATE for FAILED (nothing is owed),
// audited DENIED CancelBnplAgreement, nothing else written.
//
// A gate or state refusal writes no agreement (only its audit row). An instalment is DUE, held
// COLLECTING by one collection saga while its journal is posted, then COLLECTED; a DUE one is
// SUPERSEDED by a restructure or WRITTEN_OFF with its agreement. There is one
// collection saga per instalment (workflows.BnplCollectWorkflowID): racing collections of one
// instalment (any keys, any source) attach to that run; a saga of another id finds it held or
// collected and is refused BNPL_INSTALMENT_NOT_DUE, so it is collected once.
//
// A restructure (POST /api/bnpl/agreements/<id>/restructure, operator only) replaces the DUE
// instalments by a new schedule of the same total: they stay, SUPERSEDED (history; never
// collected, not owed), and the new ones carry the next schedule_version. It moves no money, so
// it is one transaction and posts nothing (see restructure.go).
//
// # Affordability
//
// The largest instalment must fit both the debt-service share (MaxDebtServiceBasisPoints of the
// projected net pay, with the employee's loan instalments and the BNPL instalments already due in
// the projected period counted as existing obligations) and what the payroll can still recover
// within the protection policy less those BNPL instalments: lending.Afford on the adjusted
// projection (the one affordability rule). The employee's loans count at their scheduled
// instalments (lending.WithScheduledDebt, which a loan's quote uses too and which counts the BNPL
// instalments: loans and plans share the one limit). The activation quotes in its route and
// carries the quote's capacity (Quote.Capacity: the limit plus the debt it counted) to the
// record step, which locks the employee's row (as a loan's origination does) and refuses the
// plan when the debt in its first period, grown since by racing activations or originations,
// leaves it no room: together they never pass the limit.
//
// # Journals
//
// The books are the business's (the tenant). P is the purchase, d the merchant's discount
// (⌊P × discount bps ÷ 10,000⌋), a an instalment.
//
//	Activate (PENDING while the settlement transfer funding → merchant is in flight; committed
//	when it settles, voided when it fails):
//	    Dr receivable-from-customer:<agreement>            P   the customer owes the purchase
//	    Cr payable-to-merchant:<merchant>:<agreement>      P − d
//	    Cr fee-income                                      d   the merchant's discount
//	Merchant paid (POSTED once the transfer settled; bank_reference = the transfer's leg
//	reference, so reconciliation pairs it with the statement line):
//	    Dr payable-to-merchant:<merchant>:<agreement>      P − d
//	    Cr partner-bank:<funding partner>:<funding account> P − d
//	Collect instalment k (POSTED; the instalment deducted from the employee's pay):
//	    Dr payroll-clearing:<agreement>                    a
//	    Cr receivable-from-customer:<agreement>            a
//	Write off R (POSTED; the DUE instalments' total, once the merchant reversed the order):
//	    Dr misc-loss                                       R
//	    Cr receivable-from-customer:<agreement>            R
//
// Once every instalment is collected (or the rest written off), receivable-from-customer:<agreement>
// and payable-to-merchant:<merchant>:<agreement> are at zero.
//
// # Collected by payroll deduction
//
// The customer may opt in to pay the instalments by payroll deduction (mandate.go: a
// BNPL_INSTALLMENT product mandate, internal/payroll/product_mandate.go). A payroll run's
// completion collects, for each PAID entry's line, the agreement's earliest DUE instalment with
// the collection saga (Source PAYROLL, one saga per run, entry and mandate), with the same
// journal as a manual collection. Where the money is: the run withheld the instalment from the
// employee's net pay, so it stays in the business's payroll account at the partner bank — the
// payroll paid the net, not the gross. Unlike a loan instalment, whose FI is owed it and gets a
// remittance (payroll account → the FI's settlement account), a BNPL instalment is owed to the
// business itself (it fronted the merchant from its funding account), so no partner transfer
// follows: the money is already the creditor's, as for an EWA recovery by payroll.
// payroll-clearing:<agreement> carries it in the books; moving it from the payroll account to
// the funding account is the business's own treasury move, not the agreement's. A FAILED entry
// withheld nothing: no collection, the instalment stays owed. A refused line (the merchant
// reversed the order, no DUE instalment, the amount not the instalment's —
// BNPL_MANDATE_AMOUNT_MISMATCH, e.g. after a restructure changed the amounts) writes nothing and
// is reported in payroll.run_completed.v1 for the employee's refund.
//
// # Merchant callbacks
//
// POST /api/integration/merchant-callback/<partner> (callback.go) is a merchant's word on an
// order: DELIVERED, REFUNDED or CANCELLED, naming the agreement (agreementId), the merchant
// (merchantId) and its order (merchantReference). The merchant's partner (the one its settlement
// account is at) relays and signs it exactly as it signs bank callbacks (package callbacksig,
// the partner's one callback secret, the API's shared authentication front); its nonce is claimed
// in the bank callbacks' nonce table (bankwebhook.ClaimNonce), so a body signed for one callback
// route is not accepted by the other. A verified callback is stored once per (partner, event id)
// in app.bnpl_merchant_callbacks, verbatim, in one cross-tenant transaction (until the agreement
// is looked up nobody knows whose it is):
//
//   - it matches only when the agreement was bought from that merchant under that reference and
//     the merchant settles at that partner: stored RECORDED for the agreement's business, with
//     the audit row BnplMerchantCallbackReceived and bnpl.merchant_callback_received.v1 (actor
//     partner:<name>); then MerchantCallbackSignalName goes to the agreement's activation saga
//     if it still runs (a closed saga is no error);
//   - anything else (no such agreement, another merchant's, another reference, a merchant that
//     settles elsewhere) is stored UNMATCHED without a tenant, audited FAILED on the platform's
//     trail, and changes nothing; the answer (unmatched) does not say which;
//   - a retry with the same body is a DUPLICATE receipt: nothing is recorded again (the signal is
//     sent again to a running saga, which may dedupe by EventID); another body under the same
//     event id, or a nonce reused by another event, is refused and writes nothing.
//
// The merchant's own members may say the same (report.go, POST /api/bnpl/merchant/orders/<id>/reports:
// bnpl.approve, and bnpl.cancel for REFUNDED or CANCELLED): a member's report is stored in the
// same table (source MEMBER, the member as reported_by, no partner, nonce or signature), once per
// Idempotency-Key (its event id derives from the key), only for an order of the member's
// merchant (else BNPL_ORDER_NOT_FOUND, nothing stored), recorded for the business as a callback
// is (actor the member) and in the merchant's trail (BnplOrderReported), and delivered the same
// way: signalled to the running saga, else applied by the request.
//
// A recorded callback sets the agreement's merchant status (callback_apply.go,
// ApplyMerchantCallback; columns merchant_status, merchant_callback_id, merchant_status_at): the
// merchant's latest word, DELIVERED, REFUNDED or CANCELLED: the event that happened last wins, by
// the callbacks' occurredAt where both carry it (stored as occurred_at; a retried DELIVERED that
// happened before a stored REFUNDED does not undo it), else the later received, so a duplicate or
// an earlier event changes nothing; a change is audited
// BnplMerchantStatusChanged with bnpl.merchant_status_changed.v1 (and the previous status). While
// the activation saga runs (the agreement ACCEPTED, the settlement in flight) the saga applies it
// between its own steps (workflows/bnpl_merchant_callback.go); once it has closed, the receipt
// applies it. The agreement's status and books do not change and no money moves: the merchant is
// paid on the bank's word (the settlement transfer), not on the merchant's.
//
// A merchant status REFUNDED or CANCELLED stops the agreement's collection (Agreement.
// CollectionStopped): the collect route, a payroll run's collection and the payroll opt-in are
// refused BNPL_MERCHANT_ORDER_REVERSED (409), nothing written but the refusal's audit row (the
// line of a run approved before the merchant's word is reported refused in
// payroll.run_completed.v1, for the employee's refund). A run calculated while it stands
// withholds nothing under the customer's mandate (payroll's periodMandates reads collectable's
// conditions), and a CALCULATED run that did is stale. A DELIVERED callback received
// later (the latest wins) lifts it. What an operator does then: write off what the customer still
// owes (POST /api/bnpl/agreements/<id>/write-off, the write-off saga, writeoff.go): the DUE
// instalments' total leaves the receivable for misc-loss, the customer's payroll mandate for the
// agreement is cancelled, and the agreement is WRITTEN_OFF. The merchant's refund of P − d reaches
// the business outside the agreement, with the recorded callback as the evidence; refunding the
// customer the instalments already collected is the business's own move, not this route's.
//
// # Changes
//
// Every change writes its audit row and its outbox event (bnpl.*.v1) in the caller's
// transaction; refusals are *payroll.Refusal (the stores' one refusal type).
package bnpl
