package api

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/platform/db"
)

const importPath = "/api/employees/bulk-import"

// importCols is a header with every documented column.
var importCols = []string{"businessId", "firstName", "lastName", "email", "phone", "nationalId", "department", "position",
	"employmentType", "paymentFrequency", "hireDate", "grossMonthlySalarySantim", "payoutPartner", "payoutAccountNumber",
	"payoutHolderName", "status", "terminationDate", "tin"}

// importCells is a valid row of importCols for national id nid (remembered: no response may
// show it), with the given columns replaced.
func (w *empWorld) importCells(nid string, set ...string) []string {
	w.mu.Lock()
	w.nids = append(w.nids, employees.NormalizeNationalID(nid))
	email := fmt.Sprintf("abebe.import%d@example.com", len(w.nids))
	w.mu.Unlock()
	row := map[string]string{"firstName": "Abebe", "lastName": "Kebede", "email": email,
		"phone": "+251911234567", "nationalId": nid, "department": "Engineering", "position": "Developer", "employmentType": "Full time",
		"paymentFrequency": "Monthly", "hireDate": "2024-03-01", "grossMonthlySalarySantim": "2500000", "payoutPartner": "sandbox",
		"payoutAccountNumber": "1000123456789", "payoutHolderName": "Abebe Kebede"}
	for i := 0; i+1 < len(set); i += 2 {
		row[set[i]] = set[i+1]
	}
	out := make([]string, len(importCols))
	for i, c := range importCols {
		out[i] = row[c]
	}
	return out
}

// csvFile writes header and rows as CSV (encoding/csv quotes what needs quoting).
func csvFile(t testing.TB, header []string, rows ...[]string) string {
	t.Helper()
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	require.NoError(t, cw.Write(header))
	require.NoError(t, cw.WriteAll(rows))
	return b.String()
}

// importFile sends file to the import route as text/csv; hostile skips the request's own
// validation (a file the contract's CSV reader cannot read).
func (w *empWorld) importFile(a *apiClient, file, query string, hostile bool, hdr ...string) *httptest.ResponseRecorder {
	w.t.Helper()
	path := importPath
	if query != "" {
		path += "?" + query
	}
	hdr = append([]string{"Content-Type", "text/csv"}, hdr...)
	var rec *httptest.ResponseRecorder
	if hostile {
		rec = a.hostile(http.MethodPost, path, []byte(file), hdr...)
	} else {
		rec = a.call(http.MethodPost, path, []byte(file), hdr...)
	}
	w.noNationalIDFast(rec)
	return rec
}

// noNationalIDFast is w.noNationalID for large answers: the body is upper-cased once, not once
// per national id the test has used.
func (w *empWorld) noNationalIDFast(rec *httptest.ResponseRecorder) {
	w.t.Helper()
	body := strings.ToUpper(rec.Body.String())
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, n := range w.nids {
		if strings.Contains(body, n) {
			require.Failf(w.t, "a full national id in a response", "%s in %s", n, rec.Body.String())
		}
	}
}

func (w *empWorld) imported(rec *httptest.ResponseRecorder) employeeImportJSON {
	w.t.Helper()
	require.Equal(w.t, http.StatusOK, rec.Code, rec.Body.String())
	return decode[employeeImportJSON](w.t, rec)
}

// tenantCounts is what tenant has: employees, employee.created.v1 events, CreateEmployee audit
// rows of a bulk import, and BulkImportEmployees audit rows by outcome.
type tenantCounts struct{ employees, events, created, importOK, importDenied int }

func (w *empWorld) counts(tenant string) tenantCounts {
	w.t.Helper()
	ctx := context.Background()
	var c tenantCounts
	require.NoError(w.t, db.InTenantTx(ctx, w.f.d.App, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM app.employees WHERE tenant_id = $1),
			(SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'employee.created.v1'),
			(SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'CreateEmployee' AND details->>'bulkImport' = 'true'),
			(SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'BulkImportEmployees' AND outcome = 'SUCCESS'),
			(SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'BulkImportEmployees' AND outcome = 'DENIED')`,
			tenant).Scan(&c.employees, &c.events, &c.created, &c.importOK, &c.importDenied)
	}))
	return c
}

func TestEmployeeImportMixedRows(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	existing := w.create(w.owner, w.body("IMP000009"))
	before := w.counts(w.a)

	rows := [][]string{
		w.importCells("IMP000001"),                                              // 2 created
		w.importCells("IMP000002", "businessId", w.b),                           // 3 another business: 403
		w.importCells("IMP000003", "businessId", w.a, "status", "ON_LEAVE"),     // 4 this business named: created
		w.importCells("IMP000004", "email", "not-an-email"),                     // 5 400 email
		w.importCells("IMP000005", "firstName", ""),                             // 6 400 firstName
		w.importCells("imp-0000-01"),                                            // 7 same as line 2 once normalized: 409
		w.importCells("IMP000009"),                                              // 8 a live employee has it: 409
		w.importCells("IMP000006", "grossMonthlySalarySantim", "1000000000001"), // 9 400
		w.importCells("IMP000007", "firstName", "=HYPERLINK(\"http://evil.example\",\"x\")", "lastName", "@SUM(A1)",
			"department", "+Eng", "position", "-1+1"), // 10 formulas: created, stored as given
		w.importCells("IMP000008", "businessId", w.b), // 11 403
	}
	res := w.imported(w.importFile(w.owner, csvFile(t, importCols, rows...), "", false))
	require.False(t, res.DryRun)
	require.Equal(t, 10, res.Rows)
	require.Equal(t, 3, res.Created)
	require.Equal(t, 3, res.Valid)
	require.Equal(t, 7, res.Failed)
	require.False(t, res.ErrorsTruncated)
	require.Len(t, res.Results, 10)
	type outcome struct {
		line           int
		outcome, code  string
		status         int
		field, message string
	}
	var got []outcome
	for _, r := range res.Results {
		got = append(got, outcome{r.Line, r.Outcome, r.Code, r.Status, r.Field, ""})
		if r.Outcome == importCreated {
			require.NotEmpty(t, r.EmployeeID)
		} else {
			require.Empty(t, r.EmployeeID)
			require.NotEmpty(t, r.Message)
		}
	}
	require.Equal(t, []outcome{
		{2, "created", "", 0, "", ""},
		{3, "error", "TENANT_MISMATCH", 403, "", ""},
		{4, "created", "", 0, "", ""},
		{5, "error", "INVALID_REQUEST", 400, "email", ""},
		{6, "error", "INVALID_REQUEST", 400, "firstName", ""},
		{7, "error", "DUPLICATE_NATIONAL_ID", 409, "", ""},
		{8, "error", "DUPLICATE_NATIONAL_ID", 409, "", ""},
		{9, "error", "INVALID_REQUEST", 400, "grossMonthlySalarySantim", ""},
		{10, "created", "", 0, "", ""},
		{11, "error", "TENANT_MISMATCH", 403, "", ""},
	}, got)
	require.Equal(t, "line 2 of this file has the same national id", res.Results[5].Message)

	// The created employees are there as given, national ids masked, in this business only.
	e := decode[employeeJSON](t, w.call(w.owner, http.MethodGet, "/api/employees/"+res.Results[0].EmployeeID, nil))
	require.Equal(t, "****0001", e.NationalID)
	require.Equal(t, w.a, e.BusinessID)
	require.Regexp(t, `^abebe\.import[0-9]+@example\.com$`, *e.Email)
	require.Equal(t, int64(2_500_000), e.GrossMonthlySalarySantim)
	require.Equal(t, "2024-03-01", e.HireDate)
	require.Equal(t, payoutAccountJSON{Partner: "sandbox", AccountNumber: "1000123456789", HolderName: "Abebe Kebede"}, e.PayoutAccount)
	e = decode[employeeJSON](t, w.call(w.owner, http.MethodGet, "/api/employees/"+res.Results[2].EmployeeID, nil))
	require.Equal(t, "ON_LEAVE", string(e.Status))
	e = decode[employeeJSON](t, w.call(w.owner, http.MethodGet, "/api/employees/"+res.Results[8].EmployeeID, nil))
	require.Equal(t, `=HYPERLINK("http://evil.example","x")`, e.FirstName)
	require.Equal(t, "@SUM(A1)", e.LastName)
	require.Equal(t, "+Eng", *e.Department)
	require.Equal(t, "-1+1", *e.Position)
	rec := w.call(w.otherOwn, http.MethodGet, "/api/employees/"+res.Results[0].EmployeeID, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)

	// One audit row and one event per created employee, one row for the file, one DENIED row for
	// the other business's rows; business B untouched.
	after := w.counts(w.a)
	require.Equal(t, tenantCounts{employees: before.employees + 3, events: before.events + 3, created: 3, importOK: 1, importDenied: 1}, after)
	require.Equal(t, tenantCounts{}, w.counts(w.b))
	ctx := context.Background()
	var summary, denied map[string]any
	require.NoError(t, db.InTenantTx(ctx, w.f.d.App, w.a, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT details FROM app.audit_log WHERE action = 'BulkImportEmployees' AND outcome = 'SUCCESS'`).Scan(&summary); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT details FROM app.audit_log WHERE action = 'BulkImportEmployees' AND outcome = 'DENIED'`).Scan(&denied)
	}))
	require.Equal(t, map[string]any{"rows": 10.0, "created": 3.0, "failed": 7.0,
		"codes": map[string]any{"TENANT_MISMATCH": 2.0, "INVALID_REQUEST": 3.0, "DUPLICATE_NATIONAL_ID": 2.0}}, summary)
	require.Equal(t, map[string]any{"code": "TENANT_MISMATCH", "rows": 2.0, "lines": []any{3.0, 11.0}}, denied)
	events := w.events(w.a, eventEmployeeCreated)
	var ids []any
	for _, ev := range events[len(events)-3:] {
		ids = append(ids, ev["employeeId"])
	}
	require.Equal(t, []any{res.Results[0].EmployeeID, res.Results[2].EmployeeID, res.Results[8].EmployeeID}, ids)
	require.NotEqual(t, existing.ID, res.Results[0].EmployeeID)

	// The same file again: every row that was created is now a duplicate of a live employee.
	res = w.imported(w.importFile(w.owner, csvFile(t, importCols, rows...), "", false))
	require.Equal(t, 0, res.Created)
	require.Equal(t, "DUPLICATE_NATIONAL_ID", res.Results[0].Code)
	require.Equal(t, before.employees+3, w.counts(w.a).employees)

	// Business B's owner naming business A on every row imports nothing anywhere.
	res = w.imported(w.importFile(w.otherOwn, csvFile(t, importCols, w.importCells("IMP000010", "businessId", w.a)), "", false))
	require.Equal(t, "TENANT_MISMATCH", res.Results[0].Code)
	require.Equal(t, 0, w.counts(w.b).employees)
	require.Equal(t, 1, w.counts(w.b).importDenied)
}

func TestEmployeeImportDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	w.create(w.owner, w.body("DRY000009"))
	file := csvFile(t, importCols, w.importCells("DRY000001"), w.importCells("DRY000009"), w.importCells("DRY000002", "hireDate", "2024-02-30"),
		w.importCells("DRY000003"))
	before := w.counts(w.a)
	res := w.imported(w.importFile(w.admin, file, "dryRun=true", false))
	require.True(t, res.DryRun)
	require.Equal(t, 0, res.Created)
	require.Equal(t, 2, res.Valid)
	require.Equal(t, 2, res.Failed)
	require.Equal(t, []string{"valid", "error", "error", "valid"},
		[]string{res.Results[0].Outcome, res.Results[1].Outcome, res.Results[2].Outcome, res.Results[3].Outcome})
	require.Equal(t, "DUPLICATE_NATIONAL_ID", res.Results[1].Code, "checked against the business's employees too")
	require.Equal(t, "hireDate", res.Results[2].Field)
	require.Empty(t, res.Results[0].EmployeeID)
	require.Equal(t, before, w.counts(w.a), "a dry run writes no employee, event or audit row")

	res = w.imported(w.importFile(w.admin, file, "dryRun=false", false))
	require.False(t, res.DryRun)
	require.Equal(t, 2, res.Created)
	require.Equal(t, before.employees+2, w.counts(w.a).employees)

	rec := w.importFile(w.admin, file, "dryRun=yes", true)
	require.Equal(t, "dryRun", refused(t, rec, http.StatusBadRequest, "INVALID_REQUEST")["field"])
	rec = w.importFile(w.admin, file, "dryRun=true&dryRun=false", true)
	refused(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
}

func TestEmployeeImportHostileFiles(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	header := strings.Join(importCols, ",")
	line := func(nid string) string { return strings.Join(w.importCells(nid), ",") }

	// A byte-order mark and CRLF line ends (what spreadsheets save).
	res := w.imported(w.importFile(w.owner, "\uFEFF"+header+"\r\n"+line("HOS000001")+"\r\n", "", false))
	require.Equal(t, 1, res.Created)

	// Quoted cells with commas, quotes and line breaks; lines are where rows start.
	cells := w.importCells("HOS000003")
	cells[2] = "Kebede, \"Jr.\"" // lastName
	file := csvFile(t, importCols,
		w.importCells("HOS000002", "firstName", "Ab\nebe"), // line 2-3: a line break in a name is refused
		cells, // line 4
		w.importCells("HOS000004", "payoutHolderName", "Abebe\r\nKebede"), // line 5-6
		w.importCells("HOS000005"),                                        // line 7
	)
	res = w.imported(w.importFile(w.owner, file, "", false))
	require.Equal(t, []int{2, 4, 5, 7}, []int{res.Results[0].Line, res.Results[1].Line, res.Results[2].Line, res.Results[3].Line})
	require.Equal(t, "firstName", res.Results[0].Field)
	require.Equal(t, importCreated, res.Results[1].Outcome)
	require.Equal(t, "payoutAccount.holderName", res.Results[2].Field)
	require.Equal(t, importCreated, res.Results[3].Outcome)
	e := decode[employeeJSON](t, w.call(w.owner, http.MethodGet, "/api/employees/"+res.Results[1].EmployeeID, nil))
	require.Equal(t, `Kebede, "Jr."`, e.LastName)

	// A row with too few cells is that row's error (the contract's CSV reader refuses the file,
	// so it is sent as hostile).
	res = w.imported(w.importFile(w.owner, header+"\nAbebe,Kebede\n"+line("HOS000006")+"\n", "", true))
	require.Equal(t, "INVALID_ROW", res.Results[0].Code)
	require.Equal(t, importCreated, res.Results[1].Outcome)

	before := w.counts(w.a)
	// Whole-file refusals: nothing is written.
	rec := w.importFile(w.owner, header+"\n"+line("HOS000007")+"\n"+line("HOS000008")+"\n"+strings.Replace(line("HOS000009"), "Abebe", "Ab\xffbe", 1)+"\n", "", true)
	require.Equal(t, 4.0, refused(t, rec, http.StatusBadRequest, "IMPORT_INVALID_ENCODING")["line"])
	rec = w.importFile(w.owner, header+"\n"+line("HOS000010")+"\n"+strings.Replace(line("HOS000011"), ",Abebe", `,Ab"ebe`, 1)+"\n", "", true)
	require.Equal(t, 3.0, refused(t, rec, http.StatusBadRequest, "IMPORT_INVALID_CSV")["line"])
	rec = w.importFile(w.owner, header+"\n\""+line("HOS000012")+"\n"+line("HOS000013")+"\n", "", true)
	require.Equal(t, 2.0, refused(t, rec, http.StatusBadRequest, "IMPORT_INVALID_CSV")["line"], "where the unterminated quote opened")
	for _, tc := range []struct{ header, column string }{
		{header + ",salary", "salary"},
		{header + ",email", "email"},
		{strings.Replace(header, ",nationalId", "", 1), "nationalId"},
		{strings.Replace(header, "firstName", "FirstName", 1), "FirstName"},
	} {
		rec = w.importFile(w.owner, tc.header+"\n", "", true)
		require.Equal(t, tc.column, refused(t, rec, http.StatusBadRequest, "IMPORT_INVALID_HEADER")["column"])
	}
	refused(t, w.importFile(w.owner, "", "", true), http.StatusBadRequest, "IMPORT_EMPTY")
	// A header and no row: the document's body pattern wants a record after the header.
	refused(t, w.importFile(w.owner, header+"\r\n", "", true), http.StatusBadRequest, "IMPORT_EMPTY")

	// Not text/csv, or not UTF-8: 415.
	for _, ct := range []string{"application/json", "text/plain", "text/csv; charset=iso-8859-1", "multipart/form-data; boundary=x", ""} {
		rec = w.importFile(w.owner, header+"\n"+line("HOS000014")+"\n", "", true, "Content-Type", ct)
		refused(t, rec, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE")
	}
	res = w.imported(w.importFile(w.owner, header+"\n"+line("HOS000015")+"\n", "", false, "Content-Type", "text/csv; charset=UTF-8"))
	require.Equal(t, 1, res.Created)
	before.employees, before.events, before.created, before.importOK = before.employees+1, before.events+1, before.created+1, before.importOK+1

	// Over the row limit (the file is over 1 MiB too: the route's own body limit lets it in,
	// the row count refuses it), then over the body limit.
	var b strings.Builder
	b.WriteString(header + "\n")
	short := strings.Join(w.importCells("HOS999999"), ",")
	for rows := 0; b.Len() <= int(DefaultMaxBodyBytes) || rows <= employees.MaxImportRows; rows++ {
		b.WriteString(short + "\n")
	}
	rec = w.importFile(w.owner, b.String(), "", true)
	d := refused(t, rec, http.StatusRequestEntityTooLarge, "IMPORT_TOO_MANY_ROWS")
	require.Equal(t, float64(employees.MaxImportRows+2), d["line"])
	require.Equal(t, float64(employees.MaxImportRows), d["maxRows"])
	for b.Len() <= employees.MaxImportBytes {
		b.WriteString(short + "\n")
	}
	refused(t, w.importFile(w.owner, b.String(), "", true), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")

	require.Equal(t, before, w.counts(w.a))
}

// A file that passed every check but that the database refuses part of leaves nothing behind:
// another request adds an employee with one of the file's national ids after the import checked
// them and before its INSERT reaches that row (it waits on the other transaction's index entry,
// then fails when that commits). The rows of the earlier INSERT batches go too.
func TestEmployeeImportIsAllOrNothing(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	ctx := context.Background()
	const n = 3_000 // more than one INSERT batch; the clash is in the last
	var rows [][]string
	for i := 1; i <= n; i++ {
		rows = append(rows, w.importCells(fmt.Sprintf("ATOM%06d", i)))
	}
	file := csvFile(t, importCols, rows...)
	before := w.counts(w.a)

	// The other request: an employee with the last row's national id, committed only when the
	// import waits for it.
	created, release, committed := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		committed <- db.InTenantTx(ctx, w.f.d.App, w.a, func(tx pgx.Tx) error {
			_, err := employees.Create(ctx, tx, w.a, employees.Employee{FirstName: "Other", LastName: "Request",
				NationalID: fmt.Sprintf("ATOM%06d", n), HireDate: employeeProbe.HireDate, Payout: employeeProbe.Payout})
			close(created)
			if err != nil {
				return err
			}
			<-release
			return nil
		})
	}()
	<-created

	// The file is checked against the document here, its answer once it comes back.
	imp := w.owner.racer(http.MethodPost, importPath, []byte(file), "Content-Type", "text/csv")
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() { done <- imp.serve() }()
	// Wait until the import's INSERT waits on the other transaction's index entry.
	require.Eventually(t, func() bool {
		var waiting int
		err := w.f.d.App.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO app.employees%'`).Scan(&waiting)
		return err == nil && waiting == 1
	}, time.Minute, 10*time.Millisecond)
	close(release)
	require.NoError(t, <-committed)

	<-done
	rec := imp.answer()
	refused(t, rec, http.StatusConflict, "DUPLICATE_NATIONAL_ID")
	w.noNationalIDFast(rec)
	after := w.counts(w.a)
	require.Equal(t, tenantCounts{employees: before.employees + 1, events: before.events, created: before.created,
		importOK: before.importOK, importDenied: before.importDenied + 1}, after, "only the other request's employee; no row, event or audit row of the file but the refusal")
	require.Equal(t, 1, w.deniedWith(w.a, actionBulkImportEmployees, "DUPLICATE_NATIONAL_ID"))

	// Sent again, the clashing row is reported and the rest imported.
	res := w.imported(w.importFile(w.owner, file, "", false))
	require.Equal(t, n-1, res.Created)
	require.Equal(t, "DUPLICATE_NATIONAL_ID", res.Results[n-1].Code)
	require.Equal(t, before.employees+n, w.counts(w.a).employees)
}

// A large file imports in one request (the benchmark runs the full 10,000 rows); more than a
// thousand refused rows are counted and the first thousand listed.
func TestEmployeeImportLargeFile(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	const good, bad = 2_000, 1_100
	var rows [][]string
	for i := 1; i <= good+bad; i++ {
		if i%2 == 0 && i <= 2*bad {
			rows = append(rows, w.importCells(fmt.Sprintf("BIGX%06d", i), "hireDate", "yesterday"))
		} else {
			rows = append(rows, w.importCells(fmt.Sprintf("BIG%06d", i)))
		}
	}
	res := w.imported(w.importFile(w.owner, csvFile(t, importCols, rows...), "", false))
	require.Equal(t, good, res.Created)
	require.Equal(t, bad, res.Failed)
	require.True(t, res.ErrorsTruncated)
	require.Len(t, res.Results, good+1_000)
	last := 0
	for _, r := range res.Results {
		require.Greater(t, r.Line, last)
		last = r.Line
	}
	c := w.counts(w.a)
	require.Equal(t, tenantCounts{employees: good, events: good, created: good, importOK: 1}, c)
	n := decode[employeeCountJSON](t, w.call(w.owner, http.MethodGet, "/api/business/"+w.a+"/employee-count", nil))
	require.Equal(t, int64(good), n.EmployeeCount)
}

// FuzzEmployeeImport: whatever the file, query and Content-Type, from an owner, a plain member
// or nobody, the import answers 4xx or success with the error envelope, never 5xx.
func FuzzEmployeeImport(f *testing.F) {
	fx := newEmpFuzzFixture(f)
	header := strings.Join(importCols, ",")
	row := ",Fuzz,Row,,,FUZZ0002,,,,,2024-01-01,1,sandbox,1,Fuzz Row,"
	f.Add(uint8(0), uint8(0), "", []byte(header+"\n"+row+"\n"))
	f.Add(uint8(0), uint8(0), "dryRun=true", []byte("\uFEFF"+header+"\r\n"+row+"\r\n"+row+"\r\n"))
	f.Add(uint8(0), uint8(0), "", []byte(header+"\n"+strings.Replace(row, ",Fuzz", fx.org+",=1+1", 1)+"\n"))
	f.Add(uint8(0), uint8(0), "", []byte(header+"\n"+strings.Replace(row, ",Fuzz", "org_x,Fuzz", 1)+"\n"))
	f.Add(uint8(0), uint8(0), "", []byte(header+"\n\"Fu\nzz\",Row\n"))
	f.Add(uint8(0), uint8(0), "", []byte(header+"\nFu\xffzz\n"))
	f.Add(uint8(0), uint8(0), "", []byte(header+"\n\"unterminated\n"))
	f.Add(uint8(0), uint8(0), "", []byte("firstName,firstName\n"))
	f.Add(uint8(0), uint8(0), "dryRun=maybe", []byte(header+"\n"+row+"\n"))
	f.Add(uint8(0), uint8(1), "", []byte(`{"firstName":"x"}`))
	f.Add(uint8(1), uint8(0), "", []byte(header+"\n"+row+"\n"))
	f.Add(uint8(2), uint8(0), "", []byte(header+"\n"+row+"\n"))
	types := []string{"text/csv", "application/json", "text/csv; charset=utf-8", "text/csv; charset=latin1", "", "text/csv;;"}
	f.Fuzz(func(t *testing.T, who, ctype uint8, query string, body []byte) {
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.URL.Path, req.URL.RawQuery = importPath, query
		req.RemoteAddr = "192.0.2.79:40000"
		if ct := types[int(ctype)%len(types)]; ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		switch who % 3 {
		case 0:
			req.AddCookie(fx.owner.cookie)
		case 1:
			req.AddCookie(fx.member.cookie)
		}
		rec := httptest.NewRecorder()
		fx.srv.Engine.ServeHTTP(rec, req)
		require.Less(t, rec.Code, 500, "%q: %s", query, rec.Body.String())
		if rec.Code >= 400 {
			var e errBody
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e), rec.Body.String())
			require.NotEmpty(t, e.Error.Code)
		} else {
			var res employeeImportJSON
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res), rec.Body.String())
			require.Equal(t, res.Rows, res.Valid+res.Failed)
		}
	})
}
