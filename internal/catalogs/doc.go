// Package catalogs owns an organization's compensation catalogs: the name lists an employee is
// filed under (departments, positions, employment types, payment frequencies), the allowance and
// deduction definitions a payroll applies, and which definitions apply to which employee
// (per-employee assignments, with an optional amount of their own). A payment frequency carries
// the cadence payroll runs pay it at (Cadence, MONTHLY unless given). An allowance or deduction
// has one amount in the unit of its kind: AmountSantim (FIXED_SANTIM) or BasisPoints
// (PERCENT_OF_GROSS_BASIS_POINTS), each in its own column, the other NULL (app/0030).
//
// Every table is tenant-scoped under FORCED row-level security (migration app/0015). Callers pass
// a transaction scoped to the organization (tenancy.InTx, or internal/platform/crosstenant for a platform
// admin) and a context carrying that tenant and the actor: every query also filters by the
// context's tenant, because a platform admin's cross-tenant transaction sees every tenant.
//
// Every mutation writes its audit row (CreateDepartment, UpdateAllowance, AssignDeduction, …) in
// the caller's transaction, so no caller can change a catalog without one. Deleting is soft: a
// payroll or payslip that named an entry can still read it, and its name is free again.
//
// Values are validated here with internal/platform/field (the edge may check first; the checks are the
// same) and the errors are *field.Error, which the API turns into 400 INVALID_REQUEST; an amount
// in the other unit than a stored definition's kind is an *AmountKindError (422). Amounts have
// documented bounds (MaxFixedSantim, MaxBasisPoints) that the database checks again.
//
// This package does not know employees: an assignment names an employee id, and the caller checks
// that the employee exists in the organization before it assigns (the employees store owns that
// question). The database adds the foreign key once app.employees exists (pending/0017_…sql).
package catalogs
