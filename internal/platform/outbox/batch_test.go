package outbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestWriteManyCommitsAndRollsBackWithTheCallersTransaction(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: "tenant-a", Actor: "user-1"})
	payloads := []any{
		map[string]any{"employeeId": "emp_1"},
		map[string]any{"employeeId": "emp_2"},
		disbursed{RequestID: "ewa_3", AmountSantim: 1},
	}
	boom := errors.New("the state change failed")
	err := tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		_, err := outbox.WriteMany(ctx, tx, "employee.created.v1", payloads)
		require.NoError(t, err)
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.Equal(t, 0, countEvents(t, d, "tenant-a"), "a rolled-back change leaves no event")

	var evs []outbox.Event
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		var err error
		evs, err = outbox.WriteMany(ctx, tx, "employee.created.v1", payloads)
		return err
	}))
	require.Equal(t, 3, countEvents(t, d, "tenant-a"))
	require.Len(t, evs, 3)
	for i, want := range []string{`{"employeeId":"emp_1"}`, `{"employeeId":"emp_2"}`, `{"requestId":"ewa_3","amountSantim":1}`} {
		require.Equal(t, "employee.created.v1", evs[i].Type)
		require.Equal(t, "tenant-a", evs[i].TenantID)
		require.Len(t, evs[i].ID, 36)
		require.False(t, evs[i].OccurredAt.IsZero())
		require.JSONEq(t, want, string(evs[i].Payload))
	}
	// Stored in the payloads' order (the relay delivers by id).
	var ids []string
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT event_id::text FROM app.outbox ORDER BY id`)
		if err != nil {
			return err
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	require.Equal(t, []string{evs[0].ID, evs[1].ID, evs[2].ID}, ids)

	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		evs, err := outbox.WriteMany(ctx, tx, "employee.created.v1", nil)
		require.Empty(t, evs)
		return err
	}))
}

func TestWriteManyRefusesBeforeWriting(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ok := map[string]any{"a": 1}
	for name, tc := range map[string]struct {
		tenant   string
		typ      string
		payloads []any
		want     error
	}{
		"no tenant":     {"", "employee.created.v1", []any{ok}, tenancy.ErrNoTenant},
		"bad type":      {"tenant-a", "Employee Created", []any{ok}, outbox.ErrInvalidType},
		"not an object": {"tenant-a", "employee.created.v1", []any{ok, []int{1}}, outbox.ErrInvalidPayload},
		"NUL":           {"tenant-a", "employee.created.v1", []any{ok, map[string]string{"a": "\x00"}}, outbox.ErrInvalidPayload},
		"too large":     {"tenant-a", "employee.created.v1", []any{ok, map[string]string{"a": strings.Repeat("x", outbox.MaxPayloadBytes)}}, outbox.ErrPayloadTooLarge},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tc.tenant, Actor: "user-1"})
			err := pgx.BeginFunc(ctx, d.App, func(tx pgx.Tx) error {
				evs, err := outbox.WriteMany(ctx, tx, tc.typ, tc.payloads)
				require.Empty(t, evs)
				if err == nil {
					return nil
				}
				// Nothing was sent to the database: the transaction is still usable.
				_, qerr := tx.Exec(ctx, `SELECT 1`)
				require.NoError(t, qerr)
				return err
			})
			require.ErrorIs(t, err, tc.want)
		})
	}
}
