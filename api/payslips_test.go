package api

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/ledongthuc/pdf"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

type payslipOut struct {
	RunID       string `json:"runId"`
	Period      string `json:"period"`
	PeriodStart string `json:"periodStart"`
	PeriodEnd   string `json:"periodEnd"`
	RunStatus   string `json:"runStatus"`
	EntryStatus string `json:"entryStatus"`
	Employer    struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"employer"`
	Employee struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"employee"`
	Earnings []struct {
		Kind         string `json:"kind"`
		AmountSantim int64  `json:"amountSantim"`
	} `json:"earnings"`
	Deductions []struct {
		Kind         string `json:"kind"`
		Label        string `json:"label"`
		AmountSantim int64  `json:"amountSantim"`
	} `json:"deductions"`
	EmployerContributions []struct {
		Kind         string `json:"kind"`
		AmountSantim int64  `json:"amountSantim"`
	} `json:"employerContributions"`
	GrossSantim                 int64 `json:"grossSantim"`
	DeductionsSantim            int64 `json:"deductionsSantim"`
	NetSantim                   int64 `json:"netSantim"`
	EmployerContributionsSantim int64 `json:"employerContributionsSantim"`
}

// setEmployeeName sets an employee's names as stored (a name the import or an older validator
// let through).
func (k *payrollKit) setEmployeeName(t testing.TB, tenant, employee, name string) {
	t.Helper()
	ctx := tenancy.WithTenant(context.Background(), tenant)
	require.NoError(t, tenancy.InTx(ctx, k.f.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.employees SET full_name = $1 WHERE id = $2`, name, employee)
		return err
	}))
}

// linkUser makes a user who is the employee's linked login and signs them in.
func (k *payrollKit) linkUser(t testing.TB, tenant, employee, email string) *apiClient {
	t.Helper()
	ctx := context.Background()
	hash, err := identity.HashPassword(testPassword)
	require.NoError(t, err)
	u, err := identity.CreateUser(ctx, k.f.d.App, identity.NewUser{Email: email, Name: "Employee", PasswordHash: hash})
	require.NoError(t, err)
	tctx := tenancy.WithTenant(ctx, tenant)
	require.NoError(t, tenancy.InTx(tctx, k.f.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(tctx, `UPDATE app.employees SET user_id = $1 WHERE id = $2`, u.ID, employee)
		return err
	}))
	return k.f.signIn(email)
}

// extractPDF is the text of every page of a PDF, as a reader extracts it.
func extractPDF(t *testing.T, raw []byte) string {
	t.Helper()
	r, err := pdf.NewReader(bytes.NewReader(raw), int64(len(raw)))
	require.NoError(t, err)
	var b strings.Builder
	for i := 1; i <= r.NumPage(); i++ {
		s, err := r.Page(i).GetPlainText(nil)
		require.NoError(t, err)
		b.WriteString(s)
	}
	return b.String()
}

const (
	amharicName = "አበበ በቀለ"
	hostileName = `<script>alert(1)</script>` + "\u202Eexe.pdf\u202C"
)

// The payslips of a run over HTTP, every request and answer checked against the document: the
// JSON figures are the entry's, the HTML escapes a hostile name, the PDF's extracted text has the
// Amharic name and the figures, the ZIP has one PDF per entry; the route × caller matrix; the
// employee's own routes show only issued payslips, 404 for a draft, another employee's absence
// and another organization's run.
func TestPayslipRoutes(t *testing.T) {
	t.Parallel()
	k := newPayrollKit(t, "payslips")
	amharic, hostile := k.f.catalogEmployee(k.tenant), k.f.catalogEmployee(k.tenant)
	k.setEmployeeName(t, k.tenant, amharic, amharicName)
	k.setEmployeeName(t, k.tenant, hostile, hostileName)
	run := decode[payrollRunOut](t, k.clerk.call(http.MethodPost, "/api/payroll", map[string]any{"period": "2026-11"}))
	catalogStatus(t, k.clerk.call(http.MethodPost, "/api/payroll/"+run.ID+"/calculate", nil), http.StatusOK, "")
	base := "/api/payroll/" + run.ID + "/payslips/"

	// JSON: the entry's figures.
	entries := decode[payrollList[payrollRunEntryOut]](t, k.viewer.call(http.MethodGet, "/api/payroll/"+run.ID+"/entries?employeeId="+amharic, nil))
	require.Len(t, entries.Items, 1)
	entry := entries.Items[0]
	rec := k.viewer.call(http.MethodGet, base+amharic, nil)
	catalogStatus(t, rec, http.StatusOK, "")
	slip := decode[payslipOut](t, rec)
	require.Equal(t, run.ID, slip.RunID)
	require.Equal(t, "2026-11", slip.Period)
	require.Equal(t, []string{"2026-11-01", "2026-11-30"}, []string{slip.PeriodStart, slip.PeriodEnd})
	require.Equal(t, "CALCULATED", slip.EntryStatus)
	require.Equal(t, k.tenant, slip.Employer.ID)
	require.NotEmpty(t, slip.Employer.Name)
	require.Equal(t, amharicName, slip.Employee.Name)
	require.Equal(t, entry.GrossSantim, slip.GrossSantim)
	require.Equal(t, entry.NetSantim, slip.NetSantim)
	require.Equal(t, entry.DeductionsSantim, slip.DeductionsSantim)
	require.Equal(t, slip.GrossSantim-slip.DeductionsSantim, slip.NetSantim)
	require.Len(t, slip.Deductions, len(entry.Deductions))
	var sum int64
	for _, d := range slip.Deductions {
		sum += d.AmountSantim
	}
	require.Equal(t, slip.DeductionsSantim, sum)
	require.Equal(t, "PAYE", slip.Deductions[0].Kind)
	require.Equal(t, "Income tax (PAYE)", slip.Deductions[0].Label)
	require.NotEmpty(t, slip.EmployerContributions)

	// PDF: a real document whose text carries the Amharic name and the figures.
	rec = k.viewer.call(http.MethodGet, base+amharic+".pdf", nil)
	catalogStatus(t, rec, http.StatusOK, "")
	require.Equal(t, "application/pdf", rec.Header().Get("Content-Type"))
	require.Equal(t, `attachment; filename="payslip-2026-11-`+amharic+`.pdf"`, rec.Header().Get("Content-Disposition"))
	text := extractPDF(t, rec.Body.Bytes())
	for _, want := range []string{amharicName, "Payslip 2026-11", "ID " + amharic, "Gross pay", moneyText(slip.GrossSantim),
		"Income tax (PAYE)", moneyText(slip.Deductions[0].AmountSantim), "Net pay", moneyText(slip.NetSantim),
		"Employer contributions", moneyText(slip.EmployerContributionsSantim), slip.Employer.Name} {
		require.Contains(t, text, want)
	}

	// The business's branding footer ends its payslips.
	catalogStatus(t, k.owner.call(http.MethodPut, "/api/business/"+k.tenant+"/branding", map[string]any{"primaryColor": "#000000",
		"accentColor": "#FFFFFF", "payslipFooter": "ጥያቄ? payroll@selam.example"}), http.StatusOK, "")
	require.Contains(t, extractPDF(t, k.viewer.call(http.MethodGet, base+amharic+".pdf", nil).Body.Bytes()), "ጥያቄ? payroll@selam.example")

	// HTML: the hostile name is text, not markup; no script may run (CSP), bidi controls are gone.
	rec = k.viewer.call(http.MethodGet, base+hostile+".html", nil)
	catalogStatus(t, rec, http.StatusOK, "")
	require.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
	require.Contains(t, rec.Header().Get("Content-Security-Policy"), "default-src 'none'; style-src 'sha256-")
	page := rec.Body.String()
	require.NotContains(t, page, "<script")
	require.NotContains(t, page, "\u202E")
	require.Contains(t, page, "<bdi>&lt;script&gt;alert(1)&lt;/script&gt;exe.pdf</bdi>")
	require.Contains(t, page, `<footer class="muted"><p><bdi>ጥያቄ? payroll@selam.example</bdi></p></footer>`)
	rec = k.viewer.call(http.MethodGet, base+hostile+".pdf", nil)
	catalogStatus(t, rec, http.StatusOK, "")
	require.Contains(t, extractPDF(t, rec.Body.Bytes()), "<script>alert(1)</script>exe.pdf", "drawn as text, the override removed")

	// The ZIP: one PDF per entry, each with its employee's name.
	rec = k.viewer.call(http.MethodGet, "/api/payroll/"+run.ID+"/payslips.zip", nil)
	catalogStatus(t, rec, http.StatusOK, "")
	require.Equal(t, "application/zip", rec.Header().Get("Content-Type"))
	zr, err := zip.NewReader(bytes.NewReader(rec.Body.Bytes()), int64(rec.Body.Len()))
	require.NoError(t, err)
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		rc, err := f.Open()
		require.NoError(t, err)
		raw, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		id := strings.TrimSuffix(strings.TrimPrefix(f.Name, "payslip-2026-11-"), ".pdf")
		want := "Abebe Kebede"
		switch id {
		case amharic:
			want = amharicName
		case hostile:
			want = "exe.pdf"
		}
		require.Contains(t, extractPDF(t, raw), want, f.Name)
	}
	wantNames := []string{"payslip-2026-11-" + k.employee + ".pdf", "payslip-2026-11-" + amharic + ".pdf", "payslip-2026-11-" + hostile + ".pdf"}
	sort.Strings(wantNames)
	require.Equal(t, wantNames, names, "one per entry, by employee id")

	// Refusals: no entry, another organization's run, malformed ids.
	catalogStatus(t, k.viewer.call(http.MethodGet, base+k.otherEmployee, nil), http.StatusNotFound, "PAYSLIP_NOT_FOUND")
	catalogStatus(t, k.viewer.call(http.MethodGet, "/api/payroll/prun_nope/payslips/"+amharic+".pdf", nil), http.StatusNotFound, "PAYROLL_RUN_NOT_FOUND")
	catalogStatus(t, k.viewer.hostile(http.MethodGet, base+"a%20b.pdf", nil), http.StatusBadRequest, "INVALID_REQUEST")
	catalogStatus(t, k.viewer.hostile(http.MethodGet, base+strings.Repeat("x", 129), nil), http.StatusBadRequest, "INVALID_REQUEST")
	catalogStatus(t, k.viewer.call(http.MethodGet, base+strings.Repeat("x", 128)+".html", nil), http.StatusNotFound, "PAYSLIP_NOT_FOUND")

	// The route × caller matrix (the access matrix checks the guards alone; this runs the handlers).
	anonymous := newAPIClient(t, k.f.srv)
	for _, path := range []string{base + amharic, base + amharic + ".html", base + amharic + ".pdf", "/api/payroll/" + run.ID + "/payslips.zip"} {
		for _, c := range []struct {
			who    string
			client *apiClient
			status int
			code   string
		}{
			{"owner", k.owner, 200, ""}, {"checker", k.checker, 200, ""}, {"clerk", k.clerk, 200, ""}, {"viewer", k.viewer, 200, ""},
			{"admin without payroll.view", k.bare, 403, "PERMISSION_DENIED"}, {"plain member", k.member, 403, "INSUFFICIENT_ROLE"},
			{"other organization's owner", k.otherOwner, 404, "PAYROLL_RUN_NOT_FOUND"}, {"anonymous", anonymous, 401, "UNAUTHENTICATED"},
		} {
			rec := c.client.call(http.MethodGet, path, nil)
			require.Equal(t, c.status, rec.Code, "%s as %s: %s", path, c.who, rec.Body.String())
			require.Equal(t, c.code, errCode(rec), "%s as %s", path, c.who)
		}
	}

	// The employee's own: nothing issued while the run is a draft.
	me := k.linkUser(t, k.tenant, amharic, "amharic@payslips.example")
	require.Empty(t, decode[payrollList[struct{ RunID string }]](t, me.call(http.MethodGet, "/api/me/payslips", nil)).Items)
	catalogStatus(t, me.call(http.MethodGet, "/api/me/payslips/"+run.ID, nil), http.StatusNotFound, "PAYSLIP_NOT_FOUND")
	catalogStatus(t, k.owner.call(http.MethodGet, "/api/me/payslips", nil), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	catalogStatus(t, anonymous.call(http.MethodGet, "/api/me/payslips/"+run.ID+".pdf", nil), http.StatusUnauthorized, "UNAUTHENTICATED")

	catalogStatus(t, k.owner.call(http.MethodPost, "/api/payroll/"+run.ID+"/approve", nil), http.StatusOK, "")
	list := decode[payrollList[struct {
		RunID       string `json:"runId"`
		Period      string `json:"period"`
		EntryStatus string `json:"entryStatus"`
		NetSantim   int64  `json:"netSantim"`
	}]](t, me.call(http.MethodGet, "/api/me/payslips", nil))
	require.Len(t, list.Items, 1)
	require.Equal(t, run.ID, list.Items[0].RunID)
	require.Equal(t, "APPROVED", list.Items[0].EntryStatus)
	require.Equal(t, slip.NetSantim, list.Items[0].NetSantim)
	rec = me.call(http.MethodGet, "/api/me/payslips/"+run.ID, nil)
	catalogStatus(t, rec, http.StatusOK, "")
	mine := decode[payslipOut](t, rec)
	require.Equal(t, amharic, mine.Employee.ID, "the caller's own payslip")
	require.Equal(t, "APPROVED", mine.EntryStatus)
	rec = me.call(http.MethodGet, "/api/me/payslips/"+run.ID+".pdf", nil)
	catalogStatus(t, rec, http.StatusOK, "")
	require.Contains(t, extractPDF(t, rec.Body.Bytes()), amharicName)
	rec = me.call(http.MethodGet, "/api/me/payslips/"+run.ID+".html", nil)
	catalogStatus(t, rec, http.StatusOK, "")
	require.Contains(t, rec.Body.String(), amharicName)
	// The employee reads no one else's: the organization's routes are closed to them, and the
	// linked employee of another organization's run sees nothing of this one.
	catalogStatus(t, me.call(http.MethodGet, base+k.employee, nil), http.StatusForbidden, "")
	other := decode[payrollRunOut](t, k.otherOwner.call(http.MethodPost, "/api/payroll", map[string]any{"period": "2026-11"}))
	catalogStatus(t, k.otherOwner.call(http.MethodPost, "/api/payroll/"+other.ID+"/calculate", nil), http.StatusOK, "")
	catalogStatus(t, me.call(http.MethodGet, "/api/me/payslips/"+other.ID, nil), http.StatusNotFound, "PAYSLIP_NOT_FOUND")
	catalogStatus(t, me.call(http.MethodGet, "/api/me/payslips/"+other.ID+".pdf", nil), http.StatusNotFound, "PAYSLIP_NOT_FOUND")
	otherMe := k.linkUser(t, k.otherTenant, k.otherEmployee, "other-employee@payslips.example")
	catalogStatus(t, otherMe.call(http.MethodGet, "/api/me/payslips/"+run.ID, nil), http.StatusNotFound, "PAYSLIP_NOT_FOUND")
	require.Empty(t, decode[payrollList[struct{ RunID string }]](t, otherMe.call(http.MethodGet, "/api/me/payslips", nil)).Items)
	// An employee of the organization who is not in the run (hired after it) has no payslip of it.
	late := k.f.catalogEmployee(k.tenant)
	lateMe := k.linkUser(t, k.tenant, late, "late@payslips.example")
	catalogStatus(t, lateMe.call(http.MethodGet, "/api/me/payslips/"+run.ID, nil), http.StatusNotFound, "PAYSLIP_NOT_FOUND")
	catalogStatus(t, me.hostile(http.MethodGet, "/api/me/payslips?limit=0", nil), http.StatusBadRequest, "INVALID_REQUEST")
}

// moneyText is santim as the documents write them.
func moneyText(santim int64) string {
	whole, cents := santim/100, santim%100
	s := fmt.Sprint(whole)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return fmt.Sprintf("%s.%02d ETB", s, cents)
}

// Every rule the payslip handlers enforce is in the document: a request breaking it is refused by
// both, its allowed boundary accepted by both.
func TestPayslipDocumentRules(t *testing.T) {
	t.Parallel()
	k := newPayrollKit(t, "payslip-rules")
	run := decode[payrollRunOut](t, k.owner.call(http.MethodPost, "/api/payroll", map[string]any{"period": "2026-11"}))
	base := "/api/payroll/" + run.ID + "/payslips/"
	x128 := strings.Repeat("x", 128)
	cases := []ruleCase{
		{name: "employeeId length", path: base + x128 + "x", okPath: base + x128, okStatus: 404, okCode: "PAYSLIP_NOT_FOUND"},
		{name: "employeeId length with a format", path: base + x128 + "x.pdf", okPath: base + x128 + ".pdf", okStatus: 404, okCode: "PAYSLIP_NOT_FOUND"},
		{name: "employeeId alphabet", path: base + "a%20b.html", okPath: base + "a:b.html", okStatus: 404, okCode: "PAYSLIP_NOT_FOUND"},
		{name: "run id alphabet", path: "/api/payroll/a%20b/payslips.zip", okPath: "/api/payroll/" + run.ID + "/payslips.zip", okStatus: 200},
		{name: "me runId", path: "/api/me/payslips/" + x128 + "x.pdf", okPath: "/api/me/payslips/" + x128 + ".pdf", okStatus: 404, okCode: "EMPLOYEE_NOT_LINKED"},
		{name: "me limit", path: "/api/me/payslips?limit=101", okPath: "/api/me/payslips?limit=100", okStatus: 404, okCode: "EMPLOYEE_NOT_LINKED"},
		{name: "me cursor", path: "/api/me/payslips?cursor=a%20b", okPath: "/api/me/payslips?cursor=prun_x", okStatus: 404, okCode: "EMPLOYEE_NOT_LINKED"},
	}
	for _, tc := range cases {
		tc.method, tc.status, tc.code = http.MethodGet, http.StatusBadRequest, "INVALID_REQUEST"
		t.Run(tc.name, func(t *testing.T) {
			a := k.owner.clone()
			a.t = t
			require.Error(t, a.documentVerdict(tc.method, tc.path, tc.body), "the document must refuse what the server refuses")
			rec := a.hostile(tc.method, tc.path, tc.body)
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			require.Equal(t, tc.code, errCode(rec), rec.Body.String())
			rec = a.call(tc.method, tc.okPath, nil)
			require.Equal(t, tc.okStatus, rec.Code, "the allowed boundary: %s", rec.Body.String())
			require.Equal(t, tc.okCode, errCode(rec), rec.Body.String())
		})
	}
}

// FuzzPayslipRoutes: whatever reaches a payslip route (any run and employee id, format suffix and
// query, from the owner, an employee linked to an entry, or nobody) answers 4xx or success, never 5xx.
func FuzzPayslipRoutes(f *testing.F) {
	k := newPayrollKit(f, "payslip-fuzz")
	k.setEmployeeName(f, k.tenant, k.employee, amharicName+" "+hostileName)
	rec := k.owner.call(http.MethodPost, "/api/payroll", map[string]any{"period": "2026-11"})
	require.Equal(f, http.StatusCreated, rec.Code, rec.Body.String())
	run := decode[payrollRunOut](f, rec).ID
	rec = k.clerk.call(http.MethodPost, "/api/payroll/"+run+"/calculate", nil)
	require.Equal(f, http.StatusOK, rec.Code, rec.Body.String())
	rec = k.owner.call(http.MethodPost, "/api/payroll/"+run+"/approve", nil)
	require.Equal(f, http.StatusOK, rec.Code, rec.Body.String())
	me := k.linkUser(f, k.tenant, k.employee, "me@payslip-fuzz.example")
	routes := k.f.srv.payslipRoutes()
	for i, s := range []struct{ id, sub, query string }{
		{run, k.employee, ""}, {run + ".pdf", k.employee + ".pdf", ""}, {run + ".html", "", ""}, {run, k.employee + ".html", ""}, {run, ".pdf", ""},
		{run, run + ".pdf", "limit=1&cursor=" + run}, {"prun_nope", "emp_x.html", "limit=0"}, {"../x", "a/b", "cursor=%00"},
		{strings.Repeat("i", 200), strings.Repeat("e", 130) + ".pdf", "limit=1&limit=2"}, {run, "\u202e.pdf", ""},
	} {
		f.Add(uint8(i), uint8(i%3), s.id, s.sub, s.query)
	}
	f.Fuzz(func(t *testing.T, route, who uint8, id, sub, query string) {
		r := routes[int(route)%len(routes)]
		path := strings.NewReplacer(":id", id, ":employeeId", sub).Replace(r.Path)
		req := httptest.NewRequest(r.Method, "/", nil)
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		req.RemoteAddr = "192.0.2.84:40000"
		switch who % 3 {
		case 0:
			req.AddCookie(k.owner.cookie)
		case 1:
			req.AddCookie(me.cookie)
		}
		rec := httptest.NewRecorder()
		k.f.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q", r.Method, path, query))
	})
}
