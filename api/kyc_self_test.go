package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// TestEmployeeSubmitsOwnKyc: a linked employee — no member of any organization — completes the
// onboarding checklist's identity step alone. The step's action names POST /api/kyc with their
// employee id; they upload the photo and the document with POST /api/uploads?employeeId= (files
// of the employer's tenant, audited as the employee's) and submit with that id: the submission
// is theirs, and the checklist shows it PENDING. Sent back by the reviewer, they answer it while
// another organization they are a member of is active: the files still go to the employer's
// tenant, and the same submission is amended. Another employee's id is 404 EMPLOYEE_NOT_LINKED on
// the upload with nothing stored, employeeId beside tenantId or malformed is 400, and a submit
// naming another employee is refused with no submission written; past 30 uploads an hour the
// employee's next is 429 with nothing stored.
func TestEmployeeSubmitsOwnKyc(t *testing.T) {
	t.Parallel()
	w := newKycWorld(t)
	const myEmail = "self-kyc@emp.test"
	me := w.linkEmployeeUser(t, myEmail)
	ctx := tenancy.WithActor(context.Background(), "system:test")
	count := func(tenant, sql string, args ...any) (n int) {
		t.Helper()
		require.NoError(t, crosstenant.Tx(ctx, w.d.Platform(t), "test: count", func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, sql, append([]any{tenant}, args...)...).Scan(&n)
		}))
		return n
	}
	uploadsOf := func(tenant string) int {
		return count(tenant, `SELECT count(*) FROM app.uploads WHERE tenant_id = $1`)
	}
	submissionsOf := func(tenant, subject string) int {
		return count(tenant, `SELECT count(*) FROM app.kyc_submissions WHERE tenant_id = $1 AND subject_id = $2`, subject)
	}
	identityStep := func() employeeOnboardingStepJSON {
		t.Helper()
		rec := me.call(http.MethodGet, "/api/employee/onboarding", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return onboardingSteps(t, decode[employeeOnboardingJSON](t, rec))["identity_verification"]
	}
	upload := func(query, name, contentType string, data []byte) *httptest.ResponseRecorder {
		t.Helper()
		return uploadsSend(me, query, uploadsFile(name, contentType, data))
	}
	keyOf := func(rec *httptest.ResponseRecorder) string {
		t.Helper()
		require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		up := decode[uploadJSON](t, rec)
		require.Equal(t, w.tenant, up.TenantID, "the employer's file")
		return up.Key
	}

	// The step's action: the employee's own submission, named.
	st := identityStep()
	require.Equal(t, "ACTION_REQUIRED", st.State)
	require.Equal(t, &onboardingActionJSON{Method: http.MethodPost, Path: "/api/kyc", Body: map[string]string{"employeeId": w.employee}}, st.Action)

	// Refused uploads store nothing: no organization to upload for, another employee's row,
	// employeeId with tenantId, twice, or malformed.
	otherEmp := dashFixtureEmployee(t, w.d, w.tenant, "ACTIVE", "")
	before := uploadsOf(w.tenant)
	requireStatus(t, upload("", "photo.png", "image/png", uploadsPNG), http.StatusForbidden, "TENANT_CONTEXT_MISSING")
	requireStatus(t, upload("?employeeId="+otherEmp, "photo.png", "image/png", uploadsPNG), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	requireStatus(t, upload("?employeeId=emp_nobody", "photo.png", "image/png", uploadsPNG), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	for _, q := range []string{"?employeeId=" + w.employee + "&tenantId=" + w.tenant, "?employeeId=" + w.employee + "&employeeId=" + w.employee,
		"?employeeId=%00", "?employeeId=", "?employeeId=a%20b"} {
		b, ct := uploadsMultipart(uploadsFile("photo.png", "image/png", uploadsPNG))
		requireStatus(t, me.hostile(http.MethodPost, "/api/uploads"+q, b, "Content-Type", ct), http.StatusBadRequest, "INVALID_REQUEST")
	}
	require.Equal(t, before, uploadsOf(w.tenant), "no file recorded for a refused upload")

	// The employee's own files, then their own submission.
	photo := keyOf(upload("?employeeId="+w.employee, "photo.png", "image/png", uploadsPNG))
	doc := keyOf(upload("?employeeId="+w.employee, "id.pdf", "application/pdf", uploadsPDF))
	require.Equal(t, 1, count(w.tenant, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'UploadFile'
		AND target_id = $2 AND outcome = 'SUCCESS' AND details->>'employee' = 'true' AND details->>'platform' = 'false'`, photo))
	body := func(employee, photo, doc string) map[string]any {
		return map[string]any{"employeeId": employee, "fullName": "Abebe Kebede", "nationalId": "ET12345678", "dateOfBirth": "1990-02-03",
			"photoKey": photo, "documents": []map[string]any{{"type": "national_id", "uploadKey": doc}}}
	}
	rec := me.call(http.MethodPost, "/api/kyc", body(otherEmp, photo, doc))
	require.GreaterOrEqual(t, rec.Code, 400, rec.Body.String())
	require.Less(t, rec.Code, 500, rec.Body.String())
	require.Zero(t, submissionsOf(w.tenant, otherEmp), "no submission for another employee")
	rec = me.call(http.MethodPost, "/api/kyc", body(w.employee, photo, doc))
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	sub := decode[kycSubmissionJSON](t, rec)
	require.Equal(t, [3]string{"EMPLOYEE", w.employee, "PENDING"}, [3]string{string(sub.SubjectType), sub.SubjectID, string(sub.Status)})
	st = identityStep()
	require.Equal(t, [2]string{"PENDING", "PENDING"}, [2]string{st.State, *st.Status})
	require.Nil(t, st.Action)

	// Sent back; answered while a member of another organization, which is active.
	require.Equal(t, http.StatusOK, w.reviewer.call(http.MethodPost, "/api/kyc/"+sub.ID+"/claim", nil).Code)
	rec = w.reviewer.call(http.MethodPost, "/api/kyc/"+sub.ID+"/request-more-info", map[string]any{"note": "the photo is blurred"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	_, elsewhere := w.signUp("owner@kyc-self-elsewhere.test", "BUSINESS")
	var myID string
	require.NoError(t, w.d.Platform(t).QueryRow(ctx, `SELECT id FROM app.users WHERE email = $1`, myEmail).Scan(&myID))
	require.NoError(t, tenancy.InTx(tenancy.WithTenant(ctx, elsewhere.Organization.ID), w.d.App, func(tx pgx.Tx) error {
		_, err := orgs.AddMember(ctx, tx, elsewhere.Organization.ID, orgs.NewMember{UserID: myID, Role: orgs.PlainMember, Status: orgs.Active})
		return err
	}))
	rec = me.call(http.MethodPost, "/api/auth/organization/set-active", map[string]any{"organizationId": elsewhere.Organization.ID})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	st = identityStep()
	require.Equal(t, "ACTION_REQUIRED", st.State)
	require.Equal(t, map[string]string{"employeeId": w.employee}, st.Action.Body)
	elsewhereFiles := uploadsOf(elsewhere.Organization.ID)
	photo = keyOf(upload("?employeeId="+w.employee, "photo.png", "image/png", uploadsPNG))
	require.Equal(t, elsewhereFiles, uploadsOf(elsewhere.Organization.ID), "not the active organization's file")
	rec = me.call(http.MethodPost, "/api/kyc", body(w.employee, photo, doc))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	again := decode[kycSubmissionJSON](t, rec)
	require.Equal(t, [3]string{sub.ID, "PENDING", photo}, [3]string{again.ID, string(again.Status), again.PhotoKey}, "the same submission, amended")
	require.Zero(t, count(elsewhere.Organization.ID, `SELECT count(*) FROM app.kyc_submissions WHERE tenant_id = $1`), "nothing in the active organization")
	st = identityStep()
	require.Equal(t, [2]string{"PENDING", "PENDING"}, [2]string{st.State, *st.Status})

	// An employee's own uploads are bounded: 30 an hour (three so far), then 429 with nothing stored.
	for range 27 {
		keyOf(upload("?employeeId="+w.employee, "photo.png", "image/png", uploadsPNG))
	}
	files := uploadsOf(w.tenant)
	rec = upload("?employeeId="+w.employee, "photo.png", "image/png", uploadsPNG)
	requireStatus(t, rec, http.StatusTooManyRequests, "RATE_LIMITED")
	require.NotEmpty(t, rec.Header().Get("Retry-After"))
	require.Equal(t, files, uploadsOf(w.tenant), "nothing stored past the limit")
}
