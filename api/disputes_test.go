package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/chart"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// disputeWorld is an organization with two employees linked to login users, the real ledger over
// gRPC on the same database, and a second organization.
type disputeWorld struct {
	*uploadsFixture
	ledger              *ledger.Client
	ledgerRPC           ledgerv1.LedgerServiceClient // the ledger's own gRPC client, under ledger
	owner, other        *apiClient
	me, colleague       *apiClient
	tenant, otherTenant string
	emp, colleagueEmp   string
}

// disputeAdjustmentKey is the ledger's adjustment key in the dispute tests (and the API's).
var disputeAdjustmentKey = []byte("dispute-adjustment-key-of-32-bytes-or-more")

func newDisputeWorld(t testing.TB) *disputeWorld {
	t.Helper()
	d := testkit.NewDB(t)
	lrpc, _ := ledgertest.ServeAddr(t, d.App, disputeAdjustmentKey)
	lc := ledger.NewClient(lrpc, ledger.ClientOptions{})
	u := newUploadsFixtureOn(t, d, func(deps *Deps) { deps.Ledger = lc })
	w := &disputeWorld{uploadsFixture: u, ledger: lc, ledgerRPC: lrpc}
	var su, osu signUpResult
	w.owner, su = u.signUp("owner@dsp.test", "BUSINESS")
	w.tenant = su.Organization.ID
	w.other, osu = u.signUp("owner@dsp-other.test", "BUSINESS")
	w.otherTenant = osu.Organization.ID
	w.me, w.emp = u.notificationUser(w.tenant, "abebe@dsp.test")
	w.colleague, w.colleagueEmp = u.notificationUser(w.tenant, "kebede@dsp.test")
	return w
}

// post posts amount to employee's receivable (Dr receivable, Cr payroll-clearing, as an advance
// is recorded against the employee) and returns the transaction id.
func (w *disputeWorld) post(t testing.TB, tenant, employee string, amount int64) string {
	t.Helper()
	resp, err := w.ledger.PostCreatingAccounts(context.Background(), &ledgerv1.PostTransactionRequest{TenantId: tenant,
		IdempotencyKey: testkit.Unique("dsp-post"), Entries: []*ledgerv1.EntryInput{
			{AccountName: chart.EmployeeReceivable(employee), Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: amount},
			{AccountName: chart.PayrollClearing, Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: amount},
		}})
	require.NoError(t, err)
	return resp.GetTransaction().GetId()
}

func (w *disputeWorld) open(t testing.TB, who *apiClient, txID string) *httptest.ResponseRecorder {
	t.Helper()
	return who.call(http.MethodPost, "/api/me/disputes", map[string]any{"ledgerTransactionId": txID, "reason": "I never took this advance"})
}

func TestDisputeOpenAndRead(t *testing.T) {
	t.Parallel()
	w := newDisputeWorld(t)
	mine := w.post(t, w.tenant, w.emp, 250_000)
	theirs := w.post(t, w.tenant, w.colleagueEmp, 90_000)

	// The employee picks from their own ledger transactions only.
	rec := w.me.call(http.MethodGet, "/api/me/ledger-transactions", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	txs := decode[myLedgerTransactionListJSON](t, rec)
	require.Len(t, txs.Items, 1)
	require.Equal(t, mine, txs.Items[0].TransactionID)
	require.Equal(t, "DEBIT", txs.Items[0].Direction)
	require.EqualValues(t, 250_000, txs.Items[0].AmountSantim)
	rec = w.me.call(http.MethodGet, "/api/me/ledger-transactions?limit=1", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	requireStatus(t, w.owner.call(http.MethodGet, "/api/me/ledger-transactions", nil), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")

	// Another employee's transaction, an unknown one, another tenant's: the same 404.
	requireStatus(t, w.open(t, w.me, theirs), http.StatusNotFound, "LEDGER_TRANSACTION_NOT_FOUND")
	requireStatus(t, w.open(t, w.me, uuid.NewString()), http.StatusNotFound, "LEDGER_TRANSACTION_NOT_FOUND")
	requireStatus(t, w.open(t, w.owner, mine), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	require.Zero(t, w.tenantCount(w.tenant, `SELECT count(*) FROM app.disputes`))

	rec = w.open(t, w.me, mine)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	d := decode[disputeJSON](t, rec)
	require.Equal(t, "OPENED", d.Status)
	require.Equal(t, mine, d.LedgerTransactionID)
	require.EqualValues(t, 250_000, d.AmountSantim)
	require.Equal(t, "EMPLOYEE", d.RaisedByType)
	require.Equal(t, w.emp, d.RaisedBySubjectID)
	require.True(t, w.now().AddDate(0, 0, 7).Equal(d.SLADeadline), "7 calendar days: %s", d.SLADeadline)
	require.False(t, d.SLABreached)
	requireStatus(t, w.open(t, w.me, mine), http.StatusConflict, "DISPUTE_ALREADY_OPEN")
	require.Equal(t, 1, w.tenantCount(w.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'dispute.opened.v1'`))
	require.Equal(t, 1, w.tenantCount(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'OpenDispute'`))

	// The disputed transaction stays POSTED.
	got, err := w.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: w.tenant, TransactionId: mine})
	require.NoError(t, err)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, got.GetTransaction().GetStatus())

	// The organization's admins read it with its events; the employee reads their own.
	rec = w.owner.call(http.MethodGet, "/api/disputes", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	list := decode[disputeListJSON](t, rec)
	require.Len(t, list.Items, 1)
	require.Equal(t, d.ID, list.Items[0].ID)
	for q, n := range map[string]int{"status=OPENED": 1, "status=CLOSED_NO_ACTION": 0, "raisedByType=EMPLOYEE": 1,
		"ledgerTransactionId=" + mine: 1, "breached=true": 0, "limit=1": 1} {
		rec = w.owner.call(http.MethodGet, "/api/disputes?"+q, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Len(t, decode[disputeListJSON](t, rec).Items, n, q)
	}
	rec = w.owner.call(http.MethodGet, "/api/disputes/"+d.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	detail := decode[disputeDetailJSON](t, rec)
	require.Len(t, detail.Events, 1)
	require.Equal(t, "OPENED", detail.Events[0].EventType)
	require.Equal(t, detail.Status, detail.Events[len(detail.Events)-1].Status, "the latest event is the effective state")
	rec = w.me.call(http.MethodGet, "/api/me/disputes", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Len(t, decode[disputeListJSON](t, rec).Items, 1)
	rec = w.colleague.call(http.MethodGet, "/api/me/disputes", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Empty(t, decode[disputeListJSON](t, rec).Items, "a colleague sees none of it")

	require.Equal(t, http.StatusForbidden, w.me.call(http.MethodGet, "/api/disputes", nil).Code, "an employee is no admin")

	// Past the deadline the dispute shows breached.
	w.advance(8 * 24 * time.Hour)
	w.owner, w.other = w.signIn("owner@dsp.test"), w.signIn("owner@dsp-other.test") // the sessions expired meanwhile
	rec = w.owner.call(http.MethodGet, "/api/disputes?breached=true", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	list = decode[disputeListJSON](t, rec)
	require.Len(t, list.Items, 1)
	require.True(t, list.Items[0].SLABreached)

	// Another organization, an employee: no access.
	requireStatus(t, w.other.call(http.MethodGet, "/api/disputes/"+d.ID, nil), http.StatusNotFound, "DISPUTE_NOT_FOUND")
	rec = w.other.call(http.MethodGet, "/api/disputes", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Empty(t, decode[disputeListJSON](t, rec).Items)
}

// TestDisputeOnlyPostedTransactions: a reversed, pending or voided transaction is not
// disputable (409); another employee's pending one is not theirs (404).
func TestDisputeOnlyPostedTransactions(t *testing.T) {
	t.Parallel()
	w := newDisputeWorld(t)
	tx := w.post(t, w.tenant, w.emp, 1_000)
	_, err := w.ledger.Reverse(context.Background(), &ledgerv1.ReverseRequest{TenantId: w.tenant, TransactionId: tx, Reason: "test",
		IdempotencyKey: testkit.Unique("rev")})
	require.NoError(t, err)
	requireStatus(t, w.open(t, w.me, tx), http.StatusConflict, "DISPUTE_TRANSACTION_NOT_POSTED")

	// A pending one (an advance whose transfer is still at the bank), and a voided one, are the
	// employee's too: 409 as documented, not 404 (their entries are holds and releases).
	pending := func() string {
		resp, err := w.ledger.PostCreatingAccounts(context.Background(), &ledgerv1.PostTransactionRequest{TenantId: w.tenant,
			IdempotencyKey: testkit.Unique("dsp-pending"), Status: ledgerv1.TransactionStatus_TRANSACTION_STATUS_PENDING,
			Entries: []*ledgerv1.EntryInput{
				{AccountName: chart.EmployeeReceivable(w.emp), Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: 2_000},
				{AccountName: chart.PayrollClearing, Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: 2_000},
			}})
		require.NoError(t, err)
		return resp.GetTransaction().GetId()
	}
	held := pending()
	requireStatus(t, w.open(t, w.me, held), http.StatusConflict, "DISPUTE_TRANSACTION_NOT_POSTED")
	voided := pending()
	_, err = w.ledger.VoidPending(context.Background(), &ledgerv1.VoidPendingRequest{TenantId: w.tenant, TransactionId: voided, Reason: "test"})
	require.NoError(t, err)
	requireStatus(t, w.open(t, w.me, voided), http.StatusConflict, "DISPUTE_TRANSACTION_NOT_POSTED")
	requireStatus(t, w.open(t, w.colleague, held), http.StatusNotFound, "LEDGER_TRANSACTION_NOT_FOUND")
}

// TestDisputeHostileInput: each field refused at the edge with a 400, nothing written.
func TestDisputeHostileInput(t *testing.T) {
	t.Parallel()
	w := newDisputeWorld(t)
	tx := w.post(t, w.tenant, w.emp, 1_000)
	for name, body := range map[string]any{
		"no id":            map[string]any{"reason": "x"},
		"no reason":        map[string]any{"ledgerTransactionId": tx},
		"id not a uuid":    map[string]any{"ledgerTransactionId": "tx-1", "reason": "x"},
		"empty reason":     map[string]any{"ledgerTransactionId": tx, "reason": ""},
		"control in text":  map[string]any{"ledgerTransactionId": tx, "reason": "a\u0000b"},
		"reason too long":  map[string]any{"ledgerTransactionId": tx, "reason": strings.Repeat("x", 1001)},
		"unknown field":    map[string]any{"ledgerTransactionId": tx, "reason": "x", "amountSantim": 1},
		"id of wrong type": map[string]any{"ledgerTransactionId": 7, "reason": "x"},
	} {
		rec := w.me.hostile(http.MethodPost, "/api/me/disputes", body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", name, rec.Body.String())
	}
	for _, q := range []string{"status=NOPE", "raisedByType=x", "breached=yes", "limit=0", "limit=101", "cursor=%00", "status=OPENED&status=REOPENED"} {
		rec := w.owner.hostile(http.MethodGet, "/api/disputes?"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", q, rec.Body.String())
	}
	for _, q := range []string{"cursor=ZZ", "cursor=" + strings.Repeat("1", 14), "limit=-1"} {
		rec := w.me.hostile(http.MethodGet, "/api/me/ledger-transactions?"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", q, rec.Body.String())
	}
	require.Zero(t, w.tenantCount(w.tenant, `SELECT count(*) FROM app.disputes`))
}

// FuzzDisputeRoutes: whatever reaches the dispute routes — the reads, opening, evidence,
// decisions, adjustment approvals, reopen and platform support's record (any path parameter, query and body, from an
// employee, an owner, an operator, a platform admin or nobody, against the real workflow, ledger
// and Temporal) — answers 4xx or success, never 5xx.
func FuzzDisputeRoutes(f *testing.F) {
	w := newDisputeStack(f)
	tx := w.post(f, w.tenant, w.emp, 1_000)
	open := decode[disputeJSON](f, w.open(f, w.me, w.post(f, w.tenant, w.emp, 2_000)))
	routes := w.srv.disputeRoutes()
	f.Add(uint8(0), uint8(0), "", "limit=1&cursor=zz", "")
	f.Add(uint8(1), uint8(0), "", "", `{"ledgerTransactionId":"`+tx+`","reason":"not mine"}`)
	f.Add(uint8(1), uint8(0), "", "", `{"ledgerTransactionId":"00000000-0000-0000-0000-000000000000","reason":"x"}`)
	f.Add(uint8(1), uint8(1), "", "", `{"ledgerTransactionId":"`+tx+`","reason":"\u202e"}`)
	f.Add(uint8(2), uint8(0), "", "status=OPENED&breached=true&cursor=dsp_x", "")
	f.Add(uint8(3), uint8(1), "", "ledgerTransactionId=%ff", "")
	f.Add(uint8(4), uint8(1), "dsp_%00", "", "")
	// The work routes (evidence, decisions, approvals, reopen) as the owner, the operator and the
	// platform admin.
	f.Add(uint8(5), uint8(1), open.ID, "", `{"uploadKeys":["upl_01890000-0000-7000-8000-000000000000"],"note":"x"}`)
	f.Add(uint8(5), uint8(1), open.ID, "", `{"uploadKeys":[]}`)
	f.Add(uint8(6), uint8(3), open.ID, "", `{"decision":"ADJUSTMENT","reason":"x","approval":{"approvedBy":"u","expiresAt":"2027-01-01T00:00:00Z","signature":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}}`)
	f.Add(uint8(6), uint8(3), open.ID, "", `{"decision":"CHARGEBACK","reason":"x","partnerChargebackRef":"CB\u0000"}`)
	f.Add(uint8(6), uint8(4), "dsp_nope", "", `{"decision":"NO_ACTION","reason":"x"}`)
	f.Add(uint8(7), uint8(4), open.ID, "", `{"decisionReason":"\u202e"}`)
	f.Add(uint8(8), uint8(4), open.ID, "", `{"reason":"new evidence"}`)
	f.Add(uint8(8), uint8(3), "%ff", "", `{"reason":"x"}`)
	// A platform admin's evidence (the dispute's organization found from the dispute).
	f.Add(uint8(9), uint8(4), open.ID, "", `{"uploadKeys":["upl_01890000-0000-7000-8000-000000000000"]}`)
	f.Add(uint8(9), uint8(4), "dsp_nope", "", `{"uploadKeys":["upl_01890000-0000-7000-8000-000000000000"],"note":"\u0007"}`)
	f.Add(uint8(9), uint8(1), open.ID, "", `{"uploadKeys":["upl_01890000-0000-7000-8000-000000000000"]}`)
	// A dispute platform support records (a partner bank's, the platform's own).
	paid := w.paidOut(f, w.emp, "sandbox", 3_000)
	f.Add(uint8(10), uint8(3), "", "", `{"tenantId":"`+w.tenant+`","ledgerTransactionId":"`+paid+`","ledgerAccountName":"receivable-from-employee:`+w.emp+`","raisedByType":"PARTNER_BANK","partner":"sandbox","reason":"x"}`)
	f.Add(uint8(10), uint8(4), "", "", `{"tenantId":"`+w.tenant+`","ledgerTransactionId":"`+paid+`","ledgerAccountName":"receivable-from-employee:`+w.emp+`","raisedByType":"PARTNER_BANK","partner":"other\u0000"}`)
	f.Add(uint8(10), uint8(3), "", "", `{"tenantId":"`+w.otherTenant+`","ledgerTransactionId":"`+tx+`","ledgerAccountName":"receivable-from-borrower:ln_1","raisedByType":"INTERNAL","reason":"\u202e"}`)
	f.Add(uint8(10), uint8(1), "", "", `{"tenantId":"%ff","raisedByType":"EMPLOYEE"}`)
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, route, who uint8, param, query, body string) {
		r := routes[int(route)%len(routes)]
		path := r.Path
		if i := strings.IndexByte(path, ':'); i >= 0 {
			path = path[:i] + param
		}
		req := httptest.NewRequest(r.Method, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.RemoteAddr = "192.0.2.82:40000"
		if r.Idem {
			req.Header.Set("Idempotency-Key", fmt.Sprintf("fuzz-dispute-%d", n.Add(1)))
		}
		switch who % 5 {
		case 0:
			req.AddCookie(w.me.cookie)
		case 1:
			req.AddCookie(w.owner.cookie)
		case 3:
			req.AddCookie(w.operator.cookie)
		case 4:
			req.AddCookie(w.admin.cookie)
		}
		rec := httptest.NewRecorder()
		w.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q %q", r.Method, path, query, body))
	})
}
