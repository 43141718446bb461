package api

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
)

// TestBusinessSettings: the settings page is each setting exactly as its own route answers it,
// for a caller that route admits, null for one it does not; missing names the accounts not set
// among the sections shown (the stack set the EWA funding account; the others are not), each
// with the features it holds back and the route that sets it. Another organization's member is
// refused, a non-business's id is 404, any query string is 400, nobody is 401.
func TestBusinessSettings(t *testing.T) {
	t.Parallel()
	s := newEwaStack(t, ewaStackOpts{})
	path := "/api/business/" + s.tenant + "/settings"
	read := func(cl *apiClient) map[string]json.RawMessage {
		t.Helper()
		rec := cl.call(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[map[string]json.RawMessage](t, rec)
	}
	own := map[string]string{"ewa": "/api/ewa/settings", "wallet": "/api/wallet/settings", "savings": "/api/savings/settings",
		"payroll": "/api/payroll/tenant-settings/effective", "autoLock": "/api/payroll/auto-lock-policy/effective",
		"security": "/api/organization/security-policy"}

	// The owner reads every section, each its own route's answer.
	got := read(s.owner)
	require.JSONEq(t, `"`+s.tenant+`"`, string(got["businessId"]))
	answers := map[string]map[string]json.RawMessage{}
	for section, route := range own {
		rec := s.owner.call(http.MethodGet, route, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.JSONEq(t, rec.Body.String(), string(got[section]), section)
		answers[section] = decode[map[string]json.RawMessage](t, rec)
	}
	unset := func(section, field string) bool { v, ok := answers[section][field]; return !ok || string(v) == "null" }
	require.False(t, unset("ewa", "fundingAccount"), "the stack set the EWA funding account")
	want := []missingSettingJSON{}
	for _, m := range []struct {
		section, field string
		miss           missingSettingJSON
	}{
		{"payroll", "payrollAccount", missingSettingJSON{missingPayrollAccount, []string{"PAYROLL_DISBURSEMENT", "LOAN_REMITTANCE", "COURT_ORDER_REMITTANCE"},
			onboardingActionJSON{Method: http.MethodPost, Path: "/api/payroll/tenant-settings"}}},
		{"ewa", "fundingAccount", missingSettingJSON{missingEwaFunding, []string{"EWA", "BNPL"}, onboardingActionJSON{Method: http.MethodPut, Path: "/api/ewa/settings"}}},
		{"wallet", "poolAccount", missingSettingJSON{missingWalletPool, []string{"WALLET_TRANSFER"}, onboardingActionJSON{Method: http.MethodPut, Path: "/api/wallet/settings"}}},
		{"savings", "escrowAccount", missingSettingJSON{missingSavingsEscrow, []string{"SAVINGS"}, onboardingActionJSON{Method: http.MethodPut, Path: "/api/savings/settings"}}},
	} {
		if unset(m.section, m.field) {
			want = append(want, m.miss)
		}
	}
	require.NotEmpty(t, want, "the wallet pool and the savings escrow are not set")
	var missing []missingSettingJSON
	require.NoError(t, json.Unmarshal(got["missing"], &missing))
	require.Equal(t, want, missing)

	// A plain member: the security policy only (the others are admins' routes), nothing missing shown.
	member := bizAddMember(t, s.d, s.srv, s.tenant, "member@settings.test", orgs.PlainMember)
	got = read(member)
	for section := range own {
		if section == "security" {
			require.NotEqual(t, "null", string(got[section]))
			continue
		}
		require.Equal(t, "null", string(got[section]), section)
	}
	require.JSONEq(t, `[]`, string(got["missing"]))

	// Others: another organization's owner is refused, a merchant's own id is no business, a query is 400.
	other, res := s.signUp("owner@settings-other.test", "BUSINESS")
	require.Equal(t, http.StatusForbidden, other.call(http.MethodGet, path, nil).Code)
	shop, shopRes := s.signUpPartner("owner@settings-shop.test", "MERCHANT")
	requireStatus(t, shop.call(http.MethodGet, "/api/business/"+shopRes.Organization.ID+"/settings", nil), http.StatusNotFound, "NOT_FOUND")
	require.Equal(t, http.StatusOK, other.call(http.MethodGet, "/api/business/"+res.Organization.ID+"/settings", nil).Code)
	require.Equal(t, http.StatusUnauthorized, s.client().call(http.MethodGet, path, nil).Code)
	for _, q := range []string{"?x", "?section=ewa", "?%00=1"} {
		requireStatus(t, s.owner.hostile(http.MethodGet, path+q, nil), http.StatusBadRequest, "INVALID_REQUEST")
	}
}

// TestFISettings: the FI's settings page is its accounts and security policy as their own routes
// answer them; missing names the funding and settlement accounts until they are set, for a caller
// that may read the accounts (loans.view); a member without it sees the policy alone. A business
// is refused, a query string is 400.
func TestFISettings(t *testing.T) {
	t.Parallel()
	w := newLendingWorld(t)
	read := func(cl *apiClient) fiSettingsJSON {
		t.Helper()
		rec := cl.call(http.MethodGet, "/api/fi/settings", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[fiSettingsJSON](t, rec)
	}
	ownAnswers := func(cl *apiClient, got fiSettingsJSON) {
		t.Helper()
		for route, section := range map[string]any{"/api/fi/accounts": got.Accounts, "/api/organization/security-policy": got.Security} {
			rec := cl.call(http.MethodGet, route, nil)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			b, err := json.Marshal(section)
			require.NoError(t, err)
			require.JSONEq(t, rec.Body.String(), string(b), route)
		}
	}
	got := read(w.fi)
	require.Equal(t, w.fiID, got.OrganizationID)
	ownAnswers(w.fi, got)
	put := onboardingActionJSON{Method: http.MethodPut, Path: "/api/fi/accounts"}
	require.Equal(t, []missingSettingJSON{{missingFIFunding, []string{"LOAN_DISBURSEMENT"}, put}, {missingFISettlement, []string{"LOAN_REMITTANCE"}, put}},
		got.Missing)

	rec := w.fi.call(http.MethodPut, "/api/fi/accounts", map[string]any{
		"fundingAccount":    map[string]any{"partner": "sandbox", "accountNumber": lendingFundingAccount},
		"settlementAccount": map[string]any{"partner": "sandbox", "accountNumber": lendingSettlementAccount}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got = read(w.fi)
	ownAnswers(w.fi, got)
	require.Empty(t, got.Missing)

	w.addMember(w.fiID, "plain@fi-settings.test", orgs.PlainMember)
	plain := read(w.signIn("plain@fi-settings.test"))
	require.Nil(t, plain.Accounts)
	require.NotNil(t, plain.Security)
	require.Empty(t, plain.Missing)

	require.Equal(t, http.StatusForbidden, w.biz.call(http.MethodGet, "/api/fi/settings", nil).Code, "a business")
	for _, q := range []string{"?x", "?section=accounts"} {
		requireStatus(t, w.fi.hostile(http.MethodGet, "/api/fi/settings"+q, nil), http.StatusBadRequest, "INVALID_REQUEST")
	}
}

// TestMerchantSettings: the merchant's settings page names its settlement account as missing until
// it is set, then shows it as GET /api/bnpl/merchant answers it; a member without bnpl.view sees
// the policy alone; a business is refused, a query string is 400.
func TestMerchantSettings(t *testing.T) {
	t.Parallel()
	w := newKycWorld(t)
	shop, res := w.signUpPartner("owner@settings-merchant.test", "MERCHANT")
	shopID := res.Organization.ID
	read := func(cl *apiClient) merchantSettingsJSON {
		t.Helper()
		rec := cl.call(http.MethodGet, "/api/bnpl/settings", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[merchantSettingsJSON](t, rec)
	}
	got := read(shop)
	require.Equal(t, shopID, got.OrganizationID)
	require.Nil(t, got.Merchant)
	require.NotNil(t, got.Security)
	require.Equal(t, []missingSettingJSON{{missingMerchantSettle, []string{"BNPL_SALES"},
		onboardingActionJSON{Method: http.MethodPut, Path: "/api/bnpl/merchant"}}}, got.Missing)

	dashFixture(t, w.d, shopID, []any{`INSERT INTO app.bnpl_merchants (tenant_id, settlement_partner, settlement_account_number,
		discount_basis_points, updated_by, updated_at) VALUES ($1, 'sandbox', '3000000000011', 250, 'test', now())`, shopID})
	got = read(shop)
	require.Empty(t, got.Missing)
	for route, section := range map[string]any{"/api/bnpl/merchant": got.Merchant, "/api/organization/security-policy": got.Security} {
		rec := shop.call(http.MethodGet, route, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		b, err := json.Marshal(section)
		require.NoError(t, err)
		require.JSONEq(t, rec.Body.String(), string(b), route)
	}

	plain := bizAddMember(t, w.d, w.srv, shopID, "plain@settings-merchant.test", orgs.PlainMember)
	got = read(plain)
	require.Nil(t, got.Merchant)
	require.NotNil(t, got.Security)
	require.Empty(t, got.Missing)

	require.Equal(t, http.StatusForbidden, w.owner.call(http.MethodGet, "/api/bnpl/settings", nil).Code, "a business")
	requireStatus(t, shop.hostile(http.MethodGet, "/api/bnpl/settings?x=1", nil), http.StatusBadRequest, "INVALID_REQUEST")
}
