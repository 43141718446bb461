package gateway

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// registered reads a transfer of tenant from the register, as the runtime role in a tenant
// transaction.
func registered(t *testing.T, e *env, tenant, reference string) (TransferRecord, error) {
	t.Helper()
	var rec TransferRecord
	err := db.InTenantTx(ctxT(t), e.db.App, tenant, func(tx pgx.Tx) error {
		var err error
		rec, err = FindTransfer(ctxT(t), tx, SandboxPartner, reference)
		return err
	})
	return rec, err
}

func waitRegistered(t *testing.T, e *env, tenant, reference string, want TransferStatus) TransferRecord {
	t.Helper()
	var rec TransferRecord
	require.Eventually(t, func() bool {
		var err error
		rec, err = registered(t, e, tenant, reference)
		return err == nil && rec.Status == want
	}, 20*time.Second, 20*time.Millisecond, "transfer %s never registered as %s (last %+v)", reference, want, rec)
	return rec
}

// Every disbursement is in the register with its tenant, domain and amount, and its status follows
// the partner's answers: accepted (PENDING with the partner's id), settled (learnt from a status
// lookup), rejected (with the partner's code).
func TestTransferRegisterFollowsThePartner(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	src, dst := acct("src"), acct("dst")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)
	tenant := uniq("tenant")

	ref := uniq("reg")
	r, err := e.rpc.InitiateDisbursement(ctxT(t), &gatewayv1.InitiateDisbursementRequest{Partner: SandboxPartner, Reference: ref,
		FromAccount: src, ToAccount: dst, AmountSantim: 12_345, TenantId: tenant, Domain: "LOAN"})
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome())
	rec, err := registered(t, e, tenant, ref)
	require.NoError(t, err)
	require.Equal(t, TransferRecord{Partner: SandboxPartner, Reference: ref, TenantID: tenant, Domain: "LOAN", AmountSantim: 12_345,
		Currency: "ETB", FromAccount: src, ToAccount: dst, Status: TransferPending, PartnerTransferID: r.GetTransfer().GetId(),
		CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt}, rec)

	e.waitStatus(t, ref, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
	waitRegistered(t, e, tenant, ref, TransferSettled)

	// A rejection is recorded with the partner's code (and is final: TestRejectedTransferIsNotSentAgain).
	poor := uniq("reg")
	r, err = e.rpc.InitiateDisbursement(ctxT(t), &gatewayv1.InitiateDisbursementRequest{Partner: SandboxPartner, Reference: poor,
		FromAccount: src, ToAccount: dst, AmountSantim: 50_000_000, TenantId: tenant, Domain: "EWA"})
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_REJECTED, r.GetOutcome())
	rec, err = registered(t, e, tenant, poor)
	require.NoError(t, err)
	require.Equal(t, TransferRejected, rec.Status)
	require.Equal(t, "INSUFFICIENT_FUNDS", rec.FailureCode)

	// Bulk: every item is recorded with its batch; an item the bank failed at once is FAILED.
	bref := uniq("run")
	b, err := e.rpc.InitiateBulkDisbursement(ctxT(t), &gatewayv1.InitiateBulkDisbursementRequest{Partner: SandboxPartner, BatchReference: bref,
		FromAccount: src, TenantId: tenant, Domain: "PAYROLL", Items: []*gatewayv1.BulkItem{
			{Reference: bref + "-1", ToAccount: dst, AmountSantim: 100}, {Reference: bref + "-2", ToAccount: acct("ghost"), AmountSantim: 200}}})
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, b.GetOutcome())
	one, err := registered(t, e, tenant, bref+"-1")
	require.NoError(t, err)
	require.Equal(t, bref, one.BatchReference)
	require.Equal(t, "PAYROLL", one.Domain)
	require.NotEqual(t, TransferInitiated, one.Status)
	two, err := registered(t, e, tenant, bref+"-2")
	require.NoError(t, err)
	require.Equal(t, TransferFailed, two.Status)
	require.Equal(t, "ACCOUNT_NOT_FOUND", two.FailureCode)
	require.Equal(t, int64(200), two.AmountSantim)
}

// The register binds a reference to its first body and tenant for good: a different body, or
// another tenant, is ALREADY_EXISTS before anything reaches the partner.
func TestTransferRegisterRefusesAReusedReference(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	e := newEnv(t, envOpt{guard: countCalls(&calls)})
	src, dst, other := acct("src"), acct("dst"), acct("other")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)
	e.account(t, other, "Almaz Tesfaye", 0)
	tenantA, tenantB := uniq("tenant"), uniq("tenant")
	ref := uniq("reuse")
	base := &gatewayv1.InitiateDisbursementRequest{Partner: SandboxPartner, Reference: ref, FromAccount: src, ToAccount: dst,
		AmountSantim: 700, TenantId: tenantA, Domain: "EWA"}
	_, err := e.rpc.InitiateDisbursement(ctxT(t), base)
	require.NoError(t, err)
	sent := calls.Load()

	for name, mutate := range map[string]func(*gatewayv1.InitiateDisbursementRequest){
		"amount":       func(r *gatewayv1.InitiateDisbursementRequest) { r.AmountSantim++ },
		"to account":   func(r *gatewayv1.InitiateDisbursementRequest) { r.ToAccount = other },
		"domain":       func(r *gatewayv1.InitiateDisbursementRequest) { r.Domain = "LOAN" },
		"other tenant": func(r *gatewayv1.InitiateDisbursementRequest) { r.TenantId = tenantB },
	} {
		req := &gatewayv1.InitiateDisbursementRequest{Partner: base.Partner, Reference: base.Reference, FromAccount: base.FromAccount,
			ToAccount: base.ToAccount, AmountSantim: base.AmountSantim, TenantId: base.TenantId, Domain: base.Domain}
		mutate(req)
		_, err := e.rpc.InitiateDisbursement(ctxT(t), req)
		requireCode(t, err, codes.AlreadyExists, ReasonReferenceConflict)
		require.Equal(t, sent, calls.Load(), "%s: nothing may reach the partner", name)
	}
	// A batch item that reuses the reference is refused whole, before the partner.
	_, err = e.rpc.InitiateBulkDisbursement(ctxT(t), &gatewayv1.InitiateBulkDisbursementRequest{Partner: SandboxPartner, BatchReference: uniq("run"),
		FromAccount: src, TenantId: tenantA, Domain: "EWA", Items: []*gatewayv1.BulkItem{
			{Reference: uniq("fresh"), ToAccount: other, AmountSantim: 1}, {Reference: ref, ToAccount: dst, AmountSantim: 700}}})
	requireCode(t, err, codes.AlreadyExists, ReasonReferenceConflict)
	require.Equal(t, sent, calls.Load())

	// The row is still tenant A's, as first written; tenant B cannot see it.
	rec, err := registered(t, e, tenantA, ref)
	require.NoError(t, err)
	require.Equal(t, int64(700), rec.AmountSantim)
	_, err = registered(t, e, tenantB, ref)
	require.ErrorIs(t, err, ErrTransferNotFound)

	// The same body again is a retry: accepted as a replay.
	r, err := e.rpc.InitiateDisbursement(ctxT(t), base)
	require.NoError(t, err)
	require.True(t, r.GetReplayed())
}

// The record is written before the partner is called: a transfer whose partner is unreachable
// is in the register (INITIATED), and a transfer that cannot be recorded is never sent.
func TestTransferRegisterRecordsBeforeSending(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	var calls atomic.Int64
	gc := DefaultGuardConfig()
	gc.Attempts = 1
	countCalls(&calls)(&gc)
	a, err := NewSandboxAdapter("http://127.0.0.1:1", nil)
	require.NoError(t, err)
	g := New(NewStore(d.App), NewMetrics(nil, nil), testLog(), nil, Guard(a, gc))
	tenant, ref := uniq("tenant"), uniq("down")
	req := TransferRequest{Reference: ref, FromAccount: "acc-a", ToAccount: "acc-b", AmountSantim: 5, Currency: "ETB", TenantID: tenant, Domain: "EWA"}
	_, _, err = g.InitiateTransfer(ctxT(t), SandboxPartner, req)
	require.True(t, IsKind(err, KindUnavailable), "%v", err)
	require.Equal(t, int64(1), calls.Load())
	var rec TransferRecord
	require.NoError(t, db.InTenantTx(ctxT(t), d.App, tenant, func(tx pgx.Tx) error {
		rec, err = FindTransfer(ctxT(t), tx, SandboxPartner, ref)
		return err
	}))
	require.Equal(t, TransferInitiated, rec.Status, "not sent, still recorded: a retry with the same reference is safe")

	// A database that refuses the record: nothing is sent.
	closed, err := db.Open(ctxT(t), d.AppDSN, 1)
	require.NoError(t, err)
	closed.Close()
	g = New(NewStore(closed), NewMetrics(nil, nil), testLog(), nil, Guard(a, gc))
	req.Reference = uniq("nodb")
	_, _, err = g.InitiateTransfer(ctxT(t), SandboxPartner, req)
	require.Error(t, err)
	require.Nil(t, classify(err), "an internal fault, not a partner answer: %v", err)
	_, _, err = g.InitiateBatch(ctxT(t), SandboxPartner, BatchRequest{BatchReference: uniq("nodb"), FromAccount: "acc-a", Currency: "ETB",
		TenantID: tenant, Domain: "PAYROLL", Items: []BatchItem{{Reference: uniq("nodb"), ToAccount: "acc-b", AmountSantim: 1}}})
	require.Error(t, err)
	require.Equal(t, int64(1), calls.Load(), "nothing may be sent without its record")
}

// FindTransfer, as the bank-callback handler calls it: the platform role in a cross-tenant
// transaction finds any tenant's transfer; the same role without the setting, and the runtime
// role with it, find only their own tenant's.
func TestFindTransferAcrossTenants(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	src, dst := acct("src"), acct("dst")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)
	tenantA, tenantB := uniq("tenant"), uniq("tenant")
	ref := uniq("cb")
	r, err := e.rpc.InitiateDisbursement(ctxT(t), &gatewayv1.InitiateDisbursementRequest{Partner: SandboxPartner, Reference: ref,
		FromAccount: src, ToAccount: dst, AmountSantim: 99_999, TenantId: tenantA, Domain: "EQUB"})
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome())

	platform := e.db.Platform(t)
	ctx := tenancy.WithActor(ctxT(t), tenancy.System("bank-callback"))
	var rec TransferRecord
	require.NoError(t, crosstenant.Tx(ctx, platform, "match a bank callback to its transfer", func(tx pgx.Tx) error {
		rec, err = FindTransfer(ctx, tx, SandboxPartner, ref)
		return err
	}))
	require.Equal(t, tenantA, rec.TenantID)
	require.Equal(t, "EQUB", rec.Domain)
	require.Equal(t, int64(99_999), rec.AmountSantim)
	require.Equal(t, TransferPending, rec.Status)
	require.Equal(t, r.GetTransfer().GetId(), rec.PartnerTransferID)

	// No transfer with the reference: ErrTransferNotFound, also across tenants.
	err = crosstenant.Tx(ctx, platform, "match a bank callback to its transfer", func(tx pgx.Tx) error {
		_, err := FindTransfer(ctx, tx, SandboxPartner, uniq("none"))
		return err
	})
	require.ErrorIs(t, err, ErrTransferNotFound)
	require.Equal(t, ReasonTransferNotFound, ReasonOf(err))

	// The platform role without the cross-tenant setting sees nothing of tenant A.
	err = pgx.BeginFunc(ctx, platform, func(tx pgx.Tx) error {
		_, err := FindTransfer(ctx, tx, SandboxPartner, ref)
		return err
	})
	require.ErrorIs(t, err, ErrTransferNotFound)

	// The runtime role setting the cross-tenant switch, in tenant B's transaction or none, sees
	// nothing of tenant A either: the platform policy is not its.
	for _, tenant := range []string{tenantB, ""} {
		err = pgx.BeginFunc(ctx, e.db.App, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT set_config($1, 'on', true), set_config($2, $3, true)`, db.CrossTenantSetting, db.TenantSetting, tenant); err != nil {
				return err
			}
			_, err := FindTransfer(ctx, tx, SandboxPartner, ref)
			return err
		})
		require.ErrorIs(t, err, ErrTransferNotFound, "tenant %q", tenant)
	}

	// The platform role reads; it cannot record, move or delete a transfer.
	err = crosstenant.Tx(ctx, platform, "try to write", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE gateway.transfers SET status = 'FAILED' WHERE reference = $1`, ref)
		return err
	})
	require.True(t, db.IsCode(err, pgerrcode.InsufficientPrivilege), "%v", err)
}

// The database keeps the register honest whoever writes: a body never changes, a status only
// moves forward, and the runtime role cannot delete.
// A callback's settlement is recorded for the transfer's tenant, once, only forward; a status
// that is not a settlement is refused, and another tenant's transfer is out of reach.
func TestRecordSettlementFromACallback(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	s := NewStore(d.App)
	tenant, ref := uniq("tenant"), uniq("cb")
	require.NoError(t, s.RecordTransfers(ctxT(t), tenant, []TransferRecord{{Partner: SandboxPartner, Reference: ref, TenantID: tenant,
		Domain: "EWA", AmountSantim: 10, Currency: "ETB", FromAccount: "a", ToAccount: "b"}}))
	status := func() TransferRecord {
		var r TransferRecord
		require.NoError(t, db.InTenantTx(ctxT(t), d.App, tenant, func(tx pgx.Tx) error {
			var err error
			r, err = FindTransfer(ctxT(t), tx, SandboxPartner, ref)
			return err
		}))
		return r
	}
	require.Error(t, s.RecordSettlement(ctxT(t), tenant, SandboxPartner, ref, "PENDING", "", ""), "not a settlement")
	require.NoError(t, s.RecordSettlement(ctxT(t), uniq("other"), SandboxPartner, ref, "FAILED", "", "X"), "another tenant's: no row it may see")
	require.Equal(t, TransferInitiated, status().Status)
	require.NoError(t, s.RecordSettlement(ctxT(t), tenant, SandboxPartner, ref, "SETTLED", "p-9", ""))
	require.NoError(t, s.RecordSettlement(ctxT(t), tenant, SandboxPartner, ref, "SETTLED", "p-9", ""), "a repeat")
	require.NoError(t, s.RecordSettlement(ctxT(t), tenant, SandboxPartner, ref, "FAILED", "p-9", "LATE"), "a contradiction after the end")
	got := status()
	require.Equal(t, TransferSettled, got.Status)
	require.Equal(t, "p-9", got.PartnerTransferID)
	require.Empty(t, got.FailureCode)
}

func TestTransferRegisterInvariantsInTheDatabase(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	s := NewStore(d.App)
	tenant, ref := uniq("tenant"), uniq("inv")
	rec := TransferRecord{Partner: SandboxPartner, Reference: ref, TenantID: tenant, Domain: "EWA", AmountSantim: 10, Currency: "ETB",
		FromAccount: "a", ToAccount: "b"}
	require.NoError(t, s.RecordTransfers(ctxT(t), tenant, []TransferRecord{rec}))
	require.NoError(t, s.RecordTransfers(ctxT(t), tenant, []TransferRecord{rec}), "recording the same body again is a no-op")
	n, err := s.UpdateTransfers(ctxT(t), tenant, []TransferUpdate{{Partner: SandboxPartner, Reference: ref, Status: TransferSettled, PartnerTransferID: "p-1"}})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	// An older answer arriving late changes nothing.
	n, err = s.UpdateTransfers(ctxT(t), tenant, []TransferUpdate{{Partner: SandboxPartner, Reference: ref, Status: TransferPending}})
	require.NoError(t, err)
	require.Zero(t, n)

	exec := func(sql string) error {
		return db.InTenantTx(ctxT(t), d.App, tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctxT(t), sql, ref)
			return err
		})
	}
	require.True(t, db.IsCode(exec(`UPDATE gateway.transfers SET amount_santim = 11 WHERE reference = $1`), pgerrcode.CheckViolation))
	require.True(t, db.IsCode(exec(`UPDATE gateway.transfers SET tenant_id = 'x' WHERE reference = $1`), pgerrcode.CheckViolation))
	require.True(t, db.IsCode(exec(`UPDATE gateway.transfers SET status = 'PENDING' WHERE reference = $1`), pgerrcode.CheckViolation))
	require.True(t, db.IsCode(exec(`DELETE FROM gateway.transfers WHERE reference = $1`), pgerrcode.InsufficientPrivilege))
	for _, bad := range []string{
		`INSERT INTO gateway.transfers (partner, reference, tenant_id, domain, amount_santim, currency, from_account, to_account)
		 VALUES ('sandbox', $1 || '-0', current_setting('app.tenant_id'), 'EWA', 0, 'ETB', 'a', 'b')`,
		`INSERT INTO gateway.transfers (partner, reference, tenant_id, domain, amount_santim, currency, from_account, to_account)
		 VALUES ('sandbox', $1 || '-1', current_setting('app.tenant_id'), 'EWA', 1, 'ETB', 'a', 'a')`,
		`INSERT INTO gateway.transfers (partner, reference, tenant_id, domain, amount_santim, currency, from_account, to_account)
		 VALUES ('sandbox', $1 || '-2', current_setting('app.tenant_id'), 'EWA', 1, 'etb', 'a', 'b')`,
		`INSERT INTO gateway.transfers (partner, reference, tenant_id, domain, amount_santim, currency, from_account, to_account)
		 VALUES ('sandbox', $1 || '-3', 'another-tenant', 'EWA', 1, 'ETB', 'a', 'b')`,
	} {
		err := exec(bad)
		require.True(t, db.IsCode(err, pgerrcode.CheckViolation) || db.IsCode(err, pgerrcode.InsufficientPrivilege), "%v", err)
	}
	got, err := func() (TransferRecord, error) {
		var r TransferRecord
		err := db.InTenantTx(ctxT(t), d.App, tenant, func(tx pgx.Tx) error {
			var err error
			r, err = FindTransfer(ctxT(t), tx, SandboxPartner, ref)
			return err
		})
		return r, err
	}()
	require.NoError(t, err)
	require.Equal(t, TransferSettled, got.Status)
	require.Equal(t, "p-1", got.PartnerTransferID)
	require.Equal(t, int64(10), got.AmountSantim)
}

// Unknown outcomes stay INITIATED until a status lookup learns the partner's answer.
func TestTransferRegisterResolvesUnknownByLookup(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{guard: func(g *GuardConfig) {
		g.TransferTimeout = 400 * time.Millisecond
		g.BreakerFailures = 1000
	}})
	src, dst := acct("src"), acct("ett")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)
	e.fault(t, dst, map[string]any{"executeThenTimeoutMs": 3000})
	tenant, ref := uniq("tenant"), uniq("ett")
	r, err := e.rpc.InitiateDisbursement(ctxT(t), &gatewayv1.InitiateDisbursementRequest{Partner: SandboxPartner, Reference: ref,
		FromAccount: src, ToAccount: dst, AmountSantim: 321, TenantId: tenant, Domain: "EWA"})
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_UNKNOWN, r.GetOutcome())
	rec, err := registered(t, e, tenant, ref)
	require.NoError(t, err)
	require.Equal(t, TransferInitiated, rec.Status, "a timeout is never recorded as an answer")
	require.Empty(t, rec.PartnerTransferID)
	before := testutil.ToFloat64(e.metrics.Requests.WithLabelValues("GetTransferStatus", "ok"))
	st := e.waitStatus(t, ref, gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED)
	require.Greater(t, testutil.ToFloat64(e.metrics.Requests.WithLabelValues("GetTransferStatus", "ok")), before)
	rec = waitRegistered(t, e, tenant, ref, TransferSettled)
	require.Equal(t, st.GetId(), rec.PartnerTransferID)
}

// One batch status lookup answers for every item of a bulk disbursement, in the order sent, and
// the register learns each item's status from it; a batch the partner never received is
// NOT_FOUND (so sending it again is safe).
func TestGetBatchStatusAnswersForEveryItem(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	src, dst := acct("src"), acct("dst")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)
	tenant := uniq("tenant")
	bref := uniq("run")
	items := []*gatewayv1.BulkItem{{Reference: bref + "-1", ToAccount: dst, AmountSantim: 100},
		{Reference: bref + "-2", ToAccount: acct("ghost"), AmountSantim: 200}, {Reference: bref + "-3", ToAccount: dst, AmountSantim: 300}}
	b, err := e.rpc.InitiateBulkDisbursement(ctxT(t), &gatewayv1.InitiateBulkDisbursementRequest{Partner: SandboxPartner, BatchReference: bref,
		FromAccount: src, TenantId: tenant, Domain: "PAYROLL", Items: items})
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, b.GetOutcome())

	var st *gatewayv1.GetBatchStatusResponse
	require.Eventually(t, func() bool {
		st, err = e.rpc.GetBatchStatus(ctxT(t), &gatewayv1.GetBatchStatusRequest{Partner: SandboxPartner, BatchReference: bref})
		require.NoError(t, err)
		return st.GetItems()[0].GetStatus() == gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED &&
			st.GetItems()[2].GetStatus() == gatewayv1.TransferStatus_TRANSFER_STATUS_SETTLED
	}, 20*time.Second, 20*time.Millisecond)
	require.Equal(t, b.GetBatchId(), st.GetBatchId())
	require.Equal(t, bref, st.GetBatchReference())
	require.Equal(t, int64(3), st.GetItemCount())
	require.Equal(t, int64(600), st.GetTotalSantim())
	require.Len(t, st.GetItems(), 3)
	for i, it := range st.GetItems() {
		require.Equal(t, items[i].GetReference(), it.GetReference(), "items in the order sent")
	}
	require.Equal(t, gatewayv1.TransferStatus_TRANSFER_STATUS_FAILED, st.GetItems()[1].GetStatus())
	require.Equal(t, "ACCOUNT_NOT_FOUND", st.GetItems()[1].GetFailureCode())
	// The register learnt the settlements from the lookup.
	for _, ref := range []string{bref + "-1", bref + "-3"} {
		rec, err := registered(t, e, tenant, ref)
		require.NoError(t, err)
		require.Equal(t, TransferSettled, rec.Status)
	}

	_, err = e.rpc.GetBatchStatus(ctxT(t), &gatewayv1.GetBatchStatusRequest{Partner: SandboxPartner, BatchReference: uniq("never-sent")})
	requireCode(t, err, codes.NotFound, ReasonTransferNotFound)
	_, err = e.rpc.GetBatchStatus(ctxT(t), &gatewayv1.GetBatchStatusRequest{Partner: SandboxPartner, BatchReference: "bad ref\n"})
	requireCode(t, err, codes.InvalidArgument, ReasonInvalidArgument)
}

// Answers about one transfer race (a saga's lookup and the bank's callback, a callback and its
// retry): each applies under the row's lock against the status the winner left, so exactly one
// final answer lands and nothing moves backwards, one transfer at a time (UpdateTransfers' single
// row path) as in a batch.
func TestTransferRegisterRacingAnswers(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	s := NewStore(d.App)
	tenant := uniq("tenant")
	for round := range 20 {
		ref := fmt.Sprintf("%s-%d", uniq("race"), round)
		require.NoError(t, s.RecordTransfers(ctxT(t), tenant, []TransferRecord{{Partner: SandboxPartner, Reference: ref, TenantID: tenant,
			Domain: "EWA", AmountSantim: 10, Currency: "ETB", FromAccount: "a", ToAccount: "b"}}))
		answers := []TransferUpdate{
			{Partner: SandboxPartner, Reference: ref, Status: TransferPending, PartnerTransferID: "p-1"},
			{Partner: SandboxPartner, Reference: ref, Status: TransferSettled, PartnerTransferID: "p-1"},
			{Partner: SandboxPartner, Reference: ref, Status: TransferFailed, PartnerTransferID: "p-1", FailureCode: "LATE"},
			{Partner: SandboxPartner, Reference: ref, Status: TransferSettled, PartnerTransferID: "p-1"},
		}
		var wg sync.WaitGroup
		changed := make([]int, len(answers))
		errs := make([]error, len(answers))
		for i, a := range answers {
			wg.Go(func() { changed[i], errs[i] = s.UpdateTransfers(ctxT(t), tenant, []TransferUpdate{a}) })
		}
		wg.Wait()
		finals := 0
		for i, err := range errs {
			require.NoError(t, err)
			if answers[i].Status != TransferPending {
				finals += changed[i]
			}
		}
		require.Equal(t, 1, finals, "round %d: exactly one final answer applies", round)
		var got TransferRecord
		require.NoError(t, db.InTenantTx(ctxT(t), d.App, tenant, func(tx pgx.Tx) error {
			var err error
			got, err = FindTransfer(ctxT(t), tx, SandboxPartner, ref)
			return err
		}))
		require.Contains(t, []TransferStatus{TransferSettled, TransferFailed}, got.Status, "round %d", round)
		require.Equal(t, "p-1", got.PartnerTransferID)
		if got.Status == TransferFailed {
			require.Equal(t, "LATE", got.FailureCode)
		} else {
			require.Empty(t, got.FailureCode)
		}
	}
}

// A batch reference sent again with other items is the partner's conflict: the items the first
// batch paid keep what the partner said of them, and the new item stays INITIATED, not REJECTED.
func TestBatchReferenceConflictRejectsNoItem(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	src, dst := acct("src"), acct("dst")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)
	tenant, batch := uniq("tenant"), uniq("run")
	x, y := uniq("item"), uniq("item")
	req := &gatewayv1.InitiateBulkDisbursementRequest{Partner: SandboxPartner, BatchReference: batch, FromAccount: src,
		TenantId: tenant, Domain: "PAYROLL", Items: []*gatewayv1.BulkItem{{Reference: x, ToAccount: dst, AmountSantim: 100},
			{Reference: y, ToAccount: dst, AmountSantim: 200}}}
	res, err := e.rpc.InitiateBulkDisbursement(ctxT(t), req)
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, res.GetOutcome())
	before := map[string]TransferStatus{}
	for _, ref := range []string{x, y} {
		rec, err := registered(t, e, tenant, ref)
		require.NoError(t, err)
		require.NotEqual(t, TransferRejected, rec.Status)
		before[ref] = rec.Status
	}

	z := uniq("item")
	req.Items = append(req.Items, &gatewayv1.BulkItem{Reference: z, ToAccount: dst, AmountSantim: 300})
	res, err = e.rpc.InitiateBulkDisbursement(ctxT(t), req)
	if err == nil {
		require.NotEqual(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, res.GetOutcome(), "the same batch reference with other items")
	}
	for _, ref := range []string{x, y} {
		rec, err := registered(t, e, tenant, ref)
		require.NoError(t, err)
		require.Equal(t, before[ref], rec.Status, "what the first batch did with %s", ref)
	}
	rec, err := registered(t, e, tenant, z)
	require.NoError(t, err)
	require.Equal(t, TransferInitiated, rec.Status, "the partner took nothing for it, and presumed nothing")
}

// bankTransfersOf counts the partner's transfers under the given references (the sandbox's
// operator view: what it booked, whatever the gateway was told).
func bankTransfersOf(t *testing.T, e *env, refs ...string) int {
	t.Helper()
	want := map[string]bool{}
	for _, r := range refs {
		want[r] = true
	}
	n := 0
	for _, tr := range e.bankTransfers(t) {
		if want[tr.Reference] {
			n++
		}
	}
	return n
}

// fund credits a sandbox account from outside the bank.
func (e *env) fund(t *testing.T, account string, amount int64) {
	t.Helper()
	e.bankCall(t, http.MethodPost, "/api/v1/sandbox/accounts/"+account+"/fund", map[string]any{"amountSantim": amount}, http.StatusOK, nil)
}

// A transfer the partner rejected is answered with that rejection when it comes again, and never
// reaches the partner again: by then the cause may have gone (the fault lifted, the source
// funded) and the partner, which wrote nothing when it refused, would pay a transfer its sender
// was told moved nothing (a saga that voided its posting and may pay it under a new key).
func TestRejectedTransferIsNotSentAgain(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	e := newEnv(t, envOpt{guard: countCalls(&calls)})
	src, blocked, dst := acct("src"), acct("blocked"), acct("dst")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, blocked, "Blocked Account", 0)
	e.account(t, dst, "Abebe Kebede", 0)
	tenant := uniq("tenant")

	for _, c := range []struct {
		name, to, code string
		amount         int64
		before         func(t *testing.T) // the cause of the rejection
		after          func(t *testing.T) // the cause gone
	}{
		{name: "injected rejection lifted", to: blocked, code: "ACCOUNT_BLOCKED", amount: 100,
			before: func(t *testing.T) { e.fault(t, blocked, map[string]any{"rejectCode": "ACCOUNT_BLOCKED"}) },
			after:  func(t *testing.T) { e.clearFault(t, blocked) }},
		{name: "source funded", to: dst, code: "INSUFFICIENT_FUNDS", amount: 5_000_000,
			before: func(t *testing.T) {},
			after:  func(t *testing.T) { e.fund(t, src, 10_000_000) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.before(t)
			ref := uniq("rej")
			req := &gatewayv1.InitiateDisbursementRequest{Partner: SandboxPartner, Reference: ref, FromAccount: src, ToAccount: c.to,
				AmountSantim: c.amount, TenantId: tenant, Domain: "EWA"}
			first, err := e.rpc.InitiateDisbursement(ctxT(t), req)
			require.NoError(t, err)
			require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_REJECTED, first.GetOutcome())
			require.Equal(t, c.code, first.GetRejectCode())
			rec, err := registered(t, e, tenant, ref)
			require.NoError(t, err)
			require.Equal(t, TransferRejected, rec.Status)

			c.after(t)
			// The cause is gone: the same transfer under a new reference is paid now.
			fresh, err := disburse(e, uniq("fresh"), src, c.to, c.amount)
			require.NoError(t, err)
			require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, fresh.GetOutcome())

			sent := calls.Load()
			again, err := e.rpc.InitiateDisbursement(ctxT(t), req)
			require.NoError(t, err)
			require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_REJECTED, again.GetOutcome(), "the recorded rejection")
			require.Equal(t, c.code, again.GetRejectCode())
			require.Nil(t, again.GetTransfer())
			require.Equal(t, sent, calls.Load(), "nothing may reach the partner")
			require.Zero(t, bankTransfersOf(t, e, ref), "the partner booked the rejected transfer")
			rec, err = registered(t, e, tenant, ref)
			require.NoError(t, err)
			require.Equal(t, TransferRejected, rec.Status)
			require.Equal(t, c.code, rec.FailureCode)

			// The reference with another body is still a conflict, and nothing is sent either.
			other := &gatewayv1.InitiateDisbursementRequest{Partner: SandboxPartner, Reference: ref, FromAccount: src, ToAccount: c.to,
				AmountSantim: c.amount + 1, TenantId: tenant, Domain: "EWA"}
			_, err = e.rpc.InitiateDisbursement(ctxT(t), other)
			requireCode(t, err, codes.AlreadyExists, ReasonReferenceConflict)
			require.Equal(t, sent, calls.Load())
			require.Zero(t, bankTransfersOf(t, e, ref))
		})
	}
}

// A batch the partner refused whole is answered with that rejection when it comes again, and
// never reaches the partner again; the refused batch reference with other items, or a refused
// item in another batch, is a conflict, refused before anything is written or sent.
func TestRejectedBatchIsNotSentAgain(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	e := newEnv(t, envOpt{guard: countCalls(&calls)})
	src, dst := acct("src"), acct("dst")
	e.account(t, src, "Employer PLC", 100)
	e.account(t, dst, "Abebe Kebede", 0)
	tenant, batch := uniq("tenant"), uniq("run")
	x, y := uniq("item"), uniq("item")
	items := func(refs ...string) []*gatewayv1.BulkItem {
		out := make([]*gatewayv1.BulkItem, len(refs))
		for i, r := range refs {
			out[i] = &gatewayv1.BulkItem{Reference: r, ToAccount: dst, AmountSantim: 200}
		}
		return out
	}
	req := func(batch string, refs ...string) *gatewayv1.InitiateBulkDisbursementRequest {
		return &gatewayv1.InitiateBulkDisbursementRequest{Partner: SandboxPartner, BatchReference: batch, FromAccount: src,
			TenantId: tenant, Domain: "PAYROLL", Items: items(refs...)}
	}

	first, err := e.rpc.InitiateBulkDisbursement(ctxT(t), req(batch, x, y))
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_REJECTED, first.GetOutcome())
	require.Equal(t, "INSUFFICIENT_FUNDS", first.GetRejectCode())
	for _, ref := range []string{x, y} {
		rec, err := registered(t, e, tenant, ref)
		require.NoError(t, err)
		require.Equal(t, TransferRejected, rec.Status)
	}

	// The cause is gone: the same batch under new references is paid now.
	e.fund(t, src, 1_000_000)
	fresh, err := e.rpc.InitiateBulkDisbursement(ctxT(t), req(uniq("run"), uniq("item"), uniq("item")))
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, fresh.GetOutcome())

	sent := calls.Load()
	again, err := e.rpc.InitiateBulkDisbursement(ctxT(t), req(batch, x, y))
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_REJECTED, again.GetOutcome(), "the recorded rejection")
	require.Equal(t, "INSUFFICIENT_FUNDS", again.GetRejectCode())
	require.Empty(t, again.GetItems())
	require.Equal(t, sent, calls.Load(), "nothing may reach the partner")
	require.Zero(t, bankTransfersOf(t, e, x, y), "the partner booked items of the rejected batch")

	// The refused batch reference with other items (one added, one left out), or a refused item
	// under another batch: a conflict, nothing written, nothing sent.
	z := uniq("item")
	for name, r := range map[string]*gatewayv1.InitiateBulkDisbursementRequest{
		"item added":    req(batch, x, y, z),
		"item left out": req(batch, x),
		"other batch":   req(uniq("run"), x),
	} {
		_, err := e.rpc.InitiateBulkDisbursement(ctxT(t), r)
		requireCode(t, err, codes.AlreadyExists, ReasonReferenceConflict)
		require.Equal(t, sent, calls.Load(), "%s: nothing may reach the partner", name)
	}
	_, err = registered(t, e, tenant, z)
	require.ErrorIs(t, err, ErrTransferNotFound, "the added item is not written")
	require.Zero(t, bankTransfersOf(t, e, x, y, z))
	for _, ref := range []string{x, y} {
		rec, err := registered(t, e, tenant, ref)
		require.NoError(t, err)
		require.Equal(t, TransferRejected, rec.Status)
		require.Equal(t, "INSUFFICIENT_FUNDS", rec.FailureCode)
	}
}

// A transfer the partner holds (PENDING, SETTLED, or FAILED at settlement) sent again is the
// partner's replay: the same transfer, nothing booked twice.
func TestHeldTransferSentAgainIsReplayed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	src, dst, failing := acct("src"), acct("dst"), acct("failing")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)
	e.account(t, failing, "Failing Account", 0)
	e.fault(t, failing, map[string]any{"settleFailureCode": "ACCOUNT_CLOSED"})
	tenant := uniq("tenant")
	for _, c := range []struct {
		to   string
		want TransferStatus
	}{{dst, TransferSettled}, {failing, TransferFailed}} {
		ref := uniq("held")
		req := &gatewayv1.InitiateDisbursementRequest{Partner: SandboxPartner, Reference: ref, FromAccount: src, ToAccount: c.to,
			AmountSantim: 100, TenantId: tenant, Domain: "EWA"}
		first, err := e.rpc.InitiateDisbursement(ctxT(t), req)
		require.NoError(t, err)
		require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, first.GetOutcome())
		e.waitStatus(t, ref, transferStatusPB(c.want))
		waitRegistered(t, e, tenant, ref, c.want)
		again, err := e.rpc.InitiateDisbursement(ctxT(t), req)
		require.NoError(t, err)
		require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, again.GetOutcome())
		require.True(t, again.GetReplayed())
		require.Equal(t, first.GetTransfer().GetId(), again.GetTransfer().GetId())
		require.Equal(t, transferStatusPB(c.want), again.GetTransfer().GetStatus())
		require.Equal(t, 1, bankTransfersOf(t, e, ref))
	}
}

// TestSandboxAdapterFollowsNoRedirect: a 3xx from the bank is an answer the contract does not
// describe (outcome unknown), never a direction to follow: a 307/308 would re-send the transfer
// to whatever host it names, and a 302 would turn it into a GET whose 2xx reads as an answer.
func TestSandboxAdapterFollowsNoRedirect(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = fmt.Fprint(w, `{"id":"00000000-0000-4000-8000-000000000001","reference":"r-1","fromAccount":"acc-a","toAccount":"acc-b",`+
			`"amountSantim":5,"currency":"ETB","tenantId":"t","domain":"EWA","status":"PENDING","accountNumber":"acc-b","holderName":"B"}`)
	}))
	t.Cleanup(target.Close)
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		bank := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+r.URL.Path, code)
		}))
		t.Cleanup(bank.Close)
		a, err := NewSandboxAdapter(bank.URL, nil)
		require.NoError(t, err)
		_, _, err = a.InitiateTransfer(ctxT(t), TransferRequest{Reference: "r-1", FromAccount: "acc-a", ToAccount: "acc-b",
			AmountSantim: 5, Currency: "ETB", TenantID: "t", Domain: "EWA"})
		require.True(t, IsKind(err, KindUnknown), "%d: %v", code, err)
		var pe *PartnerError
		require.ErrorAs(t, err, &pe)
		require.Equal(t, code, pe.Status)
		_, err = a.LookupAccount(ctxT(t), "acc-b")
		require.Error(t, err, "%d", code)
		// A caller's own client is not changed, and the adapter still follows nothing.
		own := &http.Client{}
		a, err = NewSandboxAdapter(bank.URL, own)
		require.NoError(t, err)
		_, _, err = a.InitiateTransfer(ctxT(t), TransferRequest{Reference: "r-1", FromAccount: "acc-a", ToAccount: "acc-b",
			AmountSantim: 5, Currency: "ETB", TenantID: "t", Domain: "EWA"})
		require.Error(t, err, "%d", code)
		require.Nil(t, own.CheckRedirect)
	}
	require.Zero(t, hits.Load(), "no redirect was followed")
}
