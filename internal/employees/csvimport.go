package employees

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// The bulk import: a CSV file of employees, one per row, checked row by row with the rules of
// Validate (the same as one employee added through the API), then the valid rows written in one
// transaction. A file the parser cannot trust (not UTF-8, not CSV, a wrong header, too many rows)
// is refused as a whole before the database is touched; a row that breaks a rule is reported
// with its line and skipped.
//
// Values are stored as given, formula-looking ones ("=…", "+…", "@…") included: a name is what
// the employer says it is. Whatever writes them out again as CSV neutralises them
// (internal/platform/csvsafe).

// Limits of an import file.
const (
	// MaxImportRows bounds the data rows of one file (the header is not counted).
	MaxImportRows = 10_000
	// MaxImportBytes bounds one file: MaxImportRows rows of about 800 bytes each, several times
	// a realistic row of the documented columns (about 200 bytes).
	MaxImportBytes = 8 << 20
	// importBatch bounds the rows of one INSERT (and its arrays), so a full file is a handful of
	// statements whatever MaxImportRows becomes.
	importBatch = 2_500
)

// The import file's columns, as its header names them (exactly, in any order).
const (
	ColBusinessID               = "businessId"
	ColFirstName                = "firstName"
	ColLastName                 = "lastName"
	ColFullName                 = "fullName"
	ColEmail                    = "email"
	ColPhone                    = "phone"
	ColNationalID               = "nationalId"
	ColDepartment               = "department"
	ColPosition                 = "position"
	ColEmploymentType           = "employmentType"
	ColPaymentFrequency         = "paymentFrequency"
	ColHireDate                 = "hireDate"
	ColGrossMonthlySalarySantim = "grossMonthlySalarySantim"
	ColPayoutPartner            = "payoutPartner"
	ColPayoutAccountNumber      = "payoutAccountNumber"
	ColPayoutHolderName         = "payoutHolderName"
	ColStatus                   = "status"
	ColTerminationDate          = "terminationDate"
	ColTIN                      = "tin"
)

// ImportColumn is one column an import file may have.
type ImportColumn struct {
	Name string
	// Required columns must be in the header (their cells may still be empty, and are then
	// refused on that row like any missing value).
	Required bool
}

// ImportColumns are the columns of an import file, in the order of the documentation.
var ImportColumns = []ImportColumn{
	{ColBusinessID, false}, {ColFirstName, true}, {ColLastName, true}, {ColFullName, false}, {ColEmail, false},
	{ColPhone, false}, {ColNationalID, true}, {ColDepartment, false}, {ColPosition, false}, {ColEmploymentType, false},
	{ColPaymentFrequency, false}, {ColHireDate, true}, {ColGrossMonthlySalarySantim, true}, {ColPayoutPartner, true},
	{ColPayoutAccountNumber, true}, {ColPayoutHolderName, true}, {ColStatus, false}, {ColTerminationDate, false}, {ColTIN, false},
}

// Refusals of a whole file; ParseImport returns them inside an *ImportError.
var (
	ErrImportEncoding    = errors.New("employees: the import file is not valid UTF-8")
	ErrImportSyntax      = errors.New("employees: the import file is not valid CSV")
	ErrImportHeader      = errors.New("employees: the import file's header is not the documented one")
	ErrImportTooManyRows = fmt.Errorf("employees: the import file has more than %d rows", MaxImportRows)
	ErrImportEmpty       = errors.New("employees: the import file has no rows")
)

// ImportError refuses a whole import file: Err is one of the ErrImport… values; Line (the file's
// line, from 1) and Column (a header name, cut to 64 bytes) say where, when they apply. Problem
// is safe to show the caller: it names lines and columns, never a cell's value.
type ImportError struct {
	Err     error
	Line    int
	Column  string
	Problem string
}

func (e *ImportError) Error() string { return e.Err.Error() + ": " + e.Problem }
func (e *ImportError) Unwrap() error { return e.Err }

// Refusals of one row (besides ErrInvalid, wrapping the *field.Error, and
// ErrDuplicateNationalID and ErrDuplicateTIN, which CheckTaken sets).
var (
	// ErrRowCells: the row does not have as many cells as the header.
	ErrRowCells = errors.New("employees: the row does not have as many cells as the header")
	// ErrTenantMismatch: the row's businessId is another business than the one importing.
	ErrTenantMismatch = errors.New("employees: the row's businessId is another business")
	// ErrDuplicateInFile: an earlier valid row of the file has the same national id
	// (ImportRow.FirstLine).
	ErrDuplicateInFile = errors.New("employees: an earlier row of the file has this national id")
	// ErrDuplicateTINInFile: an earlier valid row of the file has the same TIN
	// (ImportRow.FirstLine).
	ErrDuplicateTINInFile = errors.New("employees: an earlier row of the file has this TIN")
)

// ImportRow is one data row of an import file.
type ImportRow struct {
	// Line is the file line the row starts on (the header is line 1; a quoted cell may span
	// lines, so rows and lines can differ).
	Line int
	// Employee is the row as an employee, normalized; valid when Err is nil.
	Employee Employee
	// Given names the fields the row fills, as the API spells them (payoutAccount for the three
	// payout columns); for the audit row and the event.
	Given []string
	// Err is why the row is refused (nil: it is, or will be, created).
	Err error
	// FirstLine is the line of the earlier row with the same national id (ErrDuplicateInFile) or
	// TIN (ErrDuplicateTINInFile).
	FirstLine int
}

// ParseImport reads an import file for tenant: a UTF-8 CSV file (a leading byte-order mark is
// dropped), a header row of ImportColumns names, then at most MaxImportRows rows. It returns every
// row, each normalized and checked with Validate and its businessId (if any) against tenant;
// duplicates within the file are MarkDuplicatesInFile's. It touches no database.
//
// Errors (the whole file refused, as *ImportError): ErrImportEncoding (with the line of the first
// bad byte), ErrImportSyntax (with the line), ErrImportHeader (with the column), ErrImportEmpty,
// ErrImportTooManyRows.
func ParseImport(data []byte, tenant string) ([]ImportRow, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if !utf8.Valid(data) {
		line := 1
		for i := 0; i < len(data); {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			if r == '\n' {
				line++
			}
			i += n
		}
		return nil, &ImportError{Err: ErrImportEncoding, Line: line, Problem: fmt.Sprintf("line %d is not valid UTF-8; save the file as CSV UTF-8", line)}
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1 // a short or long row is that row's error, not the file's
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, &ImportError{Err: ErrImportEmpty, Problem: "the file is empty; it must start with a header row"}
	}
	if err != nil {
		return nil, syntaxError(err)
	}
	index, err := importHeader(header)
	if err != nil {
		return nil, err
	}
	var rows []ImportRow
	for {
		record, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, syntaxError(err)
		}
		line, _ := r.FieldPos(0)
		if len(rows) == MaxImportRows {
			return nil, &ImportError{Err: ErrImportTooManyRows, Line: line,
				Problem: fmt.Sprintf("a file may have at most %d rows; split it and send each part", MaxImportRows)}
		}
		rows = append(rows, importRow(line, header, index, record, tenant))
	}
	if len(rows) == 0 {
		return nil, &ImportError{Err: ErrImportEmpty, Problem: "the file has a header and no rows"}
	}
	return rows, nil
}

// MarkDuplicatesInFile refuses each row whose national id (ErrDuplicateInFile) or TIN
// (ErrDuplicateTINInFile) an earlier row still valid has, with that row's line. Run it once
// every other check has refused what it refuses (CheckTaken, ResolveImportCatalogs): a row
// refused for another reason holds no value, so the next row with it is imported, not blamed on
// a line that never was. Run again, it marks afresh.
func MarkDuplicatesInFile(rows []ImportRow) {
	firstLine, firstTIN := map[string]int{}, map[string]int{}
	for i := range rows {
		row := &rows[i]
		if errors.Is(row.Err, ErrDuplicateInFile) || errors.Is(row.Err, ErrDuplicateTINInFile) {
			row.Err, row.FirstLine = nil, 0
		}
		if row.Err != nil {
			continue
		}
		tin := row.Employee.TIN
		if first, dup := firstLine[row.Employee.NationalID]; dup {
			row.Err, row.FirstLine = ErrDuplicateInFile, first
		} else if first, dup := firstTIN[tin]; tin != "" && dup {
			row.Err, row.FirstLine = ErrDuplicateTINInFile, first
		} else {
			firstLine[row.Employee.NationalID] = row.Line
			if tin != "" {
				firstTIN[tin] = row.Line
			}
		}
	}
}

func syntaxError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		// The row's first line: where an unterminated quote opened, not the end of the file.
		return &ImportError{Err: ErrImportSyntax, Line: pe.StartLine,
			Problem: fmt.Sprintf("the row starting on line %d is not valid CSV: %v", pe.StartLine, pe.Err)}
	}
	return &ImportError{Err: ErrImportSyntax, Problem: "the file is not valid CSV"}
}

// importHeader checks the header row and returns each column's position.
func importHeader(header []string) (map[string]int, error) {
	known := map[string]bool{}
	for _, c := range ImportColumns {
		known[c.Name] = true
	}
	refuse := func(col, problem string) error {
		if len(col) > 64 {
			col = strings.ToValidUTF8(col[:64], "")
		}
		return &ImportError{Err: ErrImportHeader, Line: 1, Column: col, Problem: fmt.Sprintf("header column %q %s", col, problem)}
	}
	index := make(map[string]int, len(header))
	for i, name := range header {
		if !known[name] {
			return nil, refuse(name, "is not a column of the import (names are case-sensitive; see the documented columns)")
		}
		if _, dup := index[name]; dup {
			return nil, refuse(name, "appears more than once")
		}
		index[name] = i
	}
	for _, c := range ImportColumns {
		if _, ok := index[c.Name]; c.Required && !ok {
			return nil, refuse(c.Name, "is required")
		}
	}
	return index, nil
}

// importRow reads and checks one data row.
func importRow(line int, header []string, index map[string]int, record []string, tenant string) ImportRow {
	row := ImportRow{Line: line}
	if len(record) != len(header) {
		row.Err = ErrRowCells
		return row
	}
	cell := func(col string) string {
		if i, ok := index[col]; ok {
			return record[i]
		}
		return ""
	}
	invalid := func(err error) ImportRow {
		row.Err = fmt.Errorf("%w: %w", ErrInvalid, err)
		return row
	}
	if b := strings.TrimSpace(cell(ColBusinessID)); b != "" {
		if err := field.Identifier(ColBusinessID, b, 0); err != nil {
			return invalid(err)
		}
		if b != tenant {
			row.Err = ErrTenantMismatch
			return row
		}
	}
	e := Employee{
		FirstName: cell(ColFirstName), LastName: cell(ColLastName), FullName: cell(ColFullName),
		Email: cell(ColEmail), Phone: cell(ColPhone), NationalID: cell(ColNationalID),
		Department: cell(ColDepartment), Position: cell(ColPosition), EmploymentType: cell(ColEmploymentType),
		PaymentFrequency: cell(ColPaymentFrequency), Status: Active, TIN: strings.TrimSpace(cell(ColTIN)),
		Payout: PayoutAccount{Partner: cell(ColPayoutPartner), AccountNumber: cell(ColPayoutAccountNumber), HolderName: cell(ColPayoutHolderName)},
	}
	if s := strings.TrimSpace(cell(ColStatus)); s != "" {
		e.Status = Status(s)
	}
	d, err := parseDate(ColHireDate, strings.TrimSpace(cell(ColHireDate)))
	if err != nil {
		return invalid(err)
	}
	e.HireDate = d
	if v := strings.TrimSpace(cell(ColTerminationDate)); v != "" {
		if e.TerminationDate, err = parseDate(ColTerminationDate, v); err != nil {
			return invalid(err)
		}
	}
	if e.GrossMonthlySalarySantim, err = parseSantim(ColGrossMonthlySalarySantim, strings.TrimSpace(cell(ColGrossMonthlySalarySantim))); err != nil {
		return invalid(err)
	}
	e.Normalize()
	if err := e.Validate(); err != nil {
		return invalid(err)
	}
	row.Employee = e
	for _, c := range ImportColumns {
		name := c.Name
		switch name {
		case ColBusinessID:
			continue
		case ColPayoutPartner:
			name = "payoutAccount"
		case ColPayoutAccountNumber, ColPayoutHolderName:
			continue // named once, as payoutAccount
		}
		if strings.TrimSpace(cell(c.Name)) != "" {
			row.Given = append(row.Given, name)
		}
	}
	return row
}

// parseDate reads a calendar date written YYYY-MM-DD.
func parseDate(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, &field.Error{Field: name, Problem: "is required"}
	}
	d, err := time.Parse(time.DateOnly, v)
	if err != nil || d.Format(time.DateOnly) != v {
		return time.Time{}, &field.Error{Field: name, Problem: "must be a date such as 2024-03-01"}
	}
	return d, nil
}

// parseSantim reads a whole number of santim written in decimal digits (no sign, no separators).
func parseSantim(name, v string) (int64, error) {
	if v == "" {
		return 0, &field.Error{Field: name, Problem: "is required"}
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, &field.Error{Field: name, Problem: "must be a whole number of santim from 0 to 1000000000000"}
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, &field.Error{Field: name, Problem: "must be a whole number of santim from 0 to 1000000000000"}
	}
	return n, ValidSalary(name, n)
}

// CheckTaken refuses every row still without an error whose national id (ErrDuplicateNationalID)
// or TIN (ErrDuplicateTIN) a live employee of tenant already has. Run it in the transaction that
// then writes the rows, so only an employee added meanwhile by another transaction can still
// collide (CreateMany then fails as a whole).
func CheckTaken(ctx context.Context, q db.Querier, tenant string, rows []ImportRow) error {
	var ids, tins []string
	for _, r := range rows {
		if r.Err == nil {
			ids = append(ids, r.Employee.NationalID)
			if r.Employee.TIN != "" {
				tins = append(tins, r.Employee.TIN)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	res, err := q.Query(ctx, `SELECT national_id, coalesce(tin, '') FROM app.employees
		WHERE tenant_id = $1 AND deleted_at IS NULL AND (national_id = ANY($2::text[]) OR tin = ANY($3::text[]))`, tenant, ids, tins)
	if err != nil {
		return fmt.Errorf("employees: check national ids: %w", err)
	}
	defer res.Close()
	taken, takenTIN := map[string]bool{}, map[string]bool{}
	for res.Next() {
		var id, tin string
		if err := res.Scan(&id, &tin); err != nil {
			return fmt.Errorf("employees: check national ids: %w", err)
		}
		taken[id] = true
		if tin != "" {
			takenTIN[tin] = true
		}
	}
	if err := res.Err(); err != nil {
		return fmt.Errorf("employees: check national ids: %w", err)
	}
	for i := range rows {
		switch e := rows[i].Employee; {
		case rows[i].Err != nil:
		case taken[e.NationalID]:
			rows[i].Err = ErrDuplicateNationalID
		case e.TIN != "" && takenTIN[e.TIN]:
			rows[i].Err = ErrDuplicateTIN
		}
	}
	return nil
}

// CreateMany adds es to tenant, each with a fresh id (as Create does for one: e.ID, e.TenantID
// and e.UserID are ignored, e.Status "" means ACTIVE), in a few multi-row INSERTs of the caller's
// transaction, and returns them with their ids in es's order. It is all or nothing with that
// transaction: one refused row (a national id taken meanwhile) fails the call, and the caller's
// rollback takes the rows already inserted with it. Errors: ErrInvalid, ErrDuplicateNationalID,
// ErrDuplicateTIN.
func CreateMany(ctx context.Context, q db.Querier, tenant string, es []Employee) ([]Employee, error) {
	out := make([]Employee, len(es))
	for i, e := range es {
		e.ID, e.TenantID, e.UserID = NewID(), tenant, ""
		if e.Status == "" {
			e.Status = Active
		}
		if err := valid(&e); err != nil {
			return nil, err
		}
		out[i] = e
	}
	for start := 0; start < len(out); start += importBatch {
		if err := insertBatch(ctx, q, tenant, out[start:min(start+importBatch, len(out))]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// insertBatch inserts es with one INSERT … SELECT FROM unnest (COPY FROM refuses tables under
// row-level security, and a statement per row costs a round trip each).
func insertBatch(ctx context.Context, q db.Querier, tenant string, es []Employee) error {
	n := len(es)
	var (
		ids, first, last, full, email, phone, nid, dept, pos, etype, freq, status = col(n), col(n), col(n), col(n), col(n), col(n), col(n), col(n), col(n), col(n), col(n), col(n)
		partner, account, holder, tin                                             = col(n), col(n), col(n), col(n)
		hired                                                                     = make([]time.Time, n)
		left                                                                      = make([]*time.Time, n)
		salary                                                                    = make([]int64, n)
	)
	for i, e := range es {
		ids[i], first[i], last[i], full[i], email[i], phone[i], nid[i] = e.ID, e.FirstName, e.LastName, e.FullName, e.Email, e.Phone, e.NationalID
		dept[i], pos[i], etype[i], freq[i], status[i] = e.Department, e.Position, e.EmploymentType, e.PaymentFrequency, string(e.Status)
		partner[i], account[i], holder[i], hired[i], salary[i] = e.Payout.Partner, e.Payout.AccountNumber, e.Payout.HolderName, e.HireDate, e.GrossMonthlySalarySantim
		left[i], tin[i] = nullDate(e.TerminationDate), e.TIN
	}
	_, err := q.Exec(ctx, `INSERT INTO app.employees (id, tenant_id, first_name, last_name, full_name, email, phone,
			national_id, department, position, employment_type, payment_frequency, hire_date, status,
			gross_monthly_salary_santim, payout_partner, payout_account_number, payout_holder_name, termination_date, tin,
			payout_changed_by, payout_changed_at)
		SELECT r.id, $1, r.first_name, r.last_name, r.full_name, NULLIF(r.email, ''), NULLIF(r.phone, ''), r.national_id,
			NULLIF(r.department, ''), NULLIF(r.position, ''), NULLIF(r.employment_type, ''), NULLIF(r.payment_frequency, ''),
			r.hire_date, r.status, r.salary, r.partner, r.account, r.holder, r.termination_date, NULLIF(r.tin, ''),
			NULLIF($21::text, ''), CASE WHEN $21::text <> '' THEN now() END
		FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
			$10::text[], $11::text[], $12::text[], $13::date[], $14::text[], $15::bigint[], $16::text[], $17::text[], $18::text[],
			$19::date[], $20::text[])
			WITH ORDINALITY AS r (id, first_name, last_name, full_name, email, phone, national_id, department, position,
				employment_type, payment_frequency, hire_date, status, salary, partner, account, holder, termination_date, tin, n)
		ORDER BY r.n`,
		tenant, ids, first, last, full, email, phone, nid, dept, pos, etype, freq, hired, status, salary, partner, account, holder,
		left, tin, tenancy.Actor(ctx))
	if err != nil {
		return translate("import", err)
	}
	return nil
}

func col(n int) []string { return make([]string, n) }
