package api

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// payrollSettingsWorld: a server with the gateway in front of the sandbox (which has the payroll
// account payrollAccountNumber held by "Org Treasury"), two business organizations and a
// platform admin.
type payrollSettingsWorld struct {
	*authFixture
	bank                *gatewaytest.Stack
	owner, other, admin *apiClient
	tenant, otherTenant string
}

const payrollAccountNumber = "2000000000001"

type payrollSource = payroll.Source

func newPayrollSettingsWorld(t testing.TB) *payrollSettingsWorld {
	t.Helper()
	d := testkit.NewDB(t)
	f := &authFixture{t: t, d: d, inbox: &notify.Memory{}, clock: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	bank := gatewaytest.Start(t, d.App, gatewaytest.Options{})
	bank.Account(t, payrollAccountNumber, "Org Treasury", 0)
	f.srv = New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), DB: d.App, Platform: d.Platform(t),
		Registry: prometheus.NewRegistry(), Mailer: f.inbox, Texter: f.inbox, Now: f.now, Gateway: bank.GW.Client})
	w := &payrollSettingsWorld{authFixture: f, bank: bank}
	var res signUpResult
	w.owner, res = f.signUp("owner@payroll-settings.test", "BUSINESS")
	w.tenant = res.Organization.ID
	w.other, res = f.signUp("owner@payroll-settings-other.test", "BUSINESS")
	w.otherTenant = res.Organization.ID
	w.admin = f.platformAdmin("admin@payroll-settings.test")
	return w
}

// count counts rows of tenant for a query.
func (w *payrollSettingsWorld) count(tenant, sql string, args ...any) int {
	w.t.Helper()
	var n int
	require.NoError(w.t, db.InTenantTx(context.Background(), w.d.App, tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), sql, args...).Scan(&n)
	}))
	return n
}

type payrollSettingsLayerOut struct {
	TenantID                   string              `json:"tenantId"`
	Layer                      string              `json:"layer"`
	MonthlyWorkingHours        *int64              `json:"monthlyWorkingHours"`
	PensionEmployeeBasisPoints *int64              `json:"pensionEmployeeBasisPoints"`
	PensionEmployerBasisPoints *int64              `json:"pensionEmployerBasisPoints"`
	PayrollAccount             *payrollAccountJSON `json:"payrollAccount"`
	PayCadence                 *string             `json:"payCadence"`
	PayDayOfMonth              *int64              `json:"payDayOfMonth"`
	CourtOrderAutoSubmit       *bool               `json:"courtOrderAutoSubmit"`
	UpdatedBy                  *string             `json:"updatedBy"`
	UpdatedAt                  *time.Time          `json:"updatedAt"`
}

const (
	pathPayrollSettings          = "/api/payroll/tenant-settings"
	pathPayrollSettingsEffective = "/api/payroll/tenant-settings/effective"
	pathPayrollAutoLock          = "/api/payroll/auto-lock-policy"
	pathPayrollAutoLockEffective = "/api/payroll/auto-lock-policy/effective"
	pathPlatformSettings         = "/api/platform/payroll/tenant-settings"
	pathPlatformAutoLock         = "/api/platform/payroll/auto-lock-policy/"
	pathPlatformAutoLocks        = "/api/platform/payroll/auto-lock-policies"
)

func status(t *testing.T, rec *httptest.ResponseRecorder, want int, code string) {
	t.Helper()
	require.Equal(t, want, rec.Code, rec.Body.String())
	if code != "" {
		require.Equal(t, code, errCode(rec), rec.Body.String())
	}
}

// TestPayrollSettingsRoutes: the organization's layer is all null until it sets something; a POST
// sets the fields it names and leaves the others; null clears one; /effective shows the defaults
// and the organization's values with their sources; DELETE goes back to the defaults. Each
// change is one audit row and one event; the other organization sees none of it.
func TestPayrollSettingsRoutes(t *testing.T) {
	t.Parallel()
	w := newPayrollSettingsWorld(t)

	layer := decode[payrollSettingsLayerOut](t, w.owner.call(http.MethodGet, pathPayrollSettings, nil))
	require.Equal(t, payrollSettingsLayerOut{TenantID: w.tenant, Layer: "TENANT"}, layer)
	eff := decode[payrollSettingsEffectiveJSON](t, w.owner.call(http.MethodGet, pathPayrollSettingsEffective, nil))
	require.Equal(t, payrollSettingsEffectiveJSON{TenantID: w.tenant, MonthlyWorkingHours: 208, PensionEmployeeBasisPoints: 700,
		PensionEmployerBasisPoints: 1100, PayCadence: "MONTHLY", PayDayOfMonth: 31, Sources: map[string]payrollSource{
			"monthlyWorkingHours": "default", "pensionEmployeeBasisPoints": "default", "pensionEmployerBasisPoints": "default",
			"payrollAccount": "default", "payCadence": "default", "payDayOfMonth": "default", "courtOrderAutoSubmit": "default"}}, eff)

	rec := w.owner.call(http.MethodPost, pathPayrollSettings, map[string]any{"monthlyWorkingHours": 173, "payDayOfMonth": 25,
		"payrollAccount": map[string]any{"partner": "sandbox", "accountNumber": payrollAccountNumber, "holderName": " ORG treasury "}})
	status(t, rec, http.StatusOK, "")
	layer = decode[payrollSettingsLayerOut](t, rec)
	require.EqualValues(t, 173, *layer.MonthlyWorkingHours)
	require.Nil(t, layer.PensionEmployeeBasisPoints)
	require.Equal(t, &payrollAccountJSON{Partner: "sandbox", AccountNumber: payrollAccountNumber, HolderName: "ORG treasury"}, layer.PayrollAccount)
	require.NotNil(t, layer.UpdatedBy)
	require.NotNil(t, layer.UpdatedAt)

	status(t, w.owner.call(http.MethodPost, pathPayrollSettings, map[string]any{"payDayOfMonth": nil, "courtOrderAutoSubmit": true,
		"pensionEmployerBasisPoints": 1200}), http.StatusOK, "")
	eff = decode[payrollSettingsEffectiveJSON](t, w.owner.call(http.MethodGet, pathPayrollSettingsEffective, nil))
	require.EqualValues(t, 173, eff.MonthlyWorkingHours)
	require.EqualValues(t, 31, eff.PayDayOfMonth, "null cleared it back to the default")
	require.EqualValues(t, 1200, eff.PensionEmployerBasisPoints)
	require.True(t, eff.CourtOrderAutoSubmit)
	require.Equal(t, "sandbox", eff.PayrollAccount.Partner)
	require.Equal(t, map[string]payrollSource{"monthlyWorkingHours": "tenant", "pensionEmployeeBasisPoints": "default",
		"pensionEmployerBasisPoints": "tenant", "payrollAccount": "tenant", "payCadence": "default", "payDayOfMonth": "default",
		"courtOrderAutoSubmit": "tenant"}, eff.Sources)

	// The other organization: its own (empty) layer and the defaults.
	require.Equal(t, payrollSettingsLayerOut{TenantID: w.otherTenant, Layer: "TENANT"},
		decode[payrollSettingsLayerOut](t, w.other.call(http.MethodGet, pathPayrollSettings, nil)))
	require.EqualValues(t, 208, decode[payrollSettingsEffectiveJSON](t, w.other.call(http.MethodGet, pathPayrollSettingsEffective, nil)).MonthlyWorkingHours)

	status(t, w.owner.call(http.MethodDelete, pathPayrollSettings, nil), http.StatusNoContent, "")
	status(t, w.owner.call(http.MethodDelete, pathPayrollSettings, nil), http.StatusNoContent, "")
	require.Equal(t, payrollSettingsLayerOut{TenantID: w.tenant, Layer: "TENANT"},
		decode[payrollSettingsLayerOut](t, w.owner.call(http.MethodGet, pathPayrollSettings, nil)))
	require.EqualValues(t, 208, decode[payrollSettingsEffectiveJSON](t, w.owner.call(http.MethodGet, pathPayrollSettingsEffective, nil)).MonthlyWorkingHours)

	require.Equal(t, 2, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'UpdatePayrollTenantSettings' AND target_id = $1`, w.tenant))
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'ResetPayrollTenantSettings'`))
	require.Equal(t, 3, w.count(w.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.tenant_settings_changed.v1'`))
	require.Zero(t, w.count(w.otherTenant, `SELECT count(*) FROM app.outbox`))
}

// TestPayrollSettingsPermissions: payroll.view reads, payroll.edit changes; an admin without
// them and a plain member are refused (403, audited), and nothing changes.
func TestPayrollSettingsPermissions(t *testing.T) {
	t.Parallel()
	w := newPayrollSettingsWorld(t)
	w.catalogAppRole(w.tenant, "payroll_viewer", `{"payroll":["view"]}`)
	w.catalogAppRole(w.tenant, "payroll_editor", `{"payroll":["view","edit"]}`)
	w.addMember(w.tenant, "viewer@payroll-settings.test", orgs.Admin, "payroll_viewer")
	w.addMember(w.tenant, "editor@payroll-settings.test", orgs.Admin, "payroll_editor")
	w.addMember(w.tenant, "bare@payroll-settings.test", orgs.Admin)
	w.addMember(w.tenant, "member@payroll-settings.test", orgs.PlainMember, orgs.AdminRole)
	viewer, editor := w.signIn("viewer@payroll-settings.test"), w.signIn("editor@payroll-settings.test")
	bare, member := w.signIn("bare@payroll-settings.test"), w.signIn("member@payroll-settings.test")

	events := 0
	for _, p := range []string{pathPayrollSettings, pathPayrollAutoLock} {
		eff := p + "/effective"
		body := map[string]any{"monthlyWorkingHours": 200}
		if p == pathPayrollAutoLock {
			body = map[string]any{"enabled": true}
		}
		status(t, viewer.call(http.MethodGet, p, nil), http.StatusOK, "")
		status(t, viewer.call(http.MethodGet, eff, nil), http.StatusOK, "")
		status(t, viewer.call(http.MethodPost, p, body), http.StatusForbidden, "PERMISSION_DENIED")
		status(t, viewer.call(http.MethodDelete, p, nil), http.StatusForbidden, "PERMISSION_DENIED")
		status(t, bare.call(http.MethodGet, eff, nil), http.StatusForbidden, "PERMISSION_DENIED")
		status(t, member.call(http.MethodGet, p, nil), http.StatusForbidden, "INSUFFICIENT_ROLE")
		status(t, member.call(http.MethodPost, p, body), http.StatusForbidden, "INSUFFICIENT_ROLE")
		// The platform routes are the platform's.
		status(t, w.owner.call(http.MethodGet, strings.Replace(p, "/api/payroll/", "/api/platform/payroll/", 1)+"/"+w.tenant, nil),
			http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
		require.Equal(t, events, w.count(w.tenant, `SELECT count(*) FROM app.outbox`), "refusals change nothing")
		status(t, editor.call(http.MethodPost, p, body), http.StatusOK, "")
		status(t, editor.call(http.MethodDelete, p, nil), http.StatusNoContent, "")
		events += 2
		require.Equal(t, events, w.count(w.tenant, `SELECT count(*) FROM app.outbox`))
	}
	require.Positive(t, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'AccessRoute' AND outcome = 'DENIED'`))
	status(t, w.owner.call(http.MethodGet, pathPlatformAutoLocks, nil), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
	status(t, w.owner.call(http.MethodPost, pathPlatformSettings+"/"+w.tenant, map[string]any{"payCadence": "MONTHLY"}), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
}

// TestPayrollAccountLookedUp: the payroll account is asked about at the partner when set or
// changed (the same check as the EWA funding account): an unknown partner, an account the
// partner does not have and another holder are 422 naming the field; a gateway that is down is
// 503. Each leaves the settings as they were. The account as stored needs no lookup.
func TestPayrollAccountLookedUp(t *testing.T) {
	t.Parallel()
	w := newPayrollSettingsWorld(t)
	acct := func(partner, number, holder string) map[string]any {
		return map[string]any{"payrollAccount": map[string]any{"partner": partner, "accountNumber": number, "holderName": holder}}
	}
	for _, c := range []struct {
		body        map[string]any
		code, field string
	}{
		{acct("nosuchbank", payrollAccountNumber, "Org Treasury"), "PAYROLL_ACCOUNT_PARTNER_UNKNOWN", "payrollAccount.partner"},
		{acct("sandbox", "2999999999999", "Org Treasury"), "PAYROLL_ACCOUNT_NOT_FOUND", "payrollAccount.accountNumber"},
		{acct("sandbox", payrollAccountNumber, "Somebody Else"), "PAYROLL_ACCOUNT_HOLDER_MISMATCH", "payrollAccount.holderName"},
	} {
		rec := w.owner.call(http.MethodPost, pathPayrollSettings, c.body)
		status(t, rec, http.StatusUnprocessableEntity, c.code)
		require.Contains(t, rec.Body.String(), `"field":"`+c.field+`"`)
		// The platform's override is checked the same way.
		status(t, w.admin.call(http.MethodPost, pathPlatformSettings+"/"+w.tenant, c.body), http.StatusUnprocessableEntity, c.code)
	}
	require.Zero(t, w.count(w.tenant, `SELECT count(*) FROM app.payroll_settings`))
	require.Zero(t, w.count(w.tenant, `SELECT count(*) FROM app.payroll_settings_overrides`))
	require.Zero(t, w.count(w.tenant, `SELECT count(*) FROM app.outbox`))
	// Each refusal is audited DENIED under the organization, with its code.
	for _, action := range []string{"UpdatePayrollTenantSettings", "OverridePayrollTenantSettings"} {
		require.Equal(t, 3, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND outcome = 'DENIED'
			AND target_id = $2 AND details->>'code' LIKE 'PAYROLL_ACCOUNT_%'`, action, w.tenant), action)
	}
	status(t, w.owner.call(http.MethodPost, pathPayrollSettings, acct("sandbox", payrollAccountNumber, "Org Treasury")), http.StatusOK, "")

	dead, err := gateway.Dial("127.0.0.1:1", gateway.ClientOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = dead.Close() })
	down := New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), DB: w.d.App, Platform: w.d.Platform(t),
		Registry: prometheus.NewRegistry(), Mailer: w.inbox, Texter: w.inbox, Now: w.now, Gateway: dead})
	owner := w.owner.clone()
	owner.h = down.Engine
	w.bank.Account(t, "2000000000002", "Org Treasury", 0)
	status(t, owner.call(http.MethodPost, pathPayrollSettings, acct("sandbox", "2000000000002", "Org Treasury")), http.StatusServiceUnavailable, "GATEWAY_UNAVAILABLE")
	// The stored account again with another field: no lookup, so it works with the gateway down.
	rec := owner.call(http.MethodPost, pathPayrollSettings, merge(acct("sandbox", payrollAccountNumber, "Org Treasury"), map[string]any{"payDayOfMonth": 28}))
	status(t, rec, http.StatusOK, "")
	require.Equal(t, payrollAccountNumber, decode[payrollSettingsLayerOut](t, rec).PayrollAccount.AccountNumber)
	// Clearing it asks nobody either.
	status(t, owner.call(http.MethodPost, pathPayrollSettings, map[string]any{"payrollAccount": nil}), http.StatusOK, "")
	// Without a gateway at all: 503 NOT_CONFIGURED.
	none := New(Deps{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), DB: w.d.App, Platform: w.d.Platform(t),
		Registry: prometheus.NewRegistry(), Mailer: w.inbox, Texter: w.inbox, Now: w.now})
	owner.h = none.Engine
	status(t, owner.call(http.MethodPost, pathPayrollSettings, acct("sandbox", payrollAccountNumber, "Org Treasury")), http.StatusServiceUnavailable, "NOT_CONFIGURED")
}

// TestPayrollPlatformOverrides: a platform admin forces values for an organization; the
// organization's /effective shows them as "override" over its own; the organization cannot
// write an override (there is no route of its own, and the platform route is refused); an
// unknown or non-business organization is 404; the lists page; removing the override restores
// the organization's values. Changes are audited under the organization.
func TestPayrollPlatformOverrides(t *testing.T) {
	t.Parallel()
	w := newPayrollSettingsWorld(t)
	_, fi := w.signUp("owner@payroll-settings-fi.test", "FI")

	status(t, w.owner.call(http.MethodPost, pathPayrollSettings, map[string]any{"monthlyWorkingHours": 180, "pensionEmployeeBasisPoints": 650}), http.StatusOK, "")
	// Nothing forced yet.
	layer := decode[payrollSettingsLayerOut](t, w.admin.call(http.MethodGet, pathPlatformSettings+"/"+w.tenant, nil))
	require.Equal(t, payrollSettingsLayerOut{TenantID: w.tenant, Layer: "OVERRIDE"}, layer)

	rec := w.admin.call(http.MethodPost, pathPlatformSettings+"/"+w.tenant, map[string]any{"pensionEmployeeBasisPoints": 700, "courtOrderAutoSubmit": false})
	status(t, rec, http.StatusOK, "")
	layer = decode[payrollSettingsLayerOut](t, rec)
	require.Equal(t, "OVERRIDE", layer.Layer)
	require.EqualValues(t, 700, *layer.PensionEmployeeBasisPoints)
	eff := decode[payrollSettingsEffectiveJSON](t, w.owner.call(http.MethodGet, pathPayrollSettingsEffective, nil))
	require.EqualValues(t, 180, eff.MonthlyWorkingHours)
	require.EqualValues(t, 700, eff.PensionEmployeeBasisPoints)
	require.Equal(t, payrollSource("tenant"), eff.Sources["monthlyWorkingHours"])
	require.Equal(t, payrollSource("override"), eff.Sources["pensionEmployeeBasisPoints"])
	require.Equal(t, payrollSource("override"), eff.Sources["courtOrderAutoSubmit"])
	// The organization changes its own value: stored, and still overridden.
	status(t, w.owner.call(http.MethodPost, pathPayrollSettings, map[string]any{"pensionEmployeeBasisPoints": 600}), http.StatusOK, "")
	require.EqualValues(t, 700, decode[payrollSettingsEffectiveJSON](t, w.owner.call(http.MethodGet, pathPayrollSettingsEffective, nil)).PensionEmployeeBasisPoints)

	// The auto-lock override, for both organizations; the lists page by organization id.
	for _, tenant := range []string{w.tenant, w.otherTenant} {
		status(t, w.admin.call(http.MethodPost, pathPlatformAutoLock+tenant, map[string]any{"enabled": true, "timeZone": "UTC"}), http.StatusOK, "")
	}
	al := decode[payrollAutoLockEffectiveJSON](t, w.other.call(http.MethodGet, pathPayrollAutoLockEffective, nil))
	require.Equal(t, payrollAutoLockEffectiveJSON{TenantID: w.otherTenant, Enabled: true, DaysAfterPeriodEnd: 5, LockTime: "00:00", TimeZone: "UTC",
		Sources: map[string]payrollSource{"enabled": "override", "daysAfterPeriodEnd": "default", "lockTime": "default", "timeZone": "override"}}, al)
	type page struct {
		Items []struct {
			TenantID string `json:"tenantId"`
		} `json:"items"`
		NextCursor *string `json:"nextCursor"`
	}
	first := decode[page](t, w.admin.call(http.MethodGet, pathPlatformAutoLocks+"?limit=1", nil))
	require.Len(t, first.Items, 1)
	require.NotNil(t, first.NextCursor)
	second := decode[page](t, w.admin.call(http.MethodGet, pathPlatformAutoLocks+"?limit=1&cursor="+*first.NextCursor, nil))
	require.Len(t, second.Items, 1)
	require.Nil(t, second.NextCursor)
	require.ElementsMatch(t, []string{w.tenant, w.otherTenant}, []string{first.Items[0].TenantID, second.Items[0].TenantID})
	settingsList := decode[page](t, w.admin.call(http.MethodGet, pathPlatformSettings, nil))
	require.Len(t, settingsList.Items, 1)
	require.Equal(t, w.tenant, settingsList.Items[0].TenantID)
	status(t, w.admin.hostile(http.MethodGet, pathPlatformSettings+"?tenantId=x", nil), http.StatusBadRequest, "INVALID_REQUEST")

	// Unknown, malformed and non-business organizations.
	for _, id := range []string{"org_nope", fi.Organization.ID} {
		status(t, w.admin.call(http.MethodGet, pathPlatformSettings+"/"+id, nil), http.StatusNotFound, "ORGANIZATION_NOT_FOUND")
		status(t, w.admin.call(http.MethodPost, pathPlatformAutoLock+id, map[string]any{"enabled": true}), http.StatusNotFound, "ORGANIZATION_NOT_FOUND")
		status(t, w.admin.call(http.MethodDelete, pathPlatformAutoLock+id, nil), http.StatusNotFound, "ORGANIZATION_NOT_FOUND")
	}
	status(t, w.admin.hostile(http.MethodGet, pathPlatformSettings+"/a%20b", nil), http.StatusBadRequest, "INVALID_REQUEST")

	// Removing the override: the organization's own value is in force again.
	status(t, w.admin.call(http.MethodDelete, pathPlatformSettings+"/"+w.tenant, nil), http.StatusNoContent, "")
	eff = decode[payrollSettingsEffectiveJSON](t, w.owner.call(http.MethodGet, pathPayrollSettingsEffective, nil))
	require.EqualValues(t, 600, eff.PensionEmployeeBasisPoints)
	require.Equal(t, payrollSource("tenant"), eff.Sources["pensionEmployeeBasisPoints"])
	require.Equal(t, payrollSource("default"), eff.Sources["courtOrderAutoSubmit"])

	// Audited under the organization, by the platform admin, with the events.
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'OverridePayrollTenantSettings' AND target_id = $1`, w.tenant))
	require.Equal(t, 1, w.count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'RemovePayrollTenantSettingsOverride'`))
	require.Equal(t, 1, w.count(w.otherTenant, `SELECT count(*) FROM app.audit_log WHERE action = 'OverridePayrollAutoLockPolicy'`))
	require.Equal(t, 1, w.count(w.otherTenant, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.auto_lock_policy_changed.v1'
		AND payload->>'layer' = 'OVERRIDE' AND (payload->'effective'->>'enabled')::boolean`))

	// A deleted organization's override can be read, not changed.
	ctx := tenancy.WithActor(context.Background(), "usr_test")
	require.NoError(t, crosstenant.Tx(ctx, w.d.Platform(t), "test: delete an organization", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.organizations SET status = 'DELETED', deleted_at = now() WHERE id = $1`, w.otherTenant)
		return err
	}))
	status(t, w.admin.call(http.MethodGet, pathPlatformAutoLock+w.otherTenant, nil), http.StatusOK, "")
	status(t, w.admin.call(http.MethodPost, pathPlatformAutoLock+w.otherTenant, map[string]any{"enabled": false}), http.StatusConflict, "ORGANIZATION_DELETED")
	status(t, w.admin.call(http.MethodDelete, pathPlatformAutoLock+w.otherTenant, nil), http.StatusConflict, "ORGANIZATION_DELETED")
	require.Equal(t, 2, w.count(w.otherTenant, `SELECT count(*) FROM app.audit_log WHERE action IN ('OverridePayrollAutoLockPolicy',
		'RemovePayrollAutoLockPolicyOverride') AND outcome = 'DENIED' AND details->>'code' = 'ORGANIZATION_DELETED'`))
}

// TestPayrollAutoLockRoutes: the organization's policy round trip and its bounds.
func TestPayrollAutoLockRoutes(t *testing.T) {
	t.Parallel()
	w := newPayrollSettingsWorld(t)
	def := decode[payrollAutoLockEffectiveJSON](t, w.owner.call(http.MethodGet, pathPayrollAutoLockEffective, nil))
	require.Equal(t, payrollAutoLockEffectiveJSON{TenantID: w.tenant, Enabled: false, DaysAfterPeriodEnd: 5, LockTime: "00:00",
		TimeZone: "Africa/Addis_Ababa", Sources: map[string]payrollSource{"enabled": "default", "daysAfterPeriodEnd": "default",
			"lockTime": "default", "timeZone": "default"}}, def)
	rec := w.owner.call(http.MethodPost, pathPayrollAutoLock, map[string]any{"enabled": true, "daysAfterPeriodEnd": 28, "lockTime": "23:59", "timeZone": "Europe/London"})
	status(t, rec, http.StatusOK, "")
	l := decode[payrollAutoLockLayerJSON](t, rec)
	require.Equal(t, "23:59", *l.LockTime)
	status(t, w.owner.call(http.MethodPost, pathPayrollAutoLock, map[string]any{"timeZone": nil}), http.StatusOK, "")
	eff := decode[payrollAutoLockEffectiveJSON](t, w.owner.call(http.MethodGet, pathPayrollAutoLockEffective, nil))
	require.True(t, eff.Enabled)
	require.EqualValues(t, 28, eff.DaysAfterPeriodEnd)
	require.Equal(t, "Africa/Addis_Ababa", eff.TimeZone)
	for _, bad := range []map[string]any{{"timeZone": "Mars/Olympus_Mons"}, {"timeZone": "Local"}} {
		rec := w.owner.call(http.MethodPost, pathPayrollAutoLock, bad)
		status(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
		require.Contains(t, rec.Body.String(), `"field":"timeZone"`)
	}
	require.Equal(t, eff, decode[payrollAutoLockEffectiveJSON](t, w.owner.call(http.MethodGet, pathPayrollAutoLockEffective, nil)))
	require.Equal(t, 2, w.count(w.tenant, `SELECT count(*) FROM app.outbox WHERE type = 'payroll.auto_lock_policy_changed.v1'`))
}

// TestPayrollSettingsDocumentStatesTheRules: each rule the handlers enforce on a body is one the
// document states: the broken request is refused by both, the boundary accepted by both.
func TestPayrollSettingsDocumentStatesTheRules(t *testing.T) {
	t.Parallel()
	w := newPayrollSettingsWorld(t)
	plat := pathPlatformSettings + "/" + w.tenant
	cases := []ruleCase{
		{name: "settings change names a field", caller: w.owner, method: http.MethodPost, path: pathPayrollSettings,
			body: map[string]any{}, status: 400, code: "INVALID_REQUEST", okBody: map[string]any{"payCadence": nil}, okStatus: 200},
		{name: "override names a field", caller: w.admin, method: http.MethodPost, path: plat,
			body: map[string]any{}, status: 400, code: "INVALID_REQUEST", okBody: map[string]any{"payCadence": "MONTHLY"}, okStatus: 200},
		{name: "monthly hours lower bound", caller: w.owner, method: http.MethodPost, path: pathPayrollSettings,
			body: map[string]any{"monthlyWorkingHours": 39}, status: 400, code: "INVALID_REQUEST", okBody: map[string]any{"monthlyWorkingHours": 40}, okStatus: 200},
		{name: "monthly hours upper bound", caller: w.owner, method: http.MethodPost, path: pathPayrollSettings,
			body: map[string]any{"monthlyWorkingHours": 241}, status: 400, code: "INVALID_REQUEST", okBody: map[string]any{"monthlyWorkingHours": 240}, okStatus: 200},
		{name: "employee pension bound", caller: w.owner, method: http.MethodPost, path: pathPayrollSettings,
			body: map[string]any{"pensionEmployeeBasisPoints": 5001}, status: 400, code: "INVALID_REQUEST", okBody: map[string]any{"pensionEmployeeBasisPoints": 5000}, okStatus: 200},
		{name: "employer pension bound", caller: w.owner, method: http.MethodPost, path: pathPayrollSettings,
			body: map[string]any{"pensionEmployerBasisPoints": -1}, status: 400, code: "INVALID_REQUEST", okBody: map[string]any{"pensionEmployerBasisPoints": 0}, okStatus: 200},
		{name: "pay day bound", caller: w.owner, method: http.MethodPost, path: pathPayrollSettings,
			body: map[string]any{"payDayOfMonth": 32}, status: 400, code: "INVALID_REQUEST", okBody: map[string]any{"payDayOfMonth": 31}, okStatus: 200},
		{name: "cadence", caller: w.owner, method: http.MethodPost, path: pathPayrollSettings,
			body: map[string]any{"payCadence": "WEEKLY"}, status: 400, code: "INVALID_REQUEST"},
		{name: "unknown field", caller: w.owner, method: http.MethodPost, path: pathPayrollSettings,
			body: map[string]any{"overtimeMultiplier": 2}, status: 400, code: "INVALID_REQUEST"},
		{name: "account partner is lower case", caller: w.owner, method: http.MethodPost, path: pathPayrollSettings,
			body:   map[string]any{"payrollAccount": map[string]any{"partner": "Sandbox", "accountNumber": payrollAccountNumber, "holderName": "Org Treasury"}},
			status: 400, code: "INVALID_REQUEST",
			okBody: map[string]any{"payrollAccount": map[string]any{"partner": "sandbox", "accountNumber": payrollAccountNumber, "holderName": "Org Treasury"}}, okStatus: 200},
		{name: "account has no other fields", caller: w.owner, method: http.MethodPost, path: pathPayrollSettings,
			body:   map[string]any{"payrollAccount": map[string]any{"partner": "sandbox", "accountNumber": payrollAccountNumber, "holderName": "Org Treasury", "iban": "x"}},
			status: 400, code: "INVALID_REQUEST"},
		{name: "account number has no colon", caller: w.owner, method: http.MethodPost, path: pathPayrollSettings,
			body:   map[string]any{"payrollAccount": map[string]any{"partner": "sandbox", "accountNumber": "2000:1", "holderName": "Org Treasury"}},
			status: 400, code: "INVALID_REQUEST"},
		{name: "account holder not blank", caller: w.owner, method: http.MethodPost, path: pathPayrollSettings,
			body:   map[string]any{"payrollAccount": map[string]any{"partner": "sandbox", "accountNumber": payrollAccountNumber, "holderName": "  "}},
			status: 400, code: "INVALID_REQUEST"},
		{name: "policy change names a field", caller: w.owner, method: http.MethodPost, path: pathPayrollAutoLock,
			body: map[string]any{}, status: 400, code: "INVALID_REQUEST", okBody: map[string]any{"enabled": nil}, okStatus: 200},
		{name: "days after period end", caller: w.owner, method: http.MethodPost, path: pathPayrollAutoLock,
			body: map[string]any{"daysAfterPeriodEnd": 29}, status: 400, code: "INVALID_REQUEST", okBody: map[string]any{"daysAfterPeriodEnd": 1}, okStatus: 200},
		{name: "lock time", caller: w.owner, method: http.MethodPost, path: pathPayrollAutoLock,
			body: map[string]any{"lockTime": "24:00"}, status: 400, code: "INVALID_REQUEST", okBody: map[string]any{"lockTime": "23:59"}, okStatus: 200},
		{name: "time zone shape", caller: w.owner, method: http.MethodPost, path: pathPayrollAutoLock,
			body: map[string]any{"timeZone": "../etc/localtime"}, status: 400, code: "INVALID_REQUEST", okBody: map[string]any{"timeZone": "America/Argentina/Buenos_Aires"}, okStatus: 200},
		{name: "platform tenant id", caller: w.admin, method: http.MethodGet, path: pathPlatformAutoLock + "a%20b", status: 400, code: "INVALID_REQUEST",
			okPath: pathPlatformAutoLock + w.tenant, okStatus: 200},
		{name: "list limit", caller: w.admin, method: http.MethodGet, path: pathPlatformAutoLocks + "?limit=101", status: 400, code: "INVALID_REQUEST",
			okPath: pathPlatformAutoLocks + "?limit=100", okStatus: 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.caller.clone()
			a.t = t
			require.Error(t, a.documentVerdict(tc.method, tc.path, tc.body, tc.hdr...), "the document must refuse what the server refuses")
			rec := a.hostile(tc.method, tc.path, tc.body, tc.hdr...)
			status(t, rec, tc.status, tc.code)
			if tc.okStatus == 0 {
				return
			}
			path := tc.path
			if tc.okPath != "" {
				path = tc.okPath
			}
			status(t, a.call(tc.method, path, tc.okBody, tc.okHdr...), tc.okStatus, tc.okCode)
		})
	}
}

// FuzzPayrollSettingsRoutes: whatever reaches the settings and auto-lock routes, the
// organization's and the platform's (any path parameter, query and body, from the owner, a
// platform admin or nobody), answers 4xx or success, never 5xx.
func FuzzPayrollSettingsRoutes(f *testing.F) {
	w := newPayrollSettingsWorld(f)
	routes := w.srv.payrollSettingsRoutes()
	f.Add(uint8(2), uint8(0), "", "", `{"monthlyWorkingHours":9223372036854775807}`)
	f.Add(uint8(2), uint8(0), "", "", `{"monthlyWorkingHours":1e400,"payCadence":null}`)
	f.Add(uint8(2), uint8(0), "", "", `{"payrollAccount":{"partner":"sandbox","accountNumber":"2000000000001","holderName":"\u202eOrg"}}`)
	f.Add(uint8(2), uint8(0), "", "", `{"payrollAccount":[],"payDayOfMonth":"31"}`)
	f.Add(uint8(6), uint8(0), "", "", `{"timeZone":"Etc/GMT+12","lockTime":"00:00","daysAfterPeriodEnd":-1}`)
	f.Add(uint8(6), uint8(0), "", "", `{"enabled":"yes"}`)
	f.Add(uint8(8), uint8(1), "", "limit=0&cursor=%00", "")
	f.Add(uint8(10), uint8(1), w.tenant, "", `{"pensionEmployerBasisPoints":10000}`)
	f.Add(uint8(10), uint8(1), "../"+w.tenant, "", `{"courtOrderAutoSubmit":true}`)
	f.Add(uint8(14), uint8(1), w.otherTenant, "", `{"timeZone":"Africa/Addis_Ababa"}`)
	f.Add(uint8(15), uint8(1), "%ff", "", "")
	f.Add(uint8(3), uint8(2), "", "", "")
	f.Fuzz(func(t *testing.T, route, who uint8, param, query, body string) {
		r := routes[int(route)%len(routes)]
		path := r.Path
		if i := strings.IndexByte(path, ':'); i >= 0 {
			path = path[:i] + param
		}
		req := httptest.NewRequest(r.Method, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		switch who % 3 {
		case 0:
			req.AddCookie(w.owner.cookie)
		case 1:
			req.AddCookie(w.admin.cookie)
		}
		rec := httptest.NewRecorder()
		w.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q %q", r.Method, path, query, body))
	})
}
