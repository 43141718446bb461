// Package disputes owns disputes of customer-attributable ledger transactions (the spec's
// "Dispute (Proposed)"): the dispute and its append-only event log (app.disputes,
// app.dispute_events, migration app/0042), the forward-only lifecycle (states.go), the SLA
// deadline per raiser with tenant overrides (app.dispute_sla_policies) on the Ethiopian
// business-day calendar (calendar.go, public holidays as data in holidays_et.json), and the
// refusal codes every layer answers with (codes.go).
//
// Who raises one: an employee, on their own receivable (POST /api/me/disputes); a partner bank, on
// a transaction that moved money at one of its accounts, and the platform itself — both recorded
// by platform support (POST /api/admin/disputes), on a customer's account (CustomerAccount).
//
// Every state change is one transaction: the dispute row, its event (status after the event, so
// the latest event is the effective state), its audit row and its outbox event (dispute.*.v1).
// The customer told of the decision (notified.go: who the customer is, and the NOTIFIED event
// with customer_notified_at, written by the notification consumer once the message reached them)
// changes no state. partner_notified_at stays null: no outbound channel to partner banks exists.
//
// What it must not do: move money. A decision that posts to the ledger (reversal, adjustment) is
// the dispute workflow's (workflows/dispute.go): the ledger call happens there and this package
// records the returned transaction id with the decision in one transaction.
package disputes
