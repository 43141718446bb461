package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/wallet"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/chart"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// walletWorld is a business with one employee, the real ledger service over gRPC and the gateway
// on the bank sandbox behind the API (no Temporal: the money routes' fuzz targets stop before it).
type walletWorld struct {
	*kycWorld
	ledger *ledger.Client
}

func newWalletWorld(t testing.TB) *walletWorld {
	d := testkit.NewDB(t)
	lrpc, _ := ledgertest.ServeAddr(t, d.App, nil)
	lc := ledger.NewClient(lrpc, ledger.ClientOptions{})
	bank := gatewaytest.Start(t, d.App, gatewaytest.Options{})
	u := newUploadsFixtureOn(t, d, func(deps *Deps) {
		deps.Ledger, deps.Gateway = lc, gateway.NewClient(bank.Gateway, gateway.ClientOptions{})
	})
	return &walletWorld{kycWorld: newKycWorldOn(t, u), ledger: lc}
}

// move posts amount between the employee's wallet and a partner-bank mirror: in credits the
// wallet, out debits it; pending leaves it a hold.
func (w *walletWorld) move(t testing.TB, in bool, amount int64, pending bool) {
	t.Helper()
	walletDir, bankDir := ledgerv1.Direction_DIRECTION_CREDIT, ledgerv1.Direction_DIRECTION_DEBIT
	if !in {
		walletDir, bankDir = bankDir, walletDir
	}
	status := ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED
	if pending {
		status = ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING
	}
	_, err := w.ledger.PostCreatingAccounts(context.Background(), &ledgerv1.PostTransactionRequest{
		TenantId: w.tenant, IdempotencyKey: testkit.Unique("wallet-test"), Status: status,
		Entries: []*ledgerv1.EntryInput{
			{AccountName: wallet.Account(w.employee), Direction: walletDir, AmountSantim: amount},
			{AccountName: chart.PartnerBankAccount("sandbox", "WALLETPOOL1"), Direction: bankDir, AmountSantim: amount},
		}})
	require.NoError(t, err)
}

// TestWalletReadsFromLedger: the balance and the transactions are the ledger's, read through the
// API (validated against openapi.yaml): a wallet nothing moved is zero; posted credits and
// debits make the balance, a hold makes it less available; the list filters by direction and
// time and pages by cursor; another organization's employee is 404; the employee reads their
// own wallet at /api/me/wallet/...
func TestWalletReadsFromLedger(t *testing.T) {
	t.Parallel()
	w := newWalletWorld(t)
	bal := func(c *apiClient, path string) walletBalanceJSON {
		rec := c.call(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[walletBalanceJSON](t, rec)
	}
	list := func(c *apiClient, path string) walletTransactionListJSON {
		rec := c.call(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[walletTransactionListJSON](t, rec)
	}
	q := "?employeeId=" + w.employee

	zero := bal(w.owner, "/api/wallet/balance"+q)
	require.Equal(t, [4]int64{}, [4]int64{zero.PostedSantim, zero.AvailableSantim, zero.PendingInSantim, zero.PendingOutSantim})
	require.Equal(t, "payable-to-employee:"+w.employee, zero.Account)
	require.Empty(t, list(w.owner, "/api/wallet/transactions"+q).Items)

	w.move(t, true, 5_000, false)
	w.move(t, true, 2_000, false)
	w.move(t, false, 1_500, false)
	w.move(t, false, 700, true) // a transfer out in flight
	b := bal(w.owner, "/api/wallet/balance"+q)
	require.Equal(t, int64(5_500), b.PostedSantim)
	require.Equal(t, int64(4_800), b.AvailableSantim)
	require.Equal(t, int64(700), b.PendingOutSantim)
	require.Equal(t, int64(0), b.PendingInSantim)

	all := list(w.owner, "/api/wallet/transactions"+q)
	require.Len(t, all.Items, 3, "the hold is not a transaction")
	require.Nil(t, all.NextCursor)
	var got []string
	for _, it := range all.Items {
		got = append(got, it.Direction+" "+strconv.FormatInt(it.AmountSantim, 10))
	}
	require.Equal(t, []string{"in 5000", "in 2000", "out 1500"}, got)
	require.Len(t, list(w.owner, "/api/wallet/transactions"+q+"&direction=in").Items, 2)
	out := list(w.owner, "/api/wallet/transactions"+q+"&direction=out")
	require.Len(t, out.Items, 1)
	require.Equal(t, int64(1_500), out.Items[0].AmountSantim)
	require.Empty(t, list(w.owner, "/api/wallet/transactions"+q+"&from=2999-01-01T00:00:00Z").Items)
	require.Len(t, list(w.owner, "/api/wallet/transactions"+q+"&from=2001-01-01T00:00:00Z&to=2999-01-01T00:00:00Z").Items, 3)

	// Pages of one follow each other by cursor, with the direction filter skipping entries.
	var seen []int64
	cursor := ""
	for i := 0; i < 5; i++ {
		p := list(w.owner, "/api/wallet/transactions"+q+"&direction=in&limit=1"+cursor)
		for _, it := range p.Items {
			seen = append(seen, it.AmountSantim)
		}
		if p.NextCursor == nil {
			break
		}
		cursor = "&cursor=" + *p.NextCursor
	}
	require.Equal(t, []int64{5_000, 2_000}, seen)

	// Hostile and foreign.
	for _, bad := range []string{"&direction=sideways", "&cursor=abc", "&cursor=0", "&cursor=01", "&from=yesterday",
		"&from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", "&limit=0", "&limit=101", "&direction=in&direction=out"} {
		requireStatus(t, w.owner.hostile(http.MethodGet, "/api/wallet/transactions"+q+bad, nil), http.StatusBadRequest, "INVALID_REQUEST")
	}
	requireStatus(t, w.owner.hostile(http.MethodGet, "/api/wallet/balance", nil), http.StatusBadRequest, "INVALID_REQUEST")
	requireStatus(t, w.other.call(http.MethodGet, "/api/wallet/balance"+q, nil), http.StatusNotFound, "EMPLOYEE_NOT_FOUND")
	requireStatus(t, w.other.call(http.MethodGet, "/api/wallet/transactions"+q, nil), http.StatusNotFound, "EMPLOYEE_NOT_FOUND")
	requireStatus(t, w.owner.call(http.MethodGet, "/api/me/wallet/balance", nil), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")

	// The employee's own wallet.
	me := w.linkEmployeeUser(t, "abebe@wallet.test")
	require.Equal(t, b, withAsOf(bal(me, "/api/me/wallet/balance"), b))
	require.Len(t, list(me, "/api/me/wallet/transactions?direction=in").Items, 2)
}

func withAsOf(b, like walletBalanceJSON) walletBalanceJSON { b.AsOf = like.AsOf; return b }

// linkEmployeeUser creates a user, links it to the world's employee and signs it in.
func (w *kycWorld) linkEmployeeUser(t testing.TB, email string) *apiClient {
	t.Helper()
	ctx := context.Background()
	hash, err := identity.HashPassword(testPassword)
	require.NoError(t, err)
	u, err := identity.CreateUser(ctx, w.d.App, identity.NewUser{Email: email, Name: "Abebe Kebede", PasswordHash: hash})
	require.NoError(t, err)
	tctx := tenancy.WithTenant(ctx, w.tenant)
	require.NoError(t, tenancy.InTx(tctx, w.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(tctx, `UPDATE app.employees SET user_id = $1 WHERE id = $2`, u.ID, w.employee)
		return err
	}))
	return w.signIn(email)
}

// FuzzWalletRoutes: whatever reaches the wallet routes (any query, from the linked employee, the
// business owner, another business's owner or nobody) answers 4xx or success, never 5xx.
func FuzzWalletRoutes(f *testing.F) {
	w := newWalletWorld(f)
	w.move(f, true, 1_000, false)
	me := w.linkEmployeeUser(f, "fuzz-wallet-me@example.com")
	routes := w.srv.walletRoutes()
	f.Add(uint8(0), uint8(1), "employeeId="+w.employee, "")
	f.Add(uint8(1), uint8(1), "employeeId="+w.employee+"&direction=in&limit=1&cursor=1", "")
	f.Add(uint8(1), uint8(1), "employeeId="+w.employee+"&from=2026-01-01T00:00:00Z&to=2025-01-01T00:00:00Z", "")
	f.Add(uint8(1), uint8(2), "employeeId="+w.employee+"&cursor=9223372036854775807", "")
	f.Add(uint8(1), uint8(1), "employeeId=%ff%00&from=%00", "")
	f.Add(uint8(3), uint8(0), "cursor=99999999999999999999&limit=100&direction=out", "")
	f.Add(uint8(2), uint8(0), "", `{"x":1}`)
	f.Add(uint8(2), uint8(3), "", "")
	f.Fuzz(func(t *testing.T, route, who uint8, query, body string) {
		r := routes[int(route)%len(routes)]
		req := httptest.NewRequest(r.Method, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = r.Path, "", query
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.RemoteAddr = "192.0.2.83:40000"
		switch who % 4 {
		case 0:
			req.AddCookie(me.cookie)
		case 1:
			req.AddCookie(w.owner.cookie)
		case 2:
			req.AddCookie(w.other.cookie)
		}
		rec := httptest.NewRecorder()
		w.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q %q", r.Method, r.Path, query, body))
	})
}
