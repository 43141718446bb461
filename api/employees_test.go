package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// empWorld is business A with an owner, an admin and a plain member; business B's owner; a
// platform admin; an anonymous client. Every response that goes through w.call or w.hostile is
// checked for the full national ids the test has used: they must never appear.
type empWorld struct {
	t                              *testing.T
	f                              *authFixture
	a, b                           string
	owner, admin, member, otherOwn *apiClient
	platform, anon                 *apiClient
	mu                             sync.Mutex
	nids                           []string
}

// listed is how many employees the owner's list shows (at most 100): the refusal tests' "nothing
// was stored".
func (w *empWorld) listed(t *testing.T) int {
	t.Helper()
	rec := w.call(w.owner, http.MethodGet, "/api/employees?limit=100", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	return len(decode[employeeListJSON](t, rec).Employees)
}

func newEmpWorld(t *testing.T) *empWorld {
	f := newAuthFixture(t)
	w := &empWorld{t: t, f: f}
	var res signUpResult
	w.owner, res = f.signUp("owner@emp-a.example", "BUSINESS")
	w.a = res.Organization.ID
	w.otherOwn, res = f.signUp("owner@emp-b.example", "BUSINESS")
	w.b = res.Organization.ID
	f.addMember(w.a, "admin@emp-a.example", orgs.Admin)
	f.addMember(w.a, "member@emp-a.example", orgs.PlainMember)
	w.admin = f.signIn("admin@emp-a.example")
	w.member = f.signIn("member@emp-a.example")
	w.platform = f.platformAdmin("root@emp.example")
	w.anon = f.client()
	seedEmployeeCatalogs(t, w.owner)
	seedEmployeeCatalogs(t, w.otherOwn)
	return w
}

// seedEmployeeCatalogs files "Full time" and "Monthly" in the catalogs of a's active
// organization: the employment type and payment frequency of w.body and importCells must be
// entries of the employer's catalogs.
func seedEmployeeCatalogs(t testing.TB, a *apiClient) {
	t.Helper()
	for path, name := range map[string]string{"/api/employment-types": "Full time", "/api/payment-frequencies": "Monthly"} {
		rec := a.call(http.MethodPost, path, map[string]any{"name": name})
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	}
}

func (w *empWorld) noNationalID(rec *httptest.ResponseRecorder) {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, n := range w.nids {
		require.NotContains(w.t, strings.ToUpper(rec.Body.String()), n, "a full national id in a response")
	}
}

func (w *empWorld) call(a *apiClient, method, path string, body any, hdr ...string) *httptest.ResponseRecorder {
	w.t.Helper()
	rec := a.call(method, path, body, hdr...)
	w.noNationalID(rec)
	return rec
}

func (w *empWorld) hostile(a *apiClient, method, path string, body any, hdr ...string) *httptest.ResponseRecorder {
	w.t.Helper()
	rec := a.hostile(method, path, body, hdr...)
	w.noNationalID(rec)
	return rec
}

// body is a valid create body for national id nid (remembered: no response may show it).
func (w *empWorld) body(nid string) map[string]any {
	w.mu.Lock()
	w.nids = append(w.nids, strings.ToUpper(strings.NewReplacer(" ", "", "-", "").Replace(nid)))
	email := fmt.Sprintf("abebe%d@example.com", len(w.nids))
	w.mu.Unlock()
	return map[string]any{
		"firstName": "Abebe", "lastName": "Kebede", "email": email,
		"phone": "+251911234567", "nationalId": nid, "department": "Engineering", "position": "Developer",
		"employmentType": "Full time", "paymentFrequency": "Monthly", "hireDate": "2024-03-01",
		"grossMonthlySalarySantim": 2500000,
		"payoutAccount":            map[string]any{"partner": "sandbox", "accountNumber": "1000123456789", "holderName": "Abebe Kebede"},
	}
}

func (w *empWorld) create(a *apiClient, body map[string]any) employeeJSON {
	w.t.Helper()
	rec := w.call(a, http.MethodPost, "/api/employees", body)
	require.Equal(w.t, http.StatusCreated, rec.Code, rec.Body.String())
	return decode[employeeJSON](w.t, rec)
}

// deniedWith counts tenant's DENIED audit rows of action with details.code.
func (w *empWorld) deniedWith(tenant, action, code string) int {
	w.t.Helper()
	ctx := context.Background()
	var n int
	require.NoError(w.t, db.InTenantTx(ctx, w.f.d.App, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = $2
			AND outcome = 'DENIED' AND details->>'code' = $3`, tenant, action, code).Scan(&n)
	}))
	return n
}

// events returns the payloads of tenant's outbox events of type typ, oldest first.
func (w *empWorld) events(tenant, typ string) []map[string]any {
	w.t.Helper()
	ctx := context.Background()
	var out []map[string]any
	require.NoError(w.t, db.InTenantTx(ctx, w.f.d.App, tenant, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT payload FROM app.outbox WHERE tenant_id = $1 AND type = $2 ORDER BY id`, tenant, typ)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var p map[string]any
			if err := rows.Scan(&p); err != nil {
				return err
			}
			out = append(out, p)
		}
		return rows.Err()
	}))
	return out
}

// user makes a signed-in user with no organization (an employee who has only an account).
func (w *empWorld) user(email string) (*apiClient, string) {
	w.t.Helper()
	hash, err := identity.HashPassword(testPassword)
	require.NoError(w.t, err)
	u, err := identity.CreateUser(context.Background(), w.f.d.App, identity.NewUser{Email: email, Name: "Employee", PasswordHash: hash})
	require.NoError(w.t, err)
	return w.f.signIn(email), u.ID
}

// linkToken reads the token out of the link a message carried.
func empLinkToken(t testing.TB, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	require.NoError(t, err)
	tok := u.Query().Get("token")
	require.NotEmpty(t, tok)
	return tok
}

func TestEmployeeCreateAndRead(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	body := w.body("et-1234 5678")
	body["businessId"] = w.a
	e := w.create(w.admin, body)
	require.Regexp(t, `^emp_[0-9a-f-]{36}$`, e.ID)
	require.Equal(t, w.a, e.BusinessID)
	require.Equal(t, "****5678", e.NationalID)
	require.Equal(t, "Abebe Kebede", e.FullName)
	require.Equal(t, "abebe1@example.com", *e.Email)
	require.Equal(t, "2024-03-01", e.HireDate)
	require.Equal(t, "ACTIVE", string(e.Status))
	require.Equal(t, int64(2500000), e.GrossMonthlySalarySantim)
	require.Equal(t, payoutAccountJSON{Partner: "sandbox", AccountNumber: "1000123456789", HolderName: "Abebe Kebede"}, e.PayoutAccount)
	require.Nil(t, e.UserID)
	require.Equal(t, 1, bizAudits(t, w.f.d, w.a, actionCreateEmployee, "SUCCESS", bizUserID(t, w.admin)))
	created := w.events(w.a, eventEmployeeCreated)
	require.Len(t, created, 1)
	require.Equal(t, map[string]any{"employeeId": e.ID, "fields": created[0]["fields"]}, created[0], "ids and field names only")

	// Every member reads it; the national id stays masked.
	for _, a := range []*apiClient{w.owner, w.admin, w.member} {
		rec := w.call(a, http.MethodGet, "/api/employees/"+e.ID, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Equal(t, e, decode[employeeJSON](t, rec))
	}

	// Only the required fields: the optional ones are null.
	min := w.create(w.owner, map[string]any{"firstName": "Almaz", "lastName": "Ayana", "nationalId": "ET00000002",
		"hireDate": "2020-01-31", "grossMonthlySalarySantim": 0,
		"payoutAccount": map[string]any{"partner": "sandbox", "accountNumber": "42", "holderName": "Almaz Ayana"}})
	w.nids = append(w.nids, "ET00000002")
	require.Nil(t, min.Email)
	require.Nil(t, min.Department)
	require.Equal(t, int64(0), min.GrossMonthlySalarySantim)

	// A plain member may not add.
	rec := w.call(w.member, http.MethodPost, "/api/employees", w.body("ET00000003"))
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
}

func TestEmployeeCreateRefusals(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	w.create(w.owner, w.body("ET20000001"))

	// Another organization's businessId: 403 TENANT_MISMATCH, audited, nothing written.
	body := w.body("ET20000002")
	body["businessId"] = w.b
	rec := w.call(w.owner, http.MethodPost, "/api/employees", body)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "TENANT_MISMATCH", errCode(rec))
	require.Equal(t, 1, w.deniedWith(w.a, "AccessRoute", "TENANT_MISMATCH"))

	// The same national id in another spelling: 409, audited.
	rec = w.call(w.owner, http.MethodPost, "/api/employees", w.body("et 2000-0001"))
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "DUPLICATE_NATIONAL_ID", errCode(rec))
	require.Equal(t, 1, w.deniedWith(w.a, actionCreateEmployee, "DUPLICATE_NATIONAL_ID"))
	// Business B may employ the same person.
	w.create(w.otherOwn, w.body("ET20000001"))

	// Bad input: 400 naming the field, never a 500.
	raw := func(salary string) string {
		return `{"firstName":"A","lastName":"B","nationalId":"ET20000009","hireDate":"2024-01-01","grossMonthlySalarySantim":` + salary +
			`,"payoutAccount":{"partner":"sandbox","accountNumber":"1","holderName":"A B"}}`
	}
	for _, c := range []struct {
		name, body, field string
	}{
		{"negative salary", raw("-1"), "grossMonthlySalarySantim"},
		{"salary over the bound", raw("1000000000001"), "grossMonthlySalarySantim"},
		{"int64 max", raw("9223372036854775807"), "grossMonthlySalarySantim"},
		{"past int64", raw("9223372036854775808"), "grossMonthlySalarySantim"},
		{"int64 min", raw("-9223372036854775808"), "grossMonthlySalarySantim"},
		{"fraction", raw("1.5"), "grossMonthlySalarySantim"},
		{"exponent", raw("1e3"), "grossMonthlySalarySantim"},
		{"quoted", raw(`"100"`), "grossMonthlySalarySantim"},
		{"no salary", `{"firstName":"A","lastName":"B","nationalId":"ET20000009","hireDate":"2024-01-01","payoutAccount":{"partner":"p","accountNumber":"1","holderName":"A"}}`, "grossMonthlySalarySantim"},
		{"no payout account", `{"firstName":"A","lastName":"B","nationalId":"ET20000009","hireDate":"2024-01-01","grossMonthlySalarySantim":1}`, "payoutAccount.partner"},
		{"no first name", strings.Replace(raw("1"), `"firstName":"A",`, "", 1), "firstName"},
		{"bad date", strings.Replace(raw("1"), "2024-01-01", "2024-02-30", 1), "hireDate"},
		{"year zero", strings.Replace(raw("1"), "2024-01-01", "0000-01-01", 1), "hireDate"},
		{"short national id", strings.Replace(raw("1"), "ET20000009", "ET1", 1), "nationalId"},
		{"national id with a NUL", strings.Replace(raw("1"), "ET20000009", `ET2\u00000009`, 1), "nationalId"},
		{"bad phone", strings.Replace(raw("1"), `"firstName"`, `"phone":"0911","firstName"`, 1), "phone"},
		{"bad e-mail", strings.Replace(raw("1"), `"firstName"`, `"email":"a@b","firstName"`, 1), "email"},
		{"account with a space", strings.Replace(raw("1"), `"accountNumber":"1"`, `"accountNumber":"1 2"`, 1), "payoutAccount.accountNumber"},
		{"control in holder", strings.Replace(raw("1"), `"holderName":"A B"`, `"holderName":"A\u0007"`, 1), "payoutAccount.holderName"},
		{"bidi in name", strings.Replace(raw("1"), `"firstName":"A"`, `"firstName":"A\u202e"`, 1), "firstName"},
		{"malformed businessId", strings.Replace(raw("1"), `"firstName"`, `"businessId":"a b","firstName"`, 1), "businessId"},
	} {
		rec := w.hostile(w.owner, http.MethodPost, "/api/employees", c.body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", c.name, rec.Body.String())
		require.Equal(t, "INVALID_REQUEST", errCode(rec), c.name)
		var e struct {
			Error struct {
				Details map[string]string `json:"details"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
		require.Equal(t, c.field, e.Error.Details["field"], c.name)
	}
	for _, b := range []string{`{"firstName":"A","isAdmin":true}`, `{"payoutAccount":{"partner":"p","accountNumber":"1","holderName":"A","iban":"x"}}`,
		`[]`, `{}{}`, "", "\xff"} {
		rec := w.hostile(w.owner, http.MethodPost, "/api/employees", b)
		require.Equal(t, http.StatusBadRequest, rec.Code, b)
	}
	require.Equal(t, 1, w.listed(t), "nothing was written")
	require.Len(t, w.events(w.a, eventEmployeeCreated), 1)
}

func TestEmployeeCrossTenant(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	e := w.create(w.owner, w.body("ET30000001"))
	one := "/api/employees/" + e.ID
	// B's owner: A's employee does not exist for them.
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, one, nil},
		{http.MethodPut, one, map[string]any{"position": "Spy"}},
		{http.MethodPut, one + "/status", map[string]any{"status": "TERMINATED"}},
		{http.MethodPost, one + "/invite", map[string]any{"channel": "email"}},
		{http.MethodDelete, one, nil},
	} {
		rec := w.call(w.otherOwn, c.method, c.path, c.body)
		require.Equal(t, http.StatusNotFound, rec.Code, "%s %s: %s", c.method, c.path, rec.Body.String())
		require.Equal(t, "NOT_FOUND", errCode(rec))
	}
	rec := w.call(w.otherOwn, http.MethodGet, "/api/employees", nil)
	require.Empty(t, decode[employeeListJSON](t, rec).Employees)
	// Naming A in the path is refused before anything is read.
	for _, p := range []string{"/api/employees/active/" + w.a, "/api/employees/department/" + w.a + "/Engineering", "/api/business/" + w.a + "/employee-count"} {
		rec = w.call(w.otherOwn, http.MethodGet, p, nil)
		require.Equal(t, "NOT_A_MEMBER", errCode(rec), p)
	}
	// Still there, unchanged.
	rec = w.call(w.owner, http.MethodGet, one, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, e, decode[employeeJSON](t, rec))

	// A platform admin reads A's lists and count through the audited cross-tenant path.
	rec = w.call(w.platform, http.MethodGet, "/api/employees/active/"+w.a, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Len(t, decode[employeeListJSON](t, rec).Employees, 1)
	rec = w.call(w.platform, http.MethodGet, "/api/business/"+w.a+"/employee-count", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, employeeCountJSON{BusinessID: w.a, EmployeeCount: 1, ActiveEmployeeCount: 1}, decode[employeeCountJSON](t, rec))
	rec = w.call(w.platform, http.MethodGet, "/api/business/org_missing/employee-count", nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	// The platform admin has no active organization: the active-organization routes need one.
	rec = w.call(w.platform, http.MethodGet, one, nil)
	require.Equal(t, "TENANT_CONTEXT_MISSING", errCode(rec))
}

func TestEmployeeUpdateStatusDelete(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	e := w.create(w.owner, w.body("ET40000001"))
	other := w.create(w.owner, w.body("ET40000002"))
	one := "/api/employees/" + e.ID

	rec := w.call(w.admin, http.MethodPut, one, map[string]any{"firstName": "Abel", "department": "", "grossMonthlySalarySantim": 3000000,
		"payoutAccount": map[string]any{"partner": "cbe", "accountNumber": "999", "holderName": "Abel Kebede"}, "businessId": w.a})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[employeeJSON](t, rec)
	require.Equal(t, "Abel", got.FirstName)
	require.Equal(t, "Abel Kebede", got.FullName, "the default full name follows the first name")
	require.Nil(t, got.Department, "\"\" clears")
	require.Equal(t, "Developer", *got.Position, "absent: kept")
	require.Equal(t, int64(3000000), got.GrossMonthlySalarySantim)
	require.Equal(t, "cbe", got.PayoutAccount.Partner)
	require.Equal(t, "****0001", got.NationalID)
	require.Equal(t, 1, bizAudits(t, w.f.d, w.a, actionUpdateEmployee, "SUCCESS", bizUserID(t, w.admin)))
	updated := w.events(w.a, eventEmployeeUpdated)
	require.Len(t, updated, 1)
	require.Equal(t, e.ID, updated[0]["employeeId"])
	require.ElementsMatch(t, []any{"firstName", "department", "grossMonthlySalarySantim", "payoutAccount"}, updated[0]["fields"])

	// A given full name sticks.
	rec = w.call(w.admin, http.MethodPut, one, map[string]any{"fullName": "Abel Kebede Tadesse"})
	require.Equal(t, "Abel Kebede Tadesse", decode[employeeJSON](t, rec).FullName)
	rec = w.call(w.admin, http.MethodPut, one, map[string]any{"lastName": "Bekele"})
	require.Equal(t, "Abel Kebede Tadesse", decode[employeeJSON](t, rec).FullName)

	// Refusals change nothing.
	for _, c := range []struct {
		body   any
		status int
		code   string
	}{
		{map[string]any{}, 400, "INVALID_REQUEST"},
		{map[string]any{"businessId": w.a}, 400, "INVALID_REQUEST"},
		{map[string]any{"grossMonthlySalarySantim": -5}, 400, "INVALID_REQUEST"},
		{map[string]any{"firstName": ""}, 400, "INVALID_REQUEST"},
		{map[string]any{"position": "x", "businessId": w.b}, 403, "TENANT_MISMATCH"},
		{map[string]any{"nationalId": "ET40000002"}, 409, "DUPLICATE_NATIONAL_ID"},
	} {
		rec := w.hostile(w.admin, http.MethodPut, one, c.body)
		require.Equal(t, c.status, rec.Code, "%v: %s", c.body, rec.Body.String())
		require.Equal(t, c.code, errCode(rec))
	}
	rec = w.hostile(w.admin, http.MethodPut, one, `{"status":"TERMINATED"}`)
	require.Equal(t, http.StatusBadRequest, rec.Code, "the status has its own route")
	require.Equal(t, 1, w.deniedWith(w.a, actionUpdateEmployee, "DUPLICATE_NATIONAL_ID"))
	require.Equal(t, 1, w.deniedWith(w.a, "AccessRoute", "TENANT_MISMATCH"))
	rec = w.call(w.member, http.MethodPut, one, map[string]any{"position": "x"})
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
	rec = w.call(w.admin, http.MethodGet, one, nil)
	require.Equal(t, "Developer", *decode[employeeJSON](t, rec).Position)
	require.Len(t, w.events(w.a, eventEmployeeUpdated), 3)

	// Status.
	status := func(s string) *httptest.ResponseRecorder {
		return w.call(w.admin, http.MethodPut, one+"/status", map[string]any{"status": s})
	}
	rec = status("ON_LEAVE")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "ON_LEAVE", string(decode[employeeJSON](t, rec).Status))
	require.Equal(t, http.StatusOK, status("ON_LEAVE").Code, "the same status is a no-op")
	require.Equal(t, 1, bizAudits(t, w.f.d, w.a, actionSetEmployeeStatus, "SUCCESS", ""), "a no-op records nothing")
	require.Equal(t, http.StatusOK, status("TERMINATED").Code)
	rec = status("SUSPENDED")
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "EMPLOYEE_INVALID_TRANSITION", errCode(rec))
	require.Equal(t, 1, w.deniedWith(w.a, actionSetEmployeeStatus, "EMPLOYEE_INVALID_TRANSITION"))
	rec = w.hostile(w.admin, http.MethodPut, one+"/status", map[string]any{"status": "FIRED"})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	rec = w.hostile(w.admin, http.MethodPut, one+"/status", map[string]any{"status": "ACTIVE", "reason": "x"})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, http.StatusOK, status("ACTIVE").Code, "re-hire")
	require.Len(t, w.events(w.a, eventEmployeeUpdated), 6)

	// Counts, then the soft delete.
	count := func() employeeCountJSON {
		rec := w.call(w.member, http.MethodGet, "/api/business/"+w.a+"/employee-count", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[employeeCountJSON](t, rec)
	}
	w.call(w.admin, http.MethodPut, "/api/employees/"+other.ID+"/status", map[string]any{"status": "SUSPENDED"})
	require.Equal(t, employeeCountJSON{BusinessID: w.a, EmployeeCount: 2, ActiveEmployeeCount: 1}, count())
	rec = w.call(w.admin, http.MethodDelete, one, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, []map[string]any{{"employeeId": e.ID}}, w.events(w.a, eventEmployeeDeleted))
	require.Equal(t, 1, bizAudits(t, w.f.d, w.a, actionDeleteEmployee, "SUCCESS", ""))
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, one, nil}, {http.MethodDelete, one, nil}, {http.MethodPut, one, map[string]any{"position": "x"}},
		{http.MethodPut, one + "/status", map[string]any{"status": "ACTIVE"}}, {http.MethodPost, one + "/invite", map[string]any{"channel": "email"}},
	} {
		rec = w.call(w.admin, c.method, c.path, c.body)
		require.Equal(t, http.StatusNotFound, rec.Code, "%s %s", c.method, c.path)
	}
	require.Equal(t, employeeCountJSON{BusinessID: w.a, EmployeeCount: 1, ActiveEmployeeCount: 0}, count())
	// Its national id is free again.
	w.create(w.owner, w.body("ET40000001"))
	rec = w.call(w.member, http.MethodDelete, "/api/employees/"+other.ID, nil)
	require.Equal(t, "INSUFFICIENT_ROLE", errCode(rec))
}

func TestEmployeeListsAndPagination(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	var ids []string
	for i := 0; i < 5; i++ {
		b := w.body(fmt.Sprintf("ET5000000%d", i))
		b["firstName"] = fmt.Sprintf("Person%d", i)
		if i%2 == 1 {
			b["department"] = "Human Resources"
		}
		ids = append(ids, w.create(w.owner, b).ID)
	}
	w.create(w.otherOwn, w.body("ET59999999"))
	w.call(w.owner, http.MethodPut, "/api/employees/"+ids[3]+"/status", map[string]any{"status": "ON_LEAVE"})
	list := func(a *apiClient, path string) ([]string, *string) {
		t.Helper()
		rec := w.call(a, http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, rec.Code, "%s: %s", path, rec.Body.String())
		l := decode[employeeListJSON](t, rec)
		var out []string
		for _, e := range l.Employees {
			require.Equal(t, w.a, e.BusinessID)
			out = append(out, e.ID)
		}
		return out, l.NextCursor
	}
	// Pages of two, by cursor.
	var all []string
	path := "/api/employees?limit=2"
	for {
		page, next := list(w.member, path)
		all = append(all, page...)
		if next == nil {
			break
		}
		require.Len(t, page, 2)
		path = "/api/employees?limit=2&cursor=" + url.QueryEscape(*next)
	}
	require.Equal(t, ids, all)
	got, next := list(w.member, "/api/employees")
	require.Equal(t, ids, got)
	require.Nil(t, next)
	// A limit in any spelling the document's integer allows, as its validator reads it.
	for _, limit := range []string{"01", "%2B1"} {
		got, next = list(w.member, "/api/employees?limit="+limit)
		require.Equal(t, ids[:1], got, limit)
		require.NotNil(t, next, limit)
	}

	got, _ = list(w.member, "/api/employees?status=ON_LEAVE")
	require.Equal(t, []string{ids[3]}, got)
	got, _ = list(w.member, "/api/employees?department=human%20resources")
	require.Equal(t, []string{ids[1], ids[3]}, got)
	got, _ = list(w.member, "/api/employees?q=person4")
	require.Equal(t, []string{ids[4]}, got)
	got, _ = list(w.member, "/api/employees?q=%25")
	require.Empty(t, got, "% is literal")
	got, _ = list(w.member, "/api/employees/active/"+w.a)
	require.Equal(t, []string{ids[0], ids[1], ids[2], ids[4]}, got)
	got, next = list(w.member, "/api/employees/active/"+w.a+"?limit=3&department=Human%20Resources")
	require.Equal(t, []string{ids[1]}, got)
	require.Nil(t, next)
	got, _ = list(w.member, "/api/employees/department/"+w.a+"/Human%20Resources")
	require.Equal(t, []string{ids[1], ids[3]}, got)
	got, _ = list(w.member, "/api/employees/department/"+w.a+"/Human%20Resources?status=ACTIVE&q=Person1")
	require.Equal(t, []string{ids[1]}, got)
	got, _ = list(w.member, "/api/employees/department/"+w.a+"/Nowhere")
	require.Empty(t, got)

	for _, p := range []string{
		"/api/employees?limit=0", "/api/employees?limit=101", "/api/employees?limit=abc",
		"/api/employees?limit=1&limit=2", "/api/employees?status=FIRED", "/api/employees?cursor=a%20b",
		"/api/employees?q=%00", "/api/employees?department=" + strings.Repeat("d", 129),
		"/api/employees/active/" + w.a + "?status=ON_LEAVE", "/api/employees/department/" + w.a + "/Sales?department=HR",
		"/api/employees/department/" + w.a + "/%E2%80%AE",
	} {
		rec := w.hostile(w.member, http.MethodGet, p, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", p, rec.Body.String())
		require.Equal(t, "INVALID_REQUEST", errCode(rec), p)
	}
	rec := w.hostile(w.member, http.MethodGet, "/api/employees/a%20b", nil)
	require.Equal(t, http.StatusBadRequest, rec.Code)
}

func TestEmployeeLinkAndProfile(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	body := w.body("ET60000001")
	body["email"] = "Tigist@Example.com"
	e := w.create(w.owner, body)
	tigist, tigistID := w.user("tigist@example.com")
	stranger, _ := w.user("stranger@example.com")

	// Not linked yet.
	rec := w.call(tigist, http.MethodGet, "/api/me/profile", nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, "EMPLOYEE_NOT_LINKED", errCode(rec))
	rec = w.call(w.owner, http.MethodGet, "/api/me/profile", nil)
	require.Equal(t, "EMPLOYEE_NOT_LINKED", errCode(rec), "a member who is no employee")

	// Invite by e-mail.
	rec = w.call(w.admin, http.MethodPost, "/api/employees/"+e.ID+"/invite", map[string]any{"channel": "email"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	inv := decode[employeeInviteJSON](t, rec)
	require.Equal(t, "****.com", inv.SentTo)
	require.True(t, w.f.now().Add(7*24*time.Hour).Equal(inv.ExpiresAt), inv.ExpiresAt)
	require.Equal(t, 1, bizAudits(t, w.f.d, w.a, actionInviteEmployee, "SUCCESS", bizUserID(t, w.admin)))
	m, ok := w.f.inbox.LatestEmail("tigist@example.com", notify.Invitation)
	require.True(t, ok)
	require.Contains(t, m.Text, "Org of owner@emp-a.example")
	require.Contains(t, m.Secret, "/employee-link?token=")
	token := empLinkToken(t, m.Secret)

	// Someone else holding the link: refused, audited, the token still good.
	rec = w.call(stranger, http.MethodPost, "/api/employees/link/accept", map[string]any{"token": token})
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "EMPLOYEE_LINK_MISMATCH", errCode(rec))
	require.Equal(t, 1, w.deniedWith(w.a, actionLinkEmployeeUser, "EMPLOYEE_LINK_MISMATCH"))
	rec = w.call(w.anon, http.MethodPost, "/api/employees/link/accept", map[string]any{"token": token})
	require.Equal(t, http.StatusUnauthorized, rec.Code)

	rec = w.call(tigist, http.MethodPost, "/api/employees/link/accept", map[string]any{"token": token})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	linked := decode[employeeJSON](t, rec)
	require.Equal(t, e.ID, linked.ID)
	require.Equal(t, tigistID, *linked.UserID)
	require.Equal(t, 1, bizAudits(t, w.f.d, w.a, actionLinkEmployeeUser, "SUCCESS", tigistID))
	ev := w.events(w.a, eventEmployeeUpdated)
	require.Equal(t, map[string]any{"employeeId": e.ID, "fields": []any{"userId"}}, ev[len(ev)-1])

	// The profile: the caller's row, without membership; the national id masked.
	rec = w.call(tigist, http.MethodGet, "/api/me/profile", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, linked, decode[employeeJSON](t, rec))
	require.Equal(t, "****0001", linked.NationalID)
	// Being an employee is not being a member.
	rec = w.call(tigist, http.MethodGet, "/api/employees/"+e.ID, nil)
	require.Equal(t, http.StatusForbidden, rec.Code)

	// Single use; an employee has one user.
	rec = w.call(tigist, http.MethodPost, "/api/employees/link/accept", map[string]any{"token": token})
	require.Equal(t, "INVALID_TOKEN", errCode(rec))
	rec = w.call(w.admin, http.MethodPost, "/api/employees/"+e.ID+"/invite", map[string]any{"channel": "email"})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "EMPLOYEE_ALREADY_LINKED", errCode(rec))
	require.Equal(t, 1, w.deniedWith(w.a, actionInviteEmployee, "EMPLOYEE_ALREADY_LINKED"))

	// A user is at most one employee per business.
	body = w.body("ET60000002")
	body["email"] = "tigist@example.com"
	second := w.create(w.owner, body)
	w.call(w.admin, http.MethodPost, "/api/employees/"+second.ID+"/invite", map[string]any{"channel": "email"})
	m, _ = w.f.inbox.LatestEmail("tigist@example.com", notify.Invitation)
	rec = w.call(tigist, http.MethodPost, "/api/employees/link/accept", map[string]any{"token": empLinkToken(t, m.Secret)})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "USER_ALREADY_LINKED", errCode(rec))

	// ... but may be an employee of another business too: then the profile asks which one.
	body = w.body("ET60000003")
	body["email"] = "tigist@example.com"
	inB := w.create(w.otherOwn, body)
	w.call(w.otherOwn, http.MethodPost, "/api/employees/"+inB.ID+"/invite", map[string]any{"channel": "email"})
	m, _ = w.f.inbox.LatestEmail("tigist@example.com", notify.Invitation)
	rec = w.call(tigist, http.MethodPost, "/api/employees/link/accept", map[string]any{"token": empLinkToken(t, m.Secret)})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = w.call(tigist, http.MethodGet, "/api/me/profile", nil)
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "EMPLOYEE_ORGANIZATION_REQUIRED", errCode(rec))
	rec = w.call(tigist, http.MethodGet, "/api/me/profile?organizationId="+w.b, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, inB.ID, decode[employeeJSON](t, rec).ID)
	rec = w.call(tigist, http.MethodGet, "/api/me/profile?organizationId=org_nowhere", nil)
	require.Equal(t, "EMPLOYEE_NOT_LINKED", errCode(rec))
	rec = w.hostile(tigist, http.MethodGet, "/api/me/profile?organizationId=a%20b", nil)
	require.Equal(t, http.StatusBadRequest, rec.Code)

	// A deleted employee is nobody's profile.
	w.call(w.otherOwn, http.MethodDelete, "/api/employees/"+inB.ID, nil)
	rec = w.call(tigist, http.MethodGet, "/api/me/profile", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, e.ID, decode[employeeJSON](t, rec).ID)
	w.call(w.owner, http.MethodDelete, "/api/employees/"+e.ID, nil)
	rec = w.call(tigist, http.MethodGet, "/api/me/profile", nil)
	require.Equal(t, "EMPLOYEE_NOT_LINKED", errCode(rec))

	// Malformed tokens.
	for _, tok := range []string{"", "nope", w.a + ".short", w.a + "." + strings.Repeat("A", 42) + "=", "a b." + identity.NewToken(), w.a + "." + identity.NewToken()} {
		rec = w.hostile(tigist, http.MethodPost, "/api/employees/link/accept", map[string]any{"token": tok})
		require.Equal(t, http.StatusBadRequest, rec.Code, tok)
		require.Equal(t, "INVALID_TOKEN", errCode(rec), tok)
	}
}

func TestEmployeeLinkByPhone(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	body := w.body("ET70000001")
	delete(body, "email")
	body["phone"] = "+251922000111"
	e := w.create(w.owner, body)
	rec := w.call(w.admin, http.MethodPost, "/api/employees/"+e.ID+"/invite", map[string]any{"channel": "email"})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "EMPLOYEE_CONTACT_MISSING", errCode(rec))
	rec = w.call(w.admin, http.MethodPost, "/api/employees/"+e.ID+"/invite", map[string]any{"channel": "phone"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "****0111", decode[employeeInviteJSON](t, rec).SentTo)
	sms, ok := w.f.inbox.LatestSMS("+251922000111", notify.Invitation)
	require.True(t, ok)
	token := empLinkToken(t, sms.Secret)

	u, uid := w.user("dawit@example.com")
	rec = w.call(u, http.MethodPost, "/api/employees/link/accept", map[string]any{"token": token})
	require.Equal(t, "EMPLOYEE_LINK_MISMATCH", errCode(rec), "the user's phone is not verified")
	require.NoError(t, identity.SetVerifiedPhone(context.Background(), w.f.d.App, uid, "+251922000111", w.f.now()))
	rec = w.call(u, http.MethodPost, "/api/employees/link/accept", map[string]any{"token": token})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, uid, *decode[employeeJSON](t, rec).UserID)

	// The invitation expires after 7 days.
	body = w.body("ET70000002")
	body["phone"] = "+251922000222"
	e = w.create(w.owner, body)
	w.call(w.admin, http.MethodPost, "/api/employees/"+e.ID+"/invite", map[string]any{"channel": "phone"})
	sms, _ = w.f.inbox.LatestSMS("+251922000222", notify.Invitation)
	w.f.advance(7 * 24 * time.Hour)
	late, lateID := w.user("late@example.com")
	require.NoError(t, identity.SetVerifiedPhone(context.Background(), w.f.d.App, lateID, "+251922000222", w.f.now()))
	rec = w.call(late, http.MethodPost, "/api/employees/link/accept", map[string]any{"token": empLinkToken(t, sms.Secret)})
	require.Equal(t, "INVALID_TOKEN", errCode(rec))
}

// TestEmployeeInviteRateLimited: an invitation sends a message, so it is bounded per recipient
// like every route that does (five per 15 minutes), and a new one replaces the previous link.
func TestEmployeeInviteRateLimited(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	e := w.create(w.owner, w.body("ET80000001"))
	var tokens []string
	for i := 0; i < 5; i++ {
		rec := w.call(w.admin, http.MethodPost, "/api/employees/"+e.ID+"/invite", map[string]any{"channel": "email"})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		m, _ := w.f.inbox.LatestEmail(*e.Email, notify.Invitation)
		tokens = append(tokens, empLinkToken(t, m.Secret))
	}
	rec := w.call(w.admin, http.MethodPost, "/api/employees/"+e.ID+"/invite", map[string]any{"channel": "email"})
	require.Equal(t, http.StatusTooManyRequests, rec.Code)
	require.NotEmpty(t, rec.Header().Get("Retry-After"))

	u, _ := w.user(*e.Email)
	rec = w.call(u, http.MethodPost, "/api/employees/link/accept", map[string]any{"token": tokens[0]})
	require.Equal(t, "INVALID_TOKEN", errCode(rec), "replaced by a newer invitation")
	rec = w.call(u, http.MethodPost, "/api/employees/link/accept", map[string]any{"token": tokens[4]})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// TestEmployeeNationalIDNeverStoredOutsideItsRow: after a full round of routes (create, a
// duplicate, reads, an update, a link), the national id is in no log line (the log here is NOT
// redacted, so nothing may pass it at all), no audit row and no event.
func TestEmployeeNationalIDNeverStoredOutsideItsRow(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	var logMu sync.Mutex
	d := testkit.NewDB(t)
	inbox := &notify.Memory{}
	f := &authFixture{t: t, d: d, inbox: inbox, clock: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	f.srv = New(Deps{Log: slog.New(slog.NewTextHandler(lockedWriter{b: &logs, mu: &logMu}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		DB: d.App, Platform: d.Platform(t), Registry: prometheus.NewRegistry(), Mailer: inbox, Texter: inbox, Now: f.now})
	owner, res := f.signUp("owner@nid.example", "BUSINESS")
	tenant := res.Organization.ID
	w := &empWorld{t: t, f: f, a: tenant, owner: owner}
	seedEmployeeCatalogs(t, owner)
	const nid = "NIDSECRET42"
	e := w.create(owner, w.body(nid))
	w.call(owner, http.MethodPost, "/api/employees", w.body(nid))
	w.call(owner, http.MethodGet, "/api/employees/"+e.ID, nil)
	w.call(owner, http.MethodGet, "/api/employees?q=Abebe", nil)
	w.call(owner, http.MethodPut, "/api/employees/"+e.ID, map[string]any{"nationalId": nid + "9"})
	w.nids = append(w.nids, nid+"9")
	w.call(owner, http.MethodPost, "/api/employees/"+e.ID+"/invite", map[string]any{"channel": "email"})
	m, _ := inbox.LatestEmail(*e.Email, notify.Invitation)
	u, _ := w.user(*e.Email)
	w.call(u, http.MethodPost, "/api/employees/link/accept", map[string]any{"token": empLinkToken(t, m.Secret)})
	w.call(u, http.MethodGet, "/api/me/profile", nil)
	for _, msg := range inbox.Emails() {
		require.NotContains(t, msg.Text, nid)
	}

	logMu.Lock()
	require.NotEmpty(t, logs.String())
	require.NotContains(t, logs.String(), nid)
	logMu.Unlock()
	ctx := context.Background()
	require.NoError(t, db.InTenantTx(ctx, d.App, tenant, func(tx pgx.Tx) error {
		var audits, events int
		require.NoError(t, tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM app.audit_log WHERE details::text LIKE '%' || $1 || '%'),
			(SELECT count(*) FROM app.outbox WHERE payload::text LIKE '%' || $1 || '%')`, nid).Scan(&audits, &events))
		require.Zero(t, audits)
		require.Zero(t, events)
		return nil
	}))
}

// FuzzEmployeeRoutes: whatever reaches an employee route (any path id, business id, department,
// query and body, from an owner, a plain member, a platform admin, a linked employee or nobody)
// answers 4xx or success with the error envelope, never 5xx.
func FuzzEmployeeRoutes(f *testing.F) {
	fx := newEmpFuzzFixture(f)
	routes := append(fx.srv.employeeRoutes(), Route{Method: http.MethodGet, Path: "/api/business/:id/employee-count"})
	valid := `{"firstName":"F","lastName":"Z","nationalId":"FZ000001","hireDate":"2024-01-01","grossMonthlySalarySantim":1,` +
		`"payoutAccount":{"partner":"sandbox","accountNumber":"1","holderName":"F Z"}}`
	f.Add(uint8(0), uint8(0), "", "", "", "", []byte(valid))
	f.Add(uint8(0), uint8(0), "", "", "", "", []byte(strings.Replace(valid, `:1,`, `:9223372036854775808,`, 1)))
	f.Add(uint8(0), uint8(0), "", "", "", "", []byte(strings.Replace(valid, `"F"`, `"F","businessId":"org_x"`, 1)))
	f.Add(uint8(1), uint8(1), "", "", "", "limit=2&status=ACTIVE&q=%25", []byte(nil))
	f.Add(uint8(2), uint8(2), "", fx.org, "", "cursor=emp_", []byte(nil))
	f.Add(uint8(3), uint8(0), "", fx.org, "Sales", "", []byte(nil))
	f.Add(uint8(4), uint8(3), "", "", "", "", []byte(`{"token":"`+fx.org+`.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}`))
	f.Add(uint8(5), uint8(0), fx.emp, "", "", "", []byte(nil))
	f.Add(uint8(6), uint8(0), fx.emp, "", "", "", []byte(`{"grossMonthlySalarySantim":-1}`))
	f.Add(uint8(7), uint8(0), fx.emp, "", "", "", []byte(`{"status":"TERMINATED"}`))
	// The pay inputs: a termination date (real, ordered after the hire date) and a TIN.
	f.Add(uint8(0), uint8(0), "", "", "", "", []byte(strings.Replace(valid, `"F"`, `"F","terminationDate":"2023-12-31","tin":"0123456789"`, 1)))
	f.Add(uint8(0), uint8(0), "", "", "", "", []byte(strings.Replace(valid, `"F"`, `"F","terminationDate":"2024-02-30","tin":"01234567890"`, 1)))
	f.Add(uint8(8), uint8(0), fx.emp, "", "", "", []byte(`{"terminationDate":"1900-01-01"}`))
	f.Add(uint8(8), uint8(0), fx.emp, "", "", "", []byte(`{"terminationDate":"","tin":""}`))
	f.Add(uint8(8), uint8(0), fx.emp, "", "", "", []byte(`{"tin":"0123456789","hireDate":"2200-12-31","terminationDate":"2200-12-31"}`))
	f.Add(uint8(8), uint8(0), fx.emp, "", "", "", []byte(`{"tin":12345678901,"terminationDate":null}`))
	f.Add(uint8(8), uint8(0), fx.emp, "", "", "", []byte(`{"paymentFrequency":"Weekly"}`))
	f.Add(uint8(8), uint8(1), fx.emp, "", "", "", []byte(nil))
	f.Add(uint8(9), uint8(0), fx.emp, "", "", "", []byte(`{"channel":"phone"}`))
	f.Add(uint8(10), uint8(3), "", "", "", "organizationId=x", []byte(nil))
	f.Add(uint8(11), uint8(2), fx.org, "", "", "", []byte(nil))
	f.Add(uint8(6), uint8(0), "a\x00b", "../x", "%", "limit=%00", []byte("\xff"))
	f.Fuzz(func(t *testing.T, route, who uint8, id, business, dept, query string, body []byte) {
		r := routes[int(route)%len(routes)]
		path := strings.NewReplacer(":businessId", business, ":department", dept, ":id", id).Replace(r.Path)
		if strings.Contains(r.Path, "employee-count") {
			path = strings.Replace(r.Path, ":id", business, 1)
		}
		req := httptest.NewRequest(r.Method, "/", bytes.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		req.RemoteAddr = "192.0.2.78:40000"
		if len(body) > 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		switch who % 5 {
		case 0:
			req.AddCookie(fx.owner.cookie)
		case 1:
			req.AddCookie(fx.member.cookie)
		case 2:
			req.AddCookie(fx.platform.cookie)
		case 3:
			req.AddCookie(fx.employee.cookie)
		}
		rec := httptest.NewRecorder()
		fx.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q", r.Method, path, query))
	})
}

type empFuzzFixture struct {
	srv                               *Server
	owner, member, platform, employee *apiClient
	org, emp                          string
}

// newEmpFuzzFixture is one database for every input of the fuzz target: a business with an
// owner, a plain member, one employee linked to a user, and a platform admin.
func newEmpFuzzFixture(tb testing.TB) *empFuzzFixture {
	f := newAuthFixture(tb)
	owner, res := f.signUp("owner@emp-fuzz.example", "BUSINESS")
	fx := &empFuzzFixture{srv: f.srv, owner: owner, org: res.Organization.ID, platform: f.platformAdmin("root@emp-fuzz.example")}
	f.addMember(fx.org, "member@emp-fuzz.example", orgs.PlainMember)
	fx.member = f.signIn("member@emp-fuzz.example")
	rec := owner.call(http.MethodPost, "/api/employees", map[string]any{"firstName": "Fuzz", "lastName": "Target", "email": "employee@emp-fuzz.example",
		"nationalId": "FUZZ0001", "hireDate": "2024-01-01", "grossMonthlySalarySantim": 1,
		"payoutAccount": map[string]any{"partner": "sandbox", "accountNumber": "1", "holderName": "Fuzz Target"}})
	require.Equal(tb, http.StatusCreated, rec.Code, rec.Body.String())
	fx.emp = decode[employeeJSON](tb, rec).ID
	rec = owner.call(http.MethodPost, "/api/employees/"+fx.emp+"/invite", map[string]any{"channel": "email"})
	require.Equal(tb, http.StatusOK, rec.Code, rec.Body.String())
	m, _ := f.inbox.LatestEmail("employee@emp-fuzz.example", notify.Invitation)
	hash, err := identity.HashPassword(testPassword)
	require.NoError(tb, err)
	_, err = identity.CreateUser(context.Background(), f.d.App, identity.NewUser{Email: "employee@emp-fuzz.example", Name: "Fuzz", PasswordHash: hash})
	require.NoError(tb, err)
	fx.employee = f.signIn("employee@emp-fuzz.example")
	rec = fx.employee.call(http.MethodPost, "/api/employees/link/accept", map[string]any{"token": empLinkToken(tb, m.Secret)})
	require.Equal(tb, http.StatusOK, rec.Code, rec.Body.String())
	return fx
}

// TestEmployeeTypeAndFrequencyFromCatalogs: an employee's employmentType and paymentFrequency
// name entries of the employer's own catalogs, on create, update and CSV import. Made-up text,
// another organization's entry and a deleted entry are refused with 422 NOT_IN_CATALOG naming
// the field, and nothing is stored; an entry in another case is taken, spelled as the catalog
// spells it; "" clears.
func TestEmployeeTypeAndFrequencyFromCatalogs(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	// An entry of B's catalog only, and one of A's that is deleted.
	rec := w.call(w.otherOwn, http.MethodPost, "/api/employment-types", map[string]any{"name": "Contract"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	rec = w.call(w.owner, http.MethodPost, "/api/payment-frequencies", map[string]any{"name": "Weekly"})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	weekly := decode[catalogEntryJSON](t, rec).ID
	rec = w.call(w.owner, http.MethodDelete, "/api/payment-frequencies/"+weekly, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	refusals := []struct {
		name, field, value string
	}{
		{"made-up type", "employmentType", "Made up"},
		{"another organization's type", "employmentType", "Contract"},
		{"made-up frequency", "paymentFrequency", "Fortnightly"},
		{"deleted frequency", "paymentFrequency", "Weekly"},
	}
	notInCatalog := func(rec *httptest.ResponseRecorder, f string) {
		t.Helper()
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
		require.Equal(t, "NOT_IN_CATALOG", errCode(rec))
		require.Contains(t, rec.Body.String(), `"field":"`+f+`"`)
	}
	before := w.counts(w.a)
	for i, tc := range refusals {
		body := w.body(fmt.Sprintf("CAT%06d", i))
		body[tc.field] = tc.value
		notInCatalog(w.call(w.owner, http.MethodPost, "/api/employees", body), tc.field)
	}
	require.Equal(t, before, w.counts(w.a), "a refused create stores nothing")

	// Another case is the same entry, stored as the catalog spells it.
	body := w.body("CAT000100")
	body["employmentType"], body["paymentFrequency"] = "FULL TIME", "monthly"
	e := w.create(w.owner, body)
	require.Equal(t, "Full time", *e.EmploymentType)
	require.Equal(t, "Monthly", *e.PaymentFrequency)

	// Update: the same refusals, the employee unchanged.
	for _, tc := range refusals {
		notInCatalog(w.call(w.owner, http.MethodPut, "/api/employees/"+e.ID, map[string]any{tc.field: tc.value, "position": "Changed"}), tc.field)
	}
	rec = w.call(w.owner, http.MethodGet, "/api/employees/"+e.ID, nil)
	require.Equal(t, e, decode[employeeJSON](t, rec), "a refused update changes nothing")
	require.Empty(t, w.events(w.a, "employee.updated.v1"))
	rec = w.call(w.owner, http.MethodPut, "/api/employees/"+e.ID, map[string]any{"employmentType": "", "paymentFrequency": "MONTHLY"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[employeeJSON](t, rec)
	require.Nil(t, got.EmploymentType, `"" clears`)
	require.Equal(t, "Monthly", *got.PaymentFrequency)

	// CSV import: each refused row says why; only the good row is created.
	before = w.counts(w.a)
	file := csvFile(t, importCols,
		w.importCells("CAT000200"),
		w.importCells("CAT000201", "employmentType", "Made up"),
		w.importCells("CAT000202", "paymentFrequency", "Weekly"),
		w.importCells("CAT000203", "employmentType", "Contract"),
		w.importCells("CAT000204", "employmentType", "full time"))
	res := w.imported(w.importFile(w.owner, file, "", false))
	require.Equal(t, 2, res.Created)
	require.Equal(t, 3, res.Failed)
	for i, f := range map[int]string{1: "employmentType", 2: "paymentFrequency", 3: "employmentType"} {
		r := res.Results[i]
		require.Equal(t, importError, r.Outcome, "line %d", r.Line)
		require.Equal(t, "NOT_IN_CATALOG", r.Code, "line %d", r.Line)
		require.Equal(t, http.StatusUnprocessableEntity, r.Status)
		require.Equal(t, f, r.Field, "line %d", r.Line)
	}
	require.Equal(t, before.employees+2, w.counts(w.a).employees)
	rec = w.call(w.owner, http.MethodGet, "/api/employees/"+res.Results[4].EmployeeID, nil)
	require.Equal(t, "Full time", *decode[employeeJSON](t, rec).EmploymentType)
}
