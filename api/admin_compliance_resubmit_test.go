package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAdminComplianceKYBResubmitted: a business whose KYB review was REJECTED stays REJECTED when
// new documents are filed for it (nothing but the next verify-kyc moves the review), so the KYB
// queue lists it again — state REJECTED, reason RESUBMITTED, since the first document filed after
// the rejection — until a reviewer decides; a rejected business with nothing filed since is not
// waiting on the platform. All through the routes.
func TestAdminComplianceKYBResubmitted(t *testing.T) {
	t.Parallel()
	w := newBizWorld(t)
	f := w.f
	docPath := func(typ string) string { return "/api/business/" + w.a + "/documents/" + typ }
	file := func(typ string) time.Time {
		t.Helper()
		at := f.now().UTC()
		rec := w.platform.call(http.MethodPut, docPath(typ), bizUploadedPDF(t, w.platform, w.a))
		require.Contains(t, []int{http.StatusCreated, http.StatusOK}, rec.Code, rec.Body.String())
		return at
	}
	decide := func(status string) {
		t.Helper()
		rec := w.platform.call(http.MethodPut, "/api/business/"+w.a+"/verify-kyc", map[string]any{"status": status, "note": "reviewed"})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
	waiting := func() *complianceItemJSON {
		t.Helper()
		rec := w.platform.call(http.MethodGet, "/api/admin/compliance?queue=kyb&limit=50", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		q := decode[complianceJSON](t, rec).Queues[0]
		for _, it := range q.Items {
			if it.ID == w.a {
				return &it
			}
		}
		return nil
	}
	reason := func(it *complianceItemJSON) string {
		require.NotNil(t, it.Reason)
		return *it.Reason
	}
	routes := []complianceRouteJSON{{http.MethodPut, "/api/business/" + w.a + "/verify-kyc"}}

	// Its first review: PENDING with a document on file.
	first := file("owner_id")
	it := waiting()
	require.NotNil(t, it)
	require.Equal(t, [3]any{"PENDING", "SUBMITTED", first}, [3]any{it.State, reason(it), it.Since})

	// Rejected: off the queue, and nothing filed since keeps it off.
	f.advance(time.Hour)
	decide("REJECTED")
	require.Nil(t, waiting(), "a rejection with nothing filed since waits on the business")
	f.advance(time.Hour)
	require.Nil(t, waiting())

	// New documents filed: still REJECTED (filing decides nothing), and on the queue again since
	// the first of them; a later one does not move its place.
	f.advance(time.Hour)
	resubmitted := file("business_license")
	f.advance(time.Hour)
	file("tin_certificate")
	it = waiting()
	require.NotNil(t, it, "a rejected business with documents filed since waits on a reviewer")
	require.Equal(t, [3]any{"REJECTED", "RESUBMITTED", resubmitted}, [3]any{it.State, reason(it), it.Since})
	require.Equal(t, []string{"memorandum_of_association"}, it.MissingDocuments)
	require.Equal(t, routes, it.DecisionRoutes)
	rec := w.platform.call(http.MethodGet, "/api/business/"+w.a, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `"REJECTED"`, "filing moved nothing")

	// A decision takes it off; another rejection and a new filing put it back, since that filing.
	decide("REJECTED")
	require.Nil(t, waiting())
	f.advance(time.Hour)
	again := file("memorandum_of_association")
	it = waiting()
	require.NotNil(t, it)
	require.Equal(t, [3]any{"REJECTED", "RESUBMITTED", again}, [3]any{it.State, reason(it), it.Since})
	require.Equal(t, []string{}, it.MissingDocuments)

	// Verified: no longer waiting, and a document filed after it is no resubmission.
	decide("VERIFIED")
	require.Nil(t, waiting())
	f.advance(time.Hour)
	file("owner_id")
	require.Nil(t, waiting(), "a verified business's new document is not a resubmission")
}
