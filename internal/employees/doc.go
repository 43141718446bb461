// Package employees owns the employees of a business: who they are (names, contact, national
// id, TIN), how they are employed (department, position, employment type, payment frequency and
// the pay cadence it gives, hire and termination dates, status), what they earn (gross monthly
// salary in santim) and where their pay goes (the payout account as the employer records it),
// plus the link from an employee to the login user who may act as them (self-service).
//
// Its rules (what a valid employee is, which status changes are allowed, who may accept a link)
// live here once, so the API, the bulk import and the payroll and EWA activities apply the same
// ones. The store runs in the caller's transaction: tenancy.InTx (or internal/platform/crosstenant for a
// platform admin) for everything tenant-scoped, tenancy.InUserTx for the caller's own linked rows
// (LinkedTo). Every function takes the tenant explicitly and filters on it, whatever the
// transaction could see.
//
// A move to another business of the platform (POST /api/employees/<id>/transfer) is
// internal/employeetransfer's: it ends this record (TERMINATED) and creates the new one in the
// target through this package, in its cross-tenant transaction (hence Lock, Create, Update and
// SetStatus take a db.Writer, which a bun transaction is too).
//
// It must not write HTTP responses, audit rows or outbox events (the caller writes those in the
// same transaction), and never puts a national id or a TIN into an error or a log line.
package employees
