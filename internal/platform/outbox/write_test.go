package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

type disbursed struct {
	RequestID    string `json:"requestId"`
	AmountSantim int64  `json:"amountSantim"`
}

func countEvents(t *testing.T, d *testkit.DB, tenant string) int {
	t.Helper()
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tenant})
	var n int
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.outbox`).Scan(&n)
	}))
	return n
}

func TestWriteCommitsAndRollsBackWithTheCallersTransaction(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: "tenant-a", Actor: "user-1"})

	boom := errors.New("the state change failed")
	err := tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		_, err := outbox.Write(ctx, tx, "ewa.disbursed.v1", disbursed{RequestID: "ewa_1", AmountSantim: 150000})
		require.NoError(t, err)
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.Equal(t, 0, countEvents(t, d, "tenant-a"), "a rolled-back change leaves no event")

	ev := write(t, d, "tenant-a", "ewa.disbursed.v1", disbursed{RequestID: "ewa_2", AmountSantim: 150000})
	require.Equal(t, 1, countEvents(t, d, "tenant-a"))
	require.Equal(t, "ewa.disbursed.v1", ev.Type)
	require.Equal(t, "tenant-a", ev.TenantID)
	require.Len(t, ev.ID, 36)
	require.WithinDuration(t, time.Now(), ev.OccurredAt, time.Minute)
	require.JSONEq(t, `{"requestId":"ewa_2","amountSantim":150000}`, string(ev.Payload))

	// The envelope's JSON names are the spec's.
	b, err := json.Marshal(ev)
	require.NoError(t, err)
	var env map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &env))
	require.ElementsMatch(t, []string{"id", "type", "occurredAt", "tenantId", "payload"}, keys(env))

	// nil is an empty object.
	require.JSONEq(t, `{}`, string(write(t, d, "tenant-a", "kyc.approved.v1", nil).Payload))
	require.Equal(t, 0, countEvents(t, d, "tenant-b"), "another tenant sees none of them")
}

func keys(m map[string]json.RawMessage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestWriteRefusesBadInputAndWritesNothing(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: "tenant-a", Actor: "user-1"})
	ok := disbursed{RequestID: "x"}
	cases := []struct {
		name    string
		typ     string
		payload any
		want    error
	}{
		{"upper case type", "EWA.disbursed.v1", ok, outbox.ErrInvalidType},
		{"no version", "ewa.disbursed", ok, outbox.ErrInvalidType},
		{"version only", "v1", ok, outbox.ErrInvalidType},
		{"empty segment", "ewa..v1", ok, outbox.ErrInvalidType},
		{"trailing space", "ewa.disbursed.v1 ", ok, outbox.ErrInvalidType},
		{"empty type", "", ok, outbox.ErrInvalidType},
		{"type too long", strings.Repeat("a", 126) + ".v1", ok, outbox.ErrInvalidType},
		{"array payload", "ewa.disbursed.v1", []int{1}, outbox.ErrInvalidPayload},
		{"string payload", "ewa.disbursed.v1", "hello", outbox.ErrInvalidPayload},
		{"unmarshalable payload", "ewa.disbursed.v1", map[string]any{"c": make(chan int)}, outbox.ErrInvalidPayload},
		{"raw invalid JSON", "ewa.disbursed.v1", json.RawMessage(`{"a":`), outbox.ErrInvalidPayload},
		{"raw invalid UTF-8", "ewa.disbursed.v1", json.RawMessage("{\"a\":\"\xff\"}"), outbox.ErrInvalidPayload},
		{"NUL character", "ewa.disbursed.v1", map[string]string{"a": "x\x00y"}, outbox.ErrInvalidPayload},
		{"payload too large", "ewa.disbursed.v1", map[string]string{"a": strings.Repeat("x", outbox.MaxPayloadBytes)}, outbox.ErrPayloadTooLarge},
	}
	for _, c := range cases {
		require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
			_, err := outbox.Write(ctx, tx, c.typ, c.payload)
			require.ErrorIs(t, err, c.want, c.name)
			// The caller's transaction is untouched and still usable.
			var one int
			return tx.QueryRow(ctx, `SELECT 1`).Scan(&one)
		}), c.name)
	}
	require.NoError(t, outbox.ValidType("loan.installment_remitted_to_fi.v1"))
	require.NoError(t, outbox.ValidType(strings.Repeat("a", 125)+".v1"))

	// No tenant in the context.
	require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		_, err := outbox.Write(context.Background(), tx, "ewa.disbursed.v1", ok)
		require.ErrorIs(t, err, tenancy.ErrNoTenant)
		return nil
	}))
	// The context names another tenant than the transaction: row-level security refuses it.
	err := tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
		_, err := outbox.Write(tenancy.WithTenant(ctx, "tenant-b"), tx, "ewa.disbursed.v1", ok)
		return err
	})
	require.True(t, db.IsCode(err, "42501"), "want an RLS violation, got %v", err)
	require.Equal(t, 0, countEvents(t, d, "tenant-a"))
	require.Equal(t, 0, countEvents(t, d, "tenant-b"))
}

// The notification wakes relays and says nothing about the event.
func TestNotificationCarriesNoTenantData(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pc, err := d.App.Acquire(ctx)
	require.NoError(t, err)
	conn := pc.Hijack()
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, "LISTEN "+outbox.NotifyChannel)
	require.NoError(t, err)

	write(t, d, "tenant-a", "ewa.disbursed.v1", disbursed{RequestID: "ewa_1"})
	n, err := conn.WaitForNotification(ctx)
	require.NoError(t, err)
	require.Equal(t, outbox.NotifyChannel, n.Channel)
	require.Empty(t, n.Payload)
}

// Queue records the event Write would, as part of the caller's batch in the caller's
// transaction: it lives and dies with the transaction, *out is the event as consumers receive
// it, and what Write refuses up front is refused before anything is queued.
func TestQueueInCallersBatch(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: "tenant-q", Actor: "user-1"})
	boom := errors.New("the state change failed")
	for _, commit := range []bool{false, true} {
		var ev outbox.Event
		err := tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error {
			b := &pgx.Batch{}
			require.NoError(t, outbox.Queue(ctx, b, "ewa.disbursed.v1", disbursed{RequestID: "ewa_q", AmountSantim: 7}, &ev))
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
			if !commit {
				return boom
			}
			return nil
		})
		if !commit {
			require.ErrorIs(t, err, boom)
			require.Equal(t, 0, countEvents(t, d, "tenant-q"), "a rolled-back change leaves no event")
			continue
		}
		require.NoError(t, err)
		require.Equal(t, 1, countEvents(t, d, "tenant-q"))
		require.Equal(t, "ewa.disbursed.v1", ev.Type)
		require.Equal(t, "tenant-q", ev.TenantID)
		require.Len(t, ev.ID, 36)
		require.WithinDuration(t, time.Now(), ev.OccurredAt, time.Minute)
		require.JSONEq(t, `{"requestId":"ewa_q","amountSantim":7}`, string(ev.Payload))
	}
	b := &pgx.Batch{}
	require.ErrorIs(t, outbox.Queue(ctx, b, "Not A Type", nil, nil), outbox.ErrInvalidType)
	require.ErrorIs(t, outbox.Queue(ctx, b, "ewa.disbursed.v1", []int{1}, nil), outbox.ErrInvalidPayload)
	require.ErrorIs(t, outbox.Queue(context.Background(), b, "ewa.disbursed.v1", nil, nil), tenancy.ErrNoTenant)
	require.Zero(t, b.Len())
}
