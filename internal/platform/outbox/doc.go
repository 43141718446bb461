// Package outbox is Wagerail's transactional outbox: a state change writes its event (the spec's
// envelope: id, type, occurredAt, tenantId, payload) in the same transaction as the change, and a
// relay hands committed events to in-process consumers. It owns app.outbox and
// app.outbox_dead_letter (migration app/0004). It must not publish anything that did not commit,
// and must not lose anything that did.
//
// # Writing
//
// Write runs in the caller's tenant-scoped transaction (tenancy.InTx) as the runtime role: the
// event commits or rolls back with the change it reports. The runtime role may INSERT and SELECT
// its tenant's events and nothing else: it cannot mark an event published, change, delete or
// dead-letter one, so a compromised request cannot silence an event.
//
// # Relaying
//
// A Relay logs in as wagerail_platform and works through crosstenant.Tx (actor
// system:outbox-relay), the one audited cross-tenant path. Each cycle (Poll):
//
//  1. Claim, in one transaction: SELECT … FOR UPDATE SKIP LOCKED the due unpublished rows
//     (next_attempt_at ≤ now), count the attempt, and lease them: claim_id, claimed_until and
//     next_attempt_at = now + Lease. Concurrent relays skip each other's locked rows, and after
//     the commit the lease keeps the rows out of every other claim until it ends. Rows whose last
//     attempt's lease ended with no outcome are dead-lettered here instead of claimed again.
//  2. Deliver, outside any transaction, oldest first, to every consumer registered for the type,
//     within LeaseDeliveryShare of the lease.
//  3. Record, in a second transaction, only on rows still carrying this claim_id: published
//     (published_at), failed (next_attempt_at = now + Backoff(attempts), last_error), exhausted
//     (moved to app.outbox_dead_letter, with an OutboxEventDeadLettered audit row under the
//     event's tenant), or not attempted because the relay is stopping (released, due at once).
//
// A relay that dies or stalls between 1 and 3 leaves its rows leased; when the lease ends the
// next claim takes them and delivers them again. So delivery is at least once, never lost, and
// one relay at a time holds an event: a delivery that outlives its lease (a consumer ignoring
// ctx) is the only way two deliveries of one event can overlap, and the stale relay's outcome is
// then discarded. Consumers dedupe by Event.ID.
//
// Backoff after the n-th failed attempt is min(BackoffCap, BackoffBase·2^(n−1)), without jitter;
// after MaxAttempts attempts the event moves to app.outbox_dead_letter in the recording
// transaction. An admin lists dead letters (DeadLetters) and requeues one (Requeue), both through
// the cross-tenant path, so every look and every requeue is audited.
//
// # Waking
//
// Every look at the table is a cross-tenant transaction and so an audit row: an idle relay must
// not poll fast. An AFTER INSERT trigger on app.outbox notifies channel app_outbox with an empty
// payload — it says only that something committed: no tenant, no id — and the relay LISTENs (on
// a connection of its own, reconnecting when it drops), so it wakes as soon as an event commits. Otherwise it sleeps until the earliest next_attempt_at (a retry or a lease falling
// due) or PollInterval, whichever comes first, and never starts two cycles within 100ms, which
// bounds what a flood of notifications can cost.
//
// # Retention
//
// Published rows stay in app.outbox for the record (they leave the claim and age indexes, which
// are partial on published_at IS NULL). The relay deletes those published more than Retention
// ago (default 30 days) once an hour, in batches (Prune); dead letters stay until requeued.
//
// # Metrics
//
// svc_outbox_oldest_unpublished_age_seconds (0 when none; computed at scrape time from the oldest
// created_at the relay last saw, so it keeps growing if the relay is stuck),
// svc_outbox_events_published_total, svc_outbox_publish_failures_total,
// svc_outbox_consumer_failures_total{consumer}, svc_outbox_dead_lettered_total and
// svc_outbox_relay_errors_total. No tenant and no event-type label.
//
// # Not here
//
// A broker producer (Kafka, NATS): the spec keeps it dormant until a broker address is configured;
// it would be one more Consumer registered for AllEvents.
package outbox
