package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/savings"
	"github.com/wagerail/wagerail/internal/wallet"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/ledger/ledgertest"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// dashFixtureEmployee inserts an employee of tenant in status and returns its id.
func dashFixtureEmployee(t testing.TB, d *testkit.DB, tenant, status string, linkedUser string) string {
	t.Helper()
	id := "emp_" + testkit.Unique("d")
	var user any
	if linkedUser != "" {
		user = linkedUser
	}
	require.NoError(t, db.InTenantTx(context.Background(), d.App, tenant, func(tx pgx.Tx) error {
		_, err := tx.Exec(context.Background(), `INSERT INTO app.employees (id, tenant_id, first_name, last_name, full_name,
				national_id, hire_date, status, gross_monthly_salary_santim, payout_partner, payout_account_number, payout_holder_name, user_id)
			VALUES ($1, $2, 'Abebe', 'Kebede', 'Abebe Kebede', $3, '2024-01-01', $4, 1500000, 'sandbox', '1000123', 'Abebe Kebede', $5)`,
			id, tenant, fmt.Sprintf("ET%010d", time.Now().UnixNano()%1e10), status, user)
		return err
	}))
	return id
}

// dashFixture runs sql (each statement with its own args) in tenant's transaction as the runtime
// role: the rows any saga would have left, every CHECK of the tables kept.
func dashFixture(t testing.TB, d *testkit.DB, tenant string, stmts ...[]any) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, d.App, tenant, func(tx pgx.Tx) error {
		for _, s := range stmts {
			if _, err := tx.Exec(ctx, s[0].(string), s[1:]...); err != nil {
				return fmt.Errorf("%s: %w", s[0], err)
			}
		}
		return nil
	}))
}

func TestBusinessDashboard(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	d := w.f.d
	now := w.f.now() // the server's clock: its month is the dashboard's "this month"
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	lastMonth := month.AddDate(0, -1, 0)

	// An empty business: every section present to its owner, every count 0, no runs.
	rec := w.owner.call(http.MethodGet, "/api/business/"+w.a+"/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	empty := decode[businessDashboardJSON](t, rec)
	require.Equal(t, w.a, empty.BusinessID)
	require.Equal(t, &employeeSummaryJSON{Total: 0, Linked: 0,
		ByStatus: map[string]int64{"ACTIVE": 0, "ON_LEAVE": 0, "SUSPENDED": 0, "TERMINATED": 0}}, empty.Employees)
	require.NotNil(t, empty.Payroll)
	require.Nil(t, empty.Payroll.LatestRun)
	require.Nil(t, empty.Payroll.LastCompletedRun)
	require.Equal(t, map[string]int64{"DRAFT": 0, "CALCULATED": 0, "APPROVED": 0, "DISBURSING": 0, "DISBURSED": 0, "COMPLETED": 0, "CANCELLED": 0},
		empty.Payroll.RunsByStatus)
	require.Equal(t, &ewaSummaryJSON{ByStatus: map[string]int64{"REQUESTED": 0, "DISBURSING": 0, "DISBURSED": 0, "REPAID": 0, "FAILED": 0, "CANCELLED": 0}},
		empty.Ewa)
	require.Equal(t, &loanSummaryJSON{ByStatus: zeroLoanStatuses()}, empty.Loans)
	require.Equal(t, &bnplSummaryJSON{ByStatus: map[string]int64{"ACCEPTED": 0, "ACTIVE": 0, "SETTLED": 0, "FAILED": 0, "DEFAULTED": 0, "WRITTEN_OFF": 0}},
		empty.Bnpl)
	require.Equal(t, &equbSummaryJSON{ByStatus: map[string]int64{"FORMING": 0, "RUNNING": 0, "COMPLETED": 0}}, empty.Equb)
	require.Equal(t, &disputeSummaryJSON{ByStatus: map[string]int64{"OPENED": 0, "UNDER_INVESTIGATION": 0, "CLOSED_NO_ACTION": 0,
		"RESOLVED_ADJUSTMENT": 0, "RESOLVED_REVERSAL": 0, "ESCALATED_TO_PARTNER": 0, "REOPENED": 0}}, empty.Disputes)

	// Business A: four employees (one on leave, one terminated, one deleted, one linked to its
	// owner's account), three runs, five advances. Business B: the same kind of rows, which A's
	// dashboard must never count.
	ownerID := bizUserID(t, w.owner)
	e1 := dashFixtureEmployee(t, d, w.a, "ACTIVE", ownerID)
	dashFixtureEmployee(t, d, w.a, "ACTIVE", "")
	dashFixtureEmployee(t, d, w.a, "ON_LEAVE", "")
	dashFixtureEmployee(t, d, w.a, "TERMINATED", "")
	gone := dashFixtureEmployee(t, d, w.a, "ACTIVE", "")
	dashFixture(t, d, w.a, []any{`UPDATE app.employees SET deleted_at = now() WHERE id = $1`, gone})
	run := func(tenant, period, status string) []any {
		calc := status != "DRAFT"
		approved := status == "COMPLETED"
		return []any{`INSERT INTO app.payroll_runs (id, tenant_id, period, status, employee_count, gross_santim, deductions_santim,
				net_santim, created_by, calculated_by, calculated_at, approved_by, approved_at)
			VALUES ($1, $2, $3, $4, 3, 9000000, 2000000, 7000000, 'user_maker',
				CASE WHEN $5 THEN 'user_maker' END, CASE WHEN $5 THEN now() END,
				CASE WHEN $6 THEN 'user_checker' END, CASE WHEN $6 THEN now() END)`,
			"prun_" + testkit.Unique("d"), tenant, period, status, calc, approved}
	}
	dashFixture(t, d, w.a, run(w.a, "2026-08", "COMPLETED"), run(w.a, "2026-09", "DRAFT"), run(w.a, "2026-10", "CALCULATED"))
	advance := func(tenant, employee, status string, principal, fee, repaid int64, disbursedAt time.Time) []any {
		return []any{`INSERT INTO app.ewa_requests (id, tenant_id, employee_id, principal_santim, fee_santim, status, workflow_id,
				repaid_amount_santim, repayment_source, repayment_ledger_tx_id, period_start, requested_by, disbursed_at, repaid_at)
			VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $6 NOT IN ('REQUESTED', 'CANCELLED') THEN 'wf-' || $1 END,
				nullif($7::numeric, 0), CASE WHEN $7 > 0 THEN 'PAYROLL' END, CASE WHEN $7 > 0 THEN 'ltx_1' END,
				$8, 'user_maker', CASE WHEN $6 IN ('DISBURSED', 'REPAID') THEN $9::timestamptz END,
				CASE WHEN $6 = 'REPAID' THEN $9::timestamptz END)`,
			"ewa_" + testkit.Unique("d"), tenant, employee, principal, fee, status, repaid, month, disbursedAt}
	}
	dashFixture(t, d, w.a,
		advance(w.a, e1, "DISBURSED", 100_000, 2_000, 30_000, month.Add(time.Hour)), // owes 72,000
		advance(w.a, e1, "DISBURSED", 40_000, 800, 0, lastMonth),                    // owes 40,800; paid out last month
		advance(w.a, e1, "REQUESTED", 50_000, 1_000, 0, time.Time{}),                // in flight 51,000
		advance(w.a, e1, "DISBURSING", 20_000, 500, 0, time.Time{}),                 // in flight 20,500
		advance(w.a, e1, "REPAID", 10_000, 200, 10_200, month.Add(2*time.Hour)),     // paid out this month, owes nothing
		advance(w.a, e1, "CANCELLED", 5_000, 100, 0, time.Time{}))
	eB := dashFixtureEmployee(t, d, w.b, "ACTIVE", "")
	dashFixture(t, d, w.b, run(w.b, "2026-10", "COMPLETED"), advance(w.b, eB, "DISBURSED", 999_000, 0, 0, month.Add(time.Hour)))

	rec = w.owner.call(http.MethodGet, "/api/business/"+w.a+"/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	full := decode[businessDashboardJSON](t, rec)
	require.Equal(t, &employeeSummaryJSON{Total: 4, Linked: 1,
		ByStatus: map[string]int64{"ACTIVE": 2, "ON_LEAVE": 1, "SUSPENDED": 0, "TERMINATED": 1}}, full.Employees)
	require.Equal(t, map[string]int64{"DRAFT": 1, "CALCULATED": 1, "APPROVED": 0, "DISBURSING": 0, "DISBURSED": 0, "COMPLETED": 1, "CANCELLED": 0},
		full.Payroll.RunsByStatus)
	require.Equal(t, "2026-10", full.Payroll.LatestRun.Period)
	require.Equal(t, "CALCULATED", full.Payroll.LatestRun.Status)
	require.Equal(t, "2026-08", full.Payroll.LastCompletedRun.Period)
	require.Equal(t, int64(7_000_000), full.Payroll.LastCompletedRun.NetSantim)
	require.Equal(t, &ewaSummaryJSON{
		ByStatus:         map[string]int64{"REQUESTED": 1, "DISBURSING": 1, "DISBURSED": 2, "REPAID": 1, "FAILED": 0, "CANCELLED": 1},
		OutstandingCount: 2, OutstandingSantim: 72_000 + 40_800, InFlightSantim: 51_000 + 20_500,
		DisbursedThisMonthSantim: 100_000 + 10_000}, full.Ewa)

	// The platform admin sees the same (audited cross-tenant path).
	rec = w.platform.call(http.MethodGet, "/api/business/"+w.a+"/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	asPlatform := decode[businessDashboardJSON](t, rec)
	asPlatform.AsOf = full.AsOf
	require.Equal(t, full, asPlatform)

	// Sections follow their own routes' guards: an admin without payroll.view sees no payroll; a
	// plain member sees the employees only.
	rec = w.admin.call(http.MethodGet, "/api/business/"+w.a+"/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	admin := decode[businessDashboardJSON](t, rec)
	require.Equal(t, full.Employees, admin.Employees)
	require.Nil(t, admin.Payroll)
	require.Equal(t, full.Ewa, admin.Ewa)
	require.Equal(t, full.Disputes, admin.Disputes)
	require.Equal(t, full.Loans, admin.Loans)
	rec = w.member.call(http.MethodGet, "/api/business/"+w.a+"/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	member := decode[businessDashboardJSON](t, rec)
	require.Equal(t, full.Employees, member.Employees)
	require.Nil(t, member.Payroll)
	require.Nil(t, member.Ewa)
	require.Nil(t, member.Disputes, "disputes are the admins'")
	require.Equal(t, full.Loans, member.Loans)
	require.Equal(t, full.Bnpl, member.Bnpl)
	require.Equal(t, full.Equb, member.Equb)

	// B's owner may not read A's; B's own dashboard counts B's rows only.
	rec = w.other.call(http.MethodGet, "/api/business/"+w.a+"/dashboard", nil)
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "NOT_A_MEMBER", errCode(rec))
	rec = w.other.call(http.MethodGet, "/api/business/"+w.b+"/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	b := decode[businessDashboardJSON](t, rec)
	require.Equal(t, int64(1), b.Employees.Total)
	require.Equal(t, int64(999_000), b.Ewa.OutstandingSantim)
	require.Equal(t, "2026-10", b.Payroll.LastCompletedRun.Period)

	// Not a business: 404 for the platform admin; an FI's owner is refused its own id here too.
	rec = w.platform.call(http.MethodGet, "/api/business/org_missing/dashboard", nil)
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	fiOwner, res := w.f.signUp("owner@fi.example", "FI")
	rec = fiOwner.call(http.MethodGet, "/api/business/"+res.Organization.ID+"/dashboard", nil)
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	rec = w.anon.call(http.MethodGet, "/api/business/"+w.a+"/dashboard", nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
}

// TestDashboardSectionsNameRoutes: every dashboard and settings-page section names a row of the route table (a
// renamed route would otherwise panic at the first request).
func TestDashboardSectionsNameRoutes(t *testing.T) {
	s := newTestServer()
	for _, sec := range slices.Concat(dashboardSections, businessSettingsSections, fiSettingsSections, merchantSettingsSections) {
		_, ok := s.guards[sec.route]
		require.True(t, ok, sec.route)
	}
}

func TestAdminDashboard(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	d := w.f.d
	read := func() adminDashboardJSON {
		t.Helper()
		rec := w.platform.call(http.MethodGet, "/api/admin/dashboard", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[adminDashboardJSON](t, rec)
	}
	before := read()
	for _, k := range []string{"BUSINESS", "FI", "MERCHANT"} {
		require.Contains(t, before.Organizations, k)
		require.Len(t, before.Organizations[k].ByStatus, 3, k)
	}
	require.GreaterOrEqual(t, before.Organizations["BUSINESS"].ByStatus["ACTIVE"], int64(2), "A and B")

	// A new FI (KYC pending), B suspended, two KYC submissions waiting (one claimed), a screening
	// waiting for review, a dead letter.
	w.f.signUp("owner@fi.example", "FI")
	rec := w.platform.call(http.MethodPut, "/api/business/"+w.b+"/status", map[string]any{"status": "SUSPENDED"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	e1 := dashFixtureEmployee(t, d, w.a, "ACTIVE", "")
	e2 := dashFixtureEmployee(t, d, w.a, "ACTIVE", "")
	kycRow := func(employee, status string) []any {
		return []any{`INSERT INTO app.kyc_submissions (id, tenant_id, subject_type, subject_id, full_name, national_id, date_of_birth,
				photo_key, status, claimed_by, claimed_at, submitted_by)
			VALUES ($1, $2, 'EMPLOYEE', $3, 'Abebe Kebede', 'ET0000001', '1990-01-01', 'k', $4,
				CASE WHEN $4 = 'IN_REVIEW' THEN 'user_reviewer' END, CASE WHEN $4 = 'IN_REVIEW' THEN now() END, 'user_maker')`,
			"kyc_" + testkit.Unique("d"), w.a, employee, status}
	}
	dashFixture(t, d, w.a, kycRow(e1, "PENDING"), kycRow(e2, "IN_REVIEW"),
		[]any{`INSERT INTO app.sanctions_checks (id, tenant_id, subject_type, subject_id, name_screened, outcome, score, evidence,
				list_versions, trigger, needs_review)
			VALUES ($1, $2, 'EMPLOYEE', $3, 'Abebe Kebede', 'REVIEW', 0.9, '[]', '{}', 'SCREEN', true)`, "sc_" + testkit.Unique("d"), w.a, e1})
	ctx := tenancy.WithActor(context.Background(), "system:test-fixture")
	require.NoError(t, crosstenant.Tx(ctx, d.Platform(t), "test fixture: a dead letter", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.outbox_dead_letter (event_id, tenant_id, type, occurred_at, payload, attempts, last_error, created_at, consumer)
			VALUES (gen_random_uuid(), $1, 'ewa.disbursed.v1', now(), '{}', 12, 'down', now(), '*')`, w.a)
		return err
	}))

	after := read()
	delta := func(kind, status string) int64 {
		return after.Organizations[kind].ByStatus[status] - before.Organizations[kind].ByStatus[status]
	}
	require.Equal(t, int64(1), delta("FI", "ACTIVE"))
	require.Equal(t, int64(1), after.Organizations["FI"].KycPending-before.Organizations["FI"].KycPending)
	require.Equal(t, int64(-1), delta("BUSINESS", "ACTIVE"))
	require.Equal(t, int64(1), delta("BUSINESS", "SUSPENDED"))
	require.Equal(t, int64(0), after.Organizations["BUSINESS"].KycPending-before.Organizations["BUSINESS"].KycPending, "a suspended business still waits for its review")
	require.Equal(t, before.KycQueue.Pending+1, after.KycQueue.Pending)
	require.Equal(t, before.KycQueue.InReview+1, after.KycQueue.InReview)
	require.Equal(t, before.SanctionsAwaitingReview+1, after.SanctionsAwaitingReview)
	require.Equal(t, before.DeadLetters+1, after.DeadLetters)

	// Platform admins only; the refusal is on the platform's trail.
	for _, a := range []*apiClient{w.owner, w.admin, w.member} {
		rec = a.call(http.MethodGet, "/api/admin/dashboard", nil)
		require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
		require.Equal(t, "PLATFORM_ADMIN_REQUIRED", errCode(rec))
	}
	rec = w.anon.call(http.MethodGet, "/api/admin/dashboard", nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
}

func zeroLoanStatuses() map[string]int64 {
	return map[string]int64{"REQUESTED": 0, "APPROVED": 0, "REJECTED": 0, "CANCELLED": 0, "DISBURSING": 0, "ACTIVE": 0,
		"REPAID": 0, "DEFAULTED": 0, "WRITTEN_OFF": 0}
}

// TestPartnerDashboards: the FI's dashboard counts the loans it funds (of every business), the
// business's the loans of its employees; a merchant's counts its agreements; each portal's route
// refuses the other kinds.
func TestPartnerDashboards(t *testing.T) {
	t.Parallel()
	w := newLoanAPIWorld(t)
	w.originate(t, w.employee, 1_000_000, 6)
	w.originate(t, w.employee, 500_000, 3)
	rec := w.otherBiz.call(http.MethodPost, "/api/loans", w.loanBody(w.otherEmployee, 2_000_000, 12), "Idempotency-Key", loanKey())
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())

	fiDash := func(a *apiClient) fiDashboardJSON {
		t.Helper()
		rec := a.call(http.MethodGet, "/api/fi/dashboard", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[fiDashboardJSON](t, rec)
	}
	want := zeroLoanStatuses()
	want["REQUESTED"] = 3
	got := fiDash(w.fi)
	require.Equal(t, w.fiID, got.OrganizationID)
	require.Equal(t, &loanSummaryJSON{ByStatus: want}, got.Loans, "REQUESTED loans owe nothing yet")
	require.Equal(t, &loanSummaryJSON{ByStatus: zeroLoanStatuses()}, fiDash(w.otherFI).Loans, "another FI's")
	rec = w.biz.call(http.MethodGet, "/api/business/"+w.bizID+"/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	want["REQUESTED"] = 2
	require.Equal(t, &loanSummaryJSON{ByStatus: want}, decode[businessDashboardJSON](t, rec).Loans, "the business's own two")

	// Each portal's dashboard is its kind's: refused (audited) to the others, whose roles cannot
	// grant the module (the permission guard answers first, as on every FI and merchant route).
	rec = w.biz.call(http.MethodGet, "/api/fi/dashboard", nil)
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "PERMISSION_DENIED", errCode(rec))
	rec = w.fi.call(http.MethodGet, "/api/bnpl/merchant/dashboard", nil)
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "PERMISSION_DENIED", errCode(rec))
	merchant, _ := w.signUpPartner("owner@merchant.test", "MERCHANT")
	rec = merchant.call(http.MethodGet, "/api/bnpl/merchant/dashboard", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, map[string]int64{"ACCEPTED": 0, "ACTIVE": 0, "SETTLED": 0, "FAILED": 0, "DEFAULTED": 0, "WRITTEN_OFF": 0},
		decode[merchantDashboardJSON](t, rec).Agreements.ByStatus)
	rec = merchant.call(http.MethodGet, "/api/fi/dashboard", nil)
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())

	// A member of the FI without loans.view is refused its dashboard.
	viewer := bizAddMember(t, w.d, w.srv, w.fiID, "plain@lender.test", orgs.PlainMember)
	rec = viewer.call(http.MethodGet, "/api/fi/dashboard", nil)
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, "PERMISSION_DENIED", errCode(rec))
}

// dashLedger counts the balance reads it passes to the ledger, and refuses them as an unreachable
// ledger would when fail is set.
type dashLedger struct {
	ledgerv1.LedgerServiceClient
	getBalance, getBalances int
	fail                    bool
}

func (l *dashLedger) GetBalance(ctx context.Context, in *ledgerv1.GetBalanceRequest, opts ...grpc.CallOption) (*ledgerv1.GetBalanceResponse, error) {
	l.getBalance++
	if l.fail {
		return nil, grpcstatus.Error(codes.Unavailable, "ledger down")
	}
	return l.LedgerServiceClient.GetBalance(ctx, in, opts...)
}

func (l *dashLedger) GetBalances(ctx context.Context, in *ledgerv1.GetBalancesRequest, opts ...grpc.CallOption) (*ledgerv1.GetBalancesResponse, error) {
	l.getBalances++
	if l.fail {
		return nil, grpcstatus.Error(codes.Unavailable, "ledger down")
	}
	return l.LedgerServiceClient.GetBalances(ctx, in, opts...)
}

// TestEmployeeDashboard: the employee's own figures, read through the API (validated against
// openapi.yaml): the wallet and the savings from the real ledger over gRPC, the advances by the
// EWA rules, the unread notifications; nothing of another employee's; a user linked to no
// employee is 404; without a ledger, wallet and savings are null and the rest answers.
func TestEmployeeDashboard(t *testing.T) {
	t.Parallel()
	w := newWalletWorld(t)
	me := w.linkEmployeeUser(t, "abebe@dash.test")
	userID := bizUserID(t, me)
	read := func(a *apiClient) employeeDashboardJSON {
		t.Helper()
		rec := a.call(http.MethodGet, "/api/employee/dashboard", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[employeeDashboardJSON](t, rec)
	}
	empty := read(me)
	require.Equal(t, w.employee, empty.EmployeeID)
	require.Equal(t, w.tenant, empty.BusinessID)
	require.Equal(t, &walletFiguresJSON{}, empty.Wallet)
	require.Equal(t, &savingsFiguresJSON{}, empty.Savings)
	require.Equal(t, borrowerLoansJSON{}, empty.Loans)
	require.Equal(t, employeeBnplJSON{}, empty.Bnpl)
	require.Equal(t, employeeEqubJSON{}, empty.Equb)
	require.Nil(t, empty.LatestPayslip)
	require.Zero(t, empty.UnreadNotifications)
	require.Zero(t, empty.Ewa.OutstandingSantim)

	// Money in the wallet (one transfer out still held), a goal with savings and a closed one, an
	// advance this period partly repaid, two notifications of which one is read.
	w.move(t, true, 5_000, false)
	w.move(t, false, 700, true)
	open, closed := "sgl_"+testkit.Unique("d"), "sgl_"+testkit.Unique("d")
	now := w.now()
	dashFixture(t, w.d, w.tenant,
		[]any{`INSERT INTO app.savings_goals (id, tenant_id, employee_id, name, target_santim, created_by) VALUES ($1, $2, $3, 'Rent', 100000, 'user_x')`,
			open, w.tenant, w.employee},
		[]any{`INSERT INTO app.savings_goals (id, tenant_id, employee_id, name, target_santim, created_by, status, closed_at, closed_by)
			VALUES ($1, $2, $3, 'Old', 100000, 'user_x', 'CLOSED', now(), 'user_x')`, closed, w.tenant, w.employee},
		[]any{`INSERT INTO app.ewa_requests (id, tenant_id, employee_id, principal_santim, fee_santim, status, workflow_id,
				repaid_amount_santim, repayment_source, repayment_ledger_tx_id, period_start, requested_by, disbursed_at)
			VALUES ($1, $2, $3, 30000, 600, 'DISBURSED', 'wf-dash', 10000, 'EMPLOYEE', 'ltx_1', $4, 'user_x', $5)`,
			"ewa_" + testkit.Unique("d"), w.tenant, w.employee, time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC), now},
		[]any{`INSERT INTO app.notifications (id, tenant_id, user_id, event_id, event_type, category, title, body, language, read_at)
			VALUES ($1, $2, $3, gen_random_uuid(), 'ewa.disbursed.v1', 'EWA', 'Paid', 'Your advance is paid', 'en', NULL),
			       ($4, $2, $3, gen_random_uuid(), 'ewa.requested.v1', 'EWA', 'Asked', 'Your advance is asked for', 'en', now())`,
			"ntf_" + testkit.Unique("d"), w.tenant, userID, "ntf_" + testkit.Unique("d")})
	_, err := w.ledger.PostCreatingAccounts(context.Background(), &ledgerv1.PostTransactionRequest{
		TenantId: w.tenant, IdempotencyKey: testkit.Unique("dash-savings"), Status: ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED,
		Entries: []*ledgerv1.EntryInput{
			{AccountName: savings.Account(open), Direction: ledgerv1.Direction_DIRECTION_CREDIT, AmountSantim: 1_200},
			{AccountName: wallet.Account(w.employee), Direction: ledgerv1.Direction_DIRECTION_DEBIT, AmountSantim: 1_200},
		}})
	require.NoError(t, err)

	got := read(me)
	require.Equal(t, &walletFiguresJSON{PostedSantim: 5_000 - 1_200, AvailableSantim: 5_000 - 1_200 - 700}, got.Wallet)
	require.Equal(t, &savingsFiguresJSON{OpenGoals: 1, SavedSantim: 1_200}, got.Savings, "the closed goal is not counted")
	require.Equal(t, int64(30_000+600-10_000), got.Ewa.OutstandingSantim)
	require.Equal(t, int64(1), got.UnreadNotifications)
	// The eligibility figures are the EWA route's, for the same employee at the same instant.
	rec := w.owner.call(http.MethodGet, "/api/ewa/eligibility?employeeId="+w.employee, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	el := decode[ewaEligibilityJSON](t, rec)
	require.Equal(t, ewaFiguresJSON{Eligible: el.Eligible, AvailableSantim: el.AvailableSantim, MaxPrincipalSantim: el.MaxPrincipalSantim,
		OutstandingSantim: el.OutstandingSantim, PeriodEnd: el.Period.End}, got.Ewa)

	// Not linked: 404; anonymous: 401.
	requireStatus(t, w.owner.call(http.MethodGet, "/api/employee/dashboard", nil), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	rec = w.client().call(http.MethodGet, "/api/employee/dashboard", nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)

	// The wallet and every open goal are read in one GetBalances call, a goal the ledger has no
	// account for yet holding zero; a ledger that cannot be read leaves both null. (A second
	// ledger service on the same database, behind a client that counts and can fail.)
	dashFixture(t, w.d, w.tenant,
		[]any{`INSERT INTO app.savings_goals (id, tenant_id, employee_id, name, target_santim, created_by) VALUES ($1, $2, $3, 'New', 100000, 'user_x')`,
			"sgl_" + testkit.Unique("d"), w.tenant, w.employee})
	counted := &dashLedger{LedgerServiceClient: ledgertest.Serve(t, w.d.App, nil)}
	w.srv.deps.Ledger = ledger.NewClient(counted, ledger.ClientOptions{})
	two := read(me)
	require.Equal(t, got.Wallet, two.Wallet)
	require.Equal(t, &savingsFiguresJSON{OpenGoals: 2, SavedSantim: 1_200}, two.Savings, "the new goal holds nothing yet")
	require.Equal(t, [2]int{1, 0}, [2]int{counted.getBalances, counted.getBalance}, "one GetBalances call, no GetBalance")
	counted.fail = true
	down := read(me)
	require.Nil(t, down.Wallet)
	require.Nil(t, down.Savings)
	require.Equal(t, got.Ewa, down.Ewa)

	// No ledger: wallet and savings null, the rest as before.
	w.srv.deps.Ledger = nil
	noLedger := read(me)
	require.Nil(t, noLedger.Wallet)
	require.Nil(t, noLedger.Savings)
	require.Equal(t, got.Ewa, noLedger.Ewa)
	require.Equal(t, got.UnreadNotifications, noLedger.UnreadNotifications)
}
