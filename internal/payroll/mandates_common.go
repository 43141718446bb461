package payroll

import (
	"context"
	"maps"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// What the payroll's stored records share (runs and their entries, protection policies,
// adjustments, deduction mandates, one-time earnings, overtime policies and entries): reading one
// by id, list paging, an employee's period inputs keyed by employee, and the audit row + event
// every change writes in its transaction.

// The four-eyes rule (CheckMakerChecker) holds for every approval here: an adjustment's approve
// and post, a mandate's and a protection policy's activate; the tables check it again.

// MaxLabel bounds a reference or a court or loan reference (bytes).
const MaxLabel = 128

// checkLabel checks a short one-line text (a reference): printable, not blank, at most MaxLabel
// bytes. Inner spaces are allowed ("Civil file 123/2025").
func checkLabel(name, v string) error {
	if err := field.Name(name, v); err != nil {
		return err
	}
	if len(v) > MaxLabel {
		return &field.Error{Field: name, Problem: "must be at most 128 bytes"}
	}
	if strings.TrimSpace(v) != v {
		return &field.Error{Field: name, Problem: "must not start or end with spaces"}
	}
	return nil
}

// MaxReason bounds a reason or a description (bytes).
const MaxReason = 1024

// checkReason checks a required free text: not blank, printable (line breaks allowed), at most
// MaxReason bytes.
func checkReason(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return &field.Error{Field: name, Problem: "is required"}
	}
	return field.Text(name, v, MaxReason)
}

// actor is the user acting (the context's actor).
func actor(ctx context.Context) string { return tenancy.From(ctx).Actor }

// record writes a change's audit row and its outbox event in tx, both carrying payload.
func record(ctx context.Context, tx db.BunTx, action, targetType, targetID, event string, payload any) error {
	return recordChange(ctx, tx, action, targetType, targetID, payload, event, payload)
}

// recordChange writes a change's audit row (successful, with details) and its outbox event (with
// payload) in tx: the one place a store's change is audited and announced, so neither is written
// without the other.
func recordChange(ctx context.Context, tx db.BunTx, action, targetType, targetID string, details any, event string, payload any) error {
	if err := audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: targetType,
		TargetID: targetID, Details: details}); err != nil {
		return err
	}
	_, err := outbox.Write(ctx, tx, event, payload)
	return err
}

// lockKey serializes the transactions that take key until they end (a transaction advisory
// lock), for changes whose rule spans rows (one ACTIVE policy, a cap summed over entries).
func lockKey(ctx context.Context, tx db.BunTx, key string) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key)
	return err
}

// lockTenantKey is lockKey on key within the context tenant (key:tenant).
func lockTenantKey(ctx context.Context, tx db.BunTx, key string) error {
	return lockKey(ctx, tx, key+":"+tenancy.TenantID(ctx))
}

// getByID reads the tenant's row id of T's table (aliased alias in T's bun model), locked FOR
// UPDATE when lock (a change reads it so: two changes of one row run one after the other);
// notFound when the tenant has no such row (another tenant's included).
func getByID[T any](ctx context.Context, tx db.BunTx, alias, id string, lock bool, notFound error) (T, error) {
	var row T
	q := tx.NewSelect().Model(&row).Where(alias+".tenant_id = ?", tenancy.TenantID(ctx)).Where(alias+".id = ?", id)
	if lock {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		var none T
		return none, db.NotFoundOr(err, notFound)
	}
	return row, nil
}

// updateRow writes cols of model, a pointer to a stored row of the table aliased alias, to its
// row in tenant (by primary key, and only a row of that tenant).
func updateRow(ctx context.Context, tx db.BunTx, model any, alias, tenant string, cols ...string) error {
	_, err := tx.NewUpdate().Model(model).Column(cols...).Where(alias+".tenant_id = ?", tenant).WherePK().Exec(ctx)
	return err
}

// listPage narrows q, a select of the tenant's rows of the table aliased alias, to one page of a
// list by id (oldest first) and scans it into q's model: the rows whose column is each non-empty
// value of eq ("" does not filter), with ids after after ("" the start), at most limit (0: no
// bound). The page's last id is the next page's after, so the id order is the cursor's.
func listPage(ctx context.Context, q *bun.SelectQuery, alias string, eq map[string]string, after string, limit int64) error {
	// In column order, so the same filters always make the same statement.
	for _, col := range slices.Sorted(maps.Keys(eq)) {
		if v := eq[col]; v != "" {
			q = q.Where(alias+"."+col+" = ?", v)
		}
	}
	if after != "" {
		q = q.Where(alias+".id > ?", after)
	}
	return q.OrderExpr(alias + ".id").Limit(limit).Scan(ctx)
}

// employeeInput is a row of one employee's input to a period's pay (an adjustment line, a
// mandate, a one-time earning, an overtime entry): employee is the employee it pays or takes from.
type employeeInput interface{ employee() string }

// byEmployee keys rows by employee id, each employee's in the order of rows. An employee with
// none has no key.
func byEmployee[T employeeInput](rows []T) map[string][]T {
	out := map[string][]T{}
	for _, r := range rows {
		out[r.employee()] = append(out[r.employee()], r)
	}
	return out
}

// inputsByEmployee reads the tenant's rows of T's table (aliased alias) in status whose
// periodCol is period, of every employee or of employeeID only ("" every), in one query, keyed
// by employee id (byEmployee), each employee's by id.
func inputsByEmployee[T employeeInput](ctx context.Context, tx db.BunTx, alias, periodCol, period, status, employeeID string) (map[string][]T, error) {
	if err := CheckPeriod("period", period); err != nil {
		return nil, err
	}
	var rows []T
	q := tx.NewSelect().Model(&rows).Where(alias+".tenant_id = ?", tenancy.TenantID(ctx)).
		Where(alias+"."+periodCol+" = ?", period).Where(alias+".status = ?", status).Order(alias+".employee_id", alias+".id")
	if employeeID != "" {
		q = q.Where(alias+".employee_id = ?", employeeID)
	}
	if err := q.Scan(ctx); err != nil {
		return nil, err
	}
	return byEmployee(rows), nil
}

// employeeInputsOf is inputsByEmployee for employeeID alone: that employee's rows, by id.
func employeeInputsOf[T employeeInput](ctx context.Context, tx db.BunTx, alias, periodCol, period, status, employeeID string) ([]T, error) {
	m, err := inputsByEmployee[T](ctx, tx, alias, periodCol, period, status, employeeID)
	return m[employeeID], err
}
