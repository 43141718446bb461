package api

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The golden run of the reports: three employees with fixed ids, hostile names (a spreadsheet
// formula; markup, quotes and a bidirectional override; an Amharic name), one joining mid-month,
// three court orders to two payees, an employer with a legal name and a TIN. Calculated by the
// clerk, approved by the checker.
type reportKit struct {
	*payrollKit
	tax   *apiClient // an admin whose only permission is paye_tax.export
	runID string
}

const goldenDir = "testdata/payroll_reports"

func newReportKit(t testing.TB, tag string) *reportKit {
	k := &reportKit{payrollKit: newPayrollKit(t, tag)}
	f := k.f
	f.catalogAppRole(k.tenant, "tax-officer", `{"paye_tax":["export"]}`)
	f.addMember(k.tenant, "tax@"+tag+".example", orgs.Admin, "tax-officer")
	k.tax = f.signIn("tax@" + tag + ".example")
	ctx := tenancy.WithTenant(context.Background(), k.tenant)
	require.NoError(t, tenancy.InTx(ctx, f.d.App, func(tx pgx.Tx) error {
		for _, q := range []string{
			// The kit's own employee is not part of the golden run.
			`UPDATE app.employees SET deleted_at = now() WHERE id = '` + k.employee + `'`,
			`INSERT INTO app.businesses (id, legal_name, trade_name, tin) VALUES ($1, 'Golden Coffee PLC', 'Golden', '0012345678')
				ON CONFLICT (id) DO UPDATE SET legal_name = EXCLUDED.legal_name, tin = EXCLUDED.tin`,
			`INSERT INTO app.employees (id, tenant_id, first_name, last_name, full_name, national_id, hire_date, tin,
					gross_monthly_salary_santim, payout_partner, payout_account_number, payout_holder_name) VALUES
				('emp_golden_1', $1, 'Abebe', 'Kebede', '=cmd|'' /C calc''!A0', 'GOLDEN000001', '2026-01-01', '0000000101', 1000000, 'cbe', '1000000000101', 'Abebe Kebede'),
				('emp_golden_2', $1, 'Chaltu', 'Ayana', '<b>Chaltu</b> & "Ayana" ` + "\u202e" + `gnp.exe', 'GOLDEN000002', '2026-11-16', '0000000102', 2500050, 'cbe', '1000000000102', 'Chaltu Ayana'),
				('emp_golden_3', $1, 'Tirunesh', 'Dibaba', 'ጥሩነሽ ዲባባ', 'GOLDEN000003', '2026-01-01', '0000000103', 400000, 'cbe', '1000000000103', 'Tirunesh Dibaba')`,
			`INSERT INTO app.payroll_deduction_mandates (id, tenant_id, employee_id, kind, amount_santim, basis_points, start_period, priority,
					reference, payee_partner, payee_account_number, payee_holder_name, status, created_by, created_at, activated_by, activated_at, updated_at) VALUES
				('mdt_golden_1', $1, 'emp_golden_1', 'COURT_ORDER', 50000, NULL, '2026-01', 0, 'FHC/2026/118', 'cbe', '1000999', 'Federal Court Trust', 'ACTIVE', 'u-maker', now(), 'u-checker', now(), now()),
				('mdt_golden_2', $1, 'emp_golden_2', 'COURT_ORDER', NULL, 1000, '2026-01', 0, '=HYPERLINK("http://evil.example")', 'awash', '2000111', 'Addis Court <Trust>', 'ACTIVE', 'u-maker', now(), 'u-checker', now(), now()),
				('mdt_golden_3', $1, 'emp_golden_3', 'COURT_ORDER', 20000, NULL, '2026-01', 0, 'FHC/2026/207', 'cbe', '1000999', 'Federal Court Trust', 'ACTIVE', 'u-maker', now(), 'u-checker', now(), now())`,
		} {
			var err error
			if strings.Contains(q, "$1") {
				_, err = tx.Exec(ctx, q, k.tenant)
			} else {
				_, err = tx.Exec(ctx, q)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}))
	rec := k.clerk.call(http.MethodPost, "/api/payroll", map[string]any{"period": "2026-11"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	k.runID = decode[payrollRunOut](t, rec).ID
	return k
}

func (k *reportKit) path(doc string) string { return "/api/payroll/" + k.runID + "/" + doc }

// generatedID matches the ids the stores generate (UUIDv7 text): users, organizations, entries.
var generatedID = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// golden compares got with testdata/payroll_reports/name byte for byte, after the run id is
// replaced by prun_GOLDEN and every other generated id by id-1, id-2, … in order of first
// appearance (WAGERAIL_UPDATE_GOLDEN=1 writes the file instead).
func (k *reportKit) golden(t *testing.T, name string, got []byte) {
	t.Helper()
	seen := map[string]string{}
	norm := []byte(generatedID.ReplaceAllStringFunc(strings.ReplaceAll(string(got), k.runID, "prun_GOLDEN"), func(id string) string {
		if _, ok := seen[id]; !ok {
			seen[id] = "id-" + strconv.Itoa(len(seen)+1)
		}
		return seen[id]
	}))
	p := filepath.Join(goldenDir, name)
	if os.Getenv("WAGERAIL_UPDATE_GOLDEN") == "1" {
		require.NoError(t, os.MkdirAll(goldenDir, 0o755))
		require.NoError(t, os.WriteFile(p, norm, 0o644))
	}
	want, err := os.ReadFile(p)
	require.NoError(t, err, "run with WAGERAIL_UPDATE_GOLDEN=1 to write %s", p)
	require.Equal(t, string(want), string(norm), "%s differs from the golden file", name)
}

// validateXSD validates doc against the embedded XSD xsd with xmllint (Debian's libxml2-utils,
// which `make deps` installs): nil when valid, else xmllint's complaint.
func validateXSD(t *testing.T, xsd string, doc []byte) error {
	t.Helper()
	bin, err := exec.LookPath("xmllint")
	require.NoError(t, err, "xmllint is needed to validate the XML reports: make deps installs it (Debian package libxml2-utils)")
	dir := t.TempDir()
	schema, err := payroll.ReportSchemas.ReadFile("xsd/" + xsd)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, xsd), schema, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "doc.xml"), doc, 0o600))
	out, err := exec.Command(bin, "--noout", "--nonet", "--schema", filepath.Join(dir, xsd), filepath.Join(dir, "doc.xml")).CombinedOutput()
	if err != nil {
		return &xsdError{string(out)}
	}
	return nil
}

type xsdError struct{ out string }

func (e *xsdError) Error() string { return e.out }

// The golden run's reports, each compared byte for byte with its file in testdata and each XML
// validated against its XSD; the refusals before approval and without TINs; the route ×
// permission matrix; another organization's run.
func TestPayrollReportsGolden(t *testing.T) {
	t.Parallel()
	k := newReportKit(t, "pay-report")

	// A DRAFT has no figures.
	catalogStatus(t, k.viewer.call(http.MethodGet, k.path("report"), nil), http.StatusConflict, payroll.CodeReportNoRun)
	catalogStatus(t, k.viewer.call(http.MethodGet, k.path("report.court-orders.json"), nil), http.StatusConflict, payroll.CodeReportNoRun)
	catalogStatus(t, k.clerk.call(http.MethodPost, k.path("calculate"), nil), http.StatusOK, "")
	// Calculated: the report, not yet the declarations.
	rep := decode[struct {
		Final bool `json:"final"`
	}](t, k.viewer.call(http.MethodGet, k.path("report"), nil))
	require.False(t, rep.Final)
	catalogStatus(t, k.tax.call(http.MethodGet, k.path("report.mor.xml"), nil), http.StatusConflict, payroll.CodeReportNotFinal)
	catalogStatus(t, k.viewer.call(http.MethodGet, k.path("report.pension.xml"), nil), http.StatusConflict, payroll.CodeReportNotFinal)
	catalogStatus(t, k.checker.call(http.MethodPost, k.path("approve"), nil), http.StatusOK, "")

	docs := []struct {
		path, golden, xsd, contentType, file string
	}{
		{"report", "report.json", "", "application/json; charset=utf-8", ""},
		{"report.csv", "report.csv", "", "text/csv; charset=utf-8", "payroll-2026-11-report.csv"},
		{"report.mor.xml", "report.mor.xml", "paye-declaration.xsd", "application/xml; charset=utf-8", "payroll-2026-11-paye.xml"},
		{"report.pension.xml", "report.pension.xml", "pension-schedule.xsd", "application/xml; charset=utf-8", "payroll-2026-11-pension.xml"},
		{"report.court-orders.json", "report.court-orders.json", "", "application/json; charset=utf-8", ""},
		{"report.court-orders.xml", "report.court-orders.xml", "court-order-remittance.xsd", "application/xml; charset=utf-8", "payroll-2026-11-court-orders.xml"},
	}
	for _, d := range docs {
		rec := k.owner.call(http.MethodGet, k.path(d.path), nil)
		catalogStatus(t, rec, http.StatusOK, "")
		require.Equal(t, d.contentType, rec.Header().Get("Content-Type"), d.path)
		require.Equal(t, "no-store", rec.Header().Get("Cache-Control"), d.path)
		body := rec.Body.Bytes()
		// The JSON answers' timestamps are the fixture clock's, so they are golden too.
		k.golden(t, d.golden, body)
		if d.file != "" {
			require.Equal(t, `attachment; filename="`+d.file+`"`, rec.Header().Get("Content-Disposition"), d.path)
		}
		if d.xsd != "" {
			require.NoError(t, validateXSD(t, d.xsd, body), "%s breaks %s", d.path, d.xsd)
			require.NotContains(t, string(body), "\u202e", "the bidirectional override is neutralised")
			require.NotContains(t, string(body), "<b>", "markup is escaped")
		}
	}

	// The validator does refuse: a TIN cut short, an amount with three decimals.
	mor := k.tax.call(http.MethodGet, k.path("report.mor.xml"), nil).Body.String()
	require.Error(t, validateXSD(t, "paye-declaration.xsd", []byte(strings.Replace(mor, "<TIN>0000000101</TIN>", "<TIN>101</TIN>", 1))))
	require.Error(t, validateXSD(t, "paye-declaration.xsd", []byte(strings.Replace(mor, "<TaxWithheld>", "<TaxWithheld>1.001", 1))))

	// The CSV reads back as the rows it was written from: every cell a spreadsheet would run as
	// a formula starts with a quote.
	rows, err := csv.NewReader(strings.NewReader(k.owner.call(http.MethodGet, k.path("report.csv"), nil).Body.String())).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 5, "header, three employees, TOTAL")
	require.Equal(t, payroll.ReportCSVHeader, rows[0])
	require.Equal(t, `'=cmd|' /C calc'!A0`, rows[1][1])
	require.Equal(t, "****0101", rows[1][2], "the TIN masked")
	require.Equal(t, "ጥሩነሽ ዲባባ", rows[3][1])
	require.Equal(t, "TOTAL", rows[4][0])
	for _, r := range rows {
		for _, c := range r {
			if c != "" {
				require.NotContains(t, "=+-@\t\r", c[:1], "cell %q", c)
			}
		}
	}

	// Route × permission: payroll.view reads every report but the tax declaration, which only
	// paye_tax.export reads; a plain member and an admin without either are 403; another
	// organization's run is 404.
	type who struct {
		name   string
		c      *apiClient
		view   bool
		export bool
	}
	callers := []who{{"owner", k.owner, true, true}, {"checker", k.checker, true, false}, {"viewer", k.viewer, true, false},
		{"tax", k.tax, false, true}, {"bare", k.bare, false, false}, {"member", k.member, false, false}}
	for _, d := range docs {
		for _, c := range callers {
			allowed := c.view
			if d.path == "report.mor.xml" {
				allowed = c.export
			}
			want := http.StatusForbidden
			if allowed {
				want = http.StatusOK
			}
			require.Equal(t, want, c.c.call(http.MethodGet, k.path(d.path), nil).Code, "%s %s", c.name, d.path)
		}
		catalogStatus(t, k.otherOwner.call(http.MethodGet, k.path(d.path), nil), http.StatusNotFound, payroll.CodeRunNotFound)
		catalogStatus(t, k.owner.hostile(http.MethodGet, "/api/payroll/prun%20x/"+d.path, nil), http.StatusBadRequest, "")
	}

	// Without an employee's TIN the declaration is refused, naming whom.
	ctx := tenancy.WithTenant(context.Background(), k.tenant)
	require.NoError(t, tenancy.InTx(ctx, k.f.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.employees SET tin = NULL WHERE id = 'emp_golden_2'`)
		return err
	}))
	rec := k.tax.call(http.MethodGet, k.path("report.mor.xml"), nil)
	catalogStatus(t, rec, http.StatusUnprocessableEntity, payroll.CodeTINMissing)
	require.Contains(t, rec.Body.String(), "emp_golden_2")
	// The pension schedule leaves the missing TIN out and is still valid.
	rec = k.viewer.call(http.MethodGet, k.path("report.pension.xml"), nil)
	catalogStatus(t, rec, http.StatusOK, "")
	require.NoError(t, validateXSD(t, "pension-schedule.xsd", rec.Body.Bytes()))

	// Paid and failed entries: only a PAID entry's court order is withheld (owed to the payee); a
	// FAILED one's stays owed at its mandate.
	require.NoError(t, tenancy.InTx(ctx, k.f.d.App, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE app.payroll_entries SET status = 'PAID', paid_at = now(), attempts = 1, payout_account = '1000000000101'
			WHERE run_id = $1 AND employee_id = 'emp_golden_1'`, k.runID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE app.payroll_entries SET status = 'FAILED', attempts = 1, payout_account = '1000000000103',
			failure_reason = 'ACCOUNT_NOT_FOUND' WHERE run_id = $1 AND employee_id = 'emp_golden_3'`, k.runID)
		return err
	}))
	co := decode[struct {
		Items []struct {
			MandateID   string `json:"mandateId"`
			EntryStatus string `json:"entryStatus"`
			Withheld    bool   `json:"withheld"`
		} `json:"items"`
		Payees []struct {
			Partner        string `json:"partner"`
			Orders         int    `json:"orders"`
			WithheldSantim int64  `json:"withheldSantim"`
			TotalSantim    int64  `json:"totalSantim"`
		} `json:"payees"`
		WithheldSantim int64 `json:"withheldSantim"`
		TotalSantim    int64 `json:"totalSantim"`
	}](t, k.viewer.call(http.MethodGet, k.path("report.court-orders.json"), nil))
	require.Len(t, co.Items, 3)
	require.Equal(t, []bool{true, false, false}, []bool{co.Items[0].Withheld, co.Items[1].Withheld, co.Items[2].Withheld})
	require.Equal(t, []string{"PAID", "APPROVED", "FAILED"}, []string{co.Items[0].EntryStatus, co.Items[1].EntryStatus, co.Items[2].EntryStatus})
	require.Equal(t, int64(50_000), co.WithheldSantim)
	require.Equal(t, int64(195_002), co.TotalSantim)
	require.Equal(t, "cbe", co.Payees[1].Partner)
	require.Equal(t, []int64{2, 50_000, 70_000}, []int64{int64(co.Payees[1].Orders), co.Payees[1].WithheldSantim, co.Payees[1].TotalSantim})
	rec = k.viewer.call(http.MethodGet, k.path("report.court-orders.xml"), nil)
	catalogStatus(t, rec, http.StatusOK, "")
	require.NoError(t, validateXSD(t, "court-order-remittance.xsd", rec.Body.Bytes()))
	require.Contains(t, rec.Body.String(), "<Withheld>500.00</Withheld>")
}

// The documents' text neutraliser: control characters and bidirectional controls become U+FFFD,
// everything a name may hold is kept.
func TestPayrollReportDocumentText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Abebe Kebede":   "Abebe Kebede",
		"ጥሩነሽ ዲባባ":       "ጥሩነሽ ዲባባ",
		"evil\u202egnp":  "evil\ufffdgnp",
		"a\x00b\x1bc":    "a\ufffdb\ufffdc",
		"bad\xff":        "bad\ufffd",
		"x\u2066y\u200f": "x\ufffdy\ufffd",
		"<b>&</b>":       "<b>&</b>", // escaped by the writers, not here
	} {
		require.Equal(t, want, payroll.DocumentText(in), "%q", in)
	}
	require.Equal(t, "0.00", payroll.Birr(0))
	require.Equal(t, "1234.05", payroll.Birr(123405))
	require.Equal(t, "92233720368547758.07", payroll.Birr(1<<63-1))
}

// Hostile paths and queries on every report route, by callers with and without the permissions,
// for a run that has figures: 4xx or success, never 5xx.
func FuzzPayrollReportRoutes(f *testing.F) {
	k := newReportKit(f, "fuzz-report")
	require.Equal(f, http.StatusOK, k.clerk.call(http.MethodPost, k.path("calculate"), nil).Code)
	require.Equal(f, http.StatusOK, k.checker.call(http.MethodPost, k.path("approve"), nil).Code)
	routes := k.f.srv.payrollReportRoutes()
	for i := range routes {
		f.Add(uint8(i), uint8(0), k.runID, "")
		f.Add(uint8(i), uint8(1), k.runID, "limit=%00&cursor=%ff")
	}
	f.Add(uint8(0), uint8(2), "prun_x", "")
	f.Add(uint8(2), uint8(3), "%ff%00", "")
	f.Add(uint8(3), uint8(0), strings.Repeat("a", 300), "")
	f.Add(uint8(4), uint8(0), "..%2f..%2fhealthz", "")
	f.Fuzz(func(t *testing.T, route, who uint8, param, query string) {
		r := routes[int(route)%len(routes)]
		path := strings.Replace(r.Path, ":id", param, 1)
		req := httptest.NewRequest(r.Method, "/", nil)
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		req.RemoteAddr = "192.0.2.83:40000"
		switch who % 5 {
		case 0:
			req.AddCookie(k.owner.cookie)
		case 1:
			req.AddCookie(k.viewer.cookie)
		case 2:
			req.AddCookie(k.tax.cookie)
		case 3:
			req.AddCookie(k.otherOwner.cookie)
		}
		rec := httptest.NewRecorder()
		k.f.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q", r.Method, path, query))
	})
}
