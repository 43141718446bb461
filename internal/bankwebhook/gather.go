package bankwebhook

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// A bulk disbursement of 10,000 items brings 10,000 callbacks; delivered one signal each they
// would take Temporal minutes (it takes signals at about a hundred a second). So a callback about
// a bulk item (partnerref.BulkItem) is stored Pending with a GATHERED attempt and acknowledged,
// and a flush, DefaultGatherWindow after the first such receipt, signals each batch's workflow
// once with all its pending callbacks (SettlementsSignalName). The batch applies each item's first
// final status, so a callback that reaches it twice changes nothing.

// DefaultGatherWindow is how long callbacks are gathered before a flush.
const DefaultGatherWindow = 250 * time.Millisecond

// flushLimit bounds the events one flush transaction locks and signals.
const flushLimit = 5000

// gathering is the applier's flush schedule: at most one flush runs, and a receipt during a flush
// schedules the next.
type gathering struct {
	mu        sync.Mutex
	scheduled bool
	running   bool
	again     bool
}

// gather schedules a flush of the gathered callbacks, unless one is already due.
func (a *Applier) gather() {
	g := &a.gathering
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running {
		g.again = true
		return
	}
	if g.scheduled {
		return
	}
	g.scheduled = true
	window := a.GatherWindow
	if window <= 0 {
		window = DefaultGatherWindow
	}
	time.AfterFunc(window, a.flushScheduled)
}

func (a *Applier) flushScheduled() {
	g := &a.gathering
	g.mu.Lock()
	g.scheduled, g.running, g.again = false, true, false
	g.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	_, err := a.Flush(ctx)
	cancel()
	g.mu.Lock()
	g.running = false
	again := g.again || err != nil
	g.mu.Unlock()
	if again {
		// Callbacks arrived during the flush (or it failed: Temporal or the database down): the
		// next one takes them.
		a.gather()
	}
}

// SweepGathered flushes, every interval until ctx ends, what an earlier process left pending (it
// stopped between a receipt and its flush). An empty sweep is one indexed read, and writes
// nothing.
func (a *Applier) SweepGathered(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			a.gather()
		}
	}
}

// pendingItem is a gathered callback waiting for its flush.
type pendingItem struct {
	id       int64
	tenantID string
	domain   string
	s        Settlement
}

// Flush signals every batch with pending gathered callbacks once, with all of them, and records
// each event's outcome: Applied (audited BankWebhookApplied once, as a single delivery is),
// SagaFinished, Unmatched, or still Pending when Temporal could not be reached (the next flush
// tries again). Each event's attempt is recorded with trigger BATCH. It runs by itself after a
// receipt gathered a callback; an operator (or a process that restarts) may call it to deliver
// what an earlier process left pending. It returns how many events it delivered.
func (a *Applier) Flush(ctx context.Context) (int, error) {
	delivered := 0
	for {
		n, full, err := a.flushOnce(ctx)
		delivered += n
		if err != nil || !full || n == 0 {
			return delivered, err
		}
	}
}

// FlushActor is the audit actor of a flush's cross-tenant transaction (each event's own rows name
// its partner).
var FlushActor = tenancy.System("bank-callback-flush")

func (a *Applier) flushOnce(ctx context.Context) (delivered int, full bool, err error) {
	ctx = tenancy.WithActor(ctx, FlushActor)
	// A job's transaction: audited when it found something (an idle sweep writes no row).
	err = crosstenant.JobTx(ctx, a.store.platform, "bank callbacks: gathered flush", func(tx pgx.Tx) (int, error) {
		rows, err := tx.Query(ctx, `SELECT id, partner, event_id, tenant_id, domain, reference, status,
				coalesce(transfer_id, ''), coalesce(failure_code, ''), amount_santim
			FROM app.bank_webhook_events WHERE outcome = 'PENDING' AND reference LIKE '%.bulk.%'
			ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`, flushLimit)
		if err != nil {
			return 0, err
		}
		items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pendingItem, error) {
			var p pendingItem
			err := r.Scan(&p.id, &p.s.Partner, &p.s.EventID, &p.tenantID, &p.domain, &p.s.Reference, &p.s.Status,
				&p.s.TransferID, &p.s.FailureCode, &p.s.AmountSantim)
			p.s.WebhookEventID = p.id
			return p, err
		})
		if err != nil {
			return 0, err
		}
		full = len(items) == flushLimit
		// Batches in the order of their first pending event.
		var order []string
		byWF := map[string][]pendingItem{}
		for _, p := range items {
			if !partnerref.IsBulkItem(p.s.Reference) {
				continue
			}
			wf := WorkflowIDOf(p.s.Reference)
			if _, ok := byWF[wf]; !ok {
				order = append(order, wf)
			}
			byWF[wf] = append(byWF[wf], p)
		}
		now := a.store.now()
		var ids, attemptIDs []int64
		var outcomes, problems, workflows, actors []string
		// BankWebhookApplied rows by tenant and partner (the audit actor).
		var applied map[[2]string][]audit.Entry
		for _, wf := range order {
			group := byWF[wf]
			ss := make([]Settlement, len(group))
			for i, p := range group {
				ss[i] = p.s
			}
			outcome, problem := a.signal(ctx, wf, SettlementsSignalName, ss)
			for _, p := range group {
				attemptIDs = append(attemptIDs, p.id)
				outcomes = append(outcomes, string(outcome))
				problems = append(problems, problem)
				workflows = append(workflows, wf)
				actors = append(actors, tenancy.Partner(p.s.Partner))
				if outcome == Undelivered {
					continue
				}
				ids = append(ids, p.id)
				delivered++
				if outcome == Applied {
					if applied == nil {
						applied = map[[2]string][]audit.Entry{}
					}
					k := [2]string{p.tenantID, p.s.Partner}
					applied[k] = append(applied[k], audit.Entry{Action: ActionApplied, Outcome: audit.Success,
						TargetType: "BankTransfer", TargetID: p.s.Reference, Details: map[string]any{
							"eventId": p.s.EventID, "partner": p.s.Partner, "domain": p.domain, "status": p.s.Status,
							"amountSantim": p.s.AmountSantim, "webhookEventId": p.id, "workflowId": wf, "trigger": Batch,
						}})
				}
			}
		}
		if len(attemptIDs) == 0 {
			return 0, nil
		}
		// The event's outcome: the delivered ones only (an Undelivered one stays Pending).
		eventOutcomes, eventProblems := make([]string, 0, len(ids)), make([]string, 0, len(ids))
		for i := range attemptIDs {
			if Outcome(outcomes[i]) != Undelivered {
				eventOutcomes = append(eventOutcomes, outcomes[i])
				p := ""
				if Outcome(outcomes[i]) == Unmatched {
					p = problems[i]
				}
				eventProblems = append(eventProblems, p)
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE app.bank_webhook_events e SET outcome = v.outcome, match_problem = NULLIF(v.problem, '')
			FROM unnest($1::bigint[], $2::text[], $3::text[]) AS v(id, outcome, problem) WHERE e.id = v.id`,
			ids, eventOutcomes, eventProblems); err != nil {
			return 0, fmt.Errorf("bankwebhook: flush: record outcomes: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO app.bank_webhook_deliveries
				(webhook_event_id, trigger, outcome, workflow_id, problem, actor, attempted_at)
			SELECT v.id, $1, v.outcome, v.wf, NULLIF(v.problem, ''), v.actor, $2
			FROM unnest($3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[]) WITH ORDINALITY AS v(id, outcome, wf, problem, actor, n)
			ORDER BY v.n`, string(Batch), now, attemptIDs, outcomes, workflows, problems, actors); err != nil {
			return 0, fmt.Errorf("bankwebhook: flush: record attempts: %w", err)
		}
		// One audit statement per tenant and partner, in the order they first appear.
		for _, wf := range order {
			for _, p := range byWF[wf] {
				k := [2]string{p.tenantID, p.s.Partner}
				entries, ok := applied[k]
				if !ok {
					continue
				}
				actx := tenancy.WithActor(tenancy.WithTenant(ctx, p.tenantID), tenancy.Partner(p.s.Partner))
				if err := audit.WriteMany(actx, tx, entries); err != nil {
					return 0, err
				}
				delete(applied, k)
			}
		}
		return len(attemptIDs), nil
	})
	if err != nil {
		return 0, false, fmt.Errorf("bankwebhook: flush: %w", err)
	}
	return delivered, full, nil
}
