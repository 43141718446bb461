// Package notifications owns what Wagerail tells a user about their own money and verification:
// the notification consumer of the outbox (ewa.disbursed.v1, loan.disbursed.v1,
// payroll.deductions_taken.v1, the user-facing kyc.* events, dispute.opened.v1 and
// dispute.decided.v1 — told to the dispute's customer, the decision recorded on the dispute once
// it reached them: disputes.RecordCustomerNotified),
// the messages it writes (English and Amharic templates), the user's choices (channel per
// category, language), the in-app inbox and the delivery record that makes each (event, channel,
// user) go out exactly once. It owns app.notification_preferences, app.notification_settings,
// app.notifications and app.notification_deliveries (migrations app/0041, app/0114).
//
// Delivery: the consumer claims a delivery row before it sends (INSERT … ON CONFLICT), so an
// event the relay delivers twice finds SENT and sends nothing; a sender that fails marks the row
// FAILED and returns an error, so the relay retries (and finally dead-letters) the event for this
// consumer alone, and the retry sends only what failed. The in-app message is written in the
// transaction that claims its delivery.
//
// The senders are internal/notify's Mailer and Texter; this package decides what a message says.
// What it must not do: log a message's text, a name, an address or a phone number (only event
// ids, types, channels and masked recipients), or put a user-supplied value into a message
// without clean (no control characters, no line breaks in a subject, no markup).
package notifications
