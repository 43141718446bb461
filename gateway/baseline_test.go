package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// The first transfer from an account for a tenant records the account's mirror baseline first:
// the bank's balance and its last line of the day before anything of ours was booked. Later
// transfers leave it as it is; another tenant gets its own; the runtime role cannot change one.
func TestMirrorBaselineBeforeFirstTransfer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{clock: newFakeClock()}) // the baseline's day is the bank's, not the health clock's
	ctx := ctxT(t)
	src, dst := acct("src"), acct("dst")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)
	tenant, other := uniq("tenant"), uniq("tenant")
	send := func(tenant string, amount int64) {
		t.Helper()
		r, err := e.rpc.InitiateDisbursement(ctx, &gatewayv1.InitiateDisbursementRequest{Partner: SandboxPartner, Reference: uniq("base"),
			FromAccount: src, ToAccount: dst, AmountSantim: amount, TenantId: tenant, Domain: "EWA"})
		require.NoError(t, err)
		require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome())
	}
	_, ok, err := e.store.MirrorBaseline(ctx, tenant, SandboxPartner, src)
	require.NoError(t, err)
	require.False(t, ok)

	send(tenant, 100_00)
	b, ok, err := e.store.MirrorBaseline(ctx, tenant, SandboxPartner, src)
	require.NoError(t, err)
	require.True(t, ok)
	today := time.Now().UTC().Truncate(24 * time.Hour)
	require.Equal(t, int64(1_000_000), b.BalanceSantim, "the opening balance, before our transfer's hold")
	require.True(t, today.Equal(b.AsOfDate), "%v", b.AsOfDate)
	stmt, err := e.gw.FetchStatement(ctx, FetchRequest{Partner: SandboxPartner, TenantID: tenant, Account: src, From: today, To: today, Format: FormatCSV})
	require.NoError(t, err)
	require.Len(t, stmt.Lines, 2, "the opening balance and our hold")
	require.Equal(t, stmt.Lines[0].EntryRef, b.AsOfEntryRef, "the baseline ends at the opening line")
	require.Equal(t, Debit, stmt.Lines[1].Direction)

	send(tenant, 200_00)
	again, ok, err := e.store.MirrorBaseline(ctx, tenant, SandboxPartner, src)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, b, again, "recorded once")

	// Another tenant's mirror of the same account starts where it first used it.
	send(other, 300_00)
	ob, ok, err := e.store.MirrorBaseline(ctx, other, SandboxPartner, src)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(1_000_000-100_00-200_00), ob.BalanceSantim)

	// The runtime role cannot rewrite history.
	err = db.InTenantTx(context.Background(), e.db.App, tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), `UPDATE gateway.mirror_baselines SET balance_santim = 0`)
		return err
	})
	require.ErrorContains(t, err, "permission denied")
}

// A transfer from the account already in the register (sent before baselines existed, or while
// the statement could not be fetched) means a snapshot now may contain our own money: none is
// recorded, and reconciliation keeps the account's whole history.
func TestMirrorBaselineNeverAfterAnEarlierTransfer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	ctx := ctxT(t)
	src, dst := acct("src"), acct("dst")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)
	tenant := uniq("tenant")
	require.NoError(t, e.store.RecordTransfers(ctx, tenant, []TransferRecord{{Partner: SandboxPartner, Reference: uniq("old"), TenantID: tenant,
		Domain: "EWA", AmountSantim: 1_00, Currency: "ETB", FromAccount: src, ToAccount: dst}}))
	r, err := e.rpc.InitiateDisbursement(ctx, &gatewayv1.InitiateDisbursementRequest{Partner: SandboxPartner, Reference: uniq("new"),
		FromAccount: src, ToAccount: dst, AmountSantim: 100_00, TenantId: tenant, Domain: "EWA"})
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome())
	_, ok, err := e.store.MirrorBaseline(ctx, tenant, SandboxPartner, src)
	require.NoError(t, err)
	require.False(t, ok)
}

// ParseCamt053Closing reads the closing booked balance, signed.
func TestParseCamt053Closing(t *testing.T) {
	t.Parallel()
	doc := func(ind string) []byte {
		return []byte(`<?xml version="1.0"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><Stmt>` +
			`<Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="ETB">1.00</Amt><CdtDbtInd>CRDT</CdtDbtInd></Bal>` +
			`<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="ETB">1234.56</Amt><CdtDbtInd>` + ind + `</CdtDbtInd></Bal>` +
			`</Stmt></BkToCstmrStmt></Document>`)
	}
	_, v, ok, err := ParseCamt053Closing(doc("CRDT"))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(123456), v)
	_, v, ok, err = ParseCamt053Closing(doc("DBIT"))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(-123456), v)
	_, _, _, err = ParseCamt053Closing(doc("XX"))
	require.ErrorIs(t, err, ErrStatement)
	_, _, ok, err = ParseCamt053Closing([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><Stmt></Stmt></BkToCstmrStmt></Document>`))
	require.NoError(t, err)
	require.False(t, ok)
}
