package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// ewaCapsBody is a settings body with the world's funding account, a 100% access cap, no fee and
// the caps given (nil values are sent as null).
func ewaCapsBody(caps map[string]any) map[string]any {
	m := map[string]any{
		"fundingAccount":   map[string]any{"partner": "sandbox", "accountNumber": ewaFundingAccount},
		"accessCapPercent": 100, "feeFlatSantim": 0, "feeBasisPoints": 0,
	}
	for k, v := range caps {
		m[k] = v
	}
	return m
}

func (w *ewaWorld) caps(caps map[string]any) ewaSettingsJSON {
	w.t.Helper()
	rec := w.owner.call(http.MethodPut, "/api/ewa/settings", ewaCapsBody(caps))
	require.Equal(w.t, http.StatusOK, rec.Code, rec.Body.String())
	return decode[ewaSettingsJSON](w.t, rec)
}

// limitRefusal is an EWA_LIMIT_EXCEEDED answer's details.
type limitRefusal struct {
	AvailableSantim    int64      `json:"availableSantim"`
	MaxPrincipalSantim int64      `json:"maxPrincipalSantim"`
	LimitingFactor     ewa.Factor `json:"limitingFactor"`
}

func refusalOf(t *testing.T, rec *httptest.ResponseRecorder) limitRefusal {
	t.Helper()
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	require.Equal(t, "EWA_LIMIT_EXCEEDED", errCode(rec))
	var env struct {
		Error struct {
			Details limitRefusal `json:"details"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &env))
	return env.Error.Details
}

func i64(v int64) *int64 { return &v }

// TestEwaCapsSettingsRoundTripAndValidation: the caps are null by default, stored and answered
// as set, cleared by a PUT that leaves them out, and refused (400 INVALID_REQUEST naming the
// field, nothing changed) outside their bounds.
func TestEwaCapsSettingsRoundTripAndValidation(t *testing.T) {
	t.Parallel()
	w := newEwaWorld(t, ewaSalary)
	def := decode[ewaSettingsJSON](t, w.owner.call(http.MethodGet, "/api/ewa/settings", nil))
	require.Equal(t, ewaCapsJSON{}, def.ewaCapsJSON, "no caps by default")

	set := map[string]any{"maxPerDaySantim": 300_000, "maxPerPeriodSantim": 1_000_000_000_000, "maxRequestsPerDay": 1, "maxRequestsPerPeriod": 100}
	got := w.caps(set)
	require.Equal(t, ewaCapsJSON{MaxPerDaySantim: i64(300_000), MaxPerPeriodSantim: i64(1_000_000_000_000), MaxRequestsPerDay: i64(1),
		MaxRequestsPerPeriod: i64(100)}, got.ewaCapsJSON)
	require.Equal(t, got, decode[ewaSettingsJSON](t, w.owner.call(http.MethodGet, "/api/ewa/settings", nil)))
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'UpdateEwaSettings'
		AND (details->>'maxPerDaySantim')::bigint = 300000 AND (details->>'maxRequestsPerPeriod')::int = 100`))

	for _, b := range []struct {
		field string
		value any
	}{
		{"maxPerDaySantim", 0}, {"maxPerDaySantim", -1}, {"maxPerDaySantim", 1_000_000_000_001},
		{"maxPerPeriodSantim", 0}, {"maxPerPeriodSantim", 1_000_000_000_001},
		{"maxRequestsPerDay", 0}, {"maxRequestsPerDay", 101},
		{"maxRequestsPerPeriod", 0}, {"maxRequestsPerPeriod", -5}, {"maxRequestsPerPeriod", 101},
	} {
		rec := w.owner.hostile(http.MethodPut, "/api/ewa/settings", ewaCapsBody(map[string]any{b.field: b.value}))
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s %v", b.field, b.value)
		require.Equal(t, "INVALID_REQUEST", errCode(rec))
		require.Contains(t, rec.Body.String(), `"field":"`+b.field+`"`, "%s %v", b.field, b.value)
	}
	for _, raw := range []string{`"1"`, `1.5`, `true`, `{}`, `9223372036854775808`} {
		body := `{"fundingAccount":{"partner":"sandbox","accountNumber":"` + ewaFundingAccount +
			`"},"accessCapPercent":100,"feeFlatSantim":0,"feeBasisPoints":0,"maxRequestsPerDay":` + raw + `}`
		rec := w.owner.hostile(http.MethodPut, "/api/ewa/settings", body)
		require.Equal(t, http.StatusBadRequest, rec.Code, raw)
		require.Equal(t, "INVALID_REQUEST", errCode(rec), raw)
		if raw != `9223372036854775808` && raw != `{}` {
			require.Contains(t, rec.Body.String(), `"field":"maxRequestsPerDay"`, raw)
		}
	}
	require.Equal(t, got, decode[ewaSettingsJSON](t, w.owner.call(http.MethodGet, "/api/ewa/settings", nil)), "nothing changed")

	// null and absent are both "no cap": the PUT replaces the settings as a whole.
	cleared := w.caps(map[string]any{"maxPerDaySantim": nil, "maxRequestsPerDay": 2})
	require.Equal(t, ewaCapsJSON{MaxRequestsPerDay: i64(2)}, cleared.ewaCapsJSON)
}

// TestEwaCapsEligibilityAndRefusals: the eligibility answer shows the usage, each limit's room
// and the limit that binds; a request over it is EWA_LIMIT_EXCEEDED naming that limit
// (details.limitingFactor), audited DENIED, nothing created.
func TestEwaCapsEligibilityAndRefusals(t *testing.T) {
	t.Parallel()
	w := newEwaWorld(t, 3_000_000) // earned 2,300,000 on the 23rd: the 100% cap is 2,300,000
	w.caps(map[string]any{"maxPerDaySantim": 300_000, "maxPerPeriodSantim": 500_000, "maxRequestsPerPeriod": 3})
	e := w.eligibility(w.employee)
	require.EqualValues(t, 300_000, e.AvailableSantim)
	require.Equal(t, ewa.FactorDayAmount, e.LimitingFactor)
	require.EqualValues(t, 2_300_000, e.Limits.AccessCapSantim)
	require.EqualValues(t, 500_000, *e.Limits.PeriodAmountSantim)
	require.EqualValues(t, 300_000, *e.Limits.DayAmountSantim)
	require.EqualValues(t, 3, *e.Limits.PeriodRequestsLeft)
	require.Nil(t, e.Limits.DayRequestsLeft)
	require.Nil(t, e.Limits.ProjectedNetPaySantim)
	require.Nil(t, e.RecoverableSantim)
	require.EqualValues(t, 3, *e.Settings.MaxRequestsPerPeriod)

	w.created(w.employee, 250_000)
	d := refusalOf(t, w.request(w.owner, w.employee, 50_001))
	require.Equal(t, limitRefusal{AvailableSantim: 50_000, MaxPrincipalSantim: 50_000, LimitingFactor: ewa.FactorDayAmount}, d)
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'RequestEwa' AND outcome = 'DENIED'`))
	w.created(w.employee, 50_000)

	w.advance(24 * time.Hour) // the 24th: a new day, the same period
	e = w.eligibility(w.employee)
	require.EqualValues(t, 300_000, e.Usage.DrawnInPeriodSantim)
	require.Zero(t, e.Usage.DrawnTodaySantim)
	require.EqualValues(t, 2, e.Usage.RequestsInPeriod)
	require.EqualValues(t, 200_000, e.AvailableSantim)
	require.Equal(t, ewa.FactorPeriodAmount, e.LimitingFactor)
	w.created(w.employee, 1_000)
	d = refusalOf(t, w.request(w.owner, w.employee, 1))
	require.Equal(t, ewa.FactorPeriodCount, d.LimitingFactor)
	require.Zero(t, d.AvailableSantim)
	e = w.eligibility(w.employee)
	require.False(t, e.Eligible)
	require.Equal(t, ewa.FactorPeriodCount, e.LimitingFactor)
	require.Equal(t, 3, w.count(w.tenant, `SELECT count(*) FROM app.ewa_requests`))
}

// TestEwaProjectedNetPayLimit: with Deps.EwaRecoverable wired (a stub here: the payroll
// calculator's projection in production), eligibility shows recoverableSantim and an advance is
// limited to it (PROJECTED_NET_PAY); without it the settings' limits alone apply.
func TestEwaProjectedNetPayLimit(t *testing.T) {
	t.Parallel()
	w := newEwaWorld(t, 3_000_000)
	w.settings(100, 0, 50) // cap 1,150,000; fee 100
	var seen []string
	w.srv.deps.EwaRecoverable = func(ctx context.Context, q db.Querier, tenant, employeeID string, now time.Time) (int64, bool, error) {
		seen = append(seen, employeeID)
		return 200_000, true, nil
	}
	e := w.eligibility(w.employee)
	require.EqualValues(t, 200_000, *e.RecoverableSantim)
	require.EqualValues(t, 200_000, *e.Limits.ProjectedNetPaySantim)
	require.EqualValues(t, 200_000, e.AvailableSantim)
	require.EqualValues(t, 199_900, e.MaxPrincipalSantim)
	require.Equal(t, ewa.FactorProjectedNetPay, e.LimitingFactor)
	d := refusalOf(t, w.request(w.owner, w.employee, 199_901))
	require.Equal(t, limitRefusal{AvailableSantim: 200_000, MaxPrincipalSantim: 199_900, LimitingFactor: ewa.FactorProjectedNetPay}, d)
	w.created(w.employee, 199_900)
	require.Equal(t, []string{w.employee, w.employee, w.employee}, seen)

	w.srv.deps.EwaRecoverable = nil
	e = w.eligibility(w.employee)
	require.Nil(t, e.RecoverableSantim)
	require.Equal(t, ewa.FactorAccessCap, e.LimitingFactor)
	require.EqualValues(t, 1_150_000-200_000, e.AvailableSantim)
}

// TestEwaCapsHoldUnderRacingRequests: 20 racing requests for one employee against the period's
// count cap, then against its amount cap. The employee's row lock serialises the checks, so
// exactly the allowed number are created and every other one is EWA_LIMIT_EXCEEDED naming the
// cap; never a 5xx.
func TestEwaCapsHoldUnderRacingRequests(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		caps    map[string]any
		allowed int
		factor  ewa.Factor
	}{
		{"period count 7", map[string]any{"maxRequestsPerPeriod": 7}, 7, ewa.FactorPeriodCount},
		{"period amount 500,000", map[string]any{"maxPerPeriodSantim": 500_000}, 5, ewa.FactorPeriodAmount},
		{"day count 4 under a period amount 900,000", map[string]any{"maxRequestsPerDay": 4, "maxPerPeriodSantim": 900_000}, 4, ewa.FactorDayCount},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newEwaWorld(t, 3_000_000) // the 100% cap is 2,300,000: never the one that binds
			w.caps(c.caps)
			const n = 20
			recs := make([]*httptest.ResponseRecorder, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req := httptest.NewRequest(http.MethodPost, "/api/ewa/requests",
						strings.NewReader(fmt.Sprintf(`{"employeeId":%q,"amountSantim":100000}`, w.employee)))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Idempotency-Key", fmt.Sprintf("race-%d", i))
					req.AddCookie(w.owner.cookie)
					rec := httptest.NewRecorder()
					w.srv.Engine.ServeHTTP(rec, req)
					recs[i] = rec
				}()
			}
			wg.Wait()
			created, refused := 0, 0
			for _, rec := range recs {
				switch rec.Code {
				case http.StatusCreated:
					created++
				case http.StatusUnprocessableEntity:
					refused++
					require.Equal(t, c.factor, refusalOf(t, rec).LimitingFactor)
				default:
					t.Fatalf("unexpected %d: %s", rec.Code, rec.Body.String())
				}
			}
			t.Logf("%s: %d racing requests, %d created, %d refused EWA_LIMIT_EXCEEDED (%s), 0 other answers; "+
				"over-limit refused %d/%d, within-limit refused %d/%d",
				c.name, n, created, refused, c.factor, min(refused, n-c.allowed), n-c.allowed, max(c.allowed-created, 0), c.allowed)
			require.Equal(t, c.allowed, created)
			require.Equal(t, n-c.allowed, refused)
			require.Equal(t, c.allowed, w.count(w.tenant, `SELECT count(*) FROM app.ewa_requests`))
			require.Equal(t, n-c.allowed, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'RequestEwa' AND outcome = 'DENIED'`))
			e := w.eligibility(w.employee)
			require.EqualValues(t, c.allowed, e.Usage.RequestsInPeriod)
			require.EqualValues(t, int64(c.allowed)*100_000, e.Usage.DrawnInPeriodSantim)
		})
	}
}

// TestEwaProjectedNetPayFromThePayrollCalculator: EwaRecoverableFromPayroll wired as the hook.
// Eligibility's recoverableSantim is payroll.Project's for the current month; an advance lowers
// it by its principal + fee (the projection counts advances on their way); a request past it is
// refused PROJECTED_NET_PAY; and 20 racing requests create exactly as many as the projection
// allows one after another.
func TestEwaProjectedNetPayFromThePayrollCalculator(t *testing.T) {
	t.Parallel()
	w := newEwaWorld(t, 3_000_000) // the 50% access cap is 1,150,000 on the 23rd
	w.settings(100, 0, 50)
	w.srv.deps.EwaRecoverable = EwaRecoverableFromPayroll
	project := func() payroll.Projection {
		t.Helper()
		var p payroll.Projection
		ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: w.tenant, Actor: tenancy.System("ewa-test")})
		require.NoError(t, tenancy.InTx(ctx, w.d.App, func(tx pgx.Tx) error {
			var err error
			p, err = payroll.Project(ctx, tx, w.employee, "2026-11")
			return err
		}))
		require.True(t, p.Paid)
		return p
	}
	p := project()
	e := w.eligibility(w.employee)
	require.Equal(t, p.RecoverableSantim, *e.RecoverableSantim)
	require.Less(t, p.RecoverableSantim, e.Limits.AccessCapSantim, "the share of a 30,000 ETB wage after PAYE and pension binds before half the earned wage")
	require.Equal(t, ewa.FactorProjectedNetPay, e.LimitingFactor)
	require.Equal(t, p.RecoverableSantim, e.AvailableSantim)

	r := w.created(w.employee, 100_000)
	after := project()
	require.Equal(t, p.RecoverableSantim-r.TotalSantim, after.RecoverableSantim, "the advance on its way is what the run will recover")
	e = w.eligibility(w.employee)
	require.Equal(t, after.RecoverableSantim, e.AvailableSantim)
	d := refusalOf(t, w.request(w.owner, w.employee, e.MaxPrincipalSantim+1))
	require.Equal(t, ewa.FactorProjectedNetPay, d.LimitingFactor)

	// Racing: each request sees the ones committed before it (the lock, then the projection).
	allowed := int(after.RecoverableSantim / 100_100) // principal 100,000 + fee 100 each
	const n = 20
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest(http.MethodPost, "/api/ewa/requests",
				strings.NewReader(fmt.Sprintf(`{"employeeId":%q,"amountSantim":100000}`, w.employee)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", fmt.Sprintf("projected-race-%d", i))
			req.AddCookie(w.owner.cookie)
			rec := httptest.NewRecorder()
			w.srv.Engine.ServeHTTP(rec, req)
			codes[i] = rec.Code
		}()
	}
	wg.Wait()
	created := 0
	for _, c := range codes {
		require.Contains(t, []int{http.StatusCreated, http.StatusUnprocessableEntity}, c)
		if c == http.StatusCreated {
			created++
		}
	}
	t.Logf("projected net pay (payroll.Project): recoverable %d santim before the race, %d racing requests of 100,100, %d created (allowed %d), %d refused",
		after.RecoverableSantim, n, created, allowed, n-created)
	require.Equal(t, allowed, created)
	require.GreaterOrEqual(t, project().RecoverableSantim, int64(0))
	require.Less(t, project().RecoverableSantim, int64(100_100))
}
