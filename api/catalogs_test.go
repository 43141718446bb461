package api

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/catalogs"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

type catalogEntryOut struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Code        string  `json:"code"`
	Description string  `json:"description"`
	Cadence     *string `json:"cadence"`
}

type catalogDefinitionOut struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Code         string `json:"code"`
	Kind         string `json:"kind"`
	AmountSantim *int64 `json:"amountSantim"`
	BasisPoints  *int64 `json:"basisPoints"`
	Taxable      *bool  `json:"taxable"`
	PreTax       *bool  `json:"preTax"`
	Active       bool   `json:"active"`
}

type catalogList[T any] struct {
	Items []T `json:"items"`
}

// catalogAppRole adds an application role with perms (a JSON permission map) to tenant.
func (f *authFixture) catalogAppRole(tenant, name, perms string) {
	f.t.Helper()
	ctx := tenancy.WithTenant(context.Background(), tenant)
	require.NoError(f.t, tenancy.InTx(ctx, f.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.roles (id, tenant_id, name, scope, permissions) VALUES ($1, $2, $3, 'BUSINESS', $4)`,
			"role_"+identity.NewID(), tenant, name, perms)
		return err
	}))
}

// catalogEmployee inserts a minimal employee of tenant (the assignments' foreign key wants a real
// row) and returns its id.
func (f *authFixture) catalogEmployee(tenant string) string {
	f.t.Helper()
	id := "emp_" + identity.NewID()
	nationalID := strings.ToUpper(strings.ReplaceAll(id, "-", ""))
	nationalID = nationalID[len(nationalID)-16:] // the uuid's random end
	ctx := tenancy.WithTenant(context.Background(), tenant)
	require.NoError(f.t, tenancy.InTx(ctx, f.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO app.employees (id, tenant_id, first_name, last_name, full_name, national_id, hire_date,
				gross_monthly_salary_santim, payout_partner, payout_account_number, payout_holder_name)
			VALUES ($1, $2, 'Abebe', 'Kebede', 'Abebe Kebede', $3, '2026-01-01', 1000000, 'cbe', '1000123456789', 'Abebe Kebede')`,
			id, tenant, nationalID)
		return err
	}))
	return id
}

// catalogStatus asserts a response's status and, for an error, its code.
func catalogStatus(t *testing.T, rec *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	require.Equal(t, status, rec.Code, rec.Body.String())
	if code != "" {
		require.Equal(t, code, errCode(rec), rec.Body.String())
	}
}

// catalogRaw sends body as it is (no JSON encoding, no contract check of the request).
func catalogRaw(a *apiClient, method, path, body string) *httptest.ResponseRecorder {
	return a.hostile(method, path, []byte(body))
}

func TestCatalogEntryRoutes(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, res := f.signUp("catalog-owner@example.com", "BUSINESS")
	tenant := res.Organization.ID
	for _, m := range catalogEntryMounts {
		t.Run(m.catalog.Target, func(t *testing.T) {
			target := m.catalog.Target
			rec := owner.call(http.MethodGet, m.path, nil)
			catalogStatus(t, rec, http.StatusOK, "")
			require.Empty(t, decode[catalogList[catalogEntryOut]](t, rec).Items)

			rec = owner.call(http.MethodPost, m.path, map[string]any{"name": "  Head Office ", "code": "HO", "description": "main"})
			catalogStatus(t, rec, http.StatusCreated, "")
			e := decode[catalogEntryOut](t, rec)
			require.Equal(t, "Head Office", e.Name)
			require.Equal(t, "HO", e.Code)
			if m.catalog.Cadenced() {
				require.Equal(t, "MONTHLY", *e.Cadence, "a payment frequency is monthly unless told")
			} else {
				require.Nil(t, e.Cadence, "only a payment frequency has a cadence")
				catalogStatus(t, owner.hostile(http.MethodPost, m.path, map[string]any{"name": "Weekly", "cadence": "WEEKLY"}),
					http.StatusBadRequest, "INVALID_REQUEST")
			}
			rec = owner.call(http.MethodPost, m.path, map[string]any{"name": "Branch"})
			catalogStatus(t, rec, http.StatusCreated, "")
			branch := decode[catalogEntryOut](t, rec)
			require.Empty(t, branch.Code)
			require.Equal(t, 2, f.orgAuthAudits(tenant, "Create"+target, "SUCCESS"))

			// Duplicates: 409, audited DENIED, nothing written.
			rec = owner.call(http.MethodPost, m.path, map[string]any{"name": "head office"})
			catalogStatus(t, rec, http.StatusConflict, "DUPLICATE_NAME")
			rec = owner.call(http.MethodPost, m.path, map[string]any{"name": "Elsewhere", "code": "ho"})
			catalogStatus(t, rec, http.StatusConflict, "DUPLICATE_CODE")
			require.Equal(t, 2, f.orgAuthAudits(tenant, "Create"+target, "DENIED"))

			// Bad input: 400, nothing written. Bad on purpose (the blank name and the codes break
			// the document too), so only the answers are validated.
			for _, body := range []map[string]any{
				{"name": "   "},
				{"name": "a\u0000b"},
				{"name": "a\u202eb"},
				{"name": "ok", "code": "has space"},
				{"name": "ok", "code": "../x"},
				{"name": "ok", "description": "bell\a"},
			} {
				rec = owner.hostile(http.MethodPost, m.path, body)
				catalogStatus(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
			}
			for _, body := range []string{
				`{"code":"X"}`, `{"name":"ok","extra":1}`, `{"name":1}`, `[]`, `{"name":"ok"}{}`, "\xff", ``, `{"name":"` + strings.Repeat("n", 129) + `"}`,
				`{"name":"ok","code":"` + strings.Repeat("C", 33) + `"}`, `{"name":null}`,
			} {
				catalogStatus(t, catalogRaw(owner, http.MethodPost, m.path, body), http.StatusBadRequest, "INVALID_REQUEST")
			}
			require.Equal(t, 2, f.orgAuthAudits(tenant, "Create"+target, "SUCCESS"))

			// PUT changes the fields given.
			one := m.path + "/" + e.ID
			rec = owner.call(http.MethodPut, one, map[string]any{"name": "Headquarters", "code": ""})
			catalogStatus(t, rec, http.StatusOK, "")
			u := decode[catalogEntryOut](t, rec)
			require.Equal(t, "Headquarters", u.Name)
			require.Empty(t, u.Code)
			require.Equal(t, "main", u.Description)
			catalogStatus(t, owner.call(http.MethodPut, one, map[string]any{"name": "BRANCH"}), http.StatusConflict, "DUPLICATE_NAME")
			require.Equal(t, 1, f.orgAuthAudits(tenant, "Update"+target, "DENIED"))
			catalogStatus(t, catalogRaw(owner, http.MethodPut, one, `{}`), http.StatusBadRequest, "INVALID_REQUEST")
			catalogStatus(t, catalogRaw(owner, http.MethodPut, one, `{"name":""}`), http.StatusBadRequest, "INVALID_REQUEST")
			catalogStatus(t, owner.call(http.MethodPut, m.path+"/dep_missing", map[string]any{"name": "x"}), http.StatusNotFound, "NOT_FOUND")
			catalogStatus(t, catalogRaw(owner, http.MethodPut, m.path+"/a%20b", `{"name":"x"}`), http.StatusBadRequest, "INVALID_REQUEST")
			require.Equal(t, 1, f.orgAuthAudits(tenant, "Update"+target, "SUCCESS"))

			// DELETE is soft and once.
			catalogStatus(t, owner.call(http.MethodDelete, one, nil), http.StatusOK, "")
			catalogStatus(t, owner.call(http.MethodDelete, one, nil), http.StatusNotFound, "NOT_FOUND")
			catalogStatus(t, owner.call(http.MethodPut, one, map[string]any{"name": "back"}), http.StatusNotFound, "NOT_FOUND")
			catalogStatus(t, catalogRaw(owner, http.MethodDelete, m.path+"/"+strings.Repeat("x", 129), ""), http.StatusBadRequest, "INVALID_REQUEST")
			require.Equal(t, 1, f.orgAuthAudits(tenant, "Delete"+target, "SUCCESS"))
			rec = owner.call(http.MethodGet, m.path, nil)
			list := decode[catalogList[catalogEntryOut]](t, rec).Items
			require.Len(t, list, 1)
			require.Equal(t, "Branch", list[0].Name)
			// The deleted name is free again.
			catalogStatus(t, owner.call(http.MethodPost, m.path, map[string]any{"name": "Headquarters", "code": "HO"}), http.StatusCreated, "")
		})
	}
}

func TestCatalogDefinitionRoutes(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, res := f.signUp("catalog-defs@example.com", "BUSINESS")
	tenant := res.Organization.ID
	for _, m := range catalogDefinitionMounts {
		t.Run(m.catalog.Target, func(t *testing.T) {
			target := m.catalog.Target
			flagOf := func(d catalogDefinitionOut) *bool {
				if m.flag == "taxable" {
					require.Nil(t, d.PreTax)
					return d.Taxable
				}
				require.Nil(t, d.Taxable)
				return d.PreTax
			}
			// Defaults: active, taxable for an allowance, not pre-tax for a deduction.
			rec := owner.call(http.MethodPost, m.path, map[string]any{"name": "Transport", "code": "TRN", "kind": "FIXED_SANTIM", "amountSantim": catalogs.MaxFixedSantim})
			catalogStatus(t, rec, http.StatusCreated, "")
			fixed := decode[catalogDefinitionOut](t, rec)
			require.Equal(t, catalogs.MaxFixedSantim, *fixed.AmountSantim)
			require.Nil(t, fixed.BasisPoints)
			require.Contains(t, rec.Body.String(), `"basisPoints":null`, "the other unit is null, not absent")
			require.True(t, fixed.Active)
			require.Equal(t, m.flagDefault, *flagOf(fixed))
			rec = owner.call(http.MethodPost, m.path, map[string]any{"name": "Pension", "code": "PEN", "kind": "PERCENT_OF_GROSS_BASIS_POINTS",
				"basisPoints": 10_000, m.flag: !m.flagDefault, "active": false, "description": "all of gross"})
			catalogStatus(t, rec, http.StatusCreated, "")
			pct := decode[catalogDefinitionOut](t, rec)
			require.Equal(t, int64(10_000), *pct.BasisPoints)
			require.Nil(t, pct.AmountSantim)
			require.Equal(t, !m.flagDefault, *flagOf(pct))
			require.False(t, pct.Active)
			require.Equal(t, 2, f.orgAuthAudits(tenant, "Create"+target, "SUCCESS"))

			// Amounts: every int64 edge is a 400, never a 500, and writes nothing.
			other := "preTax"
			if m.flag == "preTax" {
				other = "taxable"
			}
			for _, body := range []string{
				`{"name":"x","code":"X","kind":"FIXED_SANTIM","amountSantim":-1}`,
				`{"name":"x","code":"X","kind":"FIXED_SANTIM","amountSantim":1000000001}`,
				`{"name":"x","code":"X","kind":"FIXED_SANTIM","amountSantim":9223372036854775807}`,
				`{"name":"x","code":"X","kind":"FIXED_SANTIM","amountSantim":9223372036854775808}`,
				`{"name":"x","code":"X","kind":"FIXED_SANTIM","amountSantim":-9223372036854775808}`,
				`{"name":"x","code":"X","kind":"FIXED_SANTIM","amountSantim":-9223372036854775809}`,
				`{"name":"x","code":"X","kind":"FIXED_SANTIM","amountSantim":99999999999999999999999999}`,
				`{"name":"x","code":"X","kind":"FIXED_SANTIM","amountSantim":1.5}`,
				`{"name":"x","code":"X","kind":"FIXED_SANTIM","amountSantim":1e3}`,
				`{"name":"x","code":"X","kind":"FIXED_SANTIM","amountSantim":"100"}`,
				`{"name":"x","code":"X","kind":"FIXED_SANTIM","amountSantim":null}`,
				`{"name":"x","code":"X","kind":"FIXED_SANTIM"}`,
				`{"name":"x","code":"X","kind":"FIXED_SANTIM","basisPoints":1}`,
				`{"name":"x","code":"X","kind":"FIXED_SANTIM","amountSantim":1,"basisPoints":1}`,
				`{"name":"x","code":"X","kind":"FIXED_SANTIM","amount":1}`,
				`{"name":"x","code":"X","kind":"PERCENT_OF_GROSS_BASIS_POINTS","basisPoints":10001}`,
				`{"name":"x","code":"X","kind":"PERCENT_OF_GROSS_BASIS_POINTS","basisPoints":-1}`,
				`{"name":"x","code":"X","kind":"PERCENT_OF_GROSS_BASIS_POINTS","basisPoints":1.5}`,
				`{"name":"x","code":"X","kind":"PERCENT_OF_GROSS_BASIS_POINTS","amountSantim":1}`,
				`{"name":"x","code":"X","kind":"PERCENT_OF_GROSS_BASIS_POINTS"}`,
				`{"name":"x","code":"X","kind":"PERCENT","amountSantim":1}`,
				`{"name":"x","code":"X","kind":"","amountSantim":1}`,
				`{"name":"x","code":"X","amountSantim":1}`,
				`{"name":"x","kind":"FIXED_SANTIM","amountSantim":1}`,
				`{"name":"x","code":"","kind":"FIXED_SANTIM","amountSantim":1}`,
				`{"code":"X","kind":"FIXED_SANTIM","amountSantim":1}`,
				`{"name":"x","code":"X","kind":"FIXED_SANTIM","amountSantim":1,"` + other + `":true}`,
				`{"name":"x","code":"X","kind":"FIXED_SANTIM","amountSantim":1,"active":"yes"}`,
			} {
				rec := catalogRaw(owner, http.MethodPost, m.path, body)
				catalogStatus(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
			}
			// The document refuses what the handler refuses: the kind's own amount, in bounds, and
			// not the other one.
			for _, tc := range []struct {
				body  map[string]any
				field string
			}{
				{map[string]any{"name": "x", "code": "X", "kind": "PERCENT_OF_GROSS_BASIS_POINTS", "basisPoints": 10_001}, "basisPoints"},
				{map[string]any{"name": "x", "code": "X", "kind": "PERCENT_OF_GROSS_BASIS_POINTS", "amountSantim": 1}, "amountSantim"},
				{map[string]any{"name": "x", "code": "X", "kind": "FIXED_SANTIM"}, "amountSantim"},
				{map[string]any{"name": "x", "code": "X", "kind": "FIXED_SANTIM", "amountSantim": 1, "basisPoints": 1}, "basisPoints"},
			} {
				require.Error(t, owner.documentVerdict(http.MethodPost, m.path, tc.body), "%v", tc.body)
				rec = owner.hostile(http.MethodPost, m.path, tc.body)
				catalogStatus(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
				require.Contains(t, rec.Body.String(), `"field":"`+tc.field+`"`)
			}
			catalogStatus(t, owner.call(http.MethodPost, m.path, map[string]any{"name": "TRANSPORT", "code": "T2", "kind": "FIXED_SANTIM", "amountSantim": 0}),
				http.StatusConflict, "DUPLICATE_NAME")
			catalogStatus(t, owner.call(http.MethodPost, m.path, map[string]any{"name": "T2", "code": "trn", "kind": "FIXED_SANTIM", "amountSantim": 0}),
				http.StatusConflict, "DUPLICATE_CODE")
			require.Equal(t, 2, f.orgAuthAudits(tenant, "Create"+target, "SUCCESS"))
			require.Len(t, decode[catalogList[catalogDefinitionOut]](t, owner.call(http.MethodGet, m.path, nil)).Items, 2)

			// PUT: a kind comes with its own amount; an amount alone is in the stored kind's unit.
			one := m.path + "/" + fixed.ID
			rec = owner.hostile(http.MethodPut, one, map[string]any{"kind": "PERCENT_OF_GROSS_BASIS_POINTS"})
			catalogStatus(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
			require.Contains(t, rec.Body.String(), `"field":"basisPoints"`, "a kind without its amount")
			require.Error(t, owner.documentVerdict(http.MethodPut, one, map[string]any{"kind": "PERCENT_OF_GROSS_BASIS_POINTS"}))
			rec = owner.hostile(http.MethodPut, one, map[string]any{"kind": "FIXED_SANTIM", "basisPoints": 5})
			catalogStatus(t, rec, http.StatusBadRequest, "INVALID_REQUEST")
			require.Error(t, owner.documentVerdict(http.MethodPut, one, map[string]any{"kind": "FIXED_SANTIM", "basisPoints": 5}))
			catalogStatus(t, owner.hostile(http.MethodPut, m.path+"/"+pct.ID, map[string]any{"basisPoints": 10_001}), http.StatusBadRequest, "INVALID_REQUEST")
			catalogStatus(t, catalogRaw(owner, http.MethodPut, one, `{"amountSantim":-1}`), http.StatusBadRequest, "INVALID_REQUEST")
			catalogStatus(t, catalogRaw(owner, http.MethodPut, one, `{"amountSantim":9223372036854775808}`), http.StatusBadRequest, "INVALID_REQUEST")
			catalogStatus(t, catalogRaw(owner, http.MethodPut, one, `{"amountSantim":1,"basisPoints":1}`), http.StatusBadRequest, "INVALID_REQUEST")
			catalogStatus(t, catalogRaw(owner, http.MethodPut, one, `{"amount":1}`), http.StatusBadRequest, "INVALID_REQUEST")
			// Well-formed, but in the other unit than the stored kind's: 422, nothing changed.
			rec = owner.call(http.MethodPut, one, map[string]any{"basisPoints": 5})
			catalogStatus(t, rec, http.StatusUnprocessableEntity, "AMOUNT_KIND_MISMATCH")
			require.Contains(t, rec.Body.String(), `"field":"basisPoints"`)
			require.Contains(t, rec.Body.String(), `"expected":"amountSantim"`)
			catalogStatus(t, owner.call(http.MethodPut, m.path+"/"+pct.ID, map[string]any{"amountSantim": 5}), http.StatusUnprocessableEntity, "AMOUNT_KIND_MISMATCH")
			catalogStatus(t, catalogRaw(owner, http.MethodPut, one, `{}`), http.StatusBadRequest, "INVALID_REQUEST")
			catalogStatus(t, catalogRaw(owner, http.MethodPut, one, `{"code":""}`), http.StatusBadRequest, "INVALID_REQUEST")
			catalogStatus(t, owner.call(http.MethodPut, one, map[string]any{"name": "pension"}), http.StatusConflict, "DUPLICATE_NAME")
			catalogStatus(t, owner.call(http.MethodPut, m.path+"/alw_missing", map[string]any{"active": true}), http.StatusNotFound, "NOT_FOUND")
			rec = owner.call(http.MethodPut, one, map[string]any{"amountSantim": 12_345})
			catalogStatus(t, rec, http.StatusOK, "")
			require.Equal(t, int64(12_345), *decode[catalogDefinitionOut](t, rec).AmountSantim)
			rec = owner.call(http.MethodPut, one, map[string]any{"kind": "PERCENT_OF_GROSS_BASIS_POINTS", "basisPoints": 250, m.flag: !m.flagDefault, "active": false})
			catalogStatus(t, rec, http.StatusOK, "")
			got := decode[catalogDefinitionOut](t, rec)
			require.Equal(t, "PERCENT_OF_GROSS_BASIS_POINTS", got.Kind)
			require.Equal(t, int64(250), *got.BasisPoints)
			require.Nil(t, got.AmountSantim, "the santim amount went with the kind")
			require.False(t, got.Active)
			require.Equal(t, !m.flagDefault, *flagOf(got))
			require.Equal(t, "Transport", got.Name)
			require.Equal(t, 2, f.orgAuthAudits(tenant, "Update"+target, "SUCCESS"))
			require.Equal(t, 1, f.orgAuthAudits(tenant, "Update"+target, "DENIED"))

			// DELETE: soft, once; refused while an employee has the definition.
			emp := f.catalogEmployee(tenant)
			ctx := tenancy.WithActor(tenancy.WithTenant(context.Background(), tenant), res.User.ID)
			require.NoError(t, tenancy.InTx(ctx, f.d.App, func(tx pgx.Tx) error {
				_, err := m.catalog.Update(ctx, tx, pct.ID, catalogs.DefinitionChange{Active: catalogPtr(true)}, f.now())
				if err != nil {
					return err
				}
				_, err = m.catalog.Assign(ctx, tx, emp, pct.ID, catalogs.Own{}, f.now())
				return err
			}))
			catalogStatus(t, owner.call(http.MethodDelete, m.path+"/"+pct.ID, nil), http.StatusConflict, "DEFINITION_IN_USE")
			require.Equal(t, 1, f.orgAuthAudits(tenant, "Delete"+target, "DENIED"))
			catalogStatus(t, owner.call(http.MethodDelete, one, nil), http.StatusOK, "")
			catalogStatus(t, owner.call(http.MethodDelete, one, nil), http.StatusNotFound, "NOT_FOUND")
			require.Equal(t, 1, f.orgAuthAudits(tenant, "Delete"+target, "SUCCESS"))
			list := decode[catalogList[catalogDefinitionOut]](t, owner.call(http.MethodGet, m.path, nil)).Items
			require.Len(t, list, 1)
			require.Equal(t, pct.ID, list[0].ID)
		})
	}
}

func catalogPtr[T any](v T) *T { return &v }

// TestCatalogPermissions: Org admin+ and the row's permission; organization_admin (the owner's
// role) passes everything, an admin passes exactly what their application roles grant, a plain
// member is refused whatever they hold, and another organization's ids are 404.
func TestCatalogPermissions(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	owner, res := f.signUp("perm-owner@catalog.example", "BUSINESS")
	tenant := res.Organization.ID
	f.catalogAppRole(tenant, "clerk", `{"employees":["view","add","edit"],"allowances":["view"]}`)
	f.addMember(tenant, "bare-admin@catalog.example", orgs.Admin)
	f.addMember(tenant, "clerk-admin@catalog.example", orgs.Admin, "clerk")
	f.addMember(tenant, "member@catalog.example", orgs.PlainMember, orgs.AdminRole)
	bare, clerk, member := f.signIn("bare-admin@catalog.example"), f.signIn("clerk-admin@catalog.example"), f.signIn("member@catalog.example")

	ids := map[string]string{}
	for _, m := range catalogEntryMounts {
		rec := owner.call(http.MethodPost, m.path, map[string]any{"name": "Owner's " + m.noun})
		catalogStatus(t, rec, http.StatusCreated, "")
		ids[m.path] = decode[catalogEntryOut](t, rec).ID
	}
	for _, m := range catalogDefinitionMounts {
		rec := owner.call(http.MethodPost, m.path, map[string]any{"name": "Owner's " + m.noun, "code": "OWN", "kind": "FIXED_SANTIM", "amountSantim": 1})
		catalogStatus(t, rec, http.StatusCreated, "")
		ids[m.path] = decode[catalogDefinitionOut](t, rec).ID
	}

	type want struct {
		status int
		code   string
	}
	ok := func(s int) want { return want{s, ""} }
	denied, lowRole := want{http.StatusForbidden, "PERMISSION_DENIED"}, want{http.StatusForbidden, "INSUFFICIENT_ROLE"}
	entryBody := func(i int) map[string]any { return map[string]any{"name": fmt.Sprintf("n%d", i)} }
	defBody := func(i int) map[string]any {
		return map[string]any{"name": fmt.Sprintf("n%d", i), "code": fmt.Sprintf("C%d", i), "kind": "FIXED_SANTIM", "amountSantim": 1}
	}
	i := 0
	for _, tc := range []struct {
		method, path string
		clerk        want // holds employees view/add/edit and allowances.view
	}{
		{http.MethodGet, "/api/departments", ok(200)},
		{http.MethodPost, "/api/departments", ok(201)},
		{http.MethodPut, "/api/departments/{id}", ok(200)},
		{http.MethodDelete, "/api/departments/{id}", denied}, // employees.delete
		{http.MethodGet, "/api/positions", ok(200)},
		{http.MethodPost, "/api/positions", ok(201)},
		{http.MethodDelete, "/api/positions/{id}", denied},
		{http.MethodGet, "/api/employment-types", ok(200)},
		{http.MethodPost, "/api/employment-types", ok(201)},
		{http.MethodPut, "/api/employment-types/{id}", ok(200)},
		{http.MethodGet, "/api/payment-frequencies", ok(200)},
		{http.MethodPost, "/api/payment-frequencies", ok(201)},
		{http.MethodGet, "/api/allowances", ok(200)},
		{http.MethodPost, "/api/allowances", denied}, // allowances.edit
		{http.MethodPut, "/api/allowances/{id}", denied},
		{http.MethodDelete, "/api/allowances/{id}", denied},
		{http.MethodGet, "/api/deductions", denied},
		{http.MethodPost, "/api/deductions", denied},
	} {
		i++
		base := tc.path
		if j := strings.Index(base, "/{id}"); j >= 0 {
			base = base[:j]
		}
		path := strings.Replace(tc.path, "{id}", ids[base], 1)
		body := entryBody(i)
		if base == "/api/allowances" || base == "/api/deductions" {
			body = defBody(i)
		}
		// A nil map in an interface would be sent as the body "null": GET and DELETE take none.
		var send any = body
		if tc.method == http.MethodGet || tc.method == http.MethodDelete {
			send = nil
		}
		name := tc.method + " " + tc.path
		rec := clerk.call(tc.method, path, send)
		require.Equal(t, tc.clerk.status, rec.Code, "clerk admin: %s: %s", name, rec.Body.String())
		require.Equal(t, tc.clerk.code, errCode(rec), "clerk admin: %s", name)
		for who, cl := range map[string]*apiClient{"admin without roles": bare, "member with organization_admin": member} {
			w := denied
			if cl == member {
				w = lowRole
			}
			rec := cl.call(tc.method, path, send)
			require.Equal(t, w.status, rec.Code, "%s: %s: %s", who, name, rec.Body.String())
			require.Equal(t, w.code, errCode(rec), "%s: %s", who, name)
		}
	}
	catalogStatus(t, owner.call(http.MethodPut, "/api/deductions/"+ids["/api/deductions"], map[string]any{"amountSantim": 2}), http.StatusOK, "")
	require.Positive(t, f.orgAuthAudits(tenant, "AccessRoute", "DENIED"), "refusals are audited")

	// Another organization's owner: the same ids are not found there, and nothing of A shows.
	other, _ := f.signUp("perm-other@catalog.example", "BUSINESS")
	for _, m := range catalogEntryMounts {
		id := ids[m.path]
		catalogStatus(t, other.call(http.MethodPut, m.path+"/"+id, map[string]any{"name": "mine"}), http.StatusNotFound, "NOT_FOUND")
		catalogStatus(t, other.call(http.MethodDelete, m.path+"/"+id, nil), http.StatusNotFound, "NOT_FOUND")
		rec := other.call(http.MethodGet, m.path, nil)
		catalogStatus(t, rec, http.StatusOK, "")
		require.Empty(t, decode[catalogList[catalogEntryOut]](t, rec).Items)
	}
	for _, m := range catalogDefinitionMounts {
		id := ids[m.path]
		catalogStatus(t, other.call(http.MethodPut, m.path+"/"+id, map[string]any{"amountSantim": 5}), http.StatusNotFound, "NOT_FOUND")
		catalogStatus(t, other.call(http.MethodDelete, m.path+"/"+id, nil), http.StatusNotFound, "NOT_FOUND")
		rec := other.call(http.MethodGet, m.path, nil)
		require.Empty(t, decode[catalogList[catalogDefinitionOut]](t, rec).Items)
	}
	rec := owner.call(http.MethodGet, "/api/deductions", nil)
	defs := decode[catalogList[catalogDefinitionOut]](t, rec).Items
	require.Len(t, defs, 1)
	require.Equal(t, int64(2), *defs[0].AmountSantim, "untouched by the other organization")

	// The employment type the clerk may delete (employees.edit), and the owner everything.
	catalogStatus(t, clerk.call(http.MethodDelete, "/api/employment-types/"+ids["/api/employment-types"], nil), http.StatusOK, "")
	catalogStatus(t, owner.call(http.MethodDelete, "/api/departments/"+ids["/api/departments"], nil), http.StatusOK, "")
	catalogStatus(t, owner.call(http.MethodDelete, "/api/allowances/"+ids["/api/allowances"], nil), http.StatusOK, "")
}

// TestCatalogUnauthenticated: no session is 401 on every catalog route.
func TestCatalogUnauthenticated(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	anon := f.client()
	for _, r := range f.srv.catalogRoutes() {
		rec := anon.hostile(r.Method, strings.Replace(r.Path, ":id", "x", 1), nil)
		catalogStatus(t, rec, http.StatusUnauthorized, "UNAUTHENTICATED")
	}
}

// FuzzCatalogRoutes: whatever reaches a catalog route (any id and body, from the owner, an admin
// without permissions or nobody) answers 4xx or success with the error envelope, never 5xx.
func FuzzCatalogRoutes(f *testing.F) {
	fx := newAuthFixture(f)
	owner, res := fx.signUp("owner@catalog-fuzz.example", "BUSINESS")
	fx.addMember(res.Organization.ID, "admin@catalog-fuzz.example", orgs.Admin)
	admin := fx.signIn("admin@catalog-fuzz.example")
	routes := fx.srv.catalogRoutes()
	rec := owner.call(http.MethodPost, "/api/allowances", map[string]any{"name": "Seed", "code": "SEED", "kind": "FIXED_SANTIM", "amountSantim": 1})
	require.Equal(f, http.StatusCreated, rec.Code, rec.Body.String())
	seed := decode[catalogDefinitionOut](f, rec).ID
	for i, s := range []struct{ id, body string }{
		{"", `{"name":"Ops","code":"OPS","description":"d"}`},
		{"", `{"name":"Pay","code":"P","kind":"FIXED_SANTIM","amountSantim":1000000000,"taxable":false}`},
		{"", `{"name":"Pct","code":"Q","kind":"PERCENT_OF_GROSS_BASIS_POINTS","basisPoints":10000,"amountSantim":null}`},
		{"", `{"name":"Both","code":"B","kind":"FIXED_SANTIM","amountSantim":1,"basisPoints":1}`},
		{seed, `{"kind":"PERCENT_OF_GROSS_BASIS_POINTS","basisPoints":10000}`},
		{seed, `{"kind":"PERCENT_OF_GROSS_BASIS_POINTS","amountSantim":1}`},
		{seed, `{"basisPoints":1}`},
		{seed, `{"amountSantim":9223372036854775807}`},
		{seed, `{"amountSantim":-9223372036854775808}`},
		{seed, `{"basisPoints":-9223372036854775809}`},
		{"pfq_x", `{"name":"Weekly","cadence":"WEEKLY"}`},
		{"pfq_x", `{"cadence":""}`},
		{"", `{"name":"Fortnight","cadence":"BIWEEKLY","code":"FN"}`},
		{"dep_x", `{"name":"\u0000"}`},
		{"../../etc", `[]`},
		{"a\x00b", "\xff"},
		{strings.Repeat("i", 200), `{"name":"x"}{}`},
		{"", `{"name":"x","code":"X","kind":"PERCENT_OF_GROSS_BASIS_POINTS","basisPoints":1e400}`},
		{"", `{"name":"x","preTax":true,"taxable":true}`},
		{seed, ``},
	} {
		f.Add(uint8(i), uint8(i%3), s.id, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, route, who uint8, id string, body []byte) {
		r := routes[int(route)%len(routes)]
		path := strings.Replace(r.Path, ":id", id, 1)
		req := httptest.NewRequest(r.Method, "/", bytes.NewReader(body))
		req.URL.Path, req.URL.RawPath = path, ""
		req.RemoteAddr = "192.0.2.78:40000"
		if len(body) > 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		switch who % 3 {
		case 0:
			req.AddCookie(owner.cookie)
		case 1:
			req.AddCookie(admin.cookie)
		}
		rec := httptest.NewRecorder()
		fx.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q", r.Method, path, body))
	})
}
