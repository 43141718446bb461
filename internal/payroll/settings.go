package payroll

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// Tenant settings: what a run (and the calculator, EWA and the court-order remittance) read of
// the organization's payroll. Each field is resolved through the layers of layers.go.

// The platform defaults: what a field is until the tenant or the platform sets it.
const (
	// DefaultMonthlyWorkingHours is the divisor of the overtime hourly rate: 48 hours a week
	// (Labour Proclamation 1156/2019, art. 61: 8 hours a day, 48 a week) × 52 weeks ÷ 12 months
	// = 208, the calculator's own default (one constant, so they cannot drift).
	DefaultMonthlyWorkingHours = paycalc.DefaultMonthlyHours
	// DefaultPensionEmployeeBasisPoints and DefaultPensionEmployerBasisPoints are the private
	// organisation employees' pension contributions (Proclamation 715/2011 as amended): 7% and
	// 11% of basic salary (the calculator's defaults).
	DefaultPensionEmployeeBasisPoints = paycalc.DefaultEmployeePensionBasisPoints
	DefaultPensionEmployerBasisPoints = paycalc.DefaultEmployerPensionBasisPoints
	// DefaultPayCadence: runs are monthly (periods are calendar months, "YYYY-MM").
	DefaultPayCadence = CadenceMonthly
	// DefaultPayDayOfMonth 31 pays on the last day of every month (a shorter month pays on its
	// last day).
	DefaultPayDayOfMonth int64 = 31
	// DefaultCourtOrderAutoSubmit: a run's court-order remittance is submitted by a person until
	// the organization turns the schedule on.
	DefaultCourtOrderAutoSubmit = false
)

// CadenceMonthly is the only pay cadence runs support today.
const CadenceMonthly = "MONTHLY"

// Bounds of the settings (the migration's CHECKs say the same).
const (
	// MinMonthlyWorkingHours..MaxMonthlyWorkingHours: about 9 hours a week (part time) to 240
	// (30 days × 8 hours, the largest divisor in common use). A value outside makes an hourly
	// rate no working-time arrangement produces (1 hour would pay a month's salary per overtime
	// hour).
	MinMonthlyWorkingHours int64 = 40
	MaxMonthlyWorkingHours int64 = 240
	// MaxPensionEmployeeBasisPoints: 50%, the calculator's bound (with PAYE at most 35%, the
	// statutory deductions stay below gross).
	MaxPensionEmployeeBasisPoints       = paycalc.MaxEmployeePensionBasisPoints
	MaxPensionEmployerBasisPoints int64 = 10_000
	MaxPayDayOfMonth              int64 = 31
	maxAccountPartner                   = 64
	maxAccountNumber                    = 64
)

// Field names, as the API spells them (sources, audit details, refusals).
const (
	FieldMonthlyWorkingHours        = "monthlyWorkingHours"
	FieldPensionEmployeeBasisPoints = "pensionEmployeeBasisPoints"
	FieldPensionEmployerBasisPoints = "pensionEmployerBasisPoints"
	FieldPayrollAccount             = "payrollAccount"
	FieldPayCadence                 = "payCadence"
	FieldPayDayOfMonth              = "payDayOfMonth"
	FieldCourtOrderAutoSubmit       = "courtOrderAutoSubmit"
)

// SettingsFields are the settings' field names in the order responses list them.
var SettingsFields = []string{FieldMonthlyWorkingHours, FieldPensionEmployeeBasisPoints, FieldPensionEmployerBasisPoints,
	FieldPayrollAccount, FieldPayCadence, FieldPayDayOfMonth, FieldCourtOrderAutoSubmit}

// Audit actions, target type and event of the settings.
const (
	ActionUpdateSettings         = "UpdatePayrollTenantSettings"
	ActionResetSettings          = "ResetPayrollTenantSettings"
	ActionOverrideSettings       = "OverridePayrollTenantSettings"
	ActionRemoveSettingsOverride = "RemovePayrollTenantSettingsOverride"
	TargetSettings               = "PayrollTenantSettings"
	EventSettingsChanged         = "payroll.tenant_settings_changed.v1"
)

// Account is an account at a partner bank.
type Account struct {
	Partner       string `json:"partner"`
	AccountNumber string `json:"accountNumber"`
	HolderName    string `json:"holderName"`
}

// Settings are a tenant's effective payroll settings: every field resolved, and where each came
// from (Sources, keyed by the field names above).
type Settings struct {
	TenantID                   string
	MonthlyWorkingHours        int64
	PensionEmployeeBasisPoints int64
	PensionEmployerBasisPoints int64
	// PayrollAccount is where runs pay from; nil until set (a run cannot be disbursed until then).
	PayrollAccount       *Account
	PayCadence           string
	PayDayOfMonth        int64
	CourtOrderAutoSubmit bool
	Sources              map[string]Source
}

// PayDate is the day the period of year and month pays on: PayDayOfMonth, or the month's last
// day when the month is shorter (UTC midnight of that date).
func (s Settings) PayDate(year int, month time.Month) time.Time {
	last := time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
	return time.Date(year, month, min(int(s.PayDayOfMonth), last), 0, 0, 0, 0, time.UTC)
}

// Policy is p with the settings the calculator reads (pension rates, monthly hours) replaced by
// s's; the rest (the protection share, the minimum net) is the protection policy's.
func (s Settings) Policy(p paycalc.Policy) paycalc.Policy {
	p.EmployeePensionBasisPoints = s.PensionEmployeeBasisPoints
	p.EmployerPensionBasisPoints = s.PensionEmployerBasisPoints
	p.MonthlyHours = s.MonthlyWorkingHours
	return p
}

// SettingsValues are what one stored layer sets; nil is "not set in this layer".
type SettingsValues struct {
	MonthlyWorkingHours        *int64
	PensionEmployeeBasisPoints *int64
	PensionEmployerBasisPoints *int64
	PayrollAccount             *Account
	PayCadence                 *string
	PayDayOfMonth              *int64
	CourtOrderAutoSubmit       *bool
}

// SettingsLayer is one stored layer of a tenant's settings. A tenant without a row in the layer
// has all values nil, an empty UpdatedBy and a zero UpdatedAt.
type SettingsLayer struct {
	TenantID  string
	Layer     Layer
	Values    SettingsValues
	UpdatedBy string
	UpdatedAt time.Time
}

// SettingsChange is a change of a layer: the fields it names (Field.Set) are set or cleared, the
// others stay as stored. A change names at least one field.
type SettingsChange struct {
	MonthlyWorkingHours        Field[int64]
	PensionEmployeeBasisPoints Field[int64]
	PensionEmployerBasisPoints Field[int64]
	PayrollAccount             Field[Account]
	PayCadence                 Field[string]
	PayDayOfMonth              Field[int64]
	CourtOrderAutoSubmit       Field[bool]
}

// settingsRow is a row of either layer (app.payroll_settings, app.payroll_settings_overrides).
type settingsRow struct {
	bun.BaseModel `bun:"table:app.payroll_settings,alias:r" db:"-"`
	rowMeta
	MonthlyWorkingHours        *int64  `bun:"monthly_working_hours" db:"monthly_working_hours"`
	PensionEmployeeBasisPoints *int64  `bun:"pension_employee_basis_points" db:"pension_employee_basis_points"`
	PensionEmployerBasisPoints *int64  `bun:"pension_employer_basis_points" db:"pension_employer_basis_points"`
	PayrollAccountPartner      *string `bun:"payroll_account_partner" db:"payroll_account_partner"`
	PayrollAccountNumber       *string `bun:"payroll_account_number" db:"payroll_account_number"`
	PayrollAccountHolderName   *string `bun:"payroll_account_holder_name" db:"payroll_account_holder_name"`
	PayCadence                 *string `bun:"pay_cadence" db:"pay_cadence"`
	PayDayOfMonth              *int64  `bun:"pay_day_of_month" db:"pay_day_of_month"`
	CourtOrderAutoSubmit       *bool   `bun:"court_order_auto_submit" db:"court_order_auto_submit"`
}

// settingsLayers is the settings' family of layers.
var settingsLayers = &layerFamily[settingsRow, *settingsRow, SettingsValues, SettingsLayer, Settings]{
	tables:    layerTables{tenant: "app.payroll_settings", override: "app.payroll_settings_overrides"},
	defaults:  DefaultSettings,
	over:      (*Settings).over,
	event:     func(s Settings) any { return s.Event() },
	target:    TargetSettings,
	eventType: EventSettingsChanged,
	actions: layerActions{set: ActionUpdateSettings, reset: ActionResetSettings, override: ActionOverrideSettings,
		removeOverride: ActionRemoveSettingsOverride},
}

func (r *settingsRow) values() SettingsValues {
	v := SettingsValues{MonthlyWorkingHours: r.MonthlyWorkingHours, PensionEmployeeBasisPoints: r.PensionEmployeeBasisPoints,
		PensionEmployerBasisPoints: r.PensionEmployerBasisPoints, PayCadence: r.PayCadence, PayDayOfMonth: r.PayDayOfMonth,
		CourtOrderAutoSubmit: r.CourtOrderAutoSubmit}
	if r.PayrollAccountPartner != nil && r.PayrollAccountNumber != nil && r.PayrollAccountHolderName != nil {
		v.PayrollAccount = &Account{Partner: *r.PayrollAccountPartner, AccountNumber: *r.PayrollAccountNumber,
			HolderName: *r.PayrollAccountHolderName}
	}
	return v
}

func (r *settingsRow) layer(l Layer) SettingsLayer {
	return SettingsLayer{TenantID: r.TenantID, Layer: l, Values: r.values(), UpdatedBy: r.UpdatedBy, UpdatedAt: r.UpdatedAt}
}

// DefaultSettings are the settings of a tenant that set nothing and has no override.
func DefaultSettings(tenant string) Settings {
	s := Settings{TenantID: tenant, MonthlyWorkingHours: DefaultMonthlyWorkingHours,
		PensionEmployeeBasisPoints: DefaultPensionEmployeeBasisPoints, PensionEmployerBasisPoints: DefaultPensionEmployerBasisPoints,
		PayCadence: DefaultPayCadence, PayDayOfMonth: DefaultPayDayOfMonth, CourtOrderAutoSubmit: DefaultCourtOrderAutoSubmit,
		Sources: make(map[string]Source, len(SettingsFields))}
	for _, f := range SettingsFields {
		s.Sources[f] = SourceDefault
	}
	return s
}

// over lays v over s: each value v sets replaces s's, with source src.
func (s *Settings) over(v SettingsValues, src Source) {
	layInt := func(name string, dst *int64, val *int64) {
		if val != nil {
			*dst, s.Sources[name] = *val, src
		}
	}
	layInt(FieldMonthlyWorkingHours, &s.MonthlyWorkingHours, v.MonthlyWorkingHours)
	layInt(FieldPensionEmployeeBasisPoints, &s.PensionEmployeeBasisPoints, v.PensionEmployeeBasisPoints)
	layInt(FieldPensionEmployerBasisPoints, &s.PensionEmployerBasisPoints, v.PensionEmployerBasisPoints)
	layInt(FieldPayDayOfMonth, &s.PayDayOfMonth, v.PayDayOfMonth)
	if v.PayrollAccount != nil {
		a := *v.PayrollAccount
		s.PayrollAccount, s.Sources[FieldPayrollAccount] = &a, src
	}
	if v.PayCadence != nil {
		s.PayCadence, s.Sources[FieldPayCadence] = *v.PayCadence, src
	}
	if v.CourtOrderAutoSubmit != nil {
		s.CourtOrderAutoSubmit, s.Sources[FieldCourtOrderAutoSubmit] = *v.CourtOrderAutoSubmit, src
	}
}

// EffectiveSettings are the context tenant's effective settings: the platform default, the
// tenant's values over it, the platform's override over both (one query). The calculator's
// loader, EWA and runs call it in the transaction they read the rest in: a BunTx or a pgx.Tx.
func EffectiveSettings(ctx context.Context, tx db.Writer) (Settings, error) {
	return settingsLayers.effective(ctx, tx)
}

// EffectiveSettingsOf are the effective settings of each of tenants (one query), for a
// platform job in a cross-tenant transaction; in a tenant's transaction the other tenants read
// as defaults (row-level security hides their rows), so use EffectiveSettings there.
func EffectiveSettingsOf(ctx context.Context, tx db.Writer, tenants []string) (map[string]Settings, error) {
	return settingsLayers.effectiveOf(ctx, tx, tenants)
}

// SettingsLayerOf is the context tenant's row of layer l (all values nil when it has none).
func SettingsLayerOf(ctx context.Context, tx db.BunTx, l Layer) (SettingsLayer, error) {
	return settingsLayers.stored(ctx, tx, l)
}

// ListSettingsOverrides lists the platform's overrides in tenant id order after the cursor (at
// most limit), in a cross-tenant transaction.
func ListSettingsOverrides(ctx context.Context, tx db.BunTx, after string, limit int) ([]SettingsLayer, error) {
	return settingsLayers.overrides(ctx, tx, after, limit)
}

// Validate checks the values a change sets (a cleared field needs no check) and returns the
// first broken rule as a *field.Error named as the API names the field.
func (c SettingsChange) Validate() error {
	if !c.MonthlyWorkingHours.Set && !c.PensionEmployeeBasisPoints.Set && !c.PensionEmployerBasisPoints.Set &&
		!c.PayrollAccount.Set && !c.PayCadence.Set && !c.PayDayOfMonth.Set && !c.CourtOrderAutoSubmit.Set {
		return &field.Error{Field: "body", Problem: "must name at least one setting"}
	}
	if err := within(FieldMonthlyWorkingHours, c.MonthlyWorkingHours, MinMonthlyWorkingHours, MaxMonthlyWorkingHours); err != nil {
		return err
	}
	if err := within(FieldPensionEmployeeBasisPoints, c.PensionEmployeeBasisPoints, 0, MaxPensionEmployeeBasisPoints); err != nil {
		return err
	}
	if err := within(FieldPensionEmployerBasisPoints, c.PensionEmployerBasisPoints, 0, MaxPensionEmployerBasisPoints); err != nil {
		return err
	}
	if err := within(FieldPayDayOfMonth, c.PayDayOfMonth, 1, MaxPayDayOfMonth); err != nil {
		return err
	}
	if v := c.PayCadence.Value; v != nil && *v != CadenceMonthly {
		return &field.Error{Field: FieldPayCadence, Problem: "must be MONTHLY"}
	}
	if a := c.PayrollAccount.Value; a != nil {
		return a.Validate(FieldPayrollAccount)
	}
	return nil
}

func within(name string, f Field[int64], lo, hi int64) error {
	if f.Value != nil && (*f.Value < lo || *f.Value > hi) {
		return &field.Error{Field: name, Problem: fmt.Sprintf("must be a whole number from %d to %d", lo, hi)}
	}
	return nil
}

// Validate checks an account named name: the partner is the gateway's lower-case name of the
// bank, the account number an identifier without ':' (it is a segment of the ledger's
// partner-bank:<partner>:<account> name), the holder name a name without surrounding spaces.
func (a Account) Validate(name string) error {
	if err := field.Identifier(name+".partner", a.Partner, maxAccountPartner); err != nil {
		return err
	}
	for i := 0; i < len(a.Partner); i++ {
		if c := a.Partner[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return &field.Error{Field: name + ".partner", Problem: "must be a partner name: lower-case letters, digits, '_' and '-'"}
		}
	}
	if err := field.Identifier(name+".accountNumber", a.AccountNumber, maxAccountNumber); err != nil {
		return err
	}
	if strings.Contains(a.AccountNumber, ":") {
		return &field.Error{Field: name + ".accountNumber", Problem: "must not contain ':'"}
	}
	if err := field.Name(name+".holderName", a.HolderName); err != nil {
		return err
	}
	if strings.TrimSpace(a.HolderName) != a.HolderName {
		return &field.Error{Field: name + ".holderName", Problem: "must not start or end with a space"}
	}
	return nil
}

// row is the change as a row to upsert and the columns it writes.
func (c SettingsChange) row(tenant, actor string) (*settingsRow, []string) {
	r := &settingsRow{rowMeta: rowMeta{TenantID: tenant, UpdatedBy: actor}}
	var cols []string
	add := func(set bool, col ...string) {
		if set {
			cols = append(cols, col...)
		}
	}
	r.MonthlyWorkingHours, r.PensionEmployeeBasisPoints = c.MonthlyWorkingHours.Value, c.PensionEmployeeBasisPoints.Value
	r.PensionEmployerBasisPoints, r.PayCadence = c.PensionEmployerBasisPoints.Value, c.PayCadence.Value
	r.PayDayOfMonth, r.CourtOrderAutoSubmit = c.PayDayOfMonth.Value, c.CourtOrderAutoSubmit.Value
	if a := c.PayrollAccount.Value; a != nil {
		r.PayrollAccountPartner, r.PayrollAccountNumber, r.PayrollAccountHolderName = &a.Partner, &a.AccountNumber, &a.HolderName
	}
	add(c.MonthlyWorkingHours.Set, "monthly_working_hours")
	add(c.PensionEmployeeBasisPoints.Set, "pension_employee_basis_points")
	add(c.PensionEmployerBasisPoints.Set, "pension_employer_basis_points")
	add(c.PayrollAccount.Set, "payroll_account_partner", "payroll_account_number", "payroll_account_holder_name")
	add(c.PayCadence.Set, "pay_cadence")
	add(c.PayDayOfMonth.Set, "pay_day_of_month")
	add(c.CourtOrderAutoSubmit.Set, "court_order_auto_submit")
	return r, cols
}

// changed is the change for the audit row and the event: each named field and its new value
// (nil: cleared). The payroll account is named by partner and number, not its holder.
func (c SettingsChange) changed() map[string]any {
	out := map[string]any{}
	put := func(name string, set bool, v any) {
		if set {
			out[name] = v
		}
	}
	put(FieldMonthlyWorkingHours, c.MonthlyWorkingHours.Set, c.MonthlyWorkingHours.Value)
	put(FieldPensionEmployeeBasisPoints, c.PensionEmployeeBasisPoints.Set, c.PensionEmployeeBasisPoints.Value)
	put(FieldPensionEmployerBasisPoints, c.PensionEmployerBasisPoints.Set, c.PensionEmployerBasisPoints.Value)
	put(FieldPayCadence, c.PayCadence.Set, c.PayCadence.Value)
	put(FieldPayDayOfMonth, c.PayDayOfMonth.Set, c.PayDayOfMonth.Value)
	put(FieldCourtOrderAutoSubmit, c.CourtOrderAutoSubmit.Set, c.CourtOrderAutoSubmit.Value)
	if c.PayrollAccount.Set {
		var v any
		if a := c.PayrollAccount.Value; a != nil {
			v = map[string]string{"partner": a.Partner, "accountNumber": a.AccountNumber}
		}
		out[FieldPayrollAccount] = v
	}
	return out
}

// ChangeSettings applies c to the context tenant's layer l (the tenant's own row, or, in a
// platform transaction, the override) and writes its audit row and its
// payroll.tenant_settings_changed.v1 event (with the effective settings after the change) in
// tx. It returns the layer as stored. Errors: a *field.Error for a value out of bounds (nothing
// written).
func ChangeSettings(ctx context.Context, tx db.BunTx, l Layer, c SettingsChange) (SettingsLayer, error) {
	return settingsLayers.change(ctx, tx, l, c)
}

// ResetSettings removes the context tenant's row of layer l (its fields inherit again), with
// its audit row and event. removed is false, and nothing is written, when there was none.
func ResetSettings(ctx context.Context, tx db.BunTx, l Layer) (removed bool, err error) {
	return settingsLayers.reset(ctx, tx, l)
}

// SettingsEvent is the effective settings as an event carries them (the payroll account by
// partner and number).
type SettingsEvent struct {
	MonthlyWorkingHours        int64             `json:"monthlyWorkingHours"`
	PensionEmployeeBasisPoints int64             `json:"pensionEmployeeBasisPoints"`
	PensionEmployerBasisPoints int64             `json:"pensionEmployerBasisPoints"`
	PayrollAccount             map[string]string `json:"payrollAccount"`
	PayCadence                 string            `json:"payCadence"`
	PayDayOfMonth              int64             `json:"payDayOfMonth"`
	CourtOrderAutoSubmit       bool              `json:"courtOrderAutoSubmit"`
	Sources                    map[string]Source `json:"sources"`
}

// Event is s as SettingsEvent.
func (s Settings) Event() SettingsEvent {
	e := SettingsEvent{MonthlyWorkingHours: s.MonthlyWorkingHours, PensionEmployeeBasisPoints: s.PensionEmployeeBasisPoints,
		PensionEmployerBasisPoints: s.PensionEmployerBasisPoints, PayCadence: s.PayCadence, PayDayOfMonth: s.PayDayOfMonth,
		CourtOrderAutoSubmit: s.CourtOrderAutoSubmit, Sources: s.Sources}
	if a := s.PayrollAccount; a != nil {
		e.PayrollAccount = map[string]string{"partner": a.Partner, "accountNumber": a.AccountNumber}
	}
	return e
}
