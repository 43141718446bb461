package audit_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestWriteInCallersTransaction(t *testing.T) {
	d := testkit.NewDB(t)
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: "tenant-a", Actor: "user-7", RequestID: "req-9"})

	// A rolled-back transaction leaves no audit row: the row lives and dies with the change.
	err := tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		require.NoError(t, audit.Write(ctx, tx, audit.Entry{Action: "DisburseEwa", Outcome: audit.Success}))
		return context.Canceled
	})
	require.ErrorIs(t, err, context.Canceled)

	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		return audit.Write(ctx, tx, audit.Entry{
			Action: "DisburseEwa", Outcome: audit.Denied, TargetType: "EwaRequest", TargetID: "ewa-1",
			Details: map[string]any{"gate": "KYC"},
		})
	}))
	var actor, action, outcome, tt, tid, gate, req string
	var n int
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log`).Scan(&n); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT actor, action, outcome, target_type, target_id, details->>'gate', request_id FROM app.audit_log`).
			Scan(&actor, &action, &outcome, &tt, &tid, &gate, &req)
	}))
	require.Equal(t, 1, n)
	require.Equal(t, []string{"user-7", "DisburseEwa", "DENIED", "EwaRequest", "ewa-1", "KYC", "req-9"},
		[]string{actor, action, outcome, tt, tid, gate, req})
}

func TestWriteRefusesIncompleteEntries(t *testing.T) {
	d := testkit.NewDB(t)
	full := tenancy.Scope{TenantID: "tenant-a", Actor: "user-7"}
	for name, tc := range map[string]struct {
		scope tenancy.Scope
		e     audit.Entry
		want  error
	}{
		"no tenant":   {tenancy.Scope{Actor: "u"}, audit.Entry{Action: "A", Outcome: audit.Success}, tenancy.ErrNoTenant},
		"no actor":    {tenancy.Scope{TenantID: "t"}, audit.Entry{Action: "A", Outcome: audit.Success}, audit.ErrNoActor},
		"no action":   {full, audit.Entry{Outcome: audit.Success}, audit.ErrInvalid},
		"bad outcome": {full, audit.Entry{Action: "A", Outcome: "MAYBE"}, audit.ErrInvalid},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := tenancy.With(context.Background(), tc.scope)
			err := pgx.BeginFunc(ctx, d.App, func(tx pgx.Tx) error { return audit.Write(ctx, tx, tc.e) })
			require.ErrorIs(t, err, tc.want)
		})
	}
}

// Append-only holds for every role: the runtime role lacks the grants, and the owner (who has
// them) meets the trigger.
func TestAppendOnly(t *testing.T) {
	d := testkit.NewDB(t)
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: "tenant-a", Actor: "user-7"})
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		return audit.Write(ctx, tx, audit.Entry{Action: "A", Outcome: audit.Success})
	}))
	for _, stmt := range []string{`UPDATE app.audit_log SET action = 'B'`, `DELETE FROM app.audit_log`, `TRUNCATE app.audit_log`} {
		err := tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error { _, err := tx.Exec(ctx, stmt); return err })
		require.Error(t, err, "runtime role: %s", stmt)
		owner, err := pgx.Connect(ctx, d.OwnerDSN)
		require.NoError(t, err)
		// The owner is subject to the forced policy too: set the tenant so the row is visible.
		err = tenancy.InTx(ctx, owner, func(tx pgx.Tx) error { _, err := tx.Exec(ctx, stmt); return err })
		require.ErrorContains(t, err, "append-only", "owner: %s", stmt)
		owner.Close(ctx)
	}
}

// Queue writes the row Write would, as part of the caller's batch in the caller's transaction:
// it lives and dies with the transaction; an entry Write refuses is refused before anything is
// queued.
func TestQueueInCallersBatch(t *testing.T) {
	d := testkit.NewDB(t)
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: "tenant-a", Actor: "user-7", RequestID: "req-9"})
	entry := audit.Entry{Action: "DisburseEwa", Outcome: audit.Success, TargetType: "EwaRequest", TargetID: "ewa-1",
		Details: map[string]any{"gate": "KYC"}}
	for _, commit := range []bool{false, true} {
		err := tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
			b := &pgx.Batch{}
			b.Queue(`SELECT 1`)
			require.NoError(t, audit.Queue(ctx, b, entry))
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
			if !commit {
				return context.Canceled
			}
			return nil
		})
		if !commit {
			require.ErrorIs(t, err, context.Canceled)
			continue
		}
		require.NoError(t, err)
	}
	var n int
	var actor, tid, gate, req string
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*), min(actor), min(target_id), min(details->>'gate'), min(request_id) FROM app.audit_log`).
			Scan(&n, &actor, &tid, &gate, &req)
	}))
	require.Equal(t, 1, n, "the rolled back batch left no row")
	require.Equal(t, []string{"user-7", "ewa-1", "KYC", "req-9"}, []string{actor, tid, gate, req})

	b := &pgx.Batch{}
	require.ErrorIs(t, audit.Queue(ctx, b, audit.Entry{Outcome: audit.Success}), audit.ErrInvalid)
	require.ErrorIs(t, audit.Queue(tenancy.With(context.Background(), tenancy.Scope{TenantID: "t"}), b, entry), audit.ErrNoActor)
	require.Zero(t, b.Len())
}
