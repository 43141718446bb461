//go:build !noembed

package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/sanctions"
	"github.com/wagerail/wagerail/sandbox"
)

// demoTestActor is who the test's cross-tenant reads act as.
var demoTestActor = tenancy.System("demo-test")

// readCredentials reads the data dir's credentials.json and checks it is private (0600).
func readCredentials(t *testing.T, dataDir string) devCredentials {
	t.Helper()
	path := filepath.Join(dataDir, credentialsFile)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "credentials.json is private")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var c devCredentials
	require.NoError(t, json.Unmarshal(b, &c))
	return c
}

// sandboxURL is the bank sandbox's base URL as dev printed it.
func (p *devProc) sandboxURL(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`Bank sandbox\s+(http://\S+)/api/v1`).FindStringSubmatch(p.out.String())
	require.NotNil(t, m, "no sandbox URL in:\n%s", p.out.String())
	return m[1]
}

// sandboxAccount is the sandbox operator's view of an account (404: none).
func sandboxAccount(t *testing.T, base, number string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/sandbox/accounts/" + number)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// requireNoDemo: a stack started with --no-demo seeded nothing — no sandbox demo account, no
// demo credentials, nothing printed. (The dev stack test also finds no platform admin.)
func requireNoDemo(t *testing.T, p *devProc) {
	t.Helper()
	sb := p.sandboxURL(t)
	for _, a := range sandbox.DemoAccounts {
		code, _ := sandboxAccount(t, sb, a.AccountNumber)
		require.Equal(t, http.StatusNotFound, code, "sandbox demo account %s opened under --no-demo", a.AccountNumber)
	}
	require.Nil(t, readCredentials(t, p.dataDir).Demo)
	require.NotContains(t, p.out.String(), "Demo (")
	require.NotContains(t, p.out.String(), "  demo ")
}

// demoSnapshot counts what the demo makes (every mutation writes an audit row; the cross-tenant
// access rows of the stack's own pollers are left out, they come and go with time).
type demoSnapshot struct {
	Users, Sessions, Organizations, Employees, KycSubmissions, Uploads, ListVersions, Checks, Audit int
	KycStatus                                                                                       map[string]kyc.Status // employee id → status
}

func demoPlatformTx(t *testing.T, dataDir string, fn func(ctx context.Context, tx pgx.Tx)) {
	t.Helper()
	ctx := tenancy.WithActor(t.Context(), demoTestActor)
	dsn, err := privateClusterURL("demo test", dataDir, db.PlatformRole)
	require.NoError(t, err)
	pool, err := db.Open(ctx, dsn, 2)
	require.NoError(t, err)
	defer pool.Close()
	require.NoError(t, crosstenant.Tx(ctx, pool, "demo test", func(tx pgx.Tx) error {
		fn(ctx, tx)
		return nil
	}))
}

func takeDemoSnapshot(t *testing.T, dataDir string) demoSnapshot {
	t.Helper()
	s := demoSnapshot{KycStatus: map[string]kyc.Status{}}
	demoPlatformTx(t, dataDir, func(ctx context.Context, tx pgx.Tx) {
		require.NoError(t, tx.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM app.users), (SELECT count(*) FROM app.sessions), (SELECT count(*) FROM app.organizations),
			(SELECT count(*) FROM app.employees), (SELECT count(*) FROM app.kyc_submissions), (SELECT count(*) FROM app.uploads),
			(SELECT count(*) FROM app.sanctions_list_versions), (SELECT count(*) FROM app.sanctions_checks),
			(SELECT count(*) FROM app.audit_log WHERE action <> $1)`, crosstenant.Action).Scan(
			&s.Users, &s.Sessions, &s.Organizations, &s.Employees, &s.KycSubmissions, &s.Uploads, &s.ListVersions, &s.Checks, &s.Audit))
		rows, err := tx.Query(ctx, `SELECT subject_id, status FROM app.kyc_submissions WHERE subject_type = 'EMPLOYEE'`)
		require.NoError(t, err)
		for rows.Next() {
			var id, st string
			require.NoError(t, rows.Scan(&id, &st))
			s.KycStatus[id] = kyc.Status(st)
		}
		require.NoError(t, rows.Err())
	})
	return s
}

// TestDemoSeededOnceThenLeftAlone runs `wagerail dev` as `make run` does, on a fresh data dir:
// the demo is seeded (admin, owner and business, three employees in their states, EWA settings,
// the sandbox accounts) and printed; a second run on the same data dir changes nothing.
func TestDemoSeededOnceThenLeftAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the whole stack twice")
	}
	bin := testkit.Binary(t)
	dataDir := filepath.Join(testkit.DataDir(t), "data")
	p := startDev(t, bin, dataDir)
	require.Contains(t, p.out.String(), "  demo       ready in", "stderr tail:\n%s", tail(p.errOut.String(), 30))

	// The credentials: generated (not fixed), kept 0600, printed after the URLs with the
	// employee ids and the pointer to the walk-through.
	creds := readCredentials(t, dataDir)
	d := creds.Demo
	require.NotNil(t, d)
	require.True(t, d.Complete)
	require.Len(t, d.AdminPassword, 36)
	require.Len(t, d.OwnerPassword, 36)
	require.NotEqual(t, d.AdminPassword, d.OwnerPassword)
	require.Len(t, d.Employees, len(demoEmployees))
	out := p.out.String()
	demoAt := strings.Index(out, "Demo (--no-demo leaves it out;")
	require.Greater(t, demoAt, strings.Index(out, "Bank sandbox"), "the demo is printed after the URLs")
	for _, s := range []string{d.AdminEmail, d.AdminPassword, d.OwnerEmail, d.OwnerPassword, d.BusinessID, demoFundingAccount,
		`README.md, "Try it: an early wage advance"`} {
		require.Contains(t, out[demoAt:], s)
	}
	for _, e := range demoEmployees {
		require.Regexp(t, regexp.QuoteMeta(d.Employees[e.Key])+`\s+`+e.First+" "+e.Last+", KYC ", out[demoAt:])
	}

	// The sandbox: the funding account and the employees' accounts with their holder names;
	// the bad-account employee's account does not exist.
	sb := p.sandboxURL(t)
	code, acct := sandboxAccount(t, sb, demoFundingAccount)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "Wagerail EWA Float", acct["holderName"])
	for _, e := range demoEmployees {
		code, acct := sandboxAccount(t, sb, e.Account)
		if e.AccountMissingFromSandbox {
			require.Equal(t, http.StatusNotFound, code, e.Account)
			continue
		}
		require.Equal(t, http.StatusOK, code, e.Account)
		require.Equal(t, e.First+" "+e.Last, acct["holderName"])
	}

	// Over the API: the owner signs in with the printed password and sees the three employees
	// with their payout accounts and salaries, and the EWA settings.
	ctx := t.Context()
	owner, err := signedIn(ctx, p.apiURL, d.OwnerEmail, d.OwnerPassword)
	require.NoError(t, err)
	var list struct {
		Employees []employeeJSONView `json:"employees"`
	}
	require.NoError(t, owner.call(ctx, http.MethodGet, "/api/employees", nil, http.StatusOK, &list))
	require.Len(t, list.Employees, len(demoEmployees))
	byID := map[string]employeeJSONView{}
	for _, e := range list.Employees {
		byID[e.ID] = e
	}
	for _, e := range demoEmployees {
		got, ok := byID[d.Employees[e.Key]]
		require.True(t, ok, e.Key)
		require.Equal(t, d.BusinessID, got.BusinessID)
		require.Equal(t, e.First+" "+e.Last, got.FullName)
		require.Equal(t, e.SalarySantim, got.GrossMonthlySalarySantim)
		require.Equal(t, "Monthly", got.PaymentFrequency)
		require.Equal(t, "MONTHLY", got.PayCadence)
		require.Equal(t, "****"+e.TIN[len(e.TIN)-4:], got.TIN, "the tax report's TIN, shown masked")
		require.Equal(t, payoutAccountView{Partner: "sandbox", AccountNumber: e.Account, HolderName: e.First + " " + e.Last}, got.PayoutAccount)
	}
	var settings struct {
		FundingAccount struct {
			Partner       string `json:"partner"`
			AccountNumber string `json:"accountNumber"`
		} `json:"fundingAccount"`
		AccessCapPercent int64 `json:"accessCapPercent"`
		FeeFlatSantim    int64 `json:"feeFlatSantim"`
		FeeBasisPoints   int64 `json:"feeBasisPoints"`
		AccountNameMatch bool  `json:"accountNameMatch"`
	}
	require.NoError(t, owner.call(ctx, http.MethodGet, "/api/ewa/settings", nil, http.StatusOK, &settings))
	require.Equal(t, "sandbox", settings.FundingAccount.Partner)
	require.Equal(t, demoFundingAccount, settings.FundingAccount.AccountNumber)
	require.Equal(t, []int64{50, 500, 100}, []int64{settings.AccessCapPercent, settings.FeeFlatSantim, settings.FeeBasisPoints})
	require.False(t, settings.AccountNameMatch)

	// The platform admin signs in with the printed password and finds the pending submission in
	// the review queue.
	admin, err := signedIn(ctx, p.apiURL, d.AdminEmail, d.AdminPassword)
	require.NoError(t, err)
	var queue struct {
		Items []struct {
			SubjectID string `json:"subjectId"`
		} `json:"items"`
	}
	require.NoError(t, admin.call(ctx, http.MethodGet, "/api/kyc/queue", nil, http.StatusOK, &queue))
	require.Len(t, queue.Items, 1)
	require.Equal(t, d.Employees["kycPending"], queue.Items[0].SubjectID)

	// The gates the disburse saga runs, as the saga runs them: KYC and sanctions pass for the
	// approved employees (screened CLEAR against the ingested sample lists), KYC stops the
	// pending one.
	demoPlatformTx(t, dataDir, func(ctx context.Context, tx pgx.Tx) {
		vs, err := sanctions.ActiveVersions(ctx, tx)
		require.NoError(t, err)
		require.Len(t, vs, len(sanctions.SampleSources), "the sample lists are active")
		for _, e := range demoEmployees {
			id := d.Employees[e.Key]
			kycErr := kyc.Gate(ctx, tx, d.BusinessID, kyc.SubjectEmployee, id, time.Now())
			sanctionsErr := sanctions.Gate(ctx, tx, d.BusinessID, sanctions.SubjectEmployee, id)
			if e.ApproveKyc {
				require.NoError(t, kycErr, e.Key)
				require.NoError(t, sanctionsErr, e.Key)
				continue
			}
			require.ErrorIs(t, kycErr, kyc.ErrNotApproved, e.Key)
			require.ErrorIs(t, sanctionsErr, sanctions.ErrNoCheck, e.Key)
		}
	})
	// The lending part: the lender signs in with the printed password and sees its accounts and
	// its product; the business is opted in, its payroll account is set, and Almaz is quoted a
	// loan from the real payroll projection of her pay.
	require.True(t, d.LendingComplete)
	for _, s := range []string{d.LenderEmail, d.LenderPassword, d.FIID, d.LoanProductID, `"Try it: a salary-backed loan"`} {
		require.Contains(t, out[demoAt:], s)
	}
	lender, err := signedIn(ctx, p.apiURL, d.LenderEmail, d.LenderPassword)
	require.NoError(t, err)
	var fiAccounts struct {
		FundingAccount    struct{ AccountNumber string } `json:"fundingAccount"`
		SettlementAccount struct{ AccountNumber string } `json:"settlementAccount"`
	}
	require.NoError(t, lender.call(ctx, http.MethodGet, "/api/fi/accounts", nil, http.StatusOK, &fiAccounts))
	require.Equal(t, []string{demoFIFunding, demoFISettlement}, []string{fiAccounts.FundingAccount.AccountNumber, fiAccounts.SettlementAccount.AccountNumber})
	var optIns struct {
		Items []struct {
			ProductID string `json:"productId"`
		} `json:"items"`
	}
	require.NoError(t, owner.call(ctx, http.MethodGet, "/api/lending/product-opt-ins", nil, http.StatusOK, &optIns))
	require.Len(t, optIns.Items, 1)
	require.Equal(t, d.LoanProductID, optIns.Items[0].ProductID)
	var payrollSettings struct {
		PayrollAccount struct{ AccountNumber string } `json:"payrollAccount"`
	}
	require.NoError(t, owner.call(ctx, http.MethodGet, "/api/payroll/tenant-settings/effective", nil, http.StatusOK, &payrollSettings))
	require.Equal(t, demoPayrollAccount, payrollSettings.PayrollAccount.AccountNumber)
	var quote struct {
		FIPartnerID             string `json:"fiPartnerId"`
		TotalPrincipalSantim    int64  `json:"totalPrincipalSantim"`
		MonthlyInstalmentSantim int64  `json:"monthlyInstalmentSantim"`
	}
	require.NoError(t, owner.call(ctx, http.MethodPost, "/api/loans/quote", map[string]any{"employeeId": d.Employees["kycApproved"],
		"productId": d.LoanProductID, "amountSantim": 10_000_00, "termMonths": 6}, http.StatusOK, &quote))
	require.Equal(t, d.FIID, quote.FIPartnerID)
	require.Equal(t, int64(10_000_00), quote.TotalPrincipalSantim)
	require.Positive(t, quote.MonthlyInstalmentSantim)

	// The payroll part: the approver, a second admin of the business, signs in with the printed
	// password and reads the business's payroll runs.
	require.True(t, d.PayrollComplete)
	for _, s := range []string{d.ApproverEmail, d.ApproverPassword, `"Try it: a payroll run"`} {
		require.Contains(t, out[demoAt:], s)
	}
	approver, err := signedIn(ctx, p.apiURL, d.ApproverEmail, d.ApproverPassword)
	require.NoError(t, err)
	require.NoError(t, approver.call(ctx, http.MethodGet, "/api/payroll", nil, http.StatusOK, nil))

	// The employee part: Almaz signs in as herself with the printed password (her account made
	// from the owner's e-mailed invitation) and reads her own settings and onboarding: hers, in
	// the demo business, the money features open to her.
	require.True(t, d.EmployeeLoginComplete)
	for _, s := range []string{d.EmployeeEmail, d.EmployeePassword, `"Try it: as the employee"`} {
		require.Contains(t, out[demoAt:], s)
	}
	almaz, err := signedIn(ctx, p.apiURL, d.EmployeeEmail, d.EmployeePassword)
	require.NoError(t, err)
	var mine struct {
		EmployeeID string `json:"employeeId"`
		BusinessID string `json:"businessId"`
		Security   struct {
			EmailVerified bool `json:"emailVerified"`
		} `json:"security"`
	}
	require.NoError(t, almaz.call(ctx, http.MethodGet, "/api/employee/settings", nil, http.StatusOK, &mine))
	require.Equal(t, [2]string{d.Employees[demoEmployeeKey], d.BusinessID}, [2]string{mine.EmployeeID, mine.BusinessID})
	require.True(t, mine.Security.EmailVerified, "the e-mailed link proved the address")
	var onboarding struct {
		CanUseMoneyFeatures bool `json:"canUseMoneyFeatures"`
	}
	require.NoError(t, almaz.call(ctx, http.MethodGet, "/api/employee/onboarding", nil, http.StatusOK, &onboarding))
	require.True(t, onboarding.CanUseMoneyFeatures)

	first := takeDemoSnapshot(t, dataDir)
	require.Equal(t, map[string]kyc.Status{d.Employees["kycApproved"]: kyc.Approved, d.Employees["kycPending"]: kyc.Pending,
		d.Employees["badAccount"]: kyc.Approved}, first.KycStatus)
	p.stop(t)

	// A second run on the same data dir: nothing is made again (no user, session, employee,
	// submission, upload, list, check or audit row), the same credentials are printed.
	p = startDev(t, bin, dataDir)
	require.Contains(t, p.out.String(), "  demo       ready in")
	again := takeDemoSnapshot(t, dataDir)
	require.Equal(t, first, again)
	require.Equal(t, creds, readCredentials(t, dataDir))
	require.Contains(t, p.out.String(), d.OwnerPassword)
	p.stop(t)
}

// employeeJSONView and payoutAccountView are the parts of GET /api/employees the test reads.
type employeeJSONView struct {
	ID                       string            `json:"id"`
	BusinessID               string            `json:"businessId"`
	FullName                 string            `json:"fullName"`
	GrossMonthlySalarySantim int64             `json:"grossMonthlySalarySantim"`
	PaymentFrequency         string            `json:"paymentFrequency"`
	PayCadence               string            `json:"payCadence"`
	TIN                      string            `json:"tin"`
	PayoutAccount            payoutAccountView `json:"payoutAccount"`
}

type payoutAccountView struct {
	Partner       string `json:"partner"`
	AccountNumber string `json:"accountNumber"`
	HolderName    string `json:"holderName"`
}

// TestDemoAccountsAreTheSandboxSeed: the demo pays from and to the sandbox's demo accounts (holder
// names included, so the account-lookup gate's name rule would pass too), all but the one it
// means to be missing.
func TestDemoAccountsAreTheSandboxSeed(t *testing.T) {
	seeded := map[string]string{}
	for _, a := range sandbox.DemoAccounts {
		seeded[a.AccountNumber] = a.HolderName
	}
	require.Contains(t, seeded, demoFundingAccount)
	require.Contains(t, seeded, demoFIFunding)
	require.Contains(t, seeded, demoFISettlement)
	require.Equal(t, demoPayrollHolder, seeded[demoPayrollAccount])
	for _, e := range demoEmployees {
		holder, ok := seeded[e.Account]
		require.Equal(t, !e.AccountMissingFromSandbox, ok, e.Account)
		if ok {
			require.Equal(t, e.First+" "+e.Last, holder)
		}
	}
}
