package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/savings"
	"github.com/wagerail/wagerail/internal/wallet"
)

// GET /api/business/<id>/settings: the business's settings page in one read — each setting as
// its own route answers it (EWA, wallet, savings, the payroll settings and auto-lock policy in
// force, the security policy), a section null when the caller may not read that route (the
// dashboard's rule: s.may), and what is missing for the money features to run: the accounts not
// set, each with the feature it holds back and the route that sets it. The organization's
// settings read in one transaction, the payroll layers in a second (they are bun reads).

// GET /api/fi/settings is the financial institution's: its funding and settlement accounts (GET
// /api/fi/accounts) and its security policy, with the accounts not set among them. GET
// /api/bnpl/settings is the merchant's: its BNPL settlement account and discount (GET
// /api/bnpl/merchant; null until set) and its security policy, with the account when not set.

// Settings sections: each is its own GET route's answer, shown to whom that route admits.
var (
	settingsEwa      = dashboardSection{"GET /api/ewa/settings"}
	settingsWallet   = dashboardSection{"GET /api/wallet/settings"}
	settingsSavings  = dashboardSection{"GET /api/savings/settings"}
	settingsPayroll  = dashboardSection{"GET /api/payroll/tenant-settings/effective"}
	settingsAutoLock = dashboardSection{"GET /api/payroll/auto-lock-policy/effective"}
	settingsSecurity = dashboardSection{"GET /api/organization/security-policy"}

	settingsFIAccounts = dashboardSection{"GET /api/fi/accounts"}
	settingsMerchant   = dashboardSection{"GET /api/bnpl/merchant"}

	businessSettingsSections = []dashboardSection{settingsEwa, settingsWallet, settingsSavings, settingsPayroll, settingsAutoLock, settingsSecurity}
	fiSettingsSections       = []dashboardSection{settingsFIAccounts, settingsSecurity}
	merchantSettingsSections = []dashboardSection{settingsMerchant, settingsSecurity}
)

// A money feature's account that is not set (businessSettingsJSON.Missing).
const (
	missingPayrollAccount = "PAYROLL_ACCOUNT"             // payroll disbursement, loan and court-order remittances
	missingEwaFunding     = "EWA_FUNDING_ACCOUNT"         // early wage access and BNPL (the business fronts both from it)
	missingWalletPool     = "WALLET_POOL_ACCOUNT"         // wallet transfers
	missingSavingsEscrow  = "SAVINGS_ESCROW_ACCOUNT"      // savings goals
	missingFIFunding      = "FI_FUNDING_ACCOUNT"          // loan disbursement (the FI lends from it)
	missingFISettlement   = "FI_SETTLEMENT_ACCOUNT"       // loan remittances (the businesses pay the instalments into it)
	missingMerchantSettle = "MERCHANT_SETTLEMENT_ACCOUNT" // BNPL sales (the business pays the purchase into it)
)

type missingSettingJSON struct {
	Setting  string               `json:"setting"`
	Features []string             `json:"features"`
	SetWith  onboardingActionJSON `json:"setWith"`
}

type businessSettingsJSON struct {
	BusinessID string               `json:"businessId"`
	Ewa        *ewaSettingsJSON     `json:"ewa"`
	Wallet     *walletSettingsJSON  `json:"wallet"`
	Savings    *savingsSettingsJSON `json:"savings"`
	Payroll    any                  `json:"payroll"`
	AutoLock   any                  `json:"autoLock"`
	Security   *securityPolicyJSON  `json:"security"`
	// Missing are the accounts not set among the sections shown, in this order: payroll, EWA,
	// wallet, savings.
	Missing []missingSettingJSON `json:"missing"`
}

type fiSettingsJSON struct {
	OrganizationID string              `json:"organizationId"`
	Accounts       *fiAccountsJSON     `json:"accounts"`
	Security       *securityPolicyJSON `json:"security"`
	// Missing are the accounts not set among the sections shown: funding, then settlement.
	Missing []missingSettingJSON `json:"missing"`
}

type merchantSettingsJSON struct {
	OrganizationID string              `json:"organizationId"`
	Merchant       *bnplMerchantJSON   `json:"merchant"`
	Security       *securityPolicyJSON `json:"security"`
	// Missing is the settlement account when it is not set (and the caller may read it).
	Missing []missingSettingJSON `json:"missing"`
}

func (s *Server) settingsPageRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/business/:id/settings", Auth: Org, Role: orgs.PlainMember, Tenant: "id",
			Summary: "A business's settings in one read (sections the caller may not read are null) and the money accounts not yet set",
			Handler: snapshot(s.businessSettings)},
		{Method: http.MethodGet, Path: "/api/fi/settings", Auth: Org, Role: orgs.PlainMember,
			Summary: "The financial institution's settings in one read (sections the caller may not read are null) and the accounts not yet set",
			Handler: snapshot(s.forKind(orgs.FI, s.fiSettings))},
		{Method: http.MethodGet, Path: "/api/bnpl/settings", Auth: Org, Role: orgs.PlainMember,
			Summary: "The merchant's settings in one read (sections the caller may not read are null) and its settlement account when not yet set",
			Handler: snapshot(s.forKind(orgs.Merchant, s.merchantSettings))},
	}
}

// missingSetting is an account not set among the sections shown (shown and not set), with the
// features it holds back and the route that sets it.
func missingSetting(out *[]missingSettingJSON, shown, set bool, setting, method, path string, features ...string) {
	if shown && !set {
		*out = append(*out, missingSettingJSON{Setting: setting, Features: features, SetWith: onboardingActionJSON{Method: method, Path: path}})
	}
}

// securitySection is the organization's security policy as GET /api/organization/security-policy
// answers it, or nil when the caller may not read that route. It has answered on an error.
func (s *Server) securitySection(c *gin.Context) (_ *securityPolicyJSON, ok bool) {
	cl := callerOf(c)
	if !s.may(cl, settingsSecurity) {
		return nil, true
	}
	p, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (orgs.SecurityPolicy, error) {
		return orgs.SecurityPolicyOf(ctx, tx, cl.Tenant)
	})
	if err != nil {
		writeError(c, err)
		return nil, false
	}
	j := toSecurityPolicyJSON(cl.Tenant, p)
	return &j, true
}

func (s *Server) merchantSettings(c *gin.Context) {
	if e := noQuery(c); e != nil {
		writeError(c, e)
		return
	}
	cl := callerOf(c)
	out := merchantSettingsJSON{OrganizationID: cl.Tenant, Missing: []missingSettingJSON{}}
	var ok bool
	if out.Security, ok = s.securitySection(c); !ok {
		return
	}
	if s.may(cl, settingsMerchant) {
		m, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (*bnpl.Merchant, error) {
			m, err := bnpl.GetMerchant(ctx, tx, cl.Tenant)
			if bnpl.CodeOf(err) == bnpl.CodeMerchantNotFound {
				return nil, nil // not set: listed as missing
			}
			return &m, err
		})
		if err != nil {
			writeError(c, payrollError(err))
			return
		}
		if m != nil {
			j := toBnplMerchantJSON(*m)
			out.Merchant = &j
		}
		missingSetting(&out.Missing, true, m != nil, missingMerchantSettle, http.MethodPut, "/api/bnpl/merchant", "BNPL_SALES")
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) fiSettings(c *gin.Context) {
	if e := noQuery(c); e != nil {
		writeError(c, e)
		return
	}
	cl := callerOf(c)
	out := fiSettingsJSON{OrganizationID: cl.Tenant, Missing: []missingSettingJSON{}}
	var ok bool
	if out.Security, ok = s.securitySection(c); !ok {
		return
	}
	if s.may(cl, settingsFIAccounts) {
		type got struct {
			a  lending.FIAccounts
			ok bool
		}
		a, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) (got, error) {
			a, ok, err := lending.GetFIAccounts(ctx, tx)
			return got{a, ok}, err
		})
		if !ok {
			return
		}
		j := toFIAccountsJSON(a.a, a.ok)
		out.Accounts = &j
	}
	shown := out.Accounts != nil
	missingSetting(&out.Missing, shown, shown && out.Accounts.FundingAccount != nil, missingFIFunding, http.MethodPut, "/api/fi/accounts",
		"LOAN_DISBURSEMENT")
	missingSetting(&out.Missing, shown, shown && out.Accounts.SettlementAccount != nil, missingFISettlement, http.MethodPut, "/api/fi/accounts",
		"LOAN_REMITTANCE")
	c.JSON(http.StatusOK, out)
}

func (s *Server) businessSettings(c *gin.Context) {
	if e := noQuery(c); e != nil {
		writeError(c, e)
		return
	}
	cl := callerOf(c)
	if !businessPath(c) {
		return
	}
	out := businessSettingsJSON{BusinessID: cl.Tenant, Missing: []missingSettingJSON{}}
	err := s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error {
		if s.may(cl, settingsEwa) {
			st, err := ewa.GetSettings(ctx, tx, cl.Tenant)
			if err != nil {
				return err
			}
			j := toEwaSettingsJSON(st)
			out.Ewa = &j
		}
		if s.may(cl, settingsWallet) {
			st, ok, err := wallet.GetSettings(ctx, tx)
			if err != nil {
				return err
			}
			j := toWalletSettingsJSON(st, ok)
			out.Wallet = &j
		}
		if s.may(cl, settingsSavings) {
			st, ok, err := savings.GetSettings(ctx, tx)
			if err != nil {
				return err
			}
			j := toSavingsSettingsJSON(st, ok)
			out.Savings = &j
		}
		if s.may(cl, settingsSecurity) {
			p, err := orgs.SecurityPolicyOf(ctx, tx, cl.Tenant)
			if err != nil {
				return err
			}
			j := toSecurityPolicyJSON(cl.Tenant, p)
			out.Security = &j
		}
		return nil
	})
	if err == nil && (s.may(cl, settingsPayroll) || s.may(cl, settingsAutoLock)) {
		err = s.inTenantBun(c, func(ctx context.Context, tx db.BunTx) error {
			var err error
			if s.may(cl, settingsPayroll) {
				if out.Payroll, err = settingsFamily().effective(ctx, tx); err != nil {
					return err
				}
			}
			if s.may(cl, settingsAutoLock) {
				out.AutoLock, err = autoLockFamily().effective(ctx, tx)
			}
			return err
		})
	}
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	missing := func(shown, set bool, setting, method, path string, features ...string) {
		missingSetting(&out.Missing, shown, set, setting, method, path, features...)
	}
	p, _ := out.Payroll.(payrollSettingsEffectiveJSON)
	missing(out.Payroll != nil, p.PayrollAccount != nil, missingPayrollAccount, http.MethodPost, "/api/payroll/tenant-settings",
		"PAYROLL_DISBURSEMENT", "LOAN_REMITTANCE", "COURT_ORDER_REMITTANCE")
	missing(out.Ewa != nil, out.Ewa != nil && out.Ewa.FundingAccount != nil, missingEwaFunding, http.MethodPut, "/api/ewa/settings", "EWA", "BNPL")
	missing(out.Wallet != nil, out.Wallet != nil && out.Wallet.PoolAccount != nil, missingWalletPool, http.MethodPut, "/api/wallet/settings",
		"WALLET_TRANSFER")
	missing(out.Savings != nil, out.Savings != nil && out.Savings.EscrowAccount != nil, missingSavingsEscrow, http.MethodPut,
		"/api/savings/settings", "SAVINGS")
	c.JSON(http.StatusOK, out)
}
