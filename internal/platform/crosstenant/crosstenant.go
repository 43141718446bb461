// Package crosstenant is Wagerail's one designed path across tenants, for platform admins (list
// stored bank callbacks, onboard a business) and system jobs (resolve which tenant a bank
// callback belongs to, relay the outbox, delete expired idempotency records). Everything else
// runs tenant-scoped through internal/platform/tenancy.
//
// # Threat model
//
// The attacker we design against controls a request to the API or worker as far as the code lets
// them: a SQL injection, a confused handler, a forged tenant id in a body. Whatever they reach runs
// as the runtime role wagerail_app, under FORCED row-level security: they see one tenant, the one
// the edge authenticated. The cross-tenant path must not widen that:
//
//   - It is a separate login role, wagerail_platform, with its own password, configured only in
//     the processes that need it (DATABASE_PLATFORM_URL). Like wagerail_app it is NOBYPASSRLS;
//     wagerail_app is not a member of it and cannot SET ROLE to it.
//   - Each table that platform work needs has a platform_access policy that names
//     wagerail_platform alone and holds only while the transaction has set app.cross_tenant = 'on'.
//     For wagerail_app that setting means nothing: no policy that reads it applies to that role
//     (TestRuntimeRoleCannotCrossTenants proves it). A platform pool used without Tx stays
//     tenant-scoped like any other.
//   - The role gets only the grants platform work needs, table by table, in the migrations.
//   - Every Tx writes an audit row (action CrossTenantAccess, tenant "*", the actor from the
//     context, the stated reason): in the same transaction when the work commits, and in a
//     transaction of its own, outcome FAILED, when it does not, so a read that rolled back is
//     recorded too.
//   - A job of ours that looks on a timer (the outbox relay, the sweeps)
//     uses JobTx instead: it audits what the look found or changed (with the count) and every
//     failure, but not a look that found nothing, which would otherwise write thousands of rows
//     a day that say only that nothing happened. That holds for system actors (tenancy.System)
//     only: a person's look across tenants is always recorded, found something or not.
//
// Out of scope: a leaked wagerail_platform password (rotate it; every use is audited), the owner
// role and superusers (deploy-time only), and the correctness of the fn a caller passes (it sees
// every tenant: keep it small and reviewed).
package crosstenant

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// PlatformTenant is the tenant_id of audit rows about platform-wide acts. It cannot collide with
// a real tenant: tenant ids are field.Identifier values, which never contain '*'.
const PlatformTenant = "*"

// Action is the audit action every use writes.
const Action = "CrossTenantAccess"

// Errors Tx returns before fn runs.
var (
	ErrNoActor         = errors.New("crosstenant: no actor in context")
	ErrReason          = errors.New("crosstenant: a reason (at most 200 bytes of text) is required")
	ErrNotPlatformRole = errors.New("crosstenant: the pool does not log in as " + db.PlatformRole)
)

// Tx runs fn in a transaction that sees every tenant's rows in the tables that grant platform
// access, and audits it. b must log in as wagerail_platform. fn's error rolls the transaction
// back (and is returned after the FAILED audit row is written).
func Tx(ctx context.Context, b db.Beginner, reason string, fn func(pgx.Tx) error) error {
	return run(ctx, pgxBegin(b), reason, func(tx db.Writer) (bool, map[string]string, error) { return true, nil, fn(tx.(pgx.Tx)) })
}

// BunTx is Tx for a bun store: b is bun over a pool that logs in as wagerail_platform
// (db.NewBun).
func BunTx(ctx context.Context, b *bun.DB, reason string, fn func(db.BunTx) error) error {
	return run(ctx, bunBegin(b), reason, func(tx db.Writer) (bool, map[string]string, error) { return true, nil, fn(tx.(db.BunTx)) })
}

// begin runs fn in one transaction of a pgx pool or of bun: run does not care which.
type begin func(ctx context.Context, fn func(db.Writer) error) error

func pgxBegin(b db.Beginner) begin {
	return func(ctx context.Context, fn func(db.Writer) error) error {
		if tb, ok := b.(interface {
			BeginTx(context.Context, pgx.TxOptions) (pgx.Tx, error)
		}); ok {
			return pgx.BeginTxFunc(ctx, tb, db.TxOptions(ctx), func(tx pgx.Tx) error { return fn(tx) })
		}
		return pgx.BeginFunc(ctx, b, func(tx pgx.Tx) error { return fn(tx) })
	}
}

func bunBegin(b *bun.DB) begin {
	return func(ctx context.Context, fn func(db.Writer) error) error {
		return b.RunInTx(ctx, db.SQLTxOptions(ctx), func(_ context.Context, tx bun.Tx) error { return fn(db.BunTx{Tx: tx}) })
	}
}

// JobTx is Tx for a system job that looks across tenants on a timer: fn returns how many rows it
// found or changed, and the success audit row (with that count in its details) is written only
// when there were any, or when ctx's actor is not a system actor (tenancy.System): a person's
// look is always recorded. A failure is audited as Tx audits it.
func JobTx(ctx context.Context, b db.Beginner, reason string, fn func(pgx.Tx) (int, error)) error {
	job := strings.HasPrefix(tenancy.Actor(ctx), tenancy.System(""))
	return run(ctx, pgxBegin(b), reason, func(tx db.Writer) (bool, map[string]string, error) {
		n, err := fn(tx.(pgx.Tx))
		return n > 0 || !job, map[string]string{"rows": strconv.Itoa(n)}, err
	})
}

// run is Tx and JobTx: fn says whether the success is worth an audit row, and what to add to its
// details.
func run(ctx context.Context, begin begin, reason string, fn func(db.Writer) (bool, map[string]string, error)) error {
	actor := tenancy.Actor(ctx)
	if actor == "" {
		return ErrNoActor
	}
	if reason == "" || field.Text("reason", reason, 200) != nil {
		return ErrReason
	}
	actx := tenancy.WithTenant(ctx, PlatformTenant)
	details := map[string]string{"reason": reason}
	entry := audit.Entry{Action: Action, Outcome: audit.Success, Details: details}
	err := begin(ctx, func(tx db.Writer) error {
		var role, on string
		if err := tx.QueryRow(ctx, `SELECT current_user, set_config($1, 'on', true)`, db.CrossTenantSetting).Scan(&role, &on); err != nil {
			return fmt.Errorf("crosstenant: %w", err)
		}
		if role != db.PlatformRole {
			return ErrNotPlatformRole
		}
		worth, more, err := fn(tx)
		if err != nil || !worth {
			return err
		}
		maps.Copy(details, more)
		return audit.Write(actx, tx, entry)
	})
	if err == nil || errors.Is(err, ErrNotPlatformRole) {
		return err
	}
	entry.Outcome = audit.Failed
	entry.Details = map[string]string{"reason": reason, "error": err.Error()}
	if aerr := begin(ctx, func(tx db.Writer) error {
		if _, err := tx.Exec(ctx, `SELECT set_config($1, 'on', true)`, db.CrossTenantSetting); err != nil {
			return err
		}
		return audit.Write(actx, tx, entry)
	}); aerr != nil {
		return errors.Join(err, fmt.Errorf("crosstenant: audit of failed use: %w", aerr))
	}
	return err
}
