package payroll

import (
	"context"
	"fmt"
	"regexp"
	"time"
	// The zone names are checked against the Go distribution's copy of the IANA database, so
	// what is accepted does not depend on the host's /usr/share/zoneinfo.
	_ "time/tzdata"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// The auto-lock policy: when the run of a period is locked against edits without a person
// doing it. The run lifecycle keeps one Temporal schedule per tenant from the effective policy
// (created, changed and deleted with it: the payroll.auto_lock_policy_changed.v1 event carries
// the effective policy after each change). The run of period P locks on day
// DaysAfterPeriodEnd of the month after P (= that many days after P's last day) at LockTime in
// TimeZone: a calendar spec (day of month, hour, minute, zone) a schedule states directly.

// The platform defaults of the policy.
const (
	// DefaultAutoLockEnabled: off until the organization (or the platform) turns it on; a lock
	// nobody asked for would stop corrections of a run still being checked.
	DefaultAutoLockEnabled = false
	// DefaultDaysAfterPeriodEnd: the 5th of the next month, time for the run to be paid and
	// checked.
	DefaultDaysAfterPeriodEnd int64 = 5
	// DefaultLockTime is the start of that day.
	DefaultLockTime = "00:00"
	// DefaultTimeZone is Ethiopia's (UTC+3, no daylight saving time).
	DefaultTimeZone = "Africa/Addis_Ababa"
)

// Bounds of the policy.
const (
	// MinDaysAfterPeriodEnd..MaxDaysAfterPeriodEnd: a day every month has, so the lock is
	// always in the month after the period.
	MinDaysAfterPeriodEnd int64 = 1
	MaxDaysAfterPeriodEnd int64 = 28
	maxTimeZone                 = 64
)

// Field names of the policy, as the API spells them.
const (
	FieldEnabled            = "enabled"
	FieldDaysAfterPeriodEnd = "daysAfterPeriodEnd"
	FieldLockTime           = "lockTime"
	FieldTimeZone           = "timeZone"
)

// AutoLockFields are the policy's field names in the order responses list them.
var AutoLockFields = []string{FieldEnabled, FieldDaysAfterPeriodEnd, FieldLockTime, FieldTimeZone}

// Audit actions, target type and event of the policy.
const (
	ActionUpdateAutoLock         = "UpdatePayrollAutoLockPolicy"
	ActionResetAutoLock          = "ResetPayrollAutoLockPolicy"
	ActionOverrideAutoLock       = "OverridePayrollAutoLockPolicy"
	ActionRemoveAutoLockOverride = "RemovePayrollAutoLockPolicyOverride"
	TargetAutoLock               = "PayrollAutoLockPolicy"
	EventAutoLockChanged         = "payroll.auto_lock_policy_changed.v1"
)

// lockTimePattern is HH:MM on a 24-hour clock (the migration's CHECK says the same).
var lockTimePattern = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)

// timeZonePattern is the shape of an IANA zone name (the migration's CHECK); the name must also
// be one the zone database has.
var timeZonePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+){0,2}$`)

// AutoLock is a tenant's effective auto-lock policy and where each field came from.
type AutoLock struct {
	TenantID           string
	Enabled            bool
	DaysAfterPeriodEnd int64
	LockTime           string // HH:MM
	TimeZone           string // an IANA zone name
	Sources            map[string]Source
}

// LockAt is when the run of the period of year and month locks under the policy (whether or not
// it is enabled).
func (p AutoLock) LockAt(year int, month time.Month) (time.Time, error) {
	loc, err := time.LoadLocation(p.TimeZone)
	if err != nil {
		return time.Time{}, fmt.Errorf("payroll: auto-lock time zone: %w", err)
	}
	var h, m int
	if _, err := fmt.Sscanf(p.LockTime, "%d:%d", &h, &m); err != nil {
		return time.Time{}, fmt.Errorf("payroll: auto-lock time %q: %w", p.LockTime, err)
	}
	return time.Date(year, month+1, int(p.DaysAfterPeriodEnd), h, m, 0, 0, loc), nil
}

// AutoLockValues are what one stored layer of the policy sets; nil is "not set in this layer".
type AutoLockValues struct {
	Enabled            *bool
	DaysAfterPeriodEnd *int64
	LockTime           *string
	TimeZone           *string
}

// AutoLockLayer is one stored layer of a tenant's policy (all values nil, UpdatedBy empty and
// UpdatedAt zero when the tenant has no row in it).
type AutoLockLayer struct {
	TenantID  string
	Layer     Layer
	Values    AutoLockValues
	UpdatedBy string
	UpdatedAt time.Time
}

// AutoLockChange is a change of a layer of the policy (see SettingsChange).
type AutoLockChange struct {
	Enabled            Field[bool]
	DaysAfterPeriodEnd Field[int64]
	LockTime           Field[string]
	TimeZone           Field[string]
}

type autoLockRow struct {
	bun.BaseModel `bun:"table:app.payroll_auto_lock_policies,alias:r" db:"-"`
	rowMeta
	Enabled            *bool   `bun:"enabled" db:"enabled"`
	DaysAfterPeriodEnd *int64  `bun:"days_after_period_end" db:"days_after_period_end"`
	LockTime           *string `bun:"lock_time" db:"lock_time"`
	TimeZone           *string `bun:"time_zone" db:"time_zone"`
}

// autoLockLayers is the auto-lock policy's family of layers.
var autoLockLayers = &layerFamily[autoLockRow, *autoLockRow, AutoLockValues, AutoLockLayer, AutoLock]{
	tables:    layerTables{tenant: "app.payroll_auto_lock_policies", override: "app.payroll_auto_lock_policy_overrides"},
	defaults:  DefaultAutoLock,
	over:      (*AutoLock).over,
	event:     func(p AutoLock) any { return p.Event() },
	target:    TargetAutoLock,
	eventType: EventAutoLockChanged,
	actions: layerActions{set: ActionUpdateAutoLock, reset: ActionResetAutoLock, override: ActionOverrideAutoLock,
		removeOverride: ActionRemoveAutoLockOverride},
}

func (r *autoLockRow) values() AutoLockValues {
	return AutoLockValues{Enabled: r.Enabled, DaysAfterPeriodEnd: r.DaysAfterPeriodEnd, LockTime: r.LockTime, TimeZone: r.TimeZone}
}

func (r *autoLockRow) layer(l Layer) AutoLockLayer {
	return AutoLockLayer{TenantID: r.TenantID, Layer: l, Values: r.values(), UpdatedBy: r.UpdatedBy, UpdatedAt: r.UpdatedAt}
}

// DefaultAutoLock is the policy of a tenant that set nothing and has no override.
func DefaultAutoLock(tenant string) AutoLock {
	p := AutoLock{TenantID: tenant, Enabled: DefaultAutoLockEnabled, DaysAfterPeriodEnd: DefaultDaysAfterPeriodEnd,
		LockTime: DefaultLockTime, TimeZone: DefaultTimeZone, Sources: make(map[string]Source, len(AutoLockFields))}
	for _, f := range AutoLockFields {
		p.Sources[f] = SourceDefault
	}
	return p
}

// over lays v over p: each value v sets replaces p's, with source src.
func (p *AutoLock) over(v AutoLockValues, src Source) {
	if v.Enabled != nil {
		p.Enabled, p.Sources[FieldEnabled] = *v.Enabled, src
	}
	if v.DaysAfterPeriodEnd != nil {
		p.DaysAfterPeriodEnd, p.Sources[FieldDaysAfterPeriodEnd] = *v.DaysAfterPeriodEnd, src
	}
	if v.LockTime != nil {
		p.LockTime, p.Sources[FieldLockTime] = *v.LockTime, src
	}
	if v.TimeZone != nil {
		p.TimeZone, p.Sources[FieldTimeZone] = *v.TimeZone, src
	}
}

// EffectiveAutoLock is the context tenant's effective auto-lock policy (default, tenant,
// override: one query) in tx, a BunTx or a pgx.Tx.
func EffectiveAutoLock(ctx context.Context, tx db.Writer) (AutoLock, error) {
	return autoLockLayers.effective(ctx, tx)
}

// EffectiveAutoLockOf is the effective policy of each of tenants (one query), for the
// scheduler's cross-tenant transaction (see EffectiveSettingsOf).
func EffectiveAutoLockOf(ctx context.Context, tx db.Writer, tenants []string) (map[string]AutoLock, error) {
	return autoLockLayers.effectiveOf(ctx, tx, tenants)
}

// AutoLockLayerOf is the context tenant's row of layer l (all values nil when it has none).
func AutoLockLayerOf(ctx context.Context, tx db.BunTx, l Layer) (AutoLockLayer, error) {
	return autoLockLayers.stored(ctx, tx, l)
}

// ListAutoLockOverrides lists the platform's overrides of the policy in tenant id order after
// the cursor (at most limit), in a cross-tenant transaction.
func ListAutoLockOverrides(ctx context.Context, tx db.BunTx, after string, limit int) ([]AutoLockLayer, error) {
	return autoLockLayers.overrides(ctx, tx, after, limit)
}

// ValidTimeZone checks an IANA zone name: its shape, and that the zone database has it
// ("Local" and "" are not zone names here).
func ValidTimeZone(name, v string) error {
	if len(v) > maxTimeZone || !timeZonePattern.MatchString(v) || v == "Local" {
		return &field.Error{Field: name, Problem: "must be an IANA time zone name such as Africa/Addis_Ababa"}
	}
	if _, err := time.LoadLocation(v); err != nil {
		return &field.Error{Field: name, Problem: "must be an IANA time zone name such as Africa/Addis_Ababa (this one is unknown)"}
	}
	return nil
}

// Validate checks the values a change sets (see SettingsChange.Validate).
func (c AutoLockChange) Validate() error {
	if !c.Enabled.Set && !c.DaysAfterPeriodEnd.Set && !c.LockTime.Set && !c.TimeZone.Set {
		return &field.Error{Field: "body", Problem: "must name at least one field of the policy"}
	}
	if err := within(FieldDaysAfterPeriodEnd, c.DaysAfterPeriodEnd, MinDaysAfterPeriodEnd, MaxDaysAfterPeriodEnd); err != nil {
		return err
	}
	if v := c.LockTime.Value; v != nil && !lockTimePattern.MatchString(*v) {
		return &field.Error{Field: FieldLockTime, Problem: "must be a time of day HH:MM (24-hour clock, 00:00 to 23:59)"}
	}
	if v := c.TimeZone.Value; v != nil {
		return ValidTimeZone(FieldTimeZone, *v)
	}
	return nil
}

func (c AutoLockChange) row(tenant, actor string) (*autoLockRow, []string) {
	r := &autoLockRow{rowMeta: rowMeta{TenantID: tenant, UpdatedBy: actor}, Enabled: c.Enabled.Value,
		DaysAfterPeriodEnd: c.DaysAfterPeriodEnd.Value, LockTime: c.LockTime.Value, TimeZone: c.TimeZone.Value}
	var cols []string
	for _, f := range []struct {
		set bool
		col string
	}{{c.Enabled.Set, "enabled"}, {c.DaysAfterPeriodEnd.Set, "days_after_period_end"}, {c.LockTime.Set, "lock_time"}, {c.TimeZone.Set, "time_zone"}} {
		if f.set {
			cols = append(cols, f.col)
		}
	}
	return r, cols
}

func (c AutoLockChange) changed() map[string]any {
	out := map[string]any{}
	if c.Enabled.Set {
		out[FieldEnabled] = c.Enabled.Value
	}
	if c.DaysAfterPeriodEnd.Set {
		out[FieldDaysAfterPeriodEnd] = c.DaysAfterPeriodEnd.Value
	}
	if c.LockTime.Set {
		out[FieldLockTime] = c.LockTime.Value
	}
	if c.TimeZone.Set {
		out[FieldTimeZone] = c.TimeZone.Value
	}
	return out
}

// ChangeAutoLock applies c to the context tenant's layer l and writes its audit row and its
// payroll.auto_lock_policy_changed.v1 event (with the effective policy after the change) in tx.
// Errors: a *field.Error for a value out of bounds (nothing written).
func ChangeAutoLock(ctx context.Context, tx db.BunTx, l Layer, c AutoLockChange) (AutoLockLayer, error) {
	return autoLockLayers.change(ctx, tx, l, c)
}

// ResetAutoLock removes the context tenant's row of layer l, with its audit row and event;
// removed is false, and nothing is written, when there was none.
func ResetAutoLock(ctx context.Context, tx db.BunTx, l Layer) (removed bool, err error) {
	return autoLockLayers.reset(ctx, tx, l)
}

// AutoLockEvent is the effective policy as an event carries it.
type AutoLockEvent struct {
	Enabled            bool              `json:"enabled"`
	DaysAfterPeriodEnd int64             `json:"daysAfterPeriodEnd"`
	LockTime           string            `json:"lockTime"`
	TimeZone           string            `json:"timeZone"`
	Sources            map[string]Source `json:"sources"`
}

// Event is p as AutoLockEvent.
func (p AutoLock) Event() AutoLockEvent {
	return AutoLockEvent{Enabled: p.Enabled, DaysAfterPeriodEnd: p.DaysAfterPeriodEnd, LockTime: p.LockTime, TimeZone: p.TimeZone, Sources: p.Sources}
}
