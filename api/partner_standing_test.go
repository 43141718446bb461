package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestPartnerReviewRoutes walks an FI's and a merchant's KYB review and status through the
// platform's routes: verifying needs the kind's documents, another kind's id is 404, and each
// change is audited.
func TestPartnerReviewRoutes(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	_, fiRes := w.f.signUp("owner@review-fi.test", "FI")
	_, shopRes := w.f.signUp("owner@review-shop.test", "MERCHANT")
	for _, c := range []struct {
		prefix, id string
		docs       []string
	}{
		{"/api/financial-institutions/", fiRes.Organization.ID, []string{"banking_license", "certificate_of_incorporation", "director_id", "tin_certificate"}},
		{"/api/merchants/", shopRes.Organization.ID, []string{"owner_id", "tin_certificate", "trade_license"}},
	} {
		base := c.prefix + c.id
		requireStatus(t, w.platform.call(http.MethodPut, base+"/verify-kyc", map[string]any{"status": "VERIFIED"}), http.StatusConflict, "KYC_DOCUMENTS_MISSING")
		requireStatus(t, w.owner.call(http.MethodPut, base+"/verify-kyc", map[string]any{"status": "VERIFIED"}), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
		// A business's id on the partner routes, and a partner's on the business's: none.
		requireStatus(t, w.platform.call(http.MethodPut, c.prefix+w.a+"/status", map[string]any{"status": "SUSPENDED"}), http.StatusNotFound, "NOT_FOUND")
		requireStatus(t, w.platform.call(http.MethodPut, "/api/business/"+c.id+"/status", map[string]any{"status": "SUSPENDED"}), http.StatusNotFound, "NOT_FOUND")
		for _, dt := range c.docs {
			rec := w.platform.call(http.MethodPut, base+"/documents/"+dt, bizUploadedPDF(t, w.platform, c.id))
			require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		}
		rec := w.platform.call(http.MethodPut, base+"/verify-kyc", map[string]any{"status": "VERIFIED"})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		got := decode[partnerJSON](t, rec)
		require.Equal(t, c.id, got.ID)
		require.Equal(t, "VERIFIED", got.KYCStatus)
		require.Equal(t, "ACTIVE", got.Status)

		rec = w.platform.call(http.MethodPut, base+"/status", map[string]any{"status": "SUSPENDED"})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		require.Equal(t, "SUSPENDED", decode[partnerJSON](t, rec).Status)
		for _, body := range []string{`{"status":"DELETED"}`, `{"status":"suspended"}`, `{}`, `{"status":"ACTIVE","x":1}`} {
			require.Equal(t, http.StatusBadRequest, w.platform.hostile(http.MethodPut, base+"/status", body).Code, body)
		}
		require.Equal(t, 1, bizAudits(t, w.f.d, c.id, actionVerifyPartnerKYC, "SUCCESS", bizUserID(t, w.platform)))
		require.Equal(t, 1, bizAudits(t, w.f.d, c.id, actionVerifyPartnerKYC, "DENIED", bizUserID(t, w.platform)))
		require.Equal(t, 1, bizAudits(t, w.f.d, c.id, actionSetPartnerStatus, "SUCCESS", bizUserID(t, w.platform)))
	}
}

// TestLenderStanding: an FI's products are on offer, and its loans are quoted, opted in to and
// paid out, only while it is KYB-verified and not suspended; an opt-in made before stays visible.
func TestLenderStanding(t *testing.T) {
	t.Parallel()
	w := newLendingWorld(t)
	platform := w.platformAdmin("platform@lender-standing.test")
	unverified, res := w.signUp("owner@unverified-lender.test", "FI")
	unverifiedID := res.Organization.ID
	hidden := w.product(unverified, "Unverified loan")
	p := w.product(w.fi, "Salary loan")

	// Unverified: not on offer, not opted in to.
	offered := decode[loanProductListJSON](t, w.biz.call(http.MethodGet, "/api/lending/products?fiPartnerId="+unverifiedID, nil))
	require.Empty(t, offered.Items)
	requireStatus(t, w.biz.call(http.MethodGet, "/api/lending/products/"+hidden.ID, nil), http.StatusNotFound, "LOAN_PRODUCT_NOT_FOUND")
	requireStatus(t, w.biz.call(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": hidden.ID}), http.StatusNotFound, "LOAN_PRODUCT_NOT_FOUND")

	rec := w.biz.call(http.MethodPost, "/api/lending/product-opt-ins", map[string]any{"productId": p.ID})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	quote := map[string]any{"employeeId": w.employee, "productId": p.ID, "amountSantim": 5_000_000, "termMonths": 12}
	require.Equal(t, http.StatusOK, w.biz.call(http.MethodPost, "/api/loans/quote", quote).Code)

	// Suspended: off the offered list; the opted-in product is still readable, its quote refused.
	requireStatus(t, platform.call(http.MethodPut, "/api/financial-institutions/"+w.fiID+"/status", map[string]any{"status": "SUSPENDED"}), http.StatusOK, "")
	offered = decode[loanProductListJSON](t, w.biz.call(http.MethodGet, "/api/lending/products?fiPartnerId="+w.fiID, nil))
	require.Empty(t, offered.Items)
	require.Equal(t, p.ID, decode[loanProductJSON](t, w.biz.call(http.MethodGet, "/api/lending/products/"+p.ID, nil)).ID)
	requireStatus(t, w.biz.call(http.MethodPost, "/api/loans/quote", quote), http.StatusConflict, "LOAN_FI_NOT_AVAILABLE")
	loans := w.tenantCount(w.bizID, `SELECT count(*) FROM app.loans`)
	requireStatus(t, w.biz.call(http.MethodPost, "/api/loans", quote, "Idempotency-Key", loanKey()), http.StatusConflict, "LOAN_FI_NOT_AVAILABLE")
	require.Equal(t, loans, w.tenantCount(w.bizID, `SELECT count(*) FROM app.loans`), "a refused origination writes no loan")

	// Active again: on offer and quoted.
	requireStatus(t, platform.call(http.MethodPut, "/api/financial-institutions/"+w.fiID+"/status", map[string]any{"status": "ACTIVE"}), http.StatusOK, "")
	require.Len(t, decode[loanProductListJSON](t, w.biz.call(http.MethodGet, "/api/lending/products?fiPartnerId="+w.fiID, nil)).Items, 1)
	require.Equal(t, http.StatusOK, w.biz.call(http.MethodPost, "/api/loans/quote", quote).Code)
}

// TestMerchantStanding: no BNPL agreement is quoted or made with a suspended merchant; an
// agreement made before is still collected.
func TestMerchantStanding(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	quote := map[string]any{"employeeId": s.employee, "merchantId": s.merchantID, "purchaseSantim": 120_000, "instalments": 3}
	require.Equal(t, http.StatusOK, s.owner.call(http.MethodPost, "/api/bnpl/quotes", quote).Code)
	before := s.activeBnplAgreement(t, "standing-1")

	requireStatus(t, s.reviewer.call(http.MethodPut, "/api/merchants/"+s.merchantID+"/status", map[string]any{"status": "SUSPENDED"}), http.StatusOK, "")
	requireStatus(t, s.owner.call(http.MethodPost, "/api/bnpl/quotes", quote), http.StatusConflict, "BNPL_MERCHANT_NOT_AVAILABLE")
	n := s.count(t, `SELECT count(*) FROM app.bnpl_agreements WHERE tenant_id = $1`, s.tenant)
	requireStatus(t, s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(120_000, 3, testkit.Unique("ref")),
		"Idempotency-Key", testkit.Unique("bnpl")), http.StatusConflict, "BNPL_MERCHANT_NOT_AVAILABLE")
	require.Equal(t, n, s.count(t, `SELECT count(*) FROM app.bnpl_agreements WHERE tenant_id = $1`, s.tenant), "a refused agreement stores nothing")

	// What was sold before is still collected.
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+before.ID+"/installments/0/collect", nil, "Idempotency-Key", testkit.Unique("collect"))
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, rec.Code, rec.Body.String())
}
