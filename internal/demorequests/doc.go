// Package demorequests owns the demo requests of the marketing site's "request a demo" form and
// the platform's inbox of them: the submission's rules (Submission.Validate, the bounds the API's
// document and migration app/0094 state too), the double-submit dedupe (Submit), the inbox's list
// and the status rule (NEW, CONTACTED, QUALIFIED; CLOSED is final); and telling the sales team:
// a NEW request writes EventReceived (demo_request.received.v1, payload Received) under the
// platform tenant in the transaction that stores it, and SalesNotifier, the worker's outbox
// consumer "sales", mails it to the sales address once per event (its claims are rows of
// app.idempotency_records, route "outbox:sales", keyed by the event id). With no sales address
// the worker registers no such consumer.
//
// The table, app.demo_requests, is platform-global: a prospect is no tenant's data. The public
// form writes as the runtime role, which may only add a NEW request and learns of existing ones
// only through app.open_demo_request (the dedupe); reading and updating the inbox is the platform
// role's, on the audited cross-tenant path (internal/platform/crosstenant). The caller writes the
// audit row in the same transaction as the change.
//
// What it must not do: answer with, log or audit a prospect's details beyond what its caller
// needs (the public answer is an id, a status and a time; the audit names the e-mail masked and
// never the message; the sales consumer logs the request id and the sales address masked, and
// mails the details only to that address); or build a mail header from anything but fields the
// form's own rules accept (ParseReceived checks every payload again: no line break or control
// character reaches a subject).
package demorequests
