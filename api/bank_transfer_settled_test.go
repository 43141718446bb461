package api

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/savings"
	"github.com/wagerail/wagerail/internal/wallet"
)

// TestBankTransferSettledTypes: every domain whose saga sends a bank transfer declares the spec's
// <domain>.bank_transfer_settled.v1 as a constant, and that constant is the type
// outbox.TransferSettled writes for the domain the transfer carries (the end-to-end tests count
// the events by these constants, so a constant that drifted from the writer finds none).
func TestBankTransferSettledTypes(t *testing.T) {
	t.Parallel()
	for domain, typ := range map[string]string{
		"EWA":     ewa.EventBankTransferSettled,
		"LOAN":    lending.EventBankTransferSettled,
		"PAYROLL": payroll.EventBankTransferSettled,
		"BNPL":    bnpl.EventBankTransferSettled,
		"SAVINGS": savings.EventBankTransferSettled,
		"WALLET":  wallet.EventBankTransferSettled,
		"EQUB":    equb.EventBankTransferSettled,
	} {
		require.Equal(t, outbox.TransferSettledType(domain), typ)
		require.NoError(t, outbox.ValidType(typ))
	}
}

// settledTransfer is one <domain>.bank_transfer_settled.v1 as the tests compare it: its kind,
// subject and amount (the domain and a transfer id are checked by settledTransfers).
type settledTransfer struct {
	Kind         string
	SubjectID    string
	AmountSantim int64
}

// settledEvent is one event beside the register's transfer its partner reference names.
type settledEvent struct {
	settledTransfer
	domain, transferID, reference       string
	regStatus, regDomain, regTransferID string
	regAmount                           int64
}

// registerLag is how long settledTransfers waits for the register to show what the events say:
// a callback's answer is recorded in the register after its receipt commits, and the receipt
// signals the saga, so the saga can write its event a moment before the register takes the same
// answer (internal/bankwebhook, register.go).
const registerLag = 10 * time.Second

// settledTransfers reads tenant's events of typ (a domain's EventBankTransferSettled) in the
// order they were written, checking that each carries its domain and the partner's transfer id,
// and names by partnerReference the tenant's transfer in the gateway's register it reports: that
// transfer SETTLED, of the event's domain and amount, under the event's transfer id. The events
// are read again while a register row is still PENDING (registerLag), then checked.
func settledTransfers(t testing.TB, d *testkit.DB, tenant, typ string) []settledTransfer {
	t.Helper()
	domain, _, _ := strings.Cut(typ, ".")
	events := readSettledEvents(t, d, tenant, typ)
	for deadline := time.Now().Add(registerLag); time.Now().Before(deadline); events = readSettledEvents(t, d, tenant, typ) {
		if !slices.ContainsFunc(events, func(e settledEvent) bool { return e.regStatus == "PENDING" }) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	out := []settledTransfer{}
	for _, e := range events {
		s := e.settledTransfer
		require.Equal(t, strings.ToUpper(domain), e.domain, "the event's domain")
		require.NotEmpty(t, e.transferID, "the partner's transfer id of %s %s", s.Kind, s.SubjectID)
		require.NotEmpty(t, e.reference, "the partner reference of %s %s", s.Kind, s.SubjectID)
		require.Equal(t, []any{"SETTLED", e.domain, s.AmountSantim, e.transferID}, []any{e.regStatus, e.regDomain, e.regAmount, e.regTransferID},
			"the register's transfer %s of %s %s", e.reference, s.Kind, s.SubjectID)
		out = append(out, s)
	}
	return out
}

// readSettledEvents reads tenant's events of typ, each beside the register's transfer it names.
func readSettledEvents(t testing.TB, d *testkit.DB, tenant, typ string) []settledEvent {
	t.Helper()
	ctx := context.Background()
	out := []settledEvent{}
	require.NoError(t, db.InTenantTx(ctx, d.App, tenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT o.payload->>'domain', o.payload->>'kind', o.payload->>'subjectId', (o.payload->>'amountSantim')::bigint,
				coalesce(o.payload->>'transferId', ''), coalesce(o.payload->>'partnerReference', ''),
				coalesce(g.status, ''), coalesce(g.domain, ''), coalesce(g.amount_santim, 0)::bigint, coalesce(g.partner_transfer_id, '')
			FROM app.outbox o LEFT JOIN gateway.transfers g ON g.tenant_id = o.tenant_id AND g.reference = o.payload->>'partnerReference'
			WHERE o.tenant_id = $1 AND o.type = $2 ORDER BY o.id`, tenant, typ)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var e settledEvent
			if err := rows.Scan(&e.domain, &e.Kind, &e.SubjectID, &e.AmountSantim, &e.transferID, &e.reference, &e.regStatus, &e.regDomain,
				&e.regAmount, &e.regTransferID); err != nil {
				return err
			}
			out = append(out, e)
		}
		return rows.Err()
	}))
	return out
}

// tenantString runs a query of one text value in tenant's transaction (a record's id by its
// saga's workflow id).
func tenantString(t testing.TB, d *testkit.DB, tenant, query string, args ...any) string {
	t.Helper()
	ctx := context.Background()
	var v string
	require.NoError(t, db.InTenantTx(ctx, d.App, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, query, args...).Scan(&v)
	}))
	return v
}
