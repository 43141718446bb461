package activities

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// Run names the saga run an activity works for. Every saga activity's input embeds it (its
// fields stay at the top level of the input's JSON, as they were before it existed, so recorded
// histories decode unchanged).
type Run struct {
	TenantID   string
	WorkflowID string // the saga's id: audit rows' details, ledger lineage, logs
	// CorrelationID is the HTTP request id that started the saga, carried into logs and audit
	// rows.
	CorrelationID string
}

// check validates the run's ids (they come from the saga's own records, but an activity trusts
// nothing).
func (r Run) check() error {
	return errors.Join(field.Identifier("tenantId", r.TenantID, field.MaxIdentifier),
		field.Reference("workflowId", r.WorkflowID, field.MaxReference),
		field.Text("correlationId", r.CorrelationID, field.MaxReference))
}

// scope is the run's tenancy: the tenant, the saga as the system actor, the request id.
func (r Run) scope(ctx context.Context, actor string) context.Context {
	return tenancy.With(ctx, tenancy.Scope{TenantID: r.TenantID, Actor: tenancy.System(actor), RequestID: r.CorrelationID})
}

// logger is the activity logger with the run's ids and keyvals.
func (r Run) logger(ctx context.Context, keyvals ...any) log.Logger {
	return activityLogger(ctx, append([]any{"tenant_id", r.TenantID, "workflow_id", r.WorkflowID, "correlation_id", r.CorrelationID}, keyvals...)...)
}

// recordStep is the one runner of a saga's record steps in its own database: the run's ids and
// the step's own values (checks) are validated before anything else, then fn runs in one
// tenant-scoped transaction acting as tenancy.System(actor) with the run's correlation id (its
// state change, audit row and outbox event commit together); a failure is logged with the run's
// ids and keyvals and mapped by mapErr (a domain's refusals to its codes), the rest by
// temporalError.
func recordStep(ctx context.Context, pool *pgxpool.Pool, run Run, actor string, checks error, mapErr func(error) error,
	fn func(context.Context, pgx.Tx) error, keyvals ...any) error {
	if pool == nil {
		return misconfigured(actor + ": no database pool configured")
	}
	return runStep(ctx, run, actor, checks, mapErr, func(ctx context.Context) error {
		return tenancy.InTx(ctx, pool, func(tx pgx.Tx) error { return fn(ctx, tx) })
	}, keyvals...)
}

// recordBunStep is recordStep for a bun store (internal/lending): fn's transaction is a
// db.BunTx of b (db.NewBun over the runtime role's pool), with the same checks, scope, logging
// and mapping.
func recordBunStep(ctx context.Context, b *bun.DB, run Run, actor string, checks error, mapErr func(error) error,
	fn func(context.Context, db.BunTx) error, keyvals ...any) error {
	if b == nil {
		return misconfigured(actor + ": no database configured")
	}
	return runStep(ctx, run, actor, checks, mapErr, func(ctx context.Context) error {
		return tenancy.InBunTx(ctx, b, func(tx db.BunTx) error { return fn(ctx, tx) })
	}, keyvals...)
}

// runStep is recordStep's body around inTx, the step's one transaction.
func runStep(ctx context.Context, run Run, actor string, checks error, mapErr func(error) error,
	inTx func(context.Context) error, keyvals ...any) error {
	if err := errors.Join(run.check(), checks); err != nil {
		return temporalError(err)
	}
	ctx = run.scope(ctx, actor)
	err := inTx(ctx)
	if err == nil {
		return nil
	}
	run.logger(ctx, keyvals...).Warn("record step failed", "actor", actor, "error", err)
	if mapErr != nil {
		return mapErr(err)
	}
	return temporalError(err)
}

// Activity is a registered activity bound to its argument and result types: workflows call it
// through their typed helpers (the compiler checks what they pass and what they read), and its
// group registers its method under Name with Register, which only takes a function of those
// types. Name never changes: histories reference it.
type Activity[In, Out any] struct{ Name string }

// Register registers fn under the activity's name.
func (a Activity[In, Out]) Register(r worker.ActivityRegistry, fn func(context.Context, In) (Out, error)) {
	r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: a.Name})
}

// Action is an Activity without a result.
type Action[In any] struct{ Name string }

// Register registers fn under the action's name.
func (a Action[In]) Register(r worker.ActivityRegistry, fn func(context.Context, In) error) {
	r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: a.Name})
}

// Group is a struct of activities that registers its own (a nil dependency inside it makes its
// activities fail as misconfigured when called; registering never needs them).
type Group interface {
	Register(r worker.ActivityRegistry)
}

// actorCheck validates the user a step acts as ("" acts as the saga: nothing to check).
func actorCheck(actorID string) error {
	if actorID == "" {
		return nil
	}
	return field.Identifier("actorId", actorID, field.MaxIdentifier)
}

// asActor is fn acting as the user actorID who asked for the saga (an operator, a payroll
// approver); "" leaves the saga as the actor.
func asActor[Tx any](actorID string, fn func(context.Context, Tx) error) func(context.Context, Tx) error {
	return func(ctx context.Context, tx Tx) error {
		if actorID != "" {
			ctx = tenancy.WithActor(ctx, actorID)
		}
		return fn(ctx, tx)
	}
}

// crossTenantRead is a schedule firing's look across tenants: read in one cross-tenant
// transaction on platform (the cross-tenant role's pool) as the system actor job, the firing's
// workflow id its request id and "<job>: <purpose>" the transaction's stated reason. A worker
// without the platform pool is misconfigured (non-retryable); any other error is typed as
// temporalError types it.
func crossTenantRead[T any](ctx context.Context, platform *bun.DB, job, workflowID, purpose string,
	read func(context.Context, db.BunTx) (T, error)) (T, error) {
	var out T
	if platform == nil {
		return out, misconfigured(job + ": no platform database configured")
	}
	ctx = tenancy.With(ctx, tenancy.Scope{Actor: tenancy.System(job), RequestID: workflowID})
	err := crosstenant.BunTx(ctx, platform, job+": "+purpose, func(tx db.BunTx) (err error) {
		out, err = read(ctx, tx)
		return err
	})
	if err != nil {
		var none T
		return none, temporalError(err)
	}
	return out, nil
}
