// Package csvsafe makes the cells of the CSV files Wagerail writes (payroll reports, import error
// reports, exports) safe to open in a spreadsheet.
//
// Spreadsheet programs run a cell that starts with '=', '+', '-' or '@' as a formula, and a
// leading tab or carriage return can hide such a start from a naive check ("CSV injection",
// CWE-1236). A formula can fetch URLs, leak the neighbouring cells or run commands through old
// DDE links. Values are stored as they were given (an employee named "=Abebe" is called that);
// they are neutralised when written out, here, in one place.
//
// It must not do anything else: quoting and escaping are encoding/csv's job.
package csvsafe
