package bankwebhook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/sony/gobreaker/v2"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/platform/temporalerr"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Workflows is the part of a Temporal client the applier uses; go.temporal.io/sdk/client.Client
// satisfies it.
type Workflows interface {
	SignalWorkflow(ctx context.Context, workflowID, runID, signalName string, arg any) error
	DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error)
}

// Trigger is what caused a delivery attempt.
type Trigger string

const (
	Receipt      Trigger = "RECEIPT"       // the first time the partner sent the event
	PartnerRetry Trigger = "PARTNER_RETRY" // the partner sent a stored event again
	Replay       Trigger = "REPLAY"        // a platform admin re-delivered a stored event
	Batch        Trigger = "BATCH"         // a flush signalled the gathered callbacks of a batch (Applier.Flush)
)

// Audit actions of this package (BankWebhookReceived is written when an event is stored).
const (
	ActionApplied = "BankWebhookApplied"
	ActionReplay  = "ReplayBankWebhook"
)

// ErrNotFound: no stored event has the id.
var ErrNotFound = errors.New("bankwebhook: no such event")

// DefaultSignalTimeout bounds one attempt's calls to Temporal: past it the attempt is
// Undelivered and the event stays Pending for the partner's retry.
const DefaultSignalTimeout = 5 * time.Second

// The breaker on Temporal: after BreakerFailures attempts in a row that could not reach it, the
// attempts of the next BreakerOpenFor fail at once (Undelivered, the event left Pending for the
// partner's retry), then one probe goes through. An attempt holds its event's row lock, and so a
// database connection, while it calls Temporal: without the breaker, every callback during a
// Temporal outage would hold one for the whole Timeout, and a partner's burst of callbacks could
// take every connection the API has.
const (
	BreakerFailures       = 3
	DefaultBreakerOpenFor = 10 * time.Second
)

// maxProblem bounds the problem text an attempt keeps (a Temporal error can be long).
const maxProblem = 500

// Delivery is what one attempt did to one stored event.
type Delivery struct {
	ID           int64  // app.bank_webhook_events.id
	AttemptID    int64  // app.bank_webhook_deliveries.id
	EventID      string // the partner's event id
	Partner      string
	Trigger      Trigger
	Outcome      Outcome // the attempt's: Applied, SagaFinished, Unmatched, Duplicate, Undelivered
	EventOutcome Outcome // the event's after the attempt: Pending, Applied, SagaFinished, Unmatched
	TenantID     string  // the transfer's tenant; empty when the callback matches no transfer
	WorkflowID   string
	Problem      string // why Unmatched, SagaFinished or Undelivered
}

// Applier stores callbacks and delivers them as SettlementSignalName signals to the workflow
// that owns the transfer (WorkflowIDOf(reference), its current run). Every saga that sends a
// partner transfer receives its callbacks through it.
//
// Exactly-once toward the saga, as far as this side can: an attempt holds the event's row lock
// while it signals, so concurrent deliveries of one event run one after the other; a partner's
// redelivery of an event already decided is recorded as Duplicate and not signalled; an attempt
// that cannot reach Temporal leaves the event Pending, and the next one (the partner's retry,
// which the 503 asks for, or an operator's replay) delivers it. A replay signals again on
// purpose: the saga dedupes by Settlement.EventID, so re-delivering an applied event changes
// nothing. A breaker on Temporal (BreakerFailures, BreakerOpenFor) makes the attempts fail at once
// while Temporal is down, so that none holds its row lock for the whole Timeout.
type Applier struct {
	store *Store
	wf    Workflows
	// Timeout bounds one attempt's Temporal calls; 0 means DefaultSignalTimeout.
	Timeout time.Duration
	// BreakerOpenFor is how long the breaker stays open; 0 means DefaultBreakerOpenFor. Read
	// when the first attempt is made.
	BreakerOpenFor time.Duration

	// GatherWindow is how long the callbacks about bulk-disbursement items are gathered before
	// one flush signals each batch once (0 means DefaultGatherWindow).
	GatherWindow time.Duration

	// Register, when set, records each matched callback's answer in the gateway's transfer
	// register (see TransferRegister).
	Register TransferRegister

	breakerOnce sync.Once
	breaker     *gobreaker.TwoStepCircuitBreaker[struct{}]
	gathering   gathering
}

// NewApplier delivers through wf; a nil wf (no Temporal configured) stores matched callbacks as
// Pending with an Undelivered attempt.
func NewApplier(store *Store, wf Workflows) *Applier { return &Applier{store: store, wf: wf} }

// errTemporalDown marks an attempt that could not reach Temporal (the breaker counts it).
var errTemporalDown = errors.New("bankwebhook: temporal unreachable")

func (a *Applier) temporalBreaker() *gobreaker.TwoStepCircuitBreaker[struct{}] {
	a.breakerOnce.Do(func() {
		openFor := a.BreakerOpenFor
		if openFor <= 0 {
			openFor = DefaultBreakerOpenFor
		}
		a.breaker = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
			Name:        "temporal",
			MaxRequests: 1,
			Timeout:     openFor,
			ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= BreakerFailures },
			// Only Temporal's own unreachability counts; a caller that gave up says nothing.
			IsSuccessful: func(err error) bool { return !errors.Is(err, errTemporalDown) },
			IsExcluded: func(err error) bool {
				return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
			},
		})
	})
	return a.breaker
}

// Configured says whether a Temporal client is set.
func (a *Applier) Configured() bool { return a.wf != nil }

// Receive stores cb (once per partner and event id; audited BankWebhookReceived) and delivers
// it in the same cross-tenant transaction: a new event that matches a transfer is signalled to
// its workflow, a redelivery of a Pending event is signalled (PartnerRetry), a redelivery of a
// decided one is recorded as Duplicate. BankWebhookApplied (actor partner:<name>) is written the
// one time an event becomes Applied. Then, with a Register, a matched callback's answer is
// recorded in the transfer register; if that fails the error is returned (the event is stored
// and delivered: the partner's retry records it). It refuses with ErrEventConflict or ErrReplayedNonce and
// then writes nothing.
func (a *Applier) Receive(ctx context.Context, cb Callback) (Delivery, error) {
	ctx = tenancy.WithActor(ctx, tenancy.Partner(cb.Partner))
	var d Delivery
	err := crosstenant.Tx(ctx, a.store.platform, "bank callback "+cb.Partner, func(tx pgx.Tx) error {
		b := &pgx.Batch{} // the receipt's audit row, sent with the attempt's writes
		st, err := a.store.store(ctx, tx, cb, b)
		if err != nil {
			return err
		}
		trigger := Receipt
		if !st.New {
			trigger = PartnerRetry
		}
		var known *lockedEvent
		if st.New {
			// Inserted by this transaction: no one else sees the row before it commits, so what
			// it holds is what the receipt wrote, and reading it back under a lock is not needed.
			known = &lockedEvent{Partner: cb.Partner, EventID: cb.EventID, ClaimedTenant: cb.ClaimedTenant, TenantID: st.TenantID,
				Domain: cb.Domain, Reference: cb.Reference, Status: cb.Status, TransferID: cb.TransferID, FailureCode: cb.FailureCode,
				Problem: st.Problem, AmountSantim: cb.AmountSantim, Outcome: st.Outcome}
		}
		d, err = a.deliverEvent(ctx, tx, st.ID, trigger, known, b)
		return err
	})
	if err != nil {
		return d, err
	}
	if d.Outcome == Gathered {
		a.gather()
	}
	return d, a.recordSettlement(ctx, cb, d)
}

// Replay re-delivers stored event id in tx (a cross-tenant transaction whose context names the
// admin as actor) and audits ReplayBankWebhook: SUCCESS when the attempt reached a decision,
// FAILED when Temporal could not be reached. An event that matched no transfer is matched again
// first (it stays Unmatched while no transfer fits). ErrNotFound for an unknown id.
func (a *Applier) Replay(ctx context.Context, tx pgx.Tx, id int64) (Delivery, error) {
	d, err := a.deliver(ctx, tx, id, Replay)
	if err != nil {
		return Delivery{}, err
	}
	entry := audit.Entry{Action: ActionReplay, Outcome: audit.Success, TargetType: "BankWebhookEvent", TargetID: fmt.Sprint(d.ID),
		Details: map[string]any{"webhookEventId": d.ID, "eventId": d.EventID, "partner": d.Partner, "outcome": d.Outcome,
			"eventOutcome": d.EventOutcome, "workflowId": d.WorkflowID, "attemptId": d.AttemptID}}
	if d.Outcome == Undelivered {
		entry.Outcome = audit.Failed
	}
	tenant := d.TenantID
	if tenant == "" {
		tenant = crosstenant.PlatformTenant
	}
	if err := audit.Write(tenancy.WithTenant(ctx, tenant), tx, entry); err != nil {
		return Delivery{}, err
	}
	return d, nil
}

// lockedEvent is what an attempt reads of the event, under its row lock.
type lockedEvent struct {
	Partner, EventID, ClaimedTenant, TenantID, Domain, Reference, Status, TransferID, FailureCode, Problem string
	AmountSantim                                                                                           int64
	Outcome                                                                                                Outcome
}

func (e lockedEvent) settlement(id int64) Settlement {
	return Settlement{Partner: e.Partner, EventID: e.EventID, Reference: e.Reference, TransferID: e.TransferID,
		Status: e.Status, FailureCode: e.FailureCode, AmountSantim: e.AmountSantim, WebhookEventID: id}
}

func lockEvent(ctx context.Context, tx pgx.Tx, id int64) (lockedEvent, error) {
	var e lockedEvent
	var tenant, problem, transferID, failureCode *string
	var outcome string
	err := tx.QueryRow(ctx, `SELECT partner, event_id, claimed_tenant_id, tenant_id, domain, reference, status,
			transfer_id, failure_code, match_problem, amount_santim, outcome
		FROM app.bank_webhook_events WHERE id = $1 FOR UPDATE`, id).Scan(&e.Partner, &e.EventID, &e.ClaimedTenant, &tenant,
		&e.Domain, &e.Reference, &e.Status, &transferID, &failureCode, &problem, &e.AmountSantim, &outcome)
	if errors.Is(err, pgx.ErrNoRows) {
		return e, ErrNotFound
	}
	if err != nil {
		return e, fmt.Errorf("bankwebhook: lock event: %w", err)
	}
	e.TenantID, e.Problem, e.TransferID, e.FailureCode, e.Outcome = deref(tenant), deref(problem), deref(transferID), deref(failureCode), Outcome(outcome)
	return e, nil
}

// rank orders an event's outcomes: an event keeps the furthest one any attempt reached, so an
// applied event stays Applied when a later replay finds its saga finished.
var rank = map[Outcome]int{Pending: 0, Unmatched: 1, SagaFinished: 2, Applied: 3}

// deliver makes one attempt on event id and records it.
func (a *Applier) deliver(ctx context.Context, tx pgx.Tx, id int64, trigger Trigger) (Delivery, error) {
	return a.deliverEvent(ctx, tx, id, trigger, nil, &pgx.Batch{})
}

// deliverEvent is deliver with the event already in hand when known is not nil (one the
// caller's transaction inserted; else it is read under its row lock), and the attempt's writes
// queued on b after what the caller queued there.
func (a *Applier) deliverEvent(ctx context.Context, tx pgx.Tx, id int64, trigger Trigger, known *lockedEvent, b *pgx.Batch) (Delivery, error) {
	var ev lockedEvent
	if known != nil {
		ev = *known
	} else {
		var err error
		if ev, err = lockEvent(ctx, tx, id); err != nil {
			return Delivery{}, err
		}
	}
	d := Delivery{ID: id, EventID: ev.EventID, Partner: ev.Partner, Trigger: trigger, TenantID: ev.TenantID,
		WorkflowID: WorkflowIDOf(ev.Reference)}
	switch {
	case trigger == PartnerRetry && ev.Outcome != Pending:
		d.Outcome = Duplicate
	case ev.TenantID == "" && trigger != Replay:
		// Matched no transfer when it was stored: nothing to signal.
		d.Outcome, d.Problem = Unmatched, ev.Problem
	default:
		if ev.TenantID == "" {
			// A replay matches again: the transfer may have been recorded since.
			tenant, problem, err := a.store.match(ctx, tx, ev.Partner, ev.Reference, ev.Domain, ev.ClaimedTenant, ev.AmountSantim)
			if err != nil {
				return Delivery{}, err
			}
			if tenant == "" {
				d.Outcome, d.Problem = Unmatched, problem
				break
			}
			d.TenantID = tenant
		}
		if trigger != Replay && partnerref.IsBulkItem(ev.Reference) {
			// An item of a bulk disbursement: gathered with its batch's other callbacks into
			// one signal (Flush), instead of one signal each.
			d.Outcome = Gathered
			break
		}
		d.Outcome, d.Problem = a.signal(ctx, d.WorkflowID, SettlementSignalName, ev.settlement(id))
	}

	// What the attempt decided, in one round trip: the event's new outcome, the attempt, and the
	// audit row of an event applied for the first time.
	d.EventOutcome = ev.Outcome
	if d.Outcome != Duplicate && d.Outcome != Undelivered && d.Outcome != Gathered && rank[d.Outcome] >= rank[ev.Outcome] {
		d.EventOutcome = d.Outcome
		problem := ""
		if d.Outcome == Unmatched {
			problem = d.Problem
		}
		b.Queue(`UPDATE app.bank_webhook_events SET outcome = $2, tenant_id = NULLIF($3, ''),
			match_problem = NULLIF($4, '') WHERE id = $1`, id, string(d.EventOutcome), d.TenantID, problem).
			Exec(func(pgconn.CommandTag) error { return nil })
	}

	s := tenancy.From(ctx)
	b.Queue(`INSERT INTO app.bank_webhook_deliveries
			(webhook_event_id, trigger, outcome, workflow_id, problem, actor, request_id, attempted_at)
		VALUES ($1, $2, $3, $4, NULLIF($5, ''), $6, NULLIF($7, ''), $8) RETURNING id`,
		id, string(trigger), string(d.Outcome), d.WorkflowID, d.Problem, s.Actor, s.RequestID, a.store.now()).
		QueryRow(func(r pgx.Row) error { return r.Scan(&d.AttemptID) })

	if d.EventOutcome == Applied && ev.Outcome != Applied {
		// The partner's word took effect: once per event, whoever's attempt delivered it.
		actx := tenancy.WithActor(tenancy.WithTenant(ctx, d.TenantID), tenancy.Partner(ev.Partner))
		if err := audit.Queue(actx, b, audit.Entry{Action: ActionApplied, Outcome: audit.Success, TargetType: "BankTransfer",
			TargetID: ev.Reference, Details: map[string]any{
				"eventId": ev.EventID, "partner": ev.Partner, "domain": ev.Domain, "status": ev.Status,
				"amountSantim": ev.AmountSantim, "webhookEventId": id, "workflowId": d.WorkflowID, "trigger": trigger,
			}}); err != nil {
			return Delivery{}, err
		}
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return Delivery{}, fmt.Errorf("bankwebhook: record attempt: %w", err)
	}
	return d, nil
}

// signal delivers s to the current run of workflow wfID and says what came of it, through the
// breaker on Temporal.
func (a *Applier) signal(ctx context.Context, wfID, name string, arg any) (Outcome, string) {
	if a.wf == nil {
		return Undelivered, "no Temporal client is configured"
	}
	done, err := a.temporalBreaker().Allow()
	if err != nil {
		return Undelivered, "temporal unavailable: circuit open after repeated failures"
	}
	outcome, problem, err := a.signalOnce(ctx, wfID, name, arg)
	if err != nil && ctx.Err() != nil {
		err = ctx.Err() // the caller gave up (not the attempt's own Timeout): not counted
	}
	done(err)
	return outcome, problem
}

// signalOnce is one delivery attempt; err is errTemporalDown when Temporal could not be reached.
func (a *Applier) signalOnce(ctx context.Context, wfID, name string, arg any) (Outcome, string, error) {
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = DefaultSignalTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Twice at most: a workflow that starts between a refused signal and the description is
	// signalled again.
	for range 2 {
		err := askAgain(ctx, func() error { return a.wf.SignalWorkflow(ctx, wfID, "", name, arg) })
		var notFound *serviceerror.NotFound
		var invalid *serviceerror.InvalidArgument
		switch {
		case err == nil:
			return Applied, "", nil
		case errors.As(err, &invalid):
			return Unmatched, "the reference is not a workflow id Temporal accepts", nil
		case !errors.As(err, &notFound):
			return Undelivered, problem("temporal: signal: ", err), errTemporalDown
		}
		// Not found: no such workflow, or it is closed. Describe tells them apart.
		var desc *workflowservice.DescribeWorkflowExecutionResponse
		err = askAgain(ctx, func() (err error) {
			desc, err = a.wf.DescribeWorkflowExecution(ctx, wfID, "")
			return err
		})
		switch {
		case errors.As(err, &notFound):
			return Unmatched, "no workflow with this reference", nil
		case err != nil:
			return Undelivered, problem("temporal: describe: ", err), errTemporalDown
		}
		if st := desc.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return SagaFinished, "the workflow is closed (" + st.String() + ")", nil
		}
	}
	return Undelivered, "the workflow is running but refused the signal", nil
}

// askAgain runs call, and runs it again after a transient answer of the Temporal server
// (temporalerr.Transient: busy, or a namespace read that failed under load) while ctx lasts: such
// an answer says nothing about the workflow, so it must not leave the callback undelivered.
func askAgain(ctx context.Context, call func() error) error {
	for pause := 50 * time.Millisecond; ; pause = min(2*pause, time.Second) {
		err := call()
		if err == nil || !temporalerr.Transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
}

func problem(prefix string, err error) string {
	p := strings.ReplaceAll(strings.ToValidUTF8(prefix+err.Error(), "?"), "\x00", "?")
	if len(p) > maxProblem {
		p = strings.ToValidUTF8(p[:maxProblem], "")
	}
	return p
}
