// Package outbox is Wagerail's transactional outbox: a state change writes its event (the spec's
// envelope: id, type, occurredAt, tenantId, payload) in the same transaction as the change, and a
// relay hands committed events to in-process consumers. It owns app.outbox, app.outbox_delivery,
// app.outbox_dead_letter, app.outbox_relay_group and app.outbox_group_state (migrations app/0004,
// app/0023 and app/0061). It must not publish anything that did not commit, and must not lose
// anything that did.
//
// # Writing
//
// Write runs in the caller's tenant-scoped transaction (tenancy.InTx) as the runtime role: the
// event commits or rolls back with the change it reports. The runtime role may INSERT and SELECT
// its tenant's events and nothing else: it cannot mark an event published, change, delete or
// dead-letter one, so a compromised request cannot silence an event. (The fan-out trigger, which
// runs as the writer, may add a named group's fresh, due state row for its own tenant's event, and
// nothing more: see Relay groups.)
//
// One event is every money domain's: <domain>.bank_transfer_settled.v1, a bank transfer the
// partner confirmed SETTLED, in one payload shape whatever the domain. Its record steps write it
// through TransferSettled (WriteTransferSettled, QueueTransferSettled, WriteTransfersSettled for
// a batch), never with Write and a payload of their own.
//
// # Relaying
//
// A Relay logs in as wagerail_platform and works through the cross-tenant path (actor
// system:outbox-relay). Consumers subscribe to a type (or AllEvents) on the relay; each event is
// owed to every consumer subscribed to its type, and each consumer has its own delivery state:
// a consumer that fails retries and dead-letters for itself, and the others neither wait for it
// nor receive the event again. Each cycle (Poll):
//
//  1. Claim, in one transaction: SELECT … FOR UPDATE SKIP LOCKED the due unpublished rows
//     (next_attempt_at ≤ now), count the claim, and lease them: claim_id, claimed_until and
//     next_attempt_at = now + Lease. Concurrent relays skip each other's locked rows, and after
//     the commit the lease keeps the rows out of every other claim until it ends. Rows whose
//     last claim's lease ended with no outcome are dead-lettered here instead of claimed again,
//     for each consumer that still owed them. The claimed rows' per-consumer states
//     (app.outbox_delivery) are read with them.
//  2. Deliver, outside any transaction, oldest first, to each consumer that still owes the event
//     and is due (a consumer in its own backoff waits), within LeaseDeliveryShare of the lease.
//  3. Record, in a second transaction, only on rows still carrying this claim_id (locked first):
//     each consumer's outcome (delivered; failed, due again after Backoff(its attempts); or
//     exhausted, moved to app.outbox_dead_letter as its own dead letter with an
//     OutboxEventDeadLettered audit row under the event's tenant), then the event's: published
//     (published_at: every consumer has it or dead-lettered it), due again at the earliest
//     consumer's retry, or not attempted because the relay is stopping (released, due at once).
//     An event every consumer took at its first delivery — the usual case — leaves no
//     per-consumer row.
//
// Everything above is per relay group (next section): "the row" is the group's state of the
// event, and "every consumer" every consumer the group runs.
//
// A relay that dies or stalls between 1 and 3 leaves its rows leased; when the lease ends the
// next claim takes them and delivers them again (to the consumers that owed them). So delivery
// is at least once, never lost, and one relay at a time holds an event: a delivery that outlives
// its lease (a consumer ignoring ctx) is the only way two deliveries of one event can overlap,
// and the stale relay's outcome is then discarded. Consumers dedupe by Event.ID.
//
// Backoff after a consumer's n-th failed delivery is min(BackoffCap, BackoffBase·2^(n−1)),
// without jitter; after MaxAttempts deliveries the consumer dead-letters the event. A row's own
// attempts count the relay's claims, which bounds a consumer that crashes the relay: a lease that
// expires on the MaxAttempts-th claim dead-letters the event for the consumers that still owed it.
//
// # Relay groups
//
// A relay belongs to a group (Config.Group): the set of consumers one kind of process runs. The
// worker's relays are DefaultGroup; `wagerail notify` runs the notification consumer in group
// "notify". Relays of one group share each event's delivery as described above — one of them at
// a time holds it, and it is done when the group's consumers have it or dead-lettered it —
// while every group delivers every event on claims, leases, attempts, backoff and dead letters of
// its own: a group neither takes an event from another nor marks one done for it, a group that
// fails or dead-letters neither holds back nor repeats another's delivery, and a relay killed
// mid-lease is redelivered after the lease in its own group only.
//
// DefaultGroup's state of an event is app.outbox's own columns (attempts, next_attempt_at,
// last_error, claimed_until, claim_id, published_at). A named group's is a row of
// app.outbox_group_state with the same columns and meaning, keyed (group, event). A named group
// is registered in app.outbox_relay_group by its first relay (Join, or its first cycle; audited);
// from then on an AFTER INSERT trigger on app.outbox gives every new event a fresh, due state row
// for every registered group, in the statement that writes the event, so a group owes every event
// written after it registered, even while none of its relays runs, and never one written before.
// Consumer states (app.outbox_delivery) and dead letters carry their group, so one consumer name
// in two groups is two consumers. To move a consumer to a group of its own, start the new group
// first and only then stop the old one's consumer (the consumer dedupes the overlap); to retire a
// named group, delete its app.outbox_relay_group row (its states go with it).
//
// # Dead letters
//
// A dead letter is one (event, group, consumer): the envelope, the consumer and its group, its
// attempts and last error. An admin lists them (DeadLetters / ListDeadLetters: by tenant, consumer, type and time,
// paged by Seq) and requeues one or many (RequeueDeadLetters; Requeue for every dead letter of one
// event), through the cross-tenant path, so every look and every requeue is audited; a requeue
// also writes OutboxEventRequeued under the event's tenant. A requeued consumer owes the event
// again with fresh attempts, in its group alone (the group's state of the event is due at once);
// the consumers that have it, and the other groups, do not get it again. Dead letters from
// before per-consumer delivery carry consumer "*" (LegacyConsumer) and go back to every consumer.
//
// # Waking
//
// An idle relay must not poll fast, and must not fill the audit log: the claim transaction is
// audited only when it claimed or dead-lettered something (crosstenant.JobTx), so a cycle that
// finds nothing writes no audit row. An AFTER INSERT trigger on app.outbox notifies channel
// app_outbox with an empty payload — it says only that something committed: no tenant, no id —
// and the relay LISTENs (on a connection of its own, reconnecting when it drops), so it wakes as
// soon as an event commits. Otherwise it sleeps until the earliest next_attempt_at (a retry or a
// lease falling due) or PollInterval, whichever comes first, and never starts two cycles within
// 100ms, which bounds what a flood of notifications can cost.
//
// # Retention
//
// Published rows stay in app.outbox for the record (they leave the claim and age indexes, which
// are partial on published_at IS NULL). The relay deletes those published more than Retention
// ago (default 30 days) once an hour, in batches (Prune), except those with a dead letter (a
// requeue needs their per-consumer state) and those a named group has not finished; dead letters
// stay until requeued.
//
// # Metrics
//
// svc_outbox_oldest_unpublished_age_seconds (0 when none; computed at scrape time from the oldest
// created_at the relay last saw, so it keeps growing if the relay is stuck),
// svc_outbox_events_published_total, svc_outbox_publish_failures_total,
// svc_outbox_consumer_failures_total{consumer}, svc_outbox_dead_lettered_total and
// svc_outbox_relay_errors_total. No tenant and no event-type label. They are the relay's group's:
// each process (worker, notify) serves its own on its /metrics.
//
// # The broker
//
// The spec's broker producer, dormant until a broker address is configured, is one more Consumer
// registered for AllEvents: internal/platform/broker (NATS JetStream; the worker's
// OUTBOX_BROKER_URL).
package outbox
