// Package tenancy carries who is acting, for which tenant, from the edge to every store and
// activity, and runs tenant-scoped transactions.
//
// The API's tenant-context middleware, a gRPC handler or an activity puts a Scope into the
// context once (With, WithTenant, WithActor); everything below reads it from there and never
// takes a tenant from a request body. InTx opens a transaction whose row-level security context is
// the scope's tenant (SET LOCAL, through db.InTenantTx), so a query can only see that tenant's
// rows. Reaching across tenants is a different, audited path: internal/platform/crosstenant.
package tenancy

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// Scope is who acts for which tenant in one request, activity or job.
type Scope struct {
	// TenantID is the organization whose rows the work may touch.
	TenantID string
	// Actor is a user id, "partner:<name>" or "system:<name>" (see Partner and System).
	Actor string
	// RequestID correlates logs and audit rows of one request or workflow step.
	RequestID string
}

// Actor literals of callers that are not users.
const (
	partnerPrefix = "partner:"
	systemPrefix  = "system:"
)

// Partner is the actor literal of a partner bank's callback.
func Partner(name string) string { return partnerPrefix + name }

// System is the actor literal of a job of ours (system:reconcile, system:outbox-relay, …).
func System(name string) string { return systemPrefix + name }

// ErrNoTenant means the context carries no tenant: a programming error at the edge, never a
// reason to guess one.
var ErrNoTenant = errors.New("tenancy: no tenant in context")

// ErrNoUser means the context's actor is not a signed-in user.
var ErrNoUser = errors.New("tenancy: no user in context")

type scopeKey struct{}

// With returns ctx carrying s.
func With(ctx context.Context, s Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, s)
}

// From returns the scope ctx carries (zero when none).
func From(ctx context.Context) Scope {
	s, _ := ctx.Value(scopeKey{}).(Scope)
	return s
}

// WithTenant returns ctx with the tenant replaced and the rest of the scope kept.
func WithTenant(ctx context.Context, tenantID string) context.Context {
	s := From(ctx)
	s.TenantID = tenantID
	return With(ctx, s)
}

// WithActor returns ctx with the actor replaced and the rest of the scope kept.
func WithActor(ctx context.Context, actor string) context.Context {
	s := From(ctx)
	s.Actor = actor
	return With(ctx, s)
}

// WithRequestID returns ctx with the request id replaced and the rest of the scope kept.
func WithRequestID(ctx context.Context, id string) context.Context {
	s := From(ctx)
	s.RequestID = id
	return With(ctx, s)
}

// TenantID is the scope's tenant ("" when none).
func TenantID(ctx context.Context) string { return From(ctx).TenantID }

// Actor is the scope's actor ("" when none).
func Actor(ctx context.Context) string { return From(ctx).Actor }

// InTx runs fn in a transaction scoped to the context's tenant (and, when the actor is a user, to
// that user: see db.UserSetting); fn's error rolls it back. Without a tenant it returns
// ErrNoTenant and opens nothing.
func InTx(ctx context.Context, b db.Beginner, fn func(pgx.Tx) error) error {
	s := From(ctx)
	if s.TenantID == "" {
		return ErrNoTenant
	}
	return db.InScopedTx(ctx, b, s.TenantID, s.UserID(), fn)
}

// InBatch runs, in one round trip, the statements queue adds to a batch in one implicit
// transaction scoped as InTx scopes one (db.InScopedBatch); the batch commits at its end or rolls
// back at its first error. b is a pool or a connection; inside a transaction (b a pgx.Tx), or
// with a b that cannot send batches, the batch runs in InTx.
func InBatch(ctx context.Context, b db.Beginner, queue func(*pgx.Batch)) error {
	s := From(ctx)
	if s.TenantID == "" {
		return ErrNoTenant
	}
	if _, nested := b.(pgx.Tx); !nested {
		if sb, ok := b.(db.Batcher); ok {
			return db.InScopedBatch(ctx, sb, s.TenantID, s.UserID(), queue)
		}
	}
	return InTx(ctx, b, func(tx pgx.Tx) error {
		batch := &pgx.Batch{}
		queue(batch)
		return tx.SendBatch(ctx, batch).Close()
	})
}

// InUserTx runs fn in a transaction scoped to the context's user and no tenant: it sees the user's
// own memberships and the organizations they name, nothing else that is tenant-scoped.
func InUserTx(ctx context.Context, b db.Beginner, fn func(pgx.Tx) error) error {
	u := From(ctx).UserID()
	if u == "" {
		return ErrNoUser
	}
	return db.InScopedTx(ctx, b, "", u, fn)
}

// UserID is the actor when it is a user ("" for partners and systems).
func (s Scope) UserID() string {
	if s.Actor == "" || strings.HasPrefix(s.Actor, partnerPrefix) || strings.HasPrefix(s.Actor, systemPrefix) {
		return ""
	}
	return s.Actor
}

// InBunTx is InTx for a bun store (db.NewBun over the same pool): the same scope, the same
// row-level security, and the transaction also takes the audit row and the outbox event
// (db.BunTx is a db.Writer).
func InBunTx(ctx context.Context, b *bun.DB, fn func(db.BunTx) error) error {
	s := From(ctx)
	if s.TenantID == "" {
		return ErrNoTenant
	}
	return db.InScopedBunTx(ctx, b, s.TenantID, s.UserID(), fn)
}
