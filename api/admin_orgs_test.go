package api

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type orgDirectoryPageJSON struct {
	Items      []orgDirectoryEntryJSON `json:"items"`
	NextCursor *string                 `json:"nextCursor"`
}

// TestOrgDirectory: a platform admin lists each kind's organizations newest first, with their
// active members and KYB documents on file, narrowed by status, KYB state and a part of the name
// (any case, any script), paged; the read is audited as a cross-tenant access; everyone else is
// refused, and bad queries are 400 naming the field.
func TestOrgDirectory(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	f := w.f
	coffee := bizCreate(t, w.platform, bizFullProfile) // "Abyssinia Coffee", no members
	_, lender := f.signUpPartner("lender@fi.example", "FI")
	_, shop := f.signUp("shop@merchant.example", "MERCHANT")
	rec := w.platform.call(http.MethodPut, "/api/business/"+w.b+"/status", map[string]any{"status": "SUSPENDED"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = w.platform.call(http.MethodPut, "/api/business/"+w.a+"/documents/owner_id", bizUploadedPDF(t, w.platform, w.a))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	rec = w.platform.call(http.MethodPut, "/api/business/"+w.a+"/verify-kyc", map[string]any{"status": "REJECTED", "note": "blurry licence"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	list := func(path, query string) orgDirectoryPageJSON {
		t.Helper()
		rec := w.platform.call(http.MethodGet, path+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[orgDirectoryPageJSON](t, rec)
	}
	ids := func(p orgDirectoryPageJSON) []string {
		out := []string{}
		for _, e := range p.Items {
			out = append(out, e.ID)
		}
		return out
	}

	// Every business, newest first; each with its active members and documents.
	all := list("/api/admin/businesses", "")
	require.Equal(t, []string{coffee.ID, w.b, w.a}, ids(all))
	require.Nil(t, all.NextCursor)
	byID := map[string]orgDirectoryEntryJSON{}
	for _, e := range all.Items {
		byID[e.ID] = e
		require.Equal(t, "BUSINESS", e.Kind)
	}
	require.Equal(t, [4]any{"ACTIVE", "REJECTED", int64(3), int64(1)},
		[4]any{byID[w.a].Status, byID[w.a].KYCStatus, byID[w.a].ActiveMembers, byID[w.a].KYCDocuments}, "owner, admin, member; one document")
	require.NotNil(t, byID[w.a].KYCReviewedAt)
	require.Equal(t, [4]any{"SUSPENDED", "PENDING", int64(1), int64(0)},
		[4]any{byID[w.b].Status, byID[w.b].KYCStatus, byID[w.b].ActiveMembers, byID[w.b].KYCDocuments})
	require.Nil(t, byID[w.b].KYCReviewedAt)
	require.Equal(t, [3]any{"Abyssinia Coffee", "ACTIVE", int64(0)}, [3]any{byID[coffee.ID].Name, byID[coffee.ID].Status, byID[coffee.ID].ActiveMembers})

	// Filters, alone and together; the name in any case, surrounding spaces trimmed.
	require.Equal(t, []string{w.b}, ids(list("/api/admin/businesses", "?status=SUSPENDED")))
	require.Equal(t, []string{w.a}, ids(list("/api/admin/businesses", "?kycStatus=REJECTED")))
	require.Equal(t, []string{coffee.ID, w.b}, ids(list("/api/admin/businesses", "?kycStatus=PENDING")))
	require.Equal(t, []string{coffee.ID}, ids(list("/api/admin/businesses", "?name="+url.QueryEscape(" abyssinia COFFEE "))))
	require.Equal(t, []string{w.b, w.a}, ids(list("/api/admin/businesses", "?name=OWNER%40")))
	require.Empty(t, ids(list("/api/admin/businesses", "?status=SUSPENDED&kycStatus=REJECTED")))
	require.Empty(t, ids(list("/api/admin/businesses", "?name="+url.QueryEscape("%"))), "% is no wildcard")
	require.Empty(t, ids(list("/api/admin/businesses", "?name="+url.QueryEscape("ቡና"))))
	amharic := bizCreate(t, w.platform, map[string]any{"name": "የአቢሲኒያ ቡና አክሲዮን ማህበር"})
	require.Equal(t, []string{amharic.ID}, ids(list("/api/admin/businesses", "?name="+url.QueryEscape("ቡና"))))

	// Pages of two, each business once.
	p := list("/api/admin/businesses", "?limit=2")
	require.Equal(t, []string{amharic.ID, coffee.ID}, ids(p))
	require.NotNil(t, p.NextCursor)
	p = list("/api/admin/businesses", "?limit=2&cursor="+*p.NextCursor)
	require.Equal(t, []string{w.b, w.a}, ids(p))
	require.Nil(t, p.NextCursor)

	// The other kinds have their own lists.
	fis := list("/api/admin/financial-institutions", "")
	require.Equal(t, []string{lender.Organization.ID}, ids(fis))
	require.Equal(t, [3]any{"FI", "VERIFIED", int64(1)}, [3]any{fis.Items[0].Kind, fis.Items[0].KYCStatus, fis.Items[0].ActiveMembers})
	require.Equal(t, []string{shop.Organization.ID}, ids(list("/api/admin/merchants", "")))
	require.Empty(t, ids(list("/api/admin/merchants", "?kycStatus=VERIFIED")))

	// Each read is a cross-tenant access, audited with the admin and the route.
	platformID := bizUserID(t, w.platform)
	before := bizAudits(t, f.d, "*", "CrossTenantAccess", "SUCCESS", platformID)
	list("/api/admin/financial-institutions", "")
	require.Equal(t, before+1, bizAudits(t, f.d, "*", "CrossTenantAccess", "SUCCESS", platformID))

	// Only platform admins.
	for _, path := range []string{"/api/admin/businesses", "/api/admin/financial-institutions", "/api/admin/merchants"} {
		for _, a := range []*apiClient{w.owner, w.admin, w.member} {
			requireStatus(t, a.call(http.MethodGet, path, nil), http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED")
		}
		requireStatus(t, w.anon.call(http.MethodGet, path, nil), http.StatusUnauthorized, "UNAUTHENTICATED")
	}

	// Bad queries: 400 naming the field.
	for q, fieldName := range map[string]string{
		"?status=PAUSED":                  "status",
		"?status=ACTIVE&status=SUSPENDED": "status",
		"?kycStatus=pending":              "kycStatus",
		"?name=":                          "name",
		"?name=%20%20":                    "name",
		"?name=a%00b":                     "name",
		"?name=%E2%80%8Bacme":             "name",
		"?name=%FF":                       "name",
		"?name=" + url.QueryEscape(strings.Repeat("ሀ", 65)): "name",
		"?limit=0":      "limit",
		"?cursor=a%20b": "cursor",
		"?kind=FI":      "kind",
	} {
		rec := w.platform.hostile(http.MethodGet, "/api/admin/businesses"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
		body := decodeErr(t, rec)
		require.Equal(t, "INVALID_REQUEST", body.Error.Code, q)
		require.JSONEq(t, fmt.Sprintf(`{"field":%q}`, fieldName), string(body.Error.Details), q)
	}
	// The bound itself is allowed.
	require.Empty(t, ids(list("/api/admin/businesses", "?name="+url.QueryEscape(strings.Repeat("ሀ", 64)))))
}
