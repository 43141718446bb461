package api

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/outbox"
)

// POST /api/employees/bulk-import: a CSV file of employees (the body, Content-Type text/csv),
// checked row by row with the rules of POST /api/employees (internal/employees.ParseImport), then
// the valid rows written in ONE transaction with an audit row and an employee.created.v1 event
// each: all of them or, if the database refuses any (a national id taken meanwhile), none.
// Invalid rows are reported with their line and skipped; ?dryRun=true reports the same without
// writing. A file that cannot be trusted as a whole (not UTF-8, not CSV, a wrong header, too
// many rows, too large) is refused before the database is touched.
//
// The body bound is employees.MaxImportBytes (Route.MaxBodyBytes), not the global 1 MiB: 10,000
// rows of the documented columns are about 2 MB.

// Audit action of the file as a whole; each created employee also gets the CreateEmployee row a
// single create writes.
const actionBulkImportEmployees = "BulkImportEmployees"

// maxImportErrorsReported bounds the error rows of one answer (failed still counts them all):
// a file of 10,000 bad rows says what is wrong with the first thousand, which is enough to fix
// the file, in a response of a few hundred kilobytes.
const maxImportErrorsReported = 1_000

// maxAuditedLines bounds the line numbers an audit row lists.
const maxAuditedLines = 100

// Outcomes of a row.
const (
	importCreated = "created" // written (employeeId is its id)
	importValid   = "valid"   // dry run: would be written
	importError   = "error"   // refused (code, status, message; field for a bad value)
)

type employeeImportRowJSON struct {
	Line       int    `json:"line"`
	Outcome    string `json:"outcome"`
	EmployeeID string `json:"employeeId,omitempty"`
	Code       string `json:"code,omitempty"`
	Status     int    `json:"status,omitempty"`
	Message    string `json:"message,omitempty"`
	Field      string `json:"field,omitempty"`
}

type employeeImportJSON struct {
	DryRun          bool                    `json:"dryRun"`
	Rows            int                     `json:"rowCount"`
	Valid           int                     `json:"valid"`
	Created         int                     `json:"created"`
	Failed          int                     `json:"failed"`
	ErrorsTruncated bool                    `json:"errorsTruncated"`
	Results         []employeeImportRowJSON `json:"rows"`
}

// importRowError is how a refused row is reported: the status and code the row would have had
// as a POST /api/employees of its own.
func importRowError(r employees.ImportRow) employeeImportRowJSON {
	out := employeeImportRowJSON{Line: r.Line, Outcome: importError}
	set := func(status int, code, msg string) { out.Status, out.Code, out.Message = status, code, msg }
	var fe *field.Error
	var ce *employees.CatalogError
	switch {
	case errors.As(r.Err, &ce):
		e := errNotInCatalog(ce)
		set(e.Status, e.Code, e.Message)
		out.Field = ce.Field
	case errors.Is(r.Err, employees.ErrInvalid) && errors.As(r.Err, &fe):
		set(http.StatusBadRequest, "INVALID_REQUEST", fe.Error())
		out.Field = fe.Field
	case errors.Is(r.Err, employees.ErrRowCells):
		set(http.StatusBadRequest, "INVALID_ROW", "the row does not have as many cells as the header")
	case errors.Is(r.Err, employees.ErrTenantMismatch):
		set(http.StatusForbidden, "TENANT_MISMATCH", "businessId must be the active organization's; the tenant comes from the session")
	case errors.Is(r.Err, employees.ErrDuplicateInFile):
		set(http.StatusConflict, "DUPLICATE_NATIONAL_ID", "line "+strconv.Itoa(r.FirstLine)+" of this file has the same national id")
	case errors.Is(r.Err, employees.ErrDuplicateNationalID):
		set(http.StatusConflict, "DUPLICATE_NATIONAL_ID", "another employee of this business has this national id")
	case errors.Is(r.Err, employees.ErrDuplicateTINInFile):
		set(http.StatusConflict, "DUPLICATE_TIN", "line "+strconv.Itoa(r.FirstLine)+" of this file has the same TIN")
	case errors.Is(r.Err, employees.ErrDuplicateTIN):
		set(http.StatusConflict, "DUPLICATE_TIN", "another employee of this business has this TIN")
	default:
		set(http.StatusBadRequest, "INVALID_ROW", "the row is not valid")
	}
	return out
}

// importFileError maps a refusal of the whole file to its answer; details say where.
func importFileError(err error) error {
	var ie *employees.ImportError
	if !errors.As(err, &ie) {
		return err
	}
	var e *Error
	switch {
	case errors.Is(ie, employees.ErrImportEncoding):
		e = NewError(http.StatusBadRequest, "IMPORT_INVALID_ENCODING", ie.Problem)
	case errors.Is(ie, employees.ErrImportSyntax):
		e = NewError(http.StatusBadRequest, "IMPORT_INVALID_CSV", ie.Problem)
	case errors.Is(ie, employees.ErrImportHeader):
		e = NewError(http.StatusBadRequest, "IMPORT_INVALID_HEADER", ie.Problem)
	case errors.Is(ie, employees.ErrImportEmpty):
		e = NewError(http.StatusBadRequest, "IMPORT_EMPTY", ie.Problem)
	case errors.Is(ie, employees.ErrImportTooManyRows):
		e = NewError(http.StatusRequestEntityTooLarge, "IMPORT_TOO_MANY_ROWS", ie.Problem)
	default:
		return err
	}
	details := map[string]any{}
	if ie.Line > 0 {
		details["line"] = ie.Line
	}
	if errors.Is(ie, employees.ErrImportHeader) {
		details["column"] = ie.Column
	}
	if errors.Is(ie, employees.ErrImportTooManyRows) {
		details["maxRows"] = employees.MaxImportRows
	}
	if len(details) > 0 {
		e.Details = details
	}
	return e
}

// importRequest reads the query (dryRun) and checks the body's type: text/csv, in UTF-8 if a
// charset is named. It has answered when ok is false.
func importRequest(c *gin.Context) (dryRun, ok bool) {
	q := c.Request.URL.Query()
	if q.Has("dryRun") {
		v := q["dryRun"]
		if len(v) != 1 || (v[0] != "true" && v[0] != "false") {
			writeError(c, fieldError(&field.Error{Field: "dryRun", Problem: "must be true or false, given at most once"}))
			return false, false
		}
		dryRun = v[0] == "true"
	}
	mt, params, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if cs, named := params["charset"]; err != nil || mt != "text/csv" || (named && !strings.EqualFold(cs, "utf-8")) {
		writeError(c, NewError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE",
			"send the file as the body with Content-Type text/csv (UTF-8)"))
		return false, false
	}
	return dryRun, true
}

func (s *Server) importEmployees(c *gin.Context) {
	dryRun, ok := importRequest(c)
	if !ok {
		return
	}
	body, e := readBody(c)
	if e != nil {
		writeError(c, e)
		return
	}
	cl := callerOf(c)
	tenant := cl.Tenant
	rows, err := employees.ParseImport(body, tenant)
	if err != nil {
		writeError(c, importFileError(err))
		return
	}
	// Rows for another business are refused and audited DENIED (one row for the file, listing
	// their lines) in a transaction of their own, dry run or not: the attempt is what counts.
	if lines := importLines(rows, employees.ErrTenantMismatch); len(lines) > 0 {
		n := len(lines)
		if err := s.auditIn(c.Request.Context(), tenant, cl.User.ID, audit.Entry{Action: actionBulkImportEmployees, Outcome: audit.Denied,
			Details: map[string]any{"code": "TENANT_MISMATCH", "rows": n, "lines": lines[:min(n, maxAuditedLines)]}}); err != nil {
			writeError(c, err)
			return
		}
	}
	var created []employees.Employee
	err = s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error {
		if err := employees.CheckTaken(ctx, tx, tenant, rows); err != nil {
			return err
		}
		if err := employees.ResolveImportCatalogs(ctx, tx, rows); err != nil {
			return err
		}
		employees.MarkDuplicatesInFile(rows)
		if dryRun {
			return nil
		}
		var valid []employees.Employee
		for _, r := range rows {
			if r.Err == nil {
				valid = append(valid, r.Employee)
			}
		}
		var err error
		if created, err = employees.CreateMany(ctx, tx, tenant, valid); err != nil {
			if errors.Is(err, employees.ErrDuplicateNationalID) {
				return refuse(http.StatusConflict, "DUPLICATE_NATIONAL_ID",
					"an employee with a national id of this file was added while it was imported; nothing was imported, send the file again",
					actionBulkImportEmployees, "", "")
			}
			if errors.Is(err, employees.ErrDuplicateTIN) {
				return refuse(http.StatusConflict, "DUPLICATE_TIN",
					"an employee with a TIN of this file was added while it was imported; nothing was imported, send the file again",
					actionBulkImportEmployees, "", "")
			}
			return err
		}
		return recordImport(ctx, tx, rows, created)
	})
	if err != nil {
		s.answer(c, tenant, err)
		return
	}
	c.JSON(http.StatusOK, importAnswer(rows, created, dryRun))
}

// recordImport writes, in the import's transaction, the CreateEmployee audit row and the
// employee.created.v1 event of every created employee (as a single create writes them, the
// audit row also naming the file's line) and one BulkImportEmployees row with the counts.
func recordImport(ctx context.Context, tx pgx.Tx, rows []employees.ImportRow, created []employees.Employee) error {
	entries := make([]audit.Entry, 0, len(created)+1)
	payloads := make([]any, 0, len(created))
	codes := map[string]int{}
	i := 0
	for _, r := range rows {
		if r.Err != nil {
			codes[importRowError(r).Code]++
			continue
		}
		id := created[i].ID
		i++
		entries = append(entries, audit.Entry{Action: actionCreateEmployee, Outcome: audit.Success, TargetType: targetEmployee, TargetID: id,
			Details: map[string]any{"fields": r.Given, "bulkImport": true, "line": r.Line}})
		payloads = append(payloads, map[string]any{"employeeId": id, "fields": r.Given})
	}
	entries = append(entries, audit.Entry{Action: actionBulkImportEmployees, Outcome: audit.Success,
		Details: map[string]any{"rows": len(rows), "created": len(created), "failed": len(rows) - len(created), "codes": codes}})
	if err := audit.WriteMany(ctx, tx, entries); err != nil {
		return err
	}
	_, err := outbox.WriteMany(ctx, tx, eventEmployeeCreated, payloads)
	return err
}

// importLines are the lines of the rows refused with err.
func importLines(rows []employees.ImportRow, err error) []int {
	var out []int
	for _, r := range rows {
		if errors.Is(r.Err, err) {
			out = append(out, r.Line)
		}
	}
	return out
}

// importAnswer reports every row in the file's order: created (or valid, on a dry run) with the
// employee id, or refused; error rows past maxImportErrorsReported are counted, not listed.
func importAnswer(rows []employees.ImportRow, created []employees.Employee, dryRun bool) employeeImportJSON {
	out := employeeImportJSON{DryRun: dryRun, Rows: len(rows), Results: make([]employeeImportRowJSON, 0, len(rows))}
	i := 0
	for _, r := range rows {
		switch {
		case r.Err != nil:
			out.Failed++
			if out.Failed > maxImportErrorsReported {
				out.ErrorsTruncated = true
				continue
			}
			out.Results = append(out.Results, importRowError(r))
		case dryRun:
			out.Valid++
			out.Results = append(out.Results, employeeImportRowJSON{Line: r.Line, Outcome: importValid})
		default:
			out.Valid++
			out.Created++
			out.Results = append(out.Results, employeeImportRowJSON{Line: r.Line, Outcome: importCreated, EmployeeID: created[i].ID})
			i++
		}
	}
	return out
}
