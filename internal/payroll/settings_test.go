package payroll_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/payroll/paycalc"
	"github.com/wagerail/wagerail/internal/payroll/payrolltest"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// asPlatform runs fn on the audited cross-tenant path as a platform admin acting on tenant (the
// context's tenant, so what fn writes is the tenant's).
func asPlatform(t *testing.T, d *testkit.DB, tenant string, fn func(ctx context.Context, tx db.BunTx) error) error {
	t.Helper()
	ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tenant, Actor: "usr_platform", RequestID: "req-platform"})
	return crosstenant.BunTx(ctx, db.NewBun(d.Platform(t)), "payroll settings test", func(tx db.BunTx) error { return fn(ctx, tx) })
}

func effectiveSettings(t *testing.T, o *payrolltest.Org) payroll.Settings {
	t.Helper()
	var s payroll.Settings
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) (err error) {
		s, err = payroll.EffectiveSettings(ctx, tx)
		return err
	}))
	return s
}

func changeSettings(o *payrolltest.Org, c payroll.SettingsChange) (payroll.SettingsLayer, error) {
	var out payroll.SettingsLayer
	err := o.In(func(ctx context.Context, tx db.BunTx) (err error) {
		out, err = payroll.ChangeSettings(ctx, tx, payroll.LayerTenant, c)
		return err
	})
	return out, err
}

func sources(kv ...string) map[string]payroll.Source {
	out := map[string]payroll.Source{}
	for _, f := range payroll.SettingsFields {
		out[f] = payroll.SourceDefault
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = payroll.Source(kv[i+1])
	}
	return out
}

// TestSettingsLayers: defaults until set; the tenant's values over them, field by field; a
// change names only some fields and leaves the others; null clears a field back to the default;
// the platform's override wins over the tenant's value and shows as "override"; removing a layer
// restores what is below it. Another tenant sees none of it.
func TestSettingsLayers(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o, other := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)

	def := payroll.DefaultSettings(o.ID)
	require.Equal(t, def, effectiveSettings(t, o))
	require.Equal(t, int64(208), def.MonthlyWorkingHours)
	require.Equal(t, int64(700), def.PensionEmployeeBasisPoints)
	require.Equal(t, int64(1100), def.PensionEmployerBasisPoints)
	require.Equal(t, "MONTHLY", def.PayCadence)
	require.Nil(t, def.PayrollAccount)

	acct := payroll.Account{Partner: "sandbox", AccountNumber: "2000000000001", HolderName: "Org Treasury"}
	stored, err := changeSettings(o, payroll.SettingsChange{MonthlyWorkingHours: payroll.To[int64](173),
		PayrollAccount: payroll.To(acct), CourtOrderAutoSubmit: payroll.To(true)})
	require.NoError(t, err)
	require.Equal(t, int64(173), *stored.Values.MonthlyWorkingHours)
	require.Nil(t, stored.Values.PensionEmployeeBasisPoints)
	require.Equal(t, o.Owner, stored.UpdatedBy)
	require.False(t, stored.UpdatedAt.IsZero())

	// A second change of other fields keeps the first's.
	_, err = changeSettings(o, payroll.SettingsChange{PensionEmployerBasisPoints: payroll.To[int64](1200), PayDayOfMonth: payroll.To[int64](25)})
	require.NoError(t, err)
	s := effectiveSettings(t, o)
	require.Equal(t, int64(173), s.MonthlyWorkingHours)
	require.Equal(t, int64(700), s.PensionEmployeeBasisPoints)
	require.Equal(t, int64(1200), s.PensionEmployerBasisPoints)
	require.Equal(t, &acct, s.PayrollAccount)
	require.Equal(t, int64(25), s.PayDayOfMonth)
	require.True(t, s.CourtOrderAutoSubmit)
	require.Equal(t, sources("monthlyWorkingHours", "tenant", "pensionEmployerBasisPoints", "tenant", "payrollAccount", "tenant",
		"payDayOfMonth", "tenant", "courtOrderAutoSubmit", "tenant"), s.Sources)
	require.Equal(t, time.Date(2026, 2, 25, 0, 0, 0, 0, time.UTC), s.PayDate(2026, time.February))

	// The same read in a pgx transaction (EWA's stores are on pgx).
	var viaPgx payroll.Settings
	require.NoError(t, tenancy.InTx(o.Ctx, d.App, func(tx pgx.Tx) (err error) {
		viaPgx, err = payroll.EffectiveSettings(o.Ctx, tx)
		return err
	}))
	require.Equal(t, s, viaPgx)
	var lockViaPgx payroll.AutoLock
	require.NoError(t, tenancy.InTx(o.Ctx, d.App, func(tx pgx.Tx) (err error) {
		lockViaPgx, err = payroll.EffectiveAutoLock(o.Ctx, tx)
		return err
	}))
	require.Equal(t, payroll.DefaultAutoLock(o.ID), lockViaPgx)

	// The other tenant is untouched and cannot see the row.
	require.Equal(t, payroll.DefaultSettings(other.ID), effectiveSettings(t, other))
	require.NoError(t, other.In(func(ctx context.Context, tx db.BunTx) error {
		l, err := payroll.SettingsLayerOf(ctx, tx, payroll.LayerTenant)
		require.Equal(t, payroll.SettingsLayer{TenantID: other.ID, Layer: payroll.LayerTenant}, l)
		return err
	}))

	// The platform forces the hours and the employee's pension rate.
	require.NoError(t, asPlatform(t, d, o.ID, func(ctx context.Context, tx db.BunTx) error {
		_, err := payroll.ChangeSettings(ctx, tx, payroll.LayerOverride, payroll.SettingsChange{
			MonthlyWorkingHours: payroll.To[int64](208), PensionEmployeeBasisPoints: payroll.To[int64](800)})
		return err
	}))
	s = effectiveSettings(t, o)
	require.Equal(t, int64(208), s.MonthlyWorkingHours)
	require.Equal(t, int64(800), s.PensionEmployeeBasisPoints)
	require.Equal(t, payroll.SourceOverride, s.Sources["monthlyWorkingHours"])
	require.Equal(t, payroll.SourceOverride, s.Sources["pensionEmployeeBasisPoints"])
	require.Equal(t, payroll.SourceTenant, s.Sources["pensionEmployerBasisPoints"])
	require.NoError(t, tenancy.InTx(o.Ctx, d.App, func(tx pgx.Tx) (err error) {
		viaPgx, err = payroll.EffectiveSettings(o.Ctx, tx)
		return err
	}))
	require.Equal(t, s, viaPgx, "both layers read alike through pgx")
	// The tenant reads its override layer (its own row only).
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
		l, err := payroll.SettingsLayerOf(ctx, tx, payroll.LayerOverride)
		require.Equal(t, int64(800), *l.Values.PensionEmployeeBasisPoints)
		require.Equal(t, "usr_platform", l.UpdatedBy)
		return err
	}))
	// A tenant change under the override is stored, but the override still wins.
	_, err = changeSettings(o, payroll.SettingsChange{MonthlyWorkingHours: payroll.To[int64](200)})
	require.NoError(t, err)
	require.Equal(t, int64(208), effectiveSettings(t, o).MonthlyWorkingHours)

	// null clears: the tenant's account goes, the hours fall back to the override.
	_, err = changeSettings(o, payroll.SettingsChange{PayrollAccount: payroll.Cleared[payroll.Account](), MonthlyWorkingHours: payroll.Cleared[int64]()})
	require.NoError(t, err)
	s = effectiveSettings(t, o)
	require.Nil(t, s.PayrollAccount)
	require.Equal(t, payroll.SourceDefault, s.Sources["payrollAccount"])

	// Removing the override: the tenant's values show again; removing it twice changes nothing.
	for i, want := range []bool{true, false} {
		require.NoError(t, asPlatform(t, d, o.ID, func(ctx context.Context, tx db.BunTx) error {
			removed, err := payroll.ResetSettings(ctx, tx, payroll.LayerOverride)
			require.Equal(t, want, removed, "removal %d", i)
			return err
		}))
	}
	s = effectiveSettings(t, o)
	require.Equal(t, int64(208), s.MonthlyWorkingHours)
	require.Equal(t, payroll.SourceDefault, s.Sources["monthlyWorkingHours"])
	require.Equal(t, int64(700), s.PensionEmployeeBasisPoints)
	require.Equal(t, int64(1200), s.PensionEmployerBasisPoints)

	// The tenant's reset: defaults again.
	require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) error {
		removed, err := payroll.ResetSettings(ctx, tx, payroll.LayerTenant)
		require.True(t, removed)
		return err
	}))
	require.Equal(t, def, effectiveSettings(t, o))

	// Every change wrote an audit row and an event (5 tenant changes and resets, 1 override, 1
	// removal; the second removal found nothing and wrote nothing); the override's under the
	// tenant, by the platform admin.
	require.Equal(t, 4, o.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = $1`, payroll.ActionUpdateSettings))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = $1`, payroll.ActionResetSettings))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND actor = 'usr_platform' AND target_id = $2`,
		payroll.ActionOverrideSettings, o.ID))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.audit_log WHERE action = $1`, payroll.ActionRemoveSettingsOverride))
	require.Equal(t, 7, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = $1`, payroll.EventSettingsChanged))
	// The event says what is in force after the change.
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = $1 AND payload->>'layer' = 'OVERRIDE'
		AND payload->>'change' = 'SET' AND (payload->'effective'->>'pensionEmployeeBasisPoints')::int = 800
		AND payload->'effective'->'sources'->>'pensionEmployeeBasisPoints' = 'override'
		AND (payload->'fields'->>'monthlyWorkingHours')::int = 208`, payroll.EventSettingsChanged))
	require.Zero(t, other.Count(t, `SELECT count(*) FROM app.outbox`))
}

// TestSettingsBoundsRefusedAndNothingWritten: each field's bound, one past it refused with the
// field's name and nothing stored; the bound itself accepted.
func TestSettingsBoundsRefusedAndNothingWritten(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	acct := func(partner, number, holder string) payroll.SettingsChange {
		return payroll.SettingsChange{PayrollAccount: payroll.To(payroll.Account{Partner: partner, AccountNumber: number, HolderName: holder})}
	}
	for _, c := range []struct {
		field string
		bad   payroll.SettingsChange
		ok    payroll.SettingsChange
	}{
		{"body", payroll.SettingsChange{}, payroll.SettingsChange{PayCadence: payroll.To("MONTHLY")}},
		{"monthlyWorkingHours", payroll.SettingsChange{MonthlyWorkingHours: payroll.To[int64](39)}, payroll.SettingsChange{MonthlyWorkingHours: payroll.To[int64](40)}},
		{"monthlyWorkingHours", payroll.SettingsChange{MonthlyWorkingHours: payroll.To[int64](241)}, payroll.SettingsChange{MonthlyWorkingHours: payroll.To[int64](240)}},
		{"pensionEmployeeBasisPoints", payroll.SettingsChange{PensionEmployeeBasisPoints: payroll.To[int64](-1)}, payroll.SettingsChange{PensionEmployeeBasisPoints: payroll.To[int64](0)}},
		{"pensionEmployeeBasisPoints", payroll.SettingsChange{PensionEmployeeBasisPoints: payroll.To[int64](5001)}, payroll.SettingsChange{PensionEmployeeBasisPoints: payroll.To[int64](5000)}},
		{"pensionEmployerBasisPoints", payroll.SettingsChange{PensionEmployerBasisPoints: payroll.To[int64](10001)}, payroll.SettingsChange{PensionEmployerBasisPoints: payroll.To[int64](10000)}},
		{"payDayOfMonth", payroll.SettingsChange{PayDayOfMonth: payroll.To[int64](0)}, payroll.SettingsChange{PayDayOfMonth: payroll.To[int64](1)}},
		{"payDayOfMonth", payroll.SettingsChange{PayDayOfMonth: payroll.To[int64](32)}, payroll.SettingsChange{PayDayOfMonth: payroll.To[int64](31)}},
		{"payCadence", payroll.SettingsChange{PayCadence: payroll.To("WEEKLY")}, payroll.SettingsChange{PayCadence: payroll.Cleared[string]()}},
		{"payrollAccount.partner", acct("Sandbox", "1", "A"), acct("sandbox", "1", "A")},
		{"payrollAccount.accountNumber", acct("sandbox", "1:2", "A"), acct("sandbox", "1.2", "A")},
		{"payrollAccount.holderName", acct("sandbox", "1", " A"), acct("sandbox", "1", "A B")},
		{"payrollAccount.holderName", acct("sandbox", "1", "A\u200bB"), acct("sandbox", "1", "አበበ ከበደ")},
	} {
		before := o.Count(t, `SELECT count(*) FROM app.audit_log`)
		_, err := changeSettings(o, c.bad)
		var fe *field.Error
		require.ErrorAs(t, err, &fe, c.field)
		require.Equal(t, c.field, fe.Field)
		require.Equal(t, before, o.Count(t, `SELECT count(*) FROM app.audit_log`), "a refusal writes nothing")
		_, err = changeSettings(o, c.ok)
		require.NoError(t, err, c.field)
	}
}

// TestOverridesAreThePlatformsToWrite: the runtime role reads its own override but cannot write
// one, neither through the store nor by SQL (no grant, no policy), even for its own tenant.
func TestOverridesAreThePlatformsToWrite(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o, other := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	err := o.In(func(ctx context.Context, tx db.BunTx) error {
		_, err := payroll.ChangeSettings(ctx, tx, payroll.LayerOverride, payroll.SettingsChange{MonthlyWorkingHours: payroll.To[int64](100)})
		return err
	})
	require.ErrorContains(t, err, "permission denied")
	err = o.In(func(ctx context.Context, tx db.BunTx) error {
		_, err := payroll.ChangeAutoLock(ctx, tx, payroll.LayerOverride, payroll.AutoLockChange{Enabled: payroll.To(true)})
		return err
	})
	require.ErrorContains(t, err, "permission denied")
	for _, stmt := range []string{
		`INSERT INTO app.payroll_settings_overrides (tenant_id, monthly_working_hours, updated_by) VALUES ($1, 100, 'x')`,
		`INSERT INTO app.payroll_auto_lock_policy_overrides (tenant_id, enabled, updated_by) VALUES ($1, true, 'x')`,
		`UPDATE app.payroll_settings_overrides SET monthly_working_hours = 100 WHERE tenant_id = $1`,
		`DELETE FROM app.payroll_auto_lock_policy_overrides WHERE tenant_id = $1`,
	} {
		err := o.In(func(ctx context.Context, tx db.BunTx) error {
			_, err := tx.Exec(ctx, stmt, o.ID)
			return err
		})
		require.ErrorContains(t, err, "permission denied", stmt)
	}
	// Written by the platform: the tenant reads it, the other tenant does not.
	require.NoError(t, asPlatform(t, d, o.ID, func(ctx context.Context, tx db.BunTx) error {
		_, err := payroll.ChangeAutoLock(ctx, tx, payroll.LayerOverride, payroll.AutoLockChange{Enabled: payroll.To(true)})
		return err
	}))
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.payroll_auto_lock_policy_overrides`))
	require.Zero(t, other.Count(t, `SELECT count(*) FROM app.payroll_auto_lock_policy_overrides`))
}

// TestAutoLockLayersAndLockTime: the policy resolves like the settings; the lock time of a
// period is day N of the next month at the time in the zone; bounds are refused by field.
func TestAutoLockLayersAndLockTime(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	eff := func() payroll.AutoLock {
		var p payroll.AutoLock
		require.NoError(t, o.In(func(ctx context.Context, tx db.BunTx) (err error) {
			p, err = payroll.EffectiveAutoLock(ctx, tx)
			return err
		}))
		return p
	}
	change := func(c payroll.AutoLockChange) error {
		return o.In(func(ctx context.Context, tx db.BunTx) error {
			_, err := payroll.ChangeAutoLock(ctx, tx, payroll.LayerTenant, c)
			return err
		})
	}
	def := eff()
	require.Equal(t, payroll.DefaultAutoLock(o.ID), def)
	require.False(t, def.Enabled)
	at, err := def.LockAt(2026, time.December)
	require.NoError(t, err)
	require.Equal(t, "2027-01-05T00:00:00+03:00", at.Format(time.RFC3339))

	require.NoError(t, change(payroll.AutoLockChange{Enabled: payroll.To(true), LockTime: payroll.To("18:30")}))
	require.NoError(t, asPlatform(t, d, o.ID, func(ctx context.Context, tx db.BunTx) error {
		_, err := payroll.ChangeAutoLock(ctx, tx, payroll.LayerOverride, payroll.AutoLockChange{DaysAfterPeriodEnd: payroll.To[int64](28),
			TimeZone: payroll.To("UTC")})
		return err
	}))
	p := eff()
	require.True(t, p.Enabled)
	require.Equal(t, map[string]payroll.Source{"enabled": "tenant", "lockTime": "tenant", "daysAfterPeriodEnd": "override", "timeZone": "override"}, p.Sources)
	at, err = p.LockAt(2026, time.January)
	require.NoError(t, err)
	require.Equal(t, "2026-02-28T18:30:00Z", at.Format(time.RFC3339))

	for _, c := range []struct {
		field string
		bad   payroll.AutoLockChange
	}{
		{"body", payroll.AutoLockChange{}},
		{"daysAfterPeriodEnd", payroll.AutoLockChange{DaysAfterPeriodEnd: payroll.To[int64](0)}},
		{"daysAfterPeriodEnd", payroll.AutoLockChange{DaysAfterPeriodEnd: payroll.To[int64](29)}},
		{"lockTime", payroll.AutoLockChange{LockTime: payroll.To("24:00")}},
		{"lockTime", payroll.AutoLockChange{LockTime: payroll.To("7:00")}},
		{"timeZone", payroll.AutoLockChange{TimeZone: payroll.To("Local")}},
		{"timeZone", payroll.AutoLockChange{TimeZone: payroll.To("Africa/Atlantis")}},
		{"timeZone", payroll.AutoLockChange{TimeZone: payroll.To("../etc/passwd")}},
	} {
		var fe *field.Error
		require.ErrorAs(t, change(c.bad), &fe, c.field)
		require.Equal(t, c.field, fe.Field)
	}
	require.Equal(t, p, eff(), "refusals changed nothing")
	require.Equal(t, 1, o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = $1 AND payload->>'layer' = 'OVERRIDE'
		AND (payload->'effective'->>'enabled')::boolean AND payload->'effective'->>'timeZone' = 'UTC'`, payroll.EventAutoLockChanged))
}

// TestEffectiveOfManyTenants: a platform job reads many tenants' effective settings and
// policies in one query each; a tenant without rows has the defaults.
func TestEffectiveOfManyTenants(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	a, b, c := payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d), payrolltest.NewOrg(t, d)
	_, err := changeSettings(a, payroll.SettingsChange{MonthlyWorkingHours: payroll.To[int64](190)})
	require.NoError(t, err)
	require.NoError(t, asPlatform(t, d, b.ID, func(ctx context.Context, tx db.BunTx) error {
		if _, err := payroll.ChangeSettings(ctx, tx, payroll.LayerOverride, payroll.SettingsChange{MonthlyWorkingHours: payroll.To[int64](200)}); err != nil {
			return err
		}
		_, err := payroll.ChangeAutoLock(ctx, tx, payroll.LayerOverride, payroll.AutoLockChange{Enabled: payroll.To(true)})
		return err
	}))
	require.NoError(t, asPlatform(t, d, "*", func(ctx context.Context, tx db.BunTx) error {
		all, err := payroll.EffectiveSettingsOf(ctx, tx, []string{a.ID, b.ID, c.ID})
		require.NoError(t, err)
		require.Equal(t, int64(190), all[a.ID].MonthlyWorkingHours)
		require.Equal(t, int64(200), all[b.ID].MonthlyWorkingHours)
		require.Equal(t, payroll.DefaultSettings(c.ID), all[c.ID])
		locks, err := payroll.EffectiveAutoLockOf(ctx, tx, []string{a.ID, b.ID, c.ID})
		require.NoError(t, err)
		require.False(t, locks[a.ID].Enabled)
		require.True(t, locks[b.ID].Enabled)
		overrides, err := payroll.ListSettingsOverrides(ctx, tx, "", 10)
		require.NoError(t, err)
		require.Len(t, overrides, 1)
		require.Equal(t, b.ID, overrides[0].TenantID)
		return nil
	}))
}

func TestCheckOrganization(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	require.NoError(t, asPlatform(t, d, o.ID, func(ctx context.Context, tx db.BunTx) error {
		return payroll.CheckOrganization(ctx, tx, true)
	}))
	for _, id := range []string{"org_nope", "x' OR '1'='1"} {
		err := asPlatform(t, d, id, func(ctx context.Context, tx db.BunTx) error {
			return payroll.CheckOrganization(ctx, tx, false)
		})
		require.ErrorIs(t, err, payroll.ErrOrganizationNotFound)
	}
}

// TestSettingsPolicy: the default settings give the calculator its own default policy, and the
// tenant's values replace exactly the fields the settings own.
func TestSettingsPolicy(t *testing.T) {
	t.Parallel()
	require.Equal(t, paycalc.DefaultPolicy(), payroll.DefaultSettings("t").Policy(paycalc.DefaultPolicy()))
	s := payroll.DefaultSettings("t")
	s.MonthlyWorkingHours, s.PensionEmployeeBasisPoints, s.PensionEmployerBasisPoints = 173, 650, 1200
	base := paycalc.DefaultPolicy()
	base.MinNetSantim = 50_000
	p := s.Policy(base)
	require.Equal(t, paycalc.Policy{EmployeePensionBasisPoints: 650, EmployerPensionBasisPoints: 1200, MonthlyHours: 173,
		ShareNumerator: 1, ShareDenominator: 3, MinNetSantim: 50_000}, p)
}

// TestConcurrentChangesOfDifferentFieldsBothHold: changes that name different fields, made at
// once by a tenant that has no row yet, are all kept (one upsert statement each, no read before
// the write that a concurrent change could make stale).
func TestConcurrentChangesOfDifferentFieldsBothHold(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	changes := []payroll.SettingsChange{
		{MonthlyWorkingHours: payroll.To[int64](190)},
		{PensionEmployeeBasisPoints: payroll.To[int64](650)},
		{PensionEmployerBasisPoints: payroll.To[int64](1150)},
		{PayDayOfMonth: payroll.To[int64](27)},
		{CourtOrderAutoSubmit: payroll.To(true)},
	}
	errs := make(chan error, len(changes))
	for _, c := range changes {
		go func() {
			_, err := changeSettings(o, c)
			errs <- err
		}()
	}
	for range changes {
		require.NoError(t, <-errs)
	}
	s := effectiveSettings(t, o)
	require.Equal(t, int64(190), s.MonthlyWorkingHours)
	require.Equal(t, int64(650), s.PensionEmployeeBasisPoints)
	require.Equal(t, int64(1150), s.PensionEmployerBasisPoints)
	require.Equal(t, int64(27), s.PayDayOfMonth)
	require.True(t, s.CourtOrderAutoSubmit)
	require.Equal(t, len(changes), o.Count(t, `SELECT count(*) FROM app.outbox WHERE type = $1`, payroll.EventSettingsChanged))
}

// TestDatabaseKeepsTheBounds: whoever writes, the tables refuse what the store refuses.
func TestDatabaseKeepsTheBounds(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	o := payrolltest.NewOrg(t, d)
	for _, stmt := range []string{
		`INSERT INTO app.payroll_settings (tenant_id, monthly_working_hours, updated_by) VALUES ($1, 241, 'u')`,
		`INSERT INTO app.payroll_settings (tenant_id, pension_employee_basis_points, updated_by) VALUES ($1, 5001, 'u')`,
		`INSERT INTO app.payroll_settings (tenant_id, pay_cadence, updated_by) VALUES ($1, 'WEEKLY', 'u')`,
		`INSERT INTO app.payroll_settings (tenant_id, pay_day_of_month, updated_by) VALUES ($1, 0, 'u')`,
		`INSERT INTO app.payroll_settings (tenant_id, payroll_account_partner, payroll_account_number, updated_by) VALUES ($1, 'sandbox', '1', 'u')`,
		`INSERT INTO app.payroll_settings (tenant_id, payroll_account_partner, payroll_account_number, payroll_account_holder_name, updated_by) VALUES ($1, 'Sandbox', '1', 'A', 'u')`,
		`INSERT INTO app.payroll_auto_lock_policies (tenant_id, days_after_period_end, updated_by) VALUES ($1, 29, 'u')`,
		`INSERT INTO app.payroll_auto_lock_policies (tenant_id, lock_time, updated_by) VALUES ($1, '24:00', 'u')`,
		`INSERT INTO app.payroll_auto_lock_policies (tenant_id, time_zone, updated_by) VALUES ($1, '../x', 'u')`,
		`INSERT INTO app.payroll_settings (tenant_id, updated_by) VALUES ('org_other', 'u')`,
	} {
		err := o.In(func(ctx context.Context, tx db.BunTx) error {
			_, err := tx.Exec(ctx, stmt, o.ID)
			return err
		})
		require.Error(t, err, stmt)
	}
	// The platform's override table keeps the same bounds.
	err := asPlatform(t, d, o.ID, func(ctx context.Context, tx db.BunTx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.payroll_settings_overrides (tenant_id, monthly_working_hours, updated_by) VALUES ($1, 39, 'u')`, o.ID)
		return err
	})
	require.ErrorContains(t, err, "check constraint")
}
