package payroll

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// A tenant's payroll settings and its auto-lock policy are each read through three layers, in
// this order of precedence:
//
//  1. the platform's override for the tenant (a value the platform forces: it wins over
//     anything the tenant sets),
//  2. the tenant's own value,
//  3. the platform default (the constants of settings.go and autolock.go: the law's figures
//     and the product's choices, changed by a reviewed code change rather than a row).
//
// Each field is resolved on its own: an override that sets only the pension rates leaves the
// tenant's monthly hours in force. A stored layer holds NULL for every field it does not set.
// Both stored layers are one row per tenant (tenant-scoped, RLS forced); the override row is
// written only by the platform role (the runtime role may read the tenant's own, for
// /effective, and has no write grant or policy: migration app/0027).

// Source is where an effective value came from.
type Source string

const (
	SourceDefault  Source = "default"
	SourceTenant   Source = "tenant"
	SourceOverride Source = "override"
)

// Layer is a stored layer: the tenant's own row or the platform's override for it.
type Layer string

const (
	LayerTenant   Layer = "TENANT"
	LayerOverride Layer = "OVERRIDE"
)

func (l Layer) source() Source {
	if l == LayerOverride {
		return SourceOverride
	}
	return SourceTenant
}

// Field is one field of a change: Set says the change names it; Set with a nil Value clears the
// field (back to inheriting from the layer below), Set with a Value sets it.
type Field[T any] struct {
	Set   bool
	Value *T
}

// To is a Field that sets v.
func To[T any](v T) Field[T] { return Field[T]{Set: true, Value: &v} }

// Cleared is a Field that clears the stored value.
func Cleared[T any]() Field[T] { return Field[T]{Set: true} }

// Codes of the organization a platform route names.
const (
	CodeOrganizationNotFound = "ORGANIZATION_NOT_FOUND"
	CodeOrganizationDeleted  = "ORGANIZATION_DELETED"
)

// ErrOrganizationNotFound: the platform named no business organization (payroll is a
// business's module; an FI or a merchant has no payroll settings).
var ErrOrganizationNotFound = NotFound(CodeOrganizationNotFound, "business organization")

// ErrOrganizationDeleted: a deleted organization's settings can be read, not changed.
var ErrOrganizationDeleted = &Refusal{Code: CodeOrganizationDeleted, Status: http.StatusConflict,
	Message: "the organization is deleted; its payroll settings can only be read"}

// CheckOrganization checks that the context's tenant is a business organization, and, when
// forWrite, that it is not deleted. A platform route calls it first: the path's tenant id is
// the caller's text, and an override for nobody must not be stored.
func CheckOrganization(ctx context.Context, tx db.BunTx, forWrite bool) error {
	var org struct {
		Kind   string `bun:"kind" db:"kind"`
		Status string `bun:"status" db:"status"`
	}
	err := tx.NewSelect().TableExpr("app.organizations").Column("kind", "status").
		Where("id = ?", tenancy.TenantID(ctx)).Scan(ctx, &org)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ErrOrganizationNotFound
	case err != nil:
		return fmt.Errorf("payroll: organization: %w", err)
	case org.Kind != "BUSINESS":
		return ErrOrganizationNotFound
	case forWrite && org.Status == "DELETED":
		return ErrOrganizationDeleted
	}
	return nil
}

// layerTables are a family's two stored layers.
type layerTables struct{ tenant, override string }

// of is the table of layer l, aliased as the row models' queries name it ("r").
func (t layerTables) of(l Layer) string {
	if l == LayerOverride {
		return t.override + " AS r"
	}
	return t.tenant + " AS r"
}

// rowMeta are the columns every layer row has besides its values.
type rowMeta struct {
	TenantID  string    `bun:"tenant_id,pk" db:"tenant_id"`
	CreatedAt time.Time `bun:"created_at,nullzero,notnull,default:current_timestamp" db:"created_at"`
	UpdatedBy string    `bun:"updated_by,notnull" db:"updated_by"`
	UpdatedAt time.Time `bun:"updated_at,nullzero,notnull,default:current_timestamp" db:"updated_at"`
	// Layer is which table a row of a union read came from (not a column).
	Layer Layer `bun:"layer,scanonly" db:"layer"`
}

// meta is the row's rowMeta: each family's row embeds rowMeta, so this is how layerFamily's code,
// generic over the row, reaches a row's tenant and layer.
func (m *rowMeta) meta() *rowMeta { return m }

// layerRow is a row of either stored layer of a family (*settingsRow, *autoLockRow): V is what the
// row sets (SettingsValues, AutoLockValues), L the row as a stored layer (SettingsLayer,
// AutoLockLayer).
type layerRow[R, V, L any] interface {
	*R
	meta() *rowMeta
	values() V
	layer(l Layer) L
}

// layerChange is a change of one layer of a family (SettingsChange, AutoLockChange) whose row is R.
type layerChange[R any] interface {
	// Validate checks the values the change sets; its error is a *field.Error.
	Validate() error
	// row is the change as a row to upsert and the columns it writes.
	row(tenant, actor string) (*R, []string)
	// changed is each field the change names and its new value (nil: cleared), for the audit row
	// and the event.
	changed() map[string]any
}

// layerActions are a family's audit actions: a change (SET) and a removal (REMOVED) of the
// tenant's own layer, and of the platform's override.
type layerActions struct{ set, reset, override, removeOverride string }

// layerFamily is one family of layered values (the settings, the auto-lock policy): where its two
// layers are stored, what a tenant has with neither, and what a change of a layer writes. Both
// families are read and written by its methods, so the order of the layers, the one query that
// reads them and the audit row and event of every change are the same for both. R is a row of
// either table (PR its pointer), V what a row sets, L a stored layer, E the effective values.
type layerFamily[R any, PR layerRow[R, V, L], V, L, E any] struct {
	tables layerTables
	// defaults are the effective values of a tenant that set nothing and has no override.
	defaults func(tenant string) E
	// over lays what a layer sets over e: each value v sets replaces e's, with source src.
	over func(e *E, v V, src Source)
	// event is the effective values as the family's event carries them.
	event func(E) any
	// target is the audit target type and eventType the outbox event of every change.
	target, eventType string
	actions           layerActions
}

// effective is the context tenant's effective values: the platform default, the tenant's values
// over it, the platform's override over both (one query), in tx, a BunTx or a pgx.Tx.
func (f *layerFamily[R, PR, V, L, E]) effective(ctx context.Context, tx db.Writer) (E, error) {
	var none E
	tenant := tenancy.TenantID(ctx)
	if tenant == "" {
		return none, tenancy.ErrNoTenant
	}
	all, err := f.effectiveOf(ctx, tx, []string{tenant})
	if err != nil {
		return none, err
	}
	return all[tenant], nil
}

// effectiveOf is the effective values of each of tenants (one query), for a platform job in a
// cross-tenant transaction (in a tenant's, row-level security hides the other tenants' rows).
func (f *layerFamily[R, PR, V, L, E]) effectiveOf(ctx context.Context, tx db.Writer, tenants []string) (map[string]E, error) {
	out := make(map[string]E, len(tenants))
	if len(tenants) == 0 {
		return out, nil
	}
	rows, err := readBothLayers[R](ctx, tx, f.tables, tenants)
	if err != nil {
		return nil, err
	}
	for _, t := range tenants {
		out[t] = f.defaults(t)
	}
	// The tenant layer first, the override over it.
	for _, l := range []Layer{LayerTenant, LayerOverride} {
		for i := range rows {
			r := PR(&rows[i])
			m := r.meta()
			if m.Layer != l {
				continue
			}
			e, ok := out[m.TenantID]
			if !ok {
				continue
			}
			f.over(&e, r.values(), l.source())
			out[m.TenantID] = e
		}
	}
	return out, nil
}

// stored is the context tenant's row of layer l (all values nil when it has none).
func (f *layerFamily[R, PR, V, L, E]) stored(ctx context.Context, tx db.BunTx, l Layer) (L, error) {
	var r R
	found, err := readLayer(ctx, tx, f.tables.of(l), &r)
	if err != nil || !found {
		// The layer of a tenant without a row: an empty row of the tenant.
		var none R
		PR(&none).meta().TenantID = tenancy.TenantID(ctx)
		return PR(&none).layer(l), err
	}
	return PR(&r).layer(l), nil
}

// overrides lists the platform's overrides in tenant id order after the cursor (at most limit),
// in a cross-tenant transaction.
func (f *layerFamily[R, PR, V, L, E]) overrides(ctx context.Context, tx db.BunTx, after string, limit int) ([]L, error) {
	var rows []R
	if err := listLayer(ctx, tx, f.tables.of(LayerOverride), after, limit, &rows); err != nil {
		return nil, err
	}
	out := make([]L, len(rows))
	for i := range rows {
		out[i] = PR(&rows[i]).layer(LayerOverride)
	}
	return out, nil
}

// change applies c to the context tenant's layer l and writes its audit row and its event (with
// the effective values after the change) in tx. It returns the layer as stored.
func (f *layerFamily[R, PR, V, L, E]) change(ctx context.Context, tx db.BunTx, l Layer, c layerChange[R]) (L, error) {
	var none L
	if err := c.Validate(); err != nil {
		return none, err
	}
	tenant := tenancy.TenantID(ctx)
	if tenant == "" {
		return none, tenancy.ErrNoTenant
	}
	r, cols := c.row(tenant, tenancy.Actor(ctx))
	if err := upsertLayer(ctx, tx, f.tables.of(l), r, cols); err != nil {
		return none, err
	}
	action := f.actions.set
	if l == LayerOverride {
		action = f.actions.override
	}
	if err := f.changed(ctx, tx, l, action, "SET", c.changed()); err != nil {
		return none, err
	}
	return PR(r).layer(l), nil
}

// reset removes the context tenant's row of layer l (its fields inherit again), with its audit
// row and event; removed is false, and nothing is written, when there was none.
func (f *layerFamily[R, PR, V, L, E]) reset(ctx context.Context, tx db.BunTx, l Layer) (removed bool, err error) {
	removed, err = deleteLayer(ctx, tx, f.tables.of(l))
	if err != nil || !removed {
		return false, err
	}
	action := f.actions.reset
	if l == LayerOverride {
		action = f.actions.removeOverride
	}
	return true, f.changed(ctx, tx, l, action, "REMOVED", nil)
}

// changed writes the audit row and the event of a change of layer l: the event carries the
// effective values after it, so a consumer needs no read of its own.
func (f *layerFamily[R, PR, V, L, E]) changed(ctx context.Context, tx db.BunTx, l Layer, action, change string, fields map[string]any) error {
	tenant := tenancy.TenantID(ctx)
	details := map[string]any{"layer": l, "change": change}
	if fields != nil {
		details["fields"] = fields
	}
	if err := audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: audit.Success, TargetType: f.target,
		TargetID: tenant, Details: details}); err != nil {
		return err
	}
	eff, err := f.effective(ctx, tx)
	if err != nil {
		return err
	}
	payload := map[string]any{"tenantId": tenant, "layer": l, "change": change, "effective": f.event(eff)}
	if fields != nil {
		payload["fields"] = fields
	}
	_, err = outbox.Write(ctx, tx, f.eventType, payload)
	return err
}

// readLayer reads the context tenant's row of table into m; found is false when there is none.
func readLayer(ctx context.Context, tx db.BunTx, table string, m any) (found bool, err error) {
	err = tx.NewSelect().Model(m).ModelTableExpr(table).Where("tenant_id = ?", tenancy.TenantID(ctx)).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// upsertLayer writes the context tenant's row of table from m: a new row with cols (and NULL
// for the other value columns), or, when the tenant has one, only cols are changed. The row as
// stored is read back into m. One statement: two concurrent changes of different fields both
// hold, neither overwrites the other with what it read before.
func upsertLayer(ctx context.Context, tx db.BunTx, table string, m any, cols []string) error {
	all := append([]string{"tenant_id", "updated_by"}, cols...)
	q := tx.NewInsert().Model(m).ModelTableExpr(table).Column(all...).
		On("CONFLICT (tenant_id) DO UPDATE").Set("updated_by = EXCLUDED.updated_by").Set("updated_at = now()")
	for _, c := range cols {
		q = q.Set("? = EXCLUDED.?", bun.Ident(c), bun.Ident(c))
	}
	if _, err := q.Returning("*").Exec(ctx); err != nil {
		return fmt.Errorf("payroll: write %s: %w", table, err)
	}
	return nil
}

// deleteLayer removes the context tenant's row of table; removed is false when it had none.
func deleteLayer(ctx context.Context, tx db.BunTx, table string) (removed bool, err error) {
	res, err := tx.NewDelete().TableExpr(table).Where("tenant_id = ?", tenancy.TenantID(ctx)).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("payroll: delete %s: %w", table, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// readBothLayers reads, in one query, every row of both layers of the given tenants (a row's
// rowMeta.Layer says which layer). tx is a BunTx or a pgx.Tx (db.Select), so a caller on either
// reads the effective values in the transaction it holds.
func readBothLayers[R any](ctx context.Context, tx db.Writer, t layerTables, tenants []string) ([]R, error) {
	rows, err := db.Select[R](ctx, tx, `SELECT 'TENANT' AS layer, * FROM `+t.tenant+` WHERE tenant_id IN (?)
		UNION ALL SELECT 'OVERRIDE' AS layer, * FROM `+t.override+` WHERE tenant_id IN (?)`,
		bun.List(tenants), bun.List(tenants))
	if err != nil {
		return nil, fmt.Errorf("payroll: read %s: %w", t.tenant, err)
	}
	return rows, nil
}

// listLayer reads the rows of table in tenant id order after the cursor (at most limit). It does
// not filter by tenant: in a platform transaction it lists every tenant's row, in a tenant's the
// tenant's own at most.
func listLayer(ctx context.Context, tx db.BunTx, table string, after string, limit int, dst any) error {
	q := tx.NewSelect().Model(dst).ModelTableExpr(table).Order("tenant_id").Limit(int64(limit))
	if after != "" {
		q = q.Where("tenant_id > ?", after)
	}
	if err := q.Scan(ctx); err != nil {
		return fmt.Errorf("payroll: list %s: %w", table, err)
	}
	return nil
}
