package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// The activity options of every saga, by what the activity talks to. Call sites pick one of
// these; none builds its own ActivityOptions.
//
// Which errors are retried is decided once, in activities' error mapper: a business outcome (a
// gate that says no, a ledger refusal, a partner rejection) arrives non-retryable and fails the
// activity at once under every policy here; an infrastructure failure arrives retryable and is
// retried as the policy says.

// gateOptions: the KYC, sanctions and account-lookup gates. They answer in a moment or not at
// all, and a saga waiting on a gate holds a customer's request, so the timeout is short and the
// retries few: when the gate stays down the saga fails closed (spec: gates fail closed).
func gateOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout:    10 * time.Second,
		ScheduleToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    10 * time.Second,
			MaximumAttempts:    4,
		},
	}
}

// ledgerOptions: posting, committing, voiding and reversing in the ledger. Every call carries
// its idempotency key, so a retry after an unknown outcome returns the original transaction
// instead of posting twice; the ledger client's own breaker sheds load while the ledger is down,
// and the saga keeps retrying for up to an hour, because money has already moved at one end.
func ledgerOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout:    2 * time.Minute, // above the client's batch deadline
		ScheduleToCloseTimeout: time.Hour,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
		},
	}
}

// ledgerFirstTryOptions: a saga's first attempt at a posting while the caller waits for the
// answer. One attempt: when the ledger is down the saga answers the caller that the posting is
// pending and goes on trying under ledgerOptions, instead of holding the call for the retries.
func ledgerFirstTryOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute, // above the client's batch deadline
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	}
}

// partnerOptions: calls through the gateway to a partner bank (initiate, status lookup). The
// gateway is idempotent on (partner, reference), so retrying an initiation with the same
// reference never pays twice; a partner that stays unreachable is retried for up to a day, with
// backoff that does not hammer it.
func partnerOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout:    time.Minute,
		ScheduleToCloseTimeout: 24 * time.Hour,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    5 * time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    10 * time.Minute,
		},
	}
}

// bulkOptions: a bulk disbursement and its batch status lookup through the gateway. As
// partnerOptions (idempotent on the batch reference; a partner that stays unreachable is retried
// for up to a day), with a deadline above the gateway client's batch deadline (a batch of
// thousands of items takes the gateway longer than one transfer) and a heartbeat.
func bulkOptions() workflow.ActivityOptions {
	o := partnerOptions()
	o.StartToCloseTimeout = 3 * time.Minute
	// The activity heartbeats (activities.BulkHeartbeat): a worker that dies during the call is
	// noticed in seconds, and the call retried.
	o.HeartbeatTimeout = 10 * time.Second
	return o
}

// partnerFirstTryOptions: a saga's first attempt at initiating its transfer, while the caller
// waits for the answer. One attempt: when the partner or the gateway is down (nothing sent), the
// saga answers the caller that the request is pending and goes on trying under partnerOptions,
// instead of holding the call for the retries (spec: circuit breakers, fail fast).
func partnerFirstTryOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute, // above the gateway client's transfer deadline
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	}
}

// recordOptions: a saga's record steps in its own database (load, claim, mark disbursed or
// failed, the audit row of a gate that could not decide). Each is one short transaction and
// idempotent for the saga's workflow id; a database outage is retried for up to an hour, because
// past the claim the request's state must catch up with the money.
func recordOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout:    30 * time.Second,
		ScheduleToCloseTimeout: time.Hour,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    500 * time.Millisecond,
			BackoffCoefficient: 2,
			MaximumInterval:    time.Minute,
		},
	}
}

// reconcileOptions: fetching a statement is a network download and reconciling a pair reads the
// ledger page by page, so both get minutes; a dependency that is down is retried with backoff
// for about an hour before the run reports the pair as failed.
func reconcileOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    10 * time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    5 * time.Minute,
			MaximumAttempts:    10,
		},
	}
}

// housekeepingOptions: a daily delete over an index, idempotent (a retry deletes by the same
// cutoff). A database outage is retried for about an hour; past that, tomorrow's run deletes
// today's records too.
func housekeepingOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 5 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    30 * time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    10 * time.Minute,
			MaximumAttempts:    8,
		},
	}
}

// The local-activity forms of the options above. A saga's short steps — its record steps, the
// gates, the ledger and the first partner attempt — run as local activities: the worker runs them
// inside the workflow task and records one marker each, instead of a round trip through the
// Temporal server per step (schedule, dispatch, complete, a new workflow task). The same retry
// rules apply; a retry interval longer than the workflow task is waited out on a workflow timer.
// Every one of these steps is idempotent, which local activities need: a worker that dies
// before the workflow task completes runs the step again on replay.

func localGateOptions() workflow.LocalActivityOptions   { return localOf(gateOptions()) }
func localRecordOptions() workflow.LocalActivityOptions { return localOf(recordOptions()) }
func localLedgerOptions() workflow.LocalActivityOptions { return localOf(ledgerOptions()) }

// catchUpOptions: a ledger step that brings the books in line with what already happened, which
// nothing but the saga will do: the commit of a settled transfer, the void of a failed or refused
// one, a remittance's posting after its claim. A run that gave up after ledgerOptions' hour left
// its record DISBURSING or REMITTING for good (every new key refused, nothing able to restart it;
// found by an audit), so these retry for a week, backing off to five minutes, until the ledger is
// back (an outage longer than that is an operator's: the run's error says where it stopped). A
// refusal (non-retryable) still ends them at once. (A zero ScheduleToCloseTimeout would not mean
// "no end": the SDK makes it the StartToCloseTimeout.)
func catchUpOptions() workflow.ActivityOptions { return catchUp(ledgerOptions()) }

// catchUp is o retried for a week, backing off to five minutes.
func catchUp(o workflow.ActivityOptions) workflow.ActivityOptions {
	o.ScheduleToCloseTimeout = 7 * 24 * time.Hour
	o.RetryPolicy.MaximumInterval = 5 * time.Minute
	return o
}
func localCatchUpOptions() workflow.LocalActivityOptions { return localOf(catchUpOptions()) }

// catchUpRecordOptions: a record step that brings a record in line with money that already
// moved or a ledger step already taken (a payout marked paid or failed, a collection, a
// remittance, a write-off completed, a fan-out batch's outcomes, a run's completion). A run that
// gave up after recordOptions' hour of database outage left its record DISBURSING, COLLECTING or
// REMITTING for good, the money moved, so these retry for a week as catchUpOptions do. A step
// before anything moved keeps recordOptions: its run may end and be started again.
func catchUpRecordOptions() workflow.ActivityOptions { return catchUp(recordOptions()) }
func localCatchUpRecordOptions() workflow.LocalActivityOptions {
	return localOf(catchUpRecordOptions())
}

// reserveOptions: a reservation under a lock it does not wait for (the savings withdrawal's
// balance check and hold). It is a regular activity, not a local one: racing reservations of one
// goal find its lock taken and are retried soon and often (every 100 ms to 1 s), and those
// retries must not run inside the workflow task (a local activity retried for seconds keeps the
// task open past its timeout on a loaded worker, the task fails and the caller's update with it).
// Any other failure is retried as ledgerOptions retries (the ledger client's breaker bounds the
// calls while the ledger is down).
func reserveOptions() workflow.ActivityOptions {
	o := ledgerOptions()
	o.StartToCloseTimeout = 30 * time.Second
	o.RetryPolicy = &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, BackoffCoefficient: 1.5, MaximumInterval: time.Second}
	return o
}
func localLedgerFirstTryOptions() workflow.LocalActivityOptions {
	return localOf(ledgerFirstTryOptions())
}
func localPartnerFirstTryOptions() workflow.LocalActivityOptions {
	return localOf(partnerFirstTryOptions())
}

func localOf(o workflow.ActivityOptions) workflow.LocalActivityOptions {
	return workflow.LocalActivityOptions{
		ScheduleToCloseTimeout: o.ScheduleToCloseTimeout,
		StartToCloseTimeout:    o.StartToCloseTimeout,
		RetryPolicy:            o.RetryPolicy,
	}
}
