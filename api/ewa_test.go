package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// ewaWorld: two organizations, the first with one employee, a server with the real ledger over
// gRPC, and the clock at 2026-11-23 09:00 UTC (day 23 of a 30-day month).
type ewaWorld struct {
	*authFixture
	ledger              *ledger.Client
	bank                *gatewaytest.Stack // the sandbox and the gateway in front of it
	tc                  client.Client
	queue               string        // the task queue of the world's sagas
	worker              worker.Worker // the world's worker (repayments)
	owner, other        *apiClient
	tenant, otherTenant string
	employee            string
}

// ewaSalary is chosen so every figure of the eligibility rounds: earned = 1,000,001 × 23 / 30 =
// 766,667.43 → 766,667; cap = 766,667 × 50 / 100 = 383,333.5 → 383,333.
const ewaSalary = 1_000_001

// ewaFundingAccount is the sandbox account an ewaWorld's settings pay advances from.
const ewaFundingAccount = "2000000000001"

func newEwaWorld(t testing.TB, salary int64) *ewaWorld {
	t.Helper()
	return newEwaWorldWith(t, salary, nil)
}

// newEwaWorldWith is newEwaWorld whose worker posts to workerLedger (nil: the world's ledger).
func newEwaWorldWith(t testing.TB, salary int64, workerLedger *ledger.Client) *ewaWorld {
	t.Helper()
	d := testkit.NewDB(t)
	f := &authFixture{t: t, d: d, inbox: &notify.Memory{}, clock: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	lc := ledger.NewClient(ledgertest.Serve(t, d.App, nil), ledger.ClientOptions{})
	// The settings' funding account is looked up at the partner: the sandbox has it.
	bank := gatewaytest.Start(t, d.App, gatewaytest.Options{})
	bank.Account(t, ewaFundingAccount, "Org Treasury", 0)
	// Repayments are sagas: a worker on a task queue of the world's own serves them.
	if workerLedger == nil {
		workerLedger = lc
	}
	tc, queue, wk := ewaWorldWorker(t, workflows.Deps{Money: &activities.Money{Ledger: workerLedger}, EwaRepay: &activities.EwaRepay{DB: d.App}})
	f.srv = New(Deps{
		Log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		DB:        d.App,
		Platform:  d.Platform(t),
		Registry:  prometheus.NewRegistry(),
		Mailer:    f.inbox,
		Texter:    f.inbox,
		Now:       f.now,
		Ledger:    lc,
		Gateway:   bank.GW.Client,
		Temporal:  tc,
		TaskQueue: queue,
	})
	w := &ewaWorld{authFixture: f, ledger: lc, bank: bank, tc: tc, queue: queue, worker: wk}
	var res signUpResult
	w.owner, res = f.signUp("owner@ewa.test", "BUSINESS")
	w.tenant = res.Organization.ID
	w.other, res = f.signUp("owner@ewa-other.test", "BUSINESS")
	w.otherTenant = res.Organization.ID
	w.employee = w.addEmployee("ET10000001", salary)
	return w
}

// ewaWorldWorker is a client of the test binary's Temporal server and a worker with deps on a
// task queue of its own, stopped when the test ends (Stop before that is allowed).
func ewaWorldWorker(t testing.TB, deps workflows.Deps) (client.Client, string, worker.Worker) {
	t.Helper()
	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace(),
		Logger: sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	queue := testkit.Unique("ewa-world")
	return tc, queue, startEwaWorldWorker(t, tc, queue, deps)
}

// startEwaWorldWorker runs a worker with deps on queue until the test ends (Stop before that is
// allowed).
func startEwaWorldWorker(t testing.TB, tc client.Client, queue string, deps workflows.Deps) worker.Worker {
	t.Helper()
	wk := worker.New(tc, queue, workflows.WorkerOptions())
	workflows.Register(wk, deps)
	require.NoError(t, wk.Start())
	var once sync.Once
	stop := func() { once.Do(wk.Stop) }
	t.Cleanup(stop)
	return stoppable{Worker: wk, stop: stop}
}

func (w *ewaWorld) addEmployee(nationalID string, salary int64) string {
	w.t.Helper()
	rec := w.owner.call(http.MethodPost, "/api/employees", map[string]any{
		"firstName": "Abebe", "lastName": "Kebede", "nationalId": nationalID, "hireDate": "2024-01-01",
		"grossMonthlySalarySantim": salary,
		"payoutAccount":            map[string]any{"partner": "sandbox", "accountNumber": "1000123456789", "holderName": "Abebe Kebede"},
	})
	require.Equal(w.t, http.StatusCreated, rec.Code, rec.Body.String())
	return decode[struct {
		ID string `json:"id"`
	}](w.t, rec).ID
}

var ewaKeys struct {
	sync.Mutex
	n int
}

// ewaKey is a fresh Idempotency-Key.
func ewaKey() string {
	ewaKeys.Lock()
	defer ewaKeys.Unlock()
	ewaKeys.n++
	return fmt.Sprintf("ewa-test-%d-%d", time.Now().UnixNano(), ewaKeys.n)
}

func (w *ewaWorld) settings(flat, bps, capPercent int64) {
	w.t.Helper()
	rec := w.owner.call(http.MethodPut, "/api/ewa/settings", map[string]any{
		"fundingAccount":   map[string]any{"partner": "sandbox", "accountNumber": ewaFundingAccount},
		"accessCapPercent": capPercent, "feeFlatSantim": flat, "feeBasisPoints": bps,
	})
	require.Equal(w.t, http.StatusOK, rec.Code, rec.Body.String())
}

func (w *ewaWorld) request(a *apiClient, employee string, amount int64) *httptest.ResponseRecorder {
	w.t.Helper()
	return a.call(http.MethodPost, "/api/ewa/requests", map[string]any{"employeeId": employee, "amountSantim": amount},
		"Idempotency-Key", ewaKey())
}

func (w *ewaWorld) created(employee string, amount int64) ewaRequestJSON {
	w.t.Helper()
	rec := w.request(w.owner, employee, amount)
	require.Equal(w.t, http.StatusCreated, rec.Code, rec.Body.String())
	return decode[ewaRequestJSON](w.t, rec)
}

func (w *ewaWorld) eligibility(employee string) ewaEligibilityJSON {
	w.t.Helper()
	rec := w.owner.call(http.MethodGet, "/api/ewa/eligibility?employeeId="+employee, nil)
	require.Equal(w.t, http.StatusOK, rec.Code, rec.Body.String())
	return decode[ewaEligibilityJSON](w.t, rec)
}

// disburse moves a request to DISBURSED through the saga's record steps, as the saga would.
func (w *ewaWorld) disburse(id string) {
	w.t.Helper()
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: w.tenant, Actor: tenancy.System("ewa-test")})
	require.NoError(w.t, tenancy.InTx(ctx, w.d.App, func(tx pgx.Tx) error {
		if _, err := ewa.Claim(ctx, tx, id, "wf-"+id); err != nil {
			return err
		}
		if err := ewa.SetLedgerTx(ctx, tx, id, "wf-"+id, "ltx-"+id); err != nil {
			return err
		}
		_, err := ewa.MarkDisbursed(ctx, tx, id, "wf-"+id, "tr-"+id, "")
		return err
	}))
}

// count runs a count query in tenant's scope.
func (w *ewaWorld) count(tenant, sql string, args ...any) int {
	w.t.Helper()
	var n int
	ctx := tenancy.WithTenant(context.Background(), tenant)
	require.NoError(w.t, tenancy.InTx(ctx, w.d.App, func(tx pgx.Tx) error { return tx.QueryRow(ctx, sql, args...).Scan(&n) }))
	return n
}

func TestEwaSettingsRoundTripAndValidation(t *testing.T) {
	t.Parallel()
	w := newEwaWorld(t, ewaSalary)
	rec := w.owner.call(http.MethodGet, "/api/ewa/settings", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	def := decode[ewaSettingsJSON](t, rec)
	require.Nil(t, def.FundingAccount)
	require.Nil(t, def.UpdatedAt)
	require.EqualValues(t, 50, def.AccessCapPercent, "the default cap")
	require.Zero(t, def.FeeFlatSantim)

	body := map[string]any{
		"fundingAccount":   map[string]any{"partner": "sandbox", "accountNumber": "2000000000001"},
		"accessCapPercent": 40, "feeFlatSantim": 500, "feeBasisPoints": 250, "accountNameMatch": true,
	}
	rec = w.owner.call(http.MethodPut, "/api/ewa/settings", body)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	put := decode[ewaSettingsJSON](t, rec)
	rec = w.owner.call(http.MethodGet, "/api/ewa/settings", nil)
	got := decode[ewaSettingsJSON](t, rec)
	require.Equal(t, put, got)
	require.Equal(t, &ewaAccountJSON{Partner: "sandbox", AccountNumber: "2000000000001"}, got.FundingAccount)
	require.EqualValues(t, 40, got.AccessCapPercent)
	require.EqualValues(t, 500, got.FeeFlatSantim)
	require.EqualValues(t, 250, got.FeeBasisPoints)
	require.True(t, got.AccountNameMatch)
	require.NotNil(t, got.UpdatedAt)
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'UpdateEwaSettings'`))

	// Another organization's settings are its own.
	rec = w.other.call(http.MethodGet, "/api/ewa/settings", nil)
	require.Nil(t, decode[ewaSettingsJSON](t, rec).FundingAccount)

	bad := []struct {
		name, field string
		change      func(m map[string]any)
	}{
		{"cap 0", "accessCapPercent", func(m map[string]any) { m["accessCapPercent"] = 0 }},
		{"cap 101", "accessCapPercent", func(m map[string]any) { m["accessCapPercent"] = 101 }},
		{"negative flat fee", "feeFlatSantim", func(m map[string]any) { m["feeFlatSantim"] = -1 }},
		{"flat fee too large", "feeFlatSantim", func(m map[string]any) { m["feeFlatSantim"] = ewa.MaxFeeFlatSantim + 1 }},
		{"bps over 100%", "feeBasisPoints", func(m map[string]any) { m["feeBasisPoints"] = 10_001 }},
		{"partner upper case", "fundingAccount.partner", func(m map[string]any) {
			m["fundingAccount"] = map[string]any{"partner": "Sandbox", "accountNumber": "1"}
		}},
		{"account with colon", "fundingAccount.accountNumber", func(m map[string]any) {
			m["fundingAccount"] = map[string]any{"partner": "sandbox", "accountNumber": "1:2"}
		}},
		{"account too long", "fundingAccount.accountNumber", func(m map[string]any) {
			m["fundingAccount"] = map[string]any{"partner": "sandbox", "accountNumber": strings.Repeat("1", 65)}
		}},
		{"no funding account", "fundingAccount", func(m map[string]any) { delete(m, "fundingAccount") }},
		{"no cap", "accessCapPercent", func(m map[string]any) { delete(m, "accessCapPercent") }},
	}
	for _, b := range bad {
		m := map[string]any{}
		for k, v := range body {
			m[k] = v
		}
		b.change(m)
		rec := w.owner.hostile(http.MethodPut, "/api/ewa/settings", m)
		require.Equal(t, http.StatusBadRequest, rec.Code, b.name)
		require.Equal(t, "INVALID_REQUEST", errCode(rec), b.name)
		require.Contains(t, rec.Body.String(), `"field":"`+b.field+`"`, b.name)
	}
	for _, raw := range []string{`{"accessCapPercent":50.5}`, `{"feeFlatSantim":9223372036854775808}`, `{"mass":"assignment"}`, `[]`} {
		rec := w.owner.hostile(http.MethodPut, "/api/ewa/settings", raw)
		require.Equal(t, http.StatusBadRequest, rec.Code, raw)
	}
	require.Equal(t, got, decode[ewaSettingsJSON](t, w.owner.call(http.MethodGet, "/api/ewa/settings", nil)), "nothing changed")
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'UpdateEwaSettings'`))
}

func TestEwaEligibilityFigures(t *testing.T) {
	t.Parallel()
	w := newEwaWorld(t, ewaSalary)
	w.settings(500, 250, 50) // fee = 5 ETB + 2.5%
	e := w.eligibility(w.employee)
	require.Equal(t, "2026-11-01", e.Period.Start)
	require.Equal(t, "2026-11-30", e.Period.End)
	require.EqualValues(t, 766_667, e.EarnedSantim, "1,000,001 × 23 / 30 = 766,667.43, down")
	require.EqualValues(t, 383_333, e.CapSantim, "766,667 × 50% = 383,333.5, down")
	require.Zero(t, e.OutstandingSantim)
	require.EqualValues(t, 383_333, e.AvailableSantim)
	// 373,496 + 500 + 9,337 (9,337.4) = 383,333 fits; 373,497 + 500 + 9,337 (9,337.425) = 383,334 does not.
	require.EqualValues(t, 373_496, e.MaxPrincipalSantim)
	require.True(t, e.Eligible)
	require.EqualValues(t, 250, e.Settings.FeeBasisPoints)

	// The fee's percentage rounds half to even: 2.5% of 100,020 is 2,500.5 → 2,500; of 100,060 it
	// is 2,501.5 → 2,502.
	r1 := w.created(w.employee, 100_020)
	require.EqualValues(t, 3_000, r1.FeeSantim)
	require.EqualValues(t, 103_020, r1.TotalSantim)
	require.Equal(t, ewa.Requested, r1.Status)
	require.Equal(t, w.now(), r1.RequestedAt)
	r2 := w.created(w.employee, 100_060)
	require.EqualValues(t, 3_002, r2.FeeSantim)

	e = w.eligibility(w.employee)
	require.EqualValues(t, 103_020+103_062, e.OutstandingSantim)
	require.EqualValues(t, 383_333-206_082, e.AvailableSantim)

	// Over the limit: 422 with the figures, audited, nothing created.
	rec := w.request(w.owner, w.employee, e.MaxPrincipalSantim+1)
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	require.Equal(t, "EWA_LIMIT_EXCEEDED", errCode(rec))
	require.Contains(t, rec.Body.String(), fmt.Sprintf(`"availableSantim":%d`, e.AvailableSantim))
	require.Contains(t, rec.Body.String(), fmt.Sprintf(`"maxPrincipalSantim":%d`, e.MaxPrincipalSantim))
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'RequestEwa' AND outcome = 'DENIED'`))
	last := w.created(w.employee, e.MaxPrincipalSantim)
	require.EqualValues(t, e.AvailableSantim, last.TotalSantim, "the largest principal uses the whole availability")
	require.Zero(t, w.eligibility(w.employee).AvailableSantim)
	require.Equal(t, 3, w.count(w.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'ewa.requested.v1'`))
	require.Equal(t, 3, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'RequestEwa' AND outcome = 'SUCCESS'`))

	// Cancelling gives the amount back; a cancelled request cannot be cancelled again.
	rec = w.owner.call(http.MethodPost, "/api/ewa/requests/"+last.ID+"/cancel", nil, "Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, ewa.Cancelled, decode[ewaRequestJSON](t, rec).Status)
	require.EqualValues(t, last.TotalSantim, w.eligibility(w.employee).AvailableSantim)
	rec = w.owner.call(http.MethodPost, "/api/ewa/requests/"+last.ID+"/cancel", nil, "Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "EWA_INVALID_STATE", errCode(rec))
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'ewa.cancelled.v1'`))

	// An employee who is not ACTIVE may draw nothing.
	rec = w.owner.call(http.MethodPut, "/api/employees/"+w.employee+"/status", map[string]any{"status": "SUSPENDED"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	e = w.eligibility(w.employee)
	require.False(t, e.EmployeeActive)
	require.False(t, e.Eligible)
	require.Zero(t, e.AvailableSantim)
	rec = w.request(w.owner, w.employee, 1)
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "EWA_EMPLOYEE_NOT_ACTIVE", errCode(rec))
}

// TestEwaConcurrentRequestsHoldTheLimit: 20 concurrent requests whose sum is twice the cap; the
// employee's row lock makes them check the limit one after another, so exactly as many succeed
// as fit and the rest are refused.
func TestEwaConcurrentRequestsHoldTheLimit(t *testing.T) {
	t.Parallel()
	w := newEwaWorld(t, 3_000_000) // earned 2,300,000; cap 1,150,000
	w.settings(0, 0, 50)
	require.EqualValues(t, 1_150_000, w.eligibility(w.employee).AvailableSantim)
	const n = 20
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest(http.MethodPost, "/api/ewa/requests",
				strings.NewReader(fmt.Sprintf(`{"employeeId":%q,"amountSantim":115000}`, w.employee)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", fmt.Sprintf("concurrent-%d", i))
			req.AddCookie(w.owner.cookie)
			rec := httptest.NewRecorder()
			w.srv.Engine.ServeHTTP(rec, req)
			codes[i] = rec.Code
		}()
	}
	wg.Wait()
	created, refused := 0, 0
	for _, c := range codes {
		switch c {
		case http.StatusCreated:
			created++
		case http.StatusUnprocessableEntity:
			refused++
		default:
			t.Fatalf("unexpected status %d in %v", c, codes)
		}
	}
	require.Equal(t, 10, created, "1,150,000 / 115,000")
	require.Equal(t, 10, refused)
	e := w.eligibility(w.employee)
	require.EqualValues(t, 1_150_000, e.OutstandingSantim)
	require.Zero(t, e.AvailableSantim)
	require.Equal(t, 10, w.count(w.tenant, `SELECT count(*) FROM app.ewa_requests`))
}

func TestEwaListGetAndMe(t *testing.T) {
	t.Parallel()
	w := newEwaWorld(t, ewaSalary)
	second := w.addEmployee("ET10000002", ewaSalary)
	a := w.created(w.employee, 1_000)
	b := w.created(second, 2_000)
	c := w.created(w.employee, 3_000)
	rec := w.owner.call(http.MethodPost, "/api/ewa/requests/"+c.ID+"/cancel", nil, "Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusOK, rec.Code)

	list := func(q string) ewaRequestListJSON {
		rec := w.owner.call(http.MethodGet, "/api/ewa/requests"+q, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[ewaRequestListJSON](t, rec)
	}
	ids := func(l ewaRequestListJSON) []string {
		var out []string
		for _, r := range l.Items {
			out = append(out, r.ID)
		}
		return out
	}
	require.Equal(t, []string{a.ID, b.ID, c.ID}, ids(list("")))
	require.Equal(t, []string{a.ID, c.ID}, ids(list("?employeeId="+w.employee)))
	require.Equal(t, []string{a.ID, b.ID}, ids(list("?status=REQUESTED")))
	require.Equal(t, []string{c.ID}, ids(list("?status=CANCELLED&employeeId="+w.employee)))
	p1 := list("?limit=2")
	require.Equal(t, []string{a.ID, b.ID}, ids(p1))
	require.NotNil(t, p1.NextCursor)
	p2 := list("?limit=2&cursor=" + *p1.NextCursor)
	require.Equal(t, []string{c.ID}, ids(p2))
	require.Nil(t, p2.NextCursor)
	for _, q := range []string{"?status=PAID", "?limit=0", "?limit=101", "?employeeId=a%20b", "?status=REQUESTED&status=FAILED"} {
		rec := w.owner.hostile(http.MethodGet, "/api/ewa/requests"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
	}

	rec = w.owner.call(http.MethodGet, "/api/ewa/requests/"+b.ID, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, b, decode[ewaRequestJSON](t, rec))
	rec = w.owner.call(http.MethodGet, "/api/ewa/requests/ewa_nope", nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, "EWA_REQUEST_NOT_FOUND", errCode(rec))

	// The employee's own view: the owner is no employee; the linked user sees their own requests.
	rec = w.owner.call(http.MethodGet, "/api/me/ewa/requests", nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, "EMPLOYEE_NOT_LINKED", errCode(rec))
	ctx := context.Background()
	hash, err := identity.HashPassword(testPassword)
	require.NoError(t, err)
	u, err := identity.CreateUser(ctx, w.d.App, identity.NewUser{Email: "abebe@ewa.test", Name: "Abebe Kebede", PasswordHash: hash})
	require.NoError(t, err)
	tctx := tenancy.WithTenant(ctx, w.tenant)
	require.NoError(t, tenancy.InTx(tctx, w.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(tctx, `UPDATE app.employees SET user_id = $1 WHERE id = $2`, u.ID, w.employee)
		return err
	}))
	me := w.signIn("abebe@ewa.test")
	rec = me.call(http.MethodGet, "/api/me/ewa/requests", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, []string{a.ID, c.ID}, ids(decode[ewaRequestListJSON](t, rec)))
	rec = me.call(http.MethodGet, "/api/me/ewa/requests?limit=1", nil)
	mine := decode[ewaRequestListJSON](t, rec)
	require.Equal(t, []string{a.ID}, ids(mine))
	require.NotNil(t, mine.NextCursor)
	rec = me.call(http.MethodGet, "/api/ewa/requests", nil)
	require.Equal(t, http.StatusForbidden, rec.Code, "the employee is no admin of the organization")
}

// TestEwaCrossTenantIsNotFound: another organization's employee and request ids are 404 on every
// route, and nothing changes.
func TestEwaCrossTenantIsNotFound(t *testing.T) {
	t.Parallel()
	w := newEwaWorld(t, ewaSalary)
	r := w.created(w.employee, 1_000)
	d := w.created(w.employee, 2_000)
	w.disburse(d.ID)

	rec := w.other.call(http.MethodGet, "/api/ewa/eligibility?employeeId="+w.employee, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, "EMPLOYEE_NOT_FOUND", errCode(rec))
	rec = w.request(w.other, w.employee, 1_000)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, "EMPLOYEE_NOT_FOUND", errCode(rec))
	for _, p := range []string{"/api/ewa/requests/" + r.ID, "/api/ewa/requests/" + d.ID} {
		rec = w.other.call(http.MethodGet, p, nil)
		require.Equal(t, http.StatusNotFound, rec.Code, p)
		require.Equal(t, "EWA_REQUEST_NOT_FOUND", errCode(rec))
	}
	rec = w.other.call(http.MethodPost, "/api/ewa/requests/"+r.ID+"/cancel", nil, "Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, "EWA_REQUEST_NOT_FOUND", errCode(rec))
	rec = w.other.call(http.MethodPost, "/api/ewa/requests/"+d.ID+"/record-repayment",
		map[string]any{"ewaRequestId": d.ID, "repaidAmountSantim": d.TotalSantim, "source": "PAYROLL"}, "Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, "EWA_REQUEST_NOT_FOUND", errCode(rec))
	rec = w.other.call(http.MethodGet, "/api/ewa/requests", nil)
	require.Empty(t, decode[ewaRequestListJSON](t, rec).Items)

	rec = w.owner.call(http.MethodGet, "/api/ewa/requests/"+r.ID, nil)
	require.Equal(t, ewa.Requested, decode[ewaRequestJSON](t, rec).Status, "nothing changed")
	rec = w.owner.call(http.MethodGet, "/api/ewa/requests/"+d.ID, nil)
	require.Equal(t, ewa.Disbursed, decode[ewaRequestJSON](t, rec).Status)
	require.Zero(t, w.count(w.otherTenant, `SELECT count(*) FROM app.ewa_requests`))
	require.Zero(t, w.count(w.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'ewa.repaid.v1'`))
}

func TestEwaRequestBadInput(t *testing.T) {
	t.Parallel()
	w := newEwaWorld(t, ewaSalary)
	for _, raw := range []string{
		`{"employeeId":"` + w.employee + `","amountSantim":0}`,
		`{"employeeId":"` + w.employee + `","amountSantim":-1}`,
		`{"employeeId":"` + w.employee + `","amountSantim":1000000000001}`,
		`{"employeeId":"` + w.employee + `","amountSantim":9223372036854775807}`,
		`{"employeeId":"` + w.employee + `","amountSantim":9223372036854775808}`,
		`{"employeeId":"` + w.employee + `","amountSantim":-9223372036854775808}`,
		`{"employeeId":"` + w.employee + `","amountSantim":1.5}`,
		`{"employeeId":"` + w.employee + `","amountSantim":"100"}`,
		`{"employeeId":"` + w.employee + `"}`,
		`{"employeeId":"a b","amountSantim":100}`,
		`{"employeeId":"","amountSantim":100}`,
		`{"employeeId":"` + w.employee + `","amountSantim":100,"feeSantim":0}`,
		`{"employeeId":"` + w.employee + `","amountSantim":100}{}`,
	} {
		rec := w.owner.hostile(http.MethodPost, "/api/ewa/requests", raw, "Idempotency-Key", ewaKey())
		require.Equal(t, http.StatusBadRequest, rec.Code, raw)
	}
	rec := w.owner.hostile(http.MethodPost, "/api/ewa/requests", map[string]any{"employeeId": w.employee, "amountSantim": 100})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "IDEMPOTENCY_KEY_REQUIRED", errCode(rec))
	rec = w.request(w.owner, "emp_unknown", 100)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, "EMPLOYEE_NOT_FOUND", errCode(rec))
	for _, q := range []string{"", "?employeeId=", "?employeeId=a%00b", "?employeeId=x&employeeId=y"} {
		rec := w.owner.hostile(http.MethodGet, "/api/ewa/eligibility"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
	}
	require.Zero(t, w.count(w.tenant, `SELECT count(*) FROM app.ewa_requests`))

	// The same key and body replays the stored answer; another body with it is 422.
	k := ewaKey()
	first := w.owner.call(http.MethodPost, "/api/ewa/requests", map[string]any{"employeeId": w.employee, "amountSantim": 100}, "Idempotency-Key", k)
	require.Equal(t, http.StatusCreated, first.Code)
	again := w.owner.call(http.MethodPost, "/api/ewa/requests", map[string]any{"employeeId": w.employee, "amountSantim": 100}, "Idempotency-Key", k)
	require.Equal(t, http.StatusCreated, again.Code)
	require.Equal(t, first.Body.String(), again.Body.String())
	other := w.owner.call(http.MethodPost, "/api/ewa/requests", map[string]any{"employeeId": w.employee, "amountSantim": 101}, "Idempotency-Key", k)
	require.Equal(t, http.StatusUnprocessableEntity, other.Code)
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.ewa_requests`))
}

func TestEwaRecordRepayment(t *testing.T) {
	t.Parallel()
	w := newEwaWorld(t, ewaSalary)
	w.settings(500, 250, 50)
	r := w.created(w.employee, 100_000) // fee 500 + 2,500
	require.EqualValues(t, 103_000, r.TotalSantim)
	pending := w.created(w.employee, 1_000)
	path := "/api/ewa/requests/" + r.ID + "/record-repayment"
	body := map[string]any{"ewaRequestId": r.ID, "repaidAmountSantim": 103_000, "source": "PAYROLL"}

	// Not disbursed yet.
	rec := w.owner.call(http.MethodPost, path, body, "Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, "EWA_NOT_DISBURSED", errCode(rec))
	w.disburse(r.ID)

	// Refusals before anything moves.
	rec = w.owner.call(http.MethodPost, path, map[string]any{"ewaRequestId": pending.ID, "repaidAmountSantim": 103_000, "source": "PAYROLL"},
		"Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Contains(t, rec.Body.String(), `"field":"ewaRequestId"`)
	rec = w.owner.call(http.MethodPost, path, map[string]any{"ewaRequestId": r.ID, "repaidAmountSantim": 103_001, "source": "PAYROLL"},
		"Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Equal(t, "EWA_REPAYMENT_EXCEEDS_OUTSTANDING", errCode(rec))
	require.JSONEq(t, `{"outstandingSantim":103000}`, string(decode[errBody](t, rec).Error.Details))
	rec = w.owner.hostile(http.MethodPost, path, map[string]any{"ewaRequestId": r.ID, "repaidAmountSantim": 103_000, "source": "CASH"},
		"Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Contains(t, rec.Body.String(), `"field":"source"`)
	for _, amount := range []string{"0", "-103000", "9223372036854775807", "9223372036854775808", "103000.5"} {
		rec = w.owner.hostile(http.MethodPost, path, `{"ewaRequestId":"`+r.ID+`","repaidAmountSantim":`+amount+`,"source":"PAYROLL"}`,
			"Idempotency-Key", ewaKey())
		require.Equal(t, http.StatusBadRequest, rec.Code, amount)
	}
	rec = w.owner.call(http.MethodPost, "/api/ewa/requests/ewa_unknown/record-repayment",
		map[string]any{"ewaRequestId": "ewa_unknown", "repaidAmountSantim": 103_000, "source": "PAYROLL"}, "Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, "EWA_REQUEST_NOT_FOUND", errCode(rec))
	require.Zero(t, w.count(w.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'ewa.repaid.v1'`))

	// The repayment.
	k := ewaKey()
	rec = w.owner.call(http.MethodPost, path, body, "Idempotency-Key", k)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	repaid := decode[ewaRequestJSON](t, rec)
	require.Equal(t, ewa.Repaid, repaid.Status)
	require.EqualValues(t, 103_000, *repaid.RepaidAmountSantim)
	require.Equal(t, "PAYROLL", *repaid.RepaymentSource)
	require.NotNil(t, repaid.RepaymentLedgerTxID)
	require.Equal(t, "ltx-"+r.ID, *repaid.LedgerTxID, "the disbursement's transaction stays")

	// The journal, read back from the ledger.
	ctx := context.Background()
	got, err := w.ledger.GetTransaction(ctx, &ledgerv1.GetTransactionRequest{TenantId: w.tenant, TransactionId: *repaid.RepaymentLedgerTxID})
	require.NoError(t, err)
	tx := got.GetTransaction()
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetStatus())
	require.Equal(t, "ewa-repay:"+r.ID, tx.GetIdempotencyKey())
	type leg struct {
		account string
		dir     ledgerv1.Direction
		amount  int64
	}
	var legs []leg
	for _, e := range tx.GetEntries() {
		require.Equal(t, ledgerv1.EntryPhase_ENTRY_PHASE_POSTED, e.GetPhase())
		legs = append(legs, leg{e.GetAccountName(), e.GetDirection(), e.GetAmountSantim()})
	}
	require.ElementsMatch(t, []leg{
		{"payroll-clearing", ledgerv1.Direction_DIRECTION_DEBIT, 103_000},
		{"receivable-from-employee:" + w.employee, ledgerv1.Direction_DIRECTION_CREDIT, 103_000},
	}, legs)
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'ewa.repaid.v1' AND payload->>'requestId' = $1
		AND (payload->>'repaidAmountSantim')::bigint = 103000`, r.ID))
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'RecordEwaRepayment' AND outcome = 'SUCCESS'`))

	// Replays: the same key answers the stored response; a new key with the same values answers
	// the stored request; neither posts again or emits again.
	rec = w.owner.call(http.MethodPost, path, body, "Idempotency-Key", k)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "true", rec.Header().Get("Idempotent-Replayed"))
	require.Equal(t, repaid, decode[ewaRequestJSON](t, rec))
	rec = w.owner.call(http.MethodPost, path, body, "Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, repaid, decode[ewaRequestJSON](t, rec))
	rec = w.owner.call(http.MethodPost, path, map[string]any{"ewaRequestId": r.ID, "repaidAmountSantim": 103_000, "source": "EMPLOYER"},
		"Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "EWA_NOT_DISBURSED", errCode(rec))
	entries, err := w.ledger.ListEntries(ctx, &ledgerv1.ListEntriesRequest{TenantId: w.tenant, AccountName: "payroll-clearing"})
	require.NoError(t, err)
	require.Len(t, entries.GetEntries(), 1, "posted once")
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'ewa.repaid.v1'`))

	// A repaid request no longer counts against the limit.
	e := w.eligibility(w.employee)
	require.EqualValues(t, pending.TotalSantim, e.OutstandingSantim)
}

// TestEwaRecordStepsIdempotent: the saga's record steps repeat safely for their workflow and
// refuse any other.
func TestEwaRecordStepsIdempotent(t *testing.T) {
	t.Parallel()
	w := newEwaWorld(t, ewaSalary)
	r := w.created(w.employee, 1_000)
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: w.tenant, Actor: tenancy.System("ewa-test")})
	step := func(fn func(tx pgx.Tx) error) error { return tenancy.InTx(ctx, w.d.App, fn) }

	require.ErrorIs(t, step(func(tx pgx.Tx) error { _, err := ewa.LoadPlan(ctx, tx, r.ID, "wf-a"); return err }), ewa.ErrFundingNotSet)
	w.settings(0, 0, 50)
	require.NoError(t, step(func(tx pgx.Tx) error {
		p, err := ewa.LoadPlan(ctx, tx, r.ID, "wf-a")
		require.Equal(t, ewa.Account{Partner: "sandbox", AccountNumber: "2000000000001"}, p.Funding)
		require.Equal(t, ewa.Account{Partner: "sandbox", AccountNumber: "1000123456789", HolderName: "Abebe Kebede"}, p.Destination)
		return err
	}))
	for range 2 {
		require.NoError(t, step(func(tx pgx.Tx) error { _, err := ewa.Claim(ctx, tx, r.ID, "wf-a"); return err }))
	}
	require.ErrorIs(t, step(func(tx pgx.Tx) error { _, err := ewa.Claim(ctx, tx, r.ID, "wf-b"); return err }), ewa.ErrNotDisbursable)
	require.ErrorIs(t, step(func(tx pgx.Tx) error { _, err := ewa.LoadPlan(ctx, tx, r.ID, "wf-b"); return err }), ewa.ErrNotDisbursable)
	rec := w.owner.call(http.MethodPost, "/api/ewa/requests/"+r.ID+"/cancel", nil, "Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusConflict, rec.Code, "a DISBURSING request cannot be cancelled")
	for range 2 {
		require.NoError(t, step(func(tx pgx.Tx) error { return ewa.SetLedgerTx(ctx, tx, r.ID, "wf-a", "ltx-1") }))
	}
	require.ErrorIs(t, step(func(tx pgx.Tx) error { return ewa.SetLedgerTx(ctx, tx, r.ID, "wf-a", "ltx-2") }), ewa.ErrNotDisbursable)
	for range 2 {
		require.NoError(t, step(func(tx pgx.Tx) error {
			got, err := ewa.MarkFailed(ctx, tx, r.ID, "wf-a", "partner rejected\x00 the transfer")
			require.Equal(t, ewa.Failed, got.Status)
			require.Equal(t, "partner rejected  the transfer", got.FailureReason)
			return err
		}))
	}
	require.ErrorIs(t, step(func(tx pgx.Tx) error { _, err := ewa.MarkDisbursed(ctx, tx, r.ID, "wf-a", "tr", ""); return err }), ewa.ErrNotDisbursable)
	// Its steps run again after a lost workflow task: the run finds the request it failed, another
	// run does not.
	concluded := func(id, wf string) (ewa.Request, bool) {
		var got ewa.Request
		var ok bool
		require.NoError(t, step(func(tx pgx.Tx) (err error) { got, ok, err = ewa.ConcludedBy(ctx, tx, id, wf); return err }))
		return got, ok
	}
	got, ok := concluded(r.ID, "wf-a")
	require.True(t, ok)
	require.Equal(t, ewa.Failed, got.Status)
	require.Equal(t, "partner rejected  the transfer", got.FailureReason)
	_, ok = concluded(r.ID, "wf-b")
	require.False(t, ok)
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'DisburseEwa'`))
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'EwaDisbursementFailed' AND outcome = 'FAILED'`))
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'ewa.disbursement_failed.v1'`))

	d := w.created(w.employee, 2_000)
	w.disburse(d.ID)
	require.NoError(t, step(func(tx pgx.Tx) error {
		got, err := ewa.MarkDisbursed(ctx, tx, d.ID, "wf-"+d.ID, "tr-"+d.ID, "")
		require.Equal(t, ewa.Disbursed, got.Status)
		return err
	}), "MarkDisbursed again is a no-op")
	got, ok = concluded(d.ID, "wf-"+d.ID)
	require.True(t, ok)
	require.Equal(t, ewa.Disbursed, got.Status)
	require.Equal(t, "tr-"+d.ID, got.TransferID)
	_, ok = concluded(w.created(w.employee, 1_000).ID, "wf-a")
	require.False(t, ok, "a request no run concluded")
	require.ErrorIs(t, step(func(tx pgx.Tx) error { _, err := ewa.Claim(ctx, tx, d.ID, "wf-"+d.ID); return err }), ewa.ErrNotDisbursable)
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'ewa.disbursed.v1' AND payload->>'requestId' = $1
		AND payload->>'transferId' = $2 AND (payload->>'principalSantim')::bigint = 2000`, d.ID, "tr-"+d.ID))
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'EwaDisbursed'`))
}

// TestEwaClaimWithLedgerTx: the claim that records the pending ledger transaction repeats
// safely for its workflow and transaction, records the transaction on a request its workflow
// claimed without one, and refuses another workflow, another transaction and a request not
// REQUESTED; one DisburseEwa audit row per claim.
func TestEwaClaimWithLedgerTx(t *testing.T) {
	t.Parallel()
	w := newEwaWorld(t, ewaSalary)
	w.settings(0, 0, 50)
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: w.tenant, Actor: tenancy.System("ewa-test")})
	step := func(fn func(tx pgx.Tx) error) error { return tenancy.InTx(ctx, w.d.App, fn) }
	claim := func(id, wf, ltx string) (ewa.Request, error) {
		var got ewa.Request
		err := step(func(tx pgx.Tx) error {
			var err error
			got, err = ewa.ClaimWithLedgerTx(ctx, tx, id, wf, ltx)
			return err
		})
		return got, err
	}

	r := w.created(w.employee, 1_000)
	for range 2 {
		got, err := claim(r.ID, "wf-a", "ltx-a")
		require.NoError(t, err)
		require.Equal(t, ewa.Disbursing, got.Status)
		require.Equal(t, "wf-a", got.WorkflowID)
		require.Equal(t, "ltx-a", got.LedgerTxID)
	}
	_, err := claim(r.ID, "wf-a", "ltx-other")
	require.ErrorIs(t, err, ewa.ErrNotDisbursable)
	_, err = claim(r.ID, "wf-b", "ltx-b")
	require.ErrorIs(t, err, ewa.ErrNotDisbursable)
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'DisburseEwa' AND target_id = $1`, r.ID))
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.ewa_requests WHERE id = $1 AND ledger_tx_id = 'ltx-a'`, r.ID))

	// Claimed by its workflow without a transaction (a run begun before the fewer record steps):
	// the transaction is recorded, no second claim is audited.
	c := w.created(w.employee, 1_000)
	require.NoError(t, step(func(tx pgx.Tx) error { _, err := ewa.Claim(ctx, tx, c.ID, "wf-c"); return err }))
	got, err := claim(c.ID, "wf-c", "ltx-c")
	require.NoError(t, err)
	require.Equal(t, "ltx-c", got.LedgerTxID)
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'DisburseEwa' AND target_id = $1`, c.ID))
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.ewa_requests WHERE id = $1 AND ledger_tx_id = 'ltx-c'`, c.ID))

	// Not REQUESTED: refused, nothing written.
	x := w.created(w.employee, 1_000)
	rec := w.owner.call(http.MethodPost, "/api/ewa/requests/"+x.ID+"/cancel", nil, "Idempotency-Key", ewaKey())
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	_, err = claim(x.ID, "wf-x", "ltx-x")
	require.ErrorIs(t, err, ewa.ErrNotDisbursable)
	_, err = claim("ewa_missing", "wf-x", "ltx-x")
	require.ErrorIs(t, err, ewa.ErrNotFound)
	require.Zero(t, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'DisburseEwa' AND target_id = $1`, x.ID))
}

func FuzzEwaRoutes(f *testing.F) {
	w := newEwaWorld(f, ewaSalary)
	w.settings(500, 250, 50)
	r := w.created(w.employee, 1_000)
	var routes []Route
	for _, rt := range w.srv.ewaRoutes() {
		if !strings.HasSuffix(rt.Path, "/disburse") { // the disburse handler has its own fuzz target
			routes = append(routes, rt)
		}
	}
	f.Add(uint8(3), "", "", `{"employeeId":"`+w.employee+`","amountSantim":9223372036854775807}`)
	f.Add(uint8(1), "", "", `{"fundingAccount":{"partner":"x","accountNumber":"\u202e"},"accessCapPercent":1e3,"feeFlatSantim":1,"feeBasisPoints":1}`)
	// The caps: at their bounds, past them, null, of the wrong type.
	f.Add(uint8(1), "", "", `{"fundingAccount":{"partner":"sandbox","accountNumber":"`+ewaFundingAccount+`"},"accessCapPercent":100,"feeFlatSantim":0,"feeBasisPoints":0,"maxPerDaySantim":1,"maxPerPeriodSantim":1000000000000,"maxRequestsPerDay":1,"maxRequestsPerPeriod":100}`)
	f.Add(uint8(1), "", "", `{"fundingAccount":{"partner":"sandbox","accountNumber":"`+ewaFundingAccount+`"},"accessCapPercent":100,"feeFlatSantim":0,"feeBasisPoints":0,"maxPerDaySantim":-9223372036854775808,"maxPerPeriodSantim":0,"maxRequestsPerDay":101,"maxRequestsPerPeriod":null}`)
	f.Add(uint8(1), "", "", `{"fundingAccount":{"partner":"sandbox","accountNumber":"`+ewaFundingAccount+`"},"accessCapPercent":50,"feeFlatSantim":0,"feeBasisPoints":0,"maxPerDaySantim":"1","maxRequestsPerDay":1e2,"maxrequestsperday":3}`)
	f.Add(uint8(1), "", "", `{"fundingAccount":{"partner":"sandbox","accountNumber":"`+ewaFundingAccount+`"},"accessCapPercent":50,"feeFlatSantim":0,"feeBasisPoints":0,"maxRequestsPerPeriod":1,"maxPerDaySantim":1}`)
	f.Add(uint8(2), "", "employeeId="+w.employee, "")
	f.Add(uint8(2), "", "employeeId=%ff", "")
	f.Add(uint8(6), r.ID, "", `{"ewaRequestId":"`+r.ID+`","repaidAmountSantim":1500,"source":"PAYROLL"}`)
	f.Add(uint8(7), r.ID, "", "")
	f.Add(uint8(4), "", "status=x&limit=-1&cursor=%00", "")
	f.Add(uint8(5), "x y", "", "\xff")
	f.Add(uint8(8), "", "limit=100&cursor=zzz", "")
	f.Fuzz(func(t *testing.T, which uint8, id, query, body string) {
		rt := routes[int(which)%len(routes)]
		req := httptest.NewRequest(rt.Method, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = pathOf(rt.Path, map[string]string{"id": id}), "", query
		if body != "" {
			req.Header.Set("Content-Type", "application/json") // past checkBody, into the handlers
		}
		req.Header.Set("Idempotency-Key", ewaKey())
		req.AddCookie(w.owner.cookie)
		rec := httptest.NewRecorder()
		w.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q?%s", rt.Method, req.URL.Path, query))
	})
}

// TestEwaSettingsFundingAccountChecked: the funding account is looked up at the partner when it
// is set. A partner the gateway does not know and an account the partner does not have are 422
// with a code naming the field; a gateway that is down is 503 GATEWAY_UNAVAILABLE. Each leaves
// the settings as they were and writes no UpdateEwaSettings row. Changing only the fees asks the
// partner nothing, so it works while the gateway is down.
func TestEwaSettingsFundingAccountChecked(t *testing.T) {
	t.Parallel()
	w := newEwaWorld(t, ewaSalary)
	w.settings(500, 250, 50)
	stored := decode[ewaSettingsJSON](t, w.owner.call(http.MethodGet, "/api/ewa/settings", nil))
	updates := func() int {
		return w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'UpdateEwaSettings'`)
	}
	require.Equal(t, 1, updates())
	body := func(partner, account string) map[string]any {
		return map[string]any{"fundingAccount": map[string]any{"partner": partner, "accountNumber": account},
			"accessCapPercent": 40, "feeFlatSantim": 100, "feeBasisPoints": 100}
	}
	unchanged := func(what string) {
		t.Helper()
		require.Equal(t, stored, decode[ewaSettingsJSON](t, w.owner.call(http.MethodGet, "/api/ewa/settings", nil)), what)
		require.Equal(t, 1, updates(), what)
	}

	for _, tc := range []struct {
		name, partner, account string
		code, field            string
	}{
		{"partner the gateway does not know", "nosuchbank", ewaFundingAccount, "EWA_FUNDING_PARTNER_UNKNOWN", "fundingAccount.partner"},
		{"account the partner does not have", "sandbox", "2999999999999", "EWA_FUNDING_ACCOUNT_NOT_FOUND", "fundingAccount.accountNumber"},
	} {
		rec := w.owner.call(http.MethodPut, "/api/ewa/settings", body(tc.partner, tc.account))
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "%s: %s", tc.name, rec.Body.String())
		require.Equal(t, tc.code, errCode(rec), tc.name)
		require.Contains(t, rec.Body.String(), `"field":"`+tc.field+`"`, tc.name)
		unchanged(tc.name)
	}

	// The same organization through an API whose gateway is down.
	dead, err := gateway.Dial("127.0.0.1:1", gateway.ClientOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = dead.Close() })
	down := New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), DB: w.d.App, Platform: w.d.Platform(t),
		Registry: prometheus.NewRegistry(), Mailer: w.inbox, Texter: w.inbox, Now: w.now, Ledger: w.ledger, Gateway: dead})
	owner := w.owner.clone()
	owner.h = down.Engine
	w.bank.Account(t, "2000000000002", "Org Treasury 2", 0)
	rec := owner.call(http.MethodPut, "/api/ewa/settings", body("sandbox", "2000000000002"))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Equal(t, "GATEWAY_UNAVAILABLE", errCode(rec))
	unchanged("gateway down")
	// The funding account as stored needs no lookup: the fees change with the gateway down.
	rec = owner.call(http.MethodPut, "/api/ewa/settings", body("sandbox", ewaFundingAccount))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.EqualValues(t, 100, decode[ewaSettingsJSON](t, rec).FeeFlatSantim)

	// An account the partner has is taken.
	rec = w.owner.call(http.MethodPut, "/api/ewa/settings", body("sandbox", "2000000000002"))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "2000000000002", decode[ewaSettingsJSON](t, rec).FundingAccount.AccountNumber)
}

// TestBodyOnBodylessEwaRouteChangesNothing: a disburse or cancel sent with a body (which those
// routes would have ignored) is refused with 400 before the idempotency gate: the request stays
// REQUESTED, no idempotency record, audit row or event is written, and no saga is started (this
// API has no Temporal client; a disburse that got through would answer 503).
func TestBodyOnBodylessEwaRouteChangesNothing(t *testing.T) {
	t.Parallel()
	w := newEwaWorld(t, ewaSalary)
	w.settings(500, 250, 50)
	r := w.created(w.employee, 1_000)
	counts := func() [3]int {
		return [3]int{
			w.count(w.tenant, `SELECT count(*) FROM app.idempotency_records`),
			w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action IN ('DisburseEwa', 'CancelEwa')`),
			w.count(w.tenant, `SELECT count(*) FROM app.outbox WHERE type LIKE 'ewa.%' AND type <> 'ewa.requested.v1'`),
		}
	}
	before := counts()
	for _, action := range []string{"disburse", "cancel"} {
		for _, body := range []string{`{"amountSantim":999999}`, `{}`, `null`} {
			rec := w.owner.hostile(http.MethodPost, "/api/ewa/requests/"+r.ID+"/"+action, body, "Idempotency-Key", ewaKey())
			require.Equal(t, http.StatusBadRequest, rec.Code, "%s %s: %s", action, body, rec.Body.String())
			require.Equal(t, "INVALID_REQUEST", errCode(rec))
		}
	}
	require.Equal(t, before, counts(), "nothing was recorded")
	got := decode[ewaRequestJSON](t, w.owner.call(http.MethodGet, "/api/ewa/requests/"+r.ID, nil))
	require.Equal(t, ewa.Requested, got.Status)
}
