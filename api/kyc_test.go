package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/sanctions"
)

// kycWorld: a business with an employee, a platform reviewer, uploads, and a small national
// sanctions list (one listed person) so approval can screen.
type kycWorld struct {
	*uploadsFixture
	owner, reviewer, other *apiClient
	tenant, employee       string
}

func newKycWorld(t testing.TB) *kycWorld { return newKycWorldOn(t, newUploadsFixture(t, 0)) }

func newKycWorldOn(t testing.TB, u *uploadsFixture) *kycWorld {
	w := &kycWorld{uploadsFixture: u}
	var res signUpResult
	w.owner, res = u.signUp("owner@kyc.test", "BUSINESS")
	w.tenant = res.Organization.ID
	w.other, _ = u.signUp("owner@kyc-other.test", "BUSINESS")
	w.reviewer = u.platformAdmin("reviewer@kyc.test")
	seedEmployeeCatalogs(t, w.owner)
	rec := w.owner.call(http.MethodPost, "/api/employees", map[string]any{
		"firstName": "Abebe", "lastName": "Kebede", "email": "abebe@kyc.test", "phone": "+251911234567",
		"nationalId": "ET12345678", "department": "Ops", "position": "Clerk", "employmentType": "Full time",
		"paymentFrequency": "Monthly", "hireDate": "2024-01-01", "grossMonthlySalarySantim": 1500000,
		"payoutAccount": map[string]any{"partner": "sandbox", "accountNumber": "1000123456789", "holderName": "Abebe Kebede"},
	})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	w.employee = decode[struct {
		ID string `json:"id"`
	}](t, rec).ID
	ctx := tenancy.WithActor(context.Background(), "system:test")
	_, err := sanctions.Ingest(ctx, u.d.Platform(t), sanctions.National, sanctions.IngestOptions{},
		sanctions.File{Name: "national.csv", Data: []byte("name,aliases,dob,reference\nGirma Wolde Tesfaye,Girma Tesfaye,1970-05-05,ETH-NAT-1\n")})
	require.NoError(t, err)
	return w
}

// upload stores a file of the owner's organization and returns its key.
func (w *kycWorld) upload(name, contentType string, data []byte) string {
	rec := uploadsSend(w.owner, "", uploadsFile(name, contentType, data))
	require.Equal(w.t, http.StatusCreated, rec.Code, rec.Body.String())
	return decode[struct {
		Key string `json:"key"`
	}](w.t, rec).Key
}

func (w *kycWorld) submit(fullName string) (*kycSubmissionJSON, int, string) {
	return w.submitBorn(fullName, "1990-02-03")
}

func (w *kycWorld) submitBorn(fullName, dob string) (*kycSubmissionJSON, int, string) {
	photo := w.upload("photo.png", "image/png", uploadsPNG)
	doc := w.upload("id.pdf", "application/pdf", uploadsPDF)
	rec := w.owner.call(http.MethodPost, "/api/kyc", map[string]any{"employeeId": w.employee, "fullName": fullName,
		"nationalId": "ET12345678", "dateOfBirth": dob, "photoKey": photo,
		"documents": []map[string]any{{"type": "national_id", "uploadKey": doc}}})
	if rec.Code != http.StatusCreated {
		return nil, rec.Code, errCode(rec)
	}
	s := decode[kycSubmissionJSON](w.t, rec)
	return &s, rec.Code, ""
}

func TestKycSubmitReviewApprove(t *testing.T) {
	t.Parallel()
	w := newKycWorld(t)
	s, code, _ := w.submit("Abebe Kebede")
	require.Equal(t, http.StatusCreated, code)
	require.Equal(t, "PENDING", string(s.Status))
	require.Equal(t, "****5678", s.NationalID, "masked to the last 4")
	require.Len(t, s.Documents, 2, "the photo and the document, each with its hash")
	for _, d := range s.Documents {
		require.Len(t, d.SHA256, 64)
	}
	_, code, errc := w.submit("Abebe Kebede")
	require.Equal(t, http.StatusConflict, code)
	require.Equal(t, "KYC_ALREADY_OPEN", errc)

	// Reviewers: queue, claim, approve (screened CLEAR).
	rec := w.reviewer.call(http.MethodGet, "/api/kyc/queue?status=PENDING", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), s.ID)
	rec = w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/approve", nil)
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "KYC_INVALID_TRANSITION", errCode(rec), "claim first")
	rec = w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/claim", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	_, code, errc = w.submit("Abebe Kebede")
	require.Equal(t, http.StatusConflict, code)
	require.Equal(t, "KYC_ALREADY_OPEN", errc, "a claimed submission is the reviewer's")
	rec = w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/request-more-info", map[string]any{"note": "the photo is blurred"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "PENDING", string(decode[kycSubmissionJSON](t, rec).Status))

	// The applicant answers with a new photo: the same submission, amended, back in the queue.
	photo := w.upload("photo2.png", "image/png", append(slices.Clone(uploadsPNG), 0))
	rec = w.owner.call(http.MethodPost, "/api/kyc", map[string]any{"employeeId": w.employee, "fullName": "Abebe Kebede",
		"nationalId": "ET12345678", "dateOfBirth": "1990-02-03", "photoKey": photo,
		"documents": []map[string]any{{"type": "national_id", "uploadKey": s.Documents[1].UploadKey}}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	again := decode[kycSubmissionJSON](t, rec)
	require.Equal(t, s.ID, again.ID)
	require.Equal(t, "PENDING", string(again.Status))
	require.Len(t, again.Documents, 2, "the new photo and the national id")
	require.NotEqual(t, s.Documents[0].SHA256, again.Documents[0].SHA256, "the photo is the new upload")
	require.Equal(t, s.Documents[1], again.Documents[1])
	require.Nil(t, again.Note, "the reviewer's note is answered")
	require.Equal(t, 1, w.tenantCount(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'ResubmitKyc' AND target_id = $1`, s.ID))
	_, code, errc = w.submit("Abebe Kebede")
	require.Equal(t, http.StatusConflict, code)
	require.Equal(t, "KYC_ALREADY_OPEN", errc, "answered once: the next is the reviewer's turn")
	rec = w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/claim", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	rec = w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `"outcome":"CLEAR"`)
	rec = w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/reject", map[string]any{"note": "x"})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "KYC_INVALID_TRANSITION", errCode(rec))

	// Members and other tenants cannot review; the unknown id is 404.
	rec = w.owner.call(http.MethodPost, "/api/kyc/"+s.ID+"/claim", nil)
	require.Equal(t, "PLATFORM_ADMIN_REQUIRED", errCode(rec))
	rec = w.reviewer.call(http.MethodPost, "/api/kyc/kyc_missing/claim", nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
}

func TestKycApprovalBlockedBySanctions(t *testing.T) {
	t.Parallel()
	w := newKycWorld(t)
	s, code, _ := w.submitBorn("Girma Wolde Tesfaye", "1970-05-05")
	require.Equal(t, http.StatusCreated, code)
	require.Equal(t, http.StatusOK, w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/claim", nil).Code)
	rec := w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/approve", nil)
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, "SANCTIONS_BLOCKED", errCode(rec))
	require.Contains(t, rec.Body.String(), "ETH-NAT-1", "the evidence names the listed entry")
	// Nothing else changed: still IN_REVIEW, no approval event; the check is recorded.
	rec = w.reviewer.call(http.MethodGet, "/api/kyc/queue?status=IN_REVIEW", nil)
	require.Contains(t, rec.Body.String(), s.ID)
	var approved, checks int
	ctx := tenancy.WithTenant(context.Background(), w.tenant)
	require.NoError(t, tenancy.InTx(ctx, w.d.App, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM app.outbox WHERE type = 'kyc.approved.v1'),
			(SELECT count(*) FROM app.sanctions_checks WHERE subject_id = $1 AND outcome = 'BLOCK')`, w.employee).Scan(&approved, &checks)
	}))
	require.Zero(t, approved, "no approval event")
	require.Equal(t, 1, checks, "the blocking check is recorded with its evidence")
}

// TestKycApprovalOfAnUnscreenableName: a submission stored before the submit refused names with
// nothing to screen is not approved, and answers 422 KYC_NAME_NOT_SCREENABLE (not 500); it stays
// IN_REVIEW for the reviewer to reject.
func TestKycApprovalOfAnUnscreenableName(t *testing.T) {
	t.Parallel()
	w := newKycWorld(t)
	s, code, _ := w.submit("Abebe Kebede")
	require.Equal(t, http.StatusCreated, code)
	ctx := tenancy.WithTenant(context.Background(), w.tenant)
	require.NoError(t, tenancy.InTx(ctx, w.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.kyc_submissions SET full_name = '-' WHERE id = $1`, s.ID)
		return err
	}))
	require.Equal(t, http.StatusOK, w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/claim", nil).Code)
	refused(t, w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/approve", nil), http.StatusUnprocessableEntity, "KYC_NAME_NOT_SCREENABLE")
	rec := w.reviewer.call(http.MethodGet, "/api/kyc/queue?status=IN_REVIEW", nil)
	require.Contains(t, rec.Body.String(), s.ID)
	rec = w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/reject", map[string]any{"note": "the name on the document is unreadable"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

func TestKycDocumentHashMismatchRefused(t *testing.T) {
	t.Parallel()
	w := newKycWorld(t)
	s, code, _ := w.submit("Abebe Kebede")
	require.Equal(t, http.StatusCreated, code)
	// The stored document changes behind our back.
	doc := s.Documents[1]
	path := filepath.Join(w.root, w.tenant, doc.UploadKey)
	require.NoError(t, os.WriteFile(path, append([]byte("%PDF-1.7\n"), []byte("tampered")...), 0o600))
	require.Equal(t, http.StatusOK, w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/claim", nil).Code)
	rec := w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/approve", nil)
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, "KYC_DOCUMENT_HASH_MISMATCH", errCode(rec))
	// A new submission naming the tampered file is refused at once.
	rec = w.owner.call(http.MethodPost, "/api/kyc", map[string]any{"fullName": "Abebe Kebede", "nationalId": "ET12345678",
		"dateOfBirth": "1990-02-03", "photoKey": s.Documents[0].UploadKey, "documents": []map[string]any{{"type": "national_id", "uploadKey": doc.UploadKey}}})
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, "KYC_DOCUMENT_HASH_MISMATCH", errCode(rec))
}

func TestKycRefusals(t *testing.T) {
	t.Parallel()
	w := newKycWorld(t)
	photo := w.upload("photo.png", "image/png", uploadsPNG)
	base := func() map[string]any {
		return map[string]any{"employeeId": w.employee, "fullName": "Abebe Kebede", "nationalId": "ET12345678",
			"dateOfBirth": "1990-02-03", "photoKey": photo, "documents": []map[string]any{{"type": "national_id", "uploadKey": photo}}}
	}
	for name, tc := range map[string]struct {
		mutate func(map[string]any)
		status int
		code   string
	}{
		"future birth":     {func(m map[string]any) { m["dateOfBirth"] = time.Now().AddDate(1, 0, 0).Format(time.DateOnly) }, 400, "INVALID_REQUEST"},
		"unknown doc type": {func(m map[string]any) { m["documents"] = []map[string]any{{"type": "selfie", "uploadKey": photo}} }, 400, "INVALID_REQUEST"},
		"missing upload": {func(m map[string]any) {
			m["documents"] = []map[string]any{{"type": "passport", "uploadKey": "upl_01234567-89ab-7def-8123-456789abcdef"}}
		}, 400, "KYC_DOCUMENT_NOT_FOUND"},
		"control chars": {func(m map[string]any) { m["fullName"] = "Abebe\x00" }, 400, "INVALID_REQUEST"},
		// Nothing screening could compare (found by an audit: stored, then its approval was 500).
		"no letter":       {func(m map[string]any) { m["fullName"] = "-" }, 400, "INVALID_REQUEST"},
		"Ge'ez wordspace": {func(m map[string]any) { m["fullName"] = "፡፡" }, 400, "INVALID_REQUEST"},
		"client hash": {func(m map[string]any) {
			m["documents"] = []map[string]any{{"type": "passport", "uploadKey": photo, "sha256": "00"}}
		}, 400, "INVALID_REQUEST"},
		"other's employee": {func(m map[string]any) { m["employeeId"] = "emp_nobody" }, 404, "NOT_FOUND"},
	} {
		body := base()
		tc.mutate(body)
		rec := w.owner.hostile(http.MethodPost, "/api/kyc", body)
		require.Equal(t, tc.status, rec.Code, "%s: %s", name, rec.Body.String())
		require.Equal(t, tc.code, errCode(rec), name)
	}
	// Another organization's owner cannot use this organization's uploads or employees.
	rec := w.other.hostile(http.MethodPost, "/api/kyc", base())
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
}

// FuzzKycRoutes: any body or id on the KYC routes, from the owner or a reviewer, answers success
// or 4xx, never 5xx.
func FuzzKycRoutes(f *testing.F) {
	w := newRegistryWorld(f).kycWorld // the registry's lookup route too
	s, _, _ := w.submit("Abebe Kebede")
	routes := w.srv.kycRoutes()
	f.Add(uint8(0), false, "", `{"fullName":"A","nationalId":"1","dateOfBirth":"1990-01-01","photoKey":"upl_x","documents":[]}`)
	f.Add(uint8(3), true, s.ID, "")
	f.Add(uint8(4), true, s.ID, `{"acknowledgeSanctionsReview":true,"note":"\u0000"}`)
	f.Add(uint8(5), true, s.ID, `{"note":"`+strings.Repeat("n", 2000)+`"}`)
	f.Add(uint8(2), true, "", "")
	f.Add(uint8(0), false, "", `{"employeeId":"../x","dateOfBirth":"9999-99-99","documents":[{"type":"passport","uploadKey":"upl_\u202e"}]}`)
	f.Add(uint8(6), true, "x y", "\xff")
	f.Add(uint8(3), false, s.ID, "")
	f.Add(uint8(3), true, "x\u202ey", "")
	f.Add(uint8(8), true, s.ID, "")
	f.Add(uint8(8), false, s.ID, "")
	f.Add(uint8(5), true, s.ID, `{"acknowledgeRegistryCheck":"kycreg_1","note":"seen"}`)
	f.Add(uint8(5), true, s.ID, `{"acknowledgeRegistryCheck":"\u0000","note":""}`)
	f.Add(uint8(5), true, s.ID, `{"acknowledgeRegistryCheck":12,"acknowledgeSanctionsReview":"yes"}`)
	f.Fuzz(func(t *testing.T, which uint8, reviewer bool, id, body string) {
		r := routes[int(which)%len(routes)]
		req := httptest.NewRequest(r.Method, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath = pathOf(r.Path, map[string]string{"id": id}), ""
		if body != "" {
			req.Header.Set("Content-Type", "application/json") // past checkBody, into the handlers
		}
		if reviewer {
			req.AddCookie(w.reviewer.cookie)
		} else {
			req.AddCookie(w.owner.cookie)
		}
		rec := httptest.NewRecorder()
		w.srv.Engine.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %q: %d %s", r.Method, req.URL.Path, rec.Code, rec.Body.String())
		}
	})
}

// GET /api/kyc/<id>/documents: the photo first, then the document, each with its upload record
// and intact while the stored bytes match; a platform admin and the organization's admin read
// it, a plain member who is not its subject is refused, another organization and an unknown id
// get 404, a malformed id 400. A file changed behind the submission's back reads not intact.
func TestKycDocumentsRead(t *testing.T) {
	t.Parallel()
	w := newKycWorld(t)
	s, code, _ := w.submit("Abebe Kebede")
	require.Equal(t, http.StatusCreated, code)
	path := "/api/kyc/" + s.ID + "/documents"

	type docs struct {
		SubmissionID, OrganizationID, Status string
		Documents                            []struct {
			Type, UploadKey, SHA256, FileName, ContentType, SniffedType, UploadedBy, DownloadPath string
			SizeBytes                                                                             int64
			Intact                                                                                bool
		}
	}
	for _, who := range []*apiClient{w.owner, w.reviewer} {
		rec := who.call(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		d := decode[docs](t, rec)
		require.Equal(t, s.ID, d.SubmissionID)
		require.Equal(t, w.tenant, d.OrganizationID)
		require.Equal(t, "PENDING", d.Status)
		require.Len(t, d.Documents, 2)
		require.Equal(t, "photo", d.Documents[0].Type)
		require.Equal(t, "photo.png", d.Documents[0].FileName)
		require.Equal(t, "image/png", d.Documents[0].ContentType)
		require.Equal(t, int64(len(uploadsPNG)), d.Documents[0].SizeBytes)
		require.Equal(t, "national_id", d.Documents[1].Type)
		require.Equal(t, "application/pdf", d.Documents[1].ContentType)
		for i, doc := range d.Documents {
			require.True(t, doc.Intact, doc.Type)
			require.Equal(t, s.Documents[i].SHA256, doc.SHA256)
			require.Equal(t, "/api/uploads/"+w.tenant+"/"+doc.UploadKey, doc.DownloadPath)
		}
	}
	w.addMember(w.tenant, "clerk@kyc.test", orgs.PlainMember)
	clerk := w.signIn("clerk@kyc.test")
	catalogStatus(t, clerk.call(http.MethodGet, path, nil), http.StatusForbidden, "INSUFFICIENT_ROLE")
	catalogStatus(t, w.other.call(http.MethodGet, path, nil), http.StatusNotFound, "NOT_FOUND")
	catalogStatus(t, w.reviewer.call(http.MethodGet, "/api/kyc/kyc_missing/documents", nil), http.StatusNotFound, "NOT_FOUND")
	catalogStatus(t, w.owner.call(http.MethodGet, "/api/kyc/kyc_missing/documents", nil), http.StatusNotFound, "NOT_FOUND")
	catalogStatus(t, w.owner.hostile(http.MethodGet, "/api/kyc/bad%20id/documents", nil), http.StatusBadRequest, "INVALID_REQUEST")

	// The document's bytes change: it reads not intact, the photo still does.
	require.NoError(t, os.WriteFile(filepath.Join(w.root, w.tenant, s.Documents[1].UploadKey), []byte("%PDF-1.7\ntampered"), 0o600))
	d := decode[docs](t, w.reviewer.call(http.MethodGet, path, nil))
	require.True(t, d.Documents[0].Intact)
	require.False(t, d.Documents[1].Intact)
}

// A KYC approval opens the money gates, so it is always a second person's: a platform admin who
// submitted a submission, or whom it verifies (the user linked to its employee), may not claim
// it (403 KYC_SELF_REVIEW, audited DENIED, the submission still PENDING); another reviewer
// does. Found by an audit: an owner who was also a platform admin submitted, claimed and
// approved a KYC alone.
func TestKycNoSelfReview(t *testing.T) {
	t.Parallel()
	w := newKycWorld(t)
	s, code, _ := w.submit("Abebe Kebede")
	require.Equal(t, http.StatusCreated, code)
	ctx := context.Background()
	owner, err := identity.UserByEmail(ctx, w.d.App, "owner@kyc.test")
	require.NoError(t, err)
	require.NoError(t, identity.MakePlatformAdmin(ctx, w.d.Platform(t), owner.ID))
	requireStatus(t, w.owner.call(http.MethodPost, "/api/kyc/"+s.ID+"/claim", nil), http.StatusForbidden, "KYC_SELF_REVIEW")

	// The employee's own user, a platform admin too.
	self := w.platformAdmin("abebe-admin@kyc.test")
	me, err := identity.UserByEmail(ctx, w.d.App, "abebe-admin@kyc.test")
	require.NoError(t, err)
	tctx := tenancy.WithTenant(ctx, w.tenant)
	require.NoError(t, tenancy.InTx(tctx, w.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(tctx, `UPDATE app.employees SET user_id = $1 WHERE id = $2`, me.ID, w.employee)
		return err
	}))
	requireStatus(t, self.call(http.MethodPost, "/api/kyc/"+s.ID+"/claim", nil), http.StatusForbidden, "KYC_SELF_REVIEW")
	var denied int
	require.NoError(t, db.InTenantTx(ctx, w.d.App, w.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE action = 'ClaimKyc' AND outcome = 'DENIED'`).Scan(&denied)
	}))
	require.Equal(t, 2, denied)

	rec := w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/claim", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// TestKycVerifiesTheEmployeeOnRecord: a KYC verifies the employee the money is paid to. Found by
// an audit: a submission for an employee recorded under a listed name, made under another name,
// was screened under that other name only and approved CLEAR, and the gate then passed the
// listed person's advances. Approval screens the employee's recorded name too (the worse answer
// decides), and a submission whose national id is not the employee's is refused: it is someone
// else's identity.
func TestKycVerifiesTheEmployeeOnRecord(t *testing.T) {
	t.Parallel()
	w := newKycWorld(t)
	ctx := tenancy.WithTenant(context.Background(), w.tenant)
	require.NoError(t, tenancy.InTx(ctx, w.d.App, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE app.employees SET first_name = 'Girma', last_name = 'Wolde Tesfaye',
			full_name = 'Girma Wolde Tesfaye' WHERE id = $1`, w.employee)
		return err
	}))

	s, code, _ := w.submitBorn("Abebe Kebede", "1970-05-05")
	require.Equal(t, http.StatusCreated, code)
	require.Equal(t, http.StatusOK, w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/claim", nil).Code)
	rec := w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/approve", nil)
	requireStatus(t, rec, http.StatusConflict, "SANCTIONS_BLOCKED")
	require.Contains(t, rec.Body.String(), "ETH-NAT-1")
	var name string
	require.NoError(t, tenancy.InTx(ctx, w.d.App, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT name_screened FROM app.sanctions_checks WHERE subject_id = $1 ORDER BY seq DESC LIMIT 1`,
			w.employee).Scan(&name)
	}))
	require.Equal(t, "Girma Wolde Tesfaye", name, "the check records the name that decided it")

	// Someone else's national id: refused, nothing stored.
	photo := w.upload("photo.png", "image/png", uploadsPNG)
	doc := w.upload("id.pdf", "application/pdf", uploadsPDF)
	rec = w.owner.call(http.MethodPost, "/api/kyc", map[string]any{"employeeId": w.employee, "fullName": "Girma Wolde Tesfaye",
		"nationalId": "ET87654321", "dateOfBirth": "1970-05-05", "photoKey": photo,
		"documents": []map[string]any{{"type": "national_id", "uploadKey": doc}}})
	requireStatus(t, rec, http.StatusUnprocessableEntity, "KYC_SUBJECT_MISMATCH")
	var submissions int
	require.NoError(t, tenancy.InTx(ctx, w.d.App, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.kyc_submissions WHERE subject_id = $1`, w.employee).Scan(&submissions)
	}))
	require.Equal(t, 1, submissions)
}

// TestKycDocumentsAreTheirSubjects: the photo and documents a KYC submission holds are read by
// the organization's admins, the platform's reviewers and the parties to the submission, not by
// any other member who learns a key; a member's other uploads stay the members'.
func TestKycDocumentsAreTheirSubjects(t *testing.T) {
	t.Parallel()
	w := newKycWorld(t)
	s, code, _ := w.submit("Abebe Kebede")
	require.Equal(t, http.StatusCreated, code)
	w.addMember(w.tenant, "kyc-docs-member@example.com", orgs.PlainMember)
	member := w.signIn("kyc-docs-member@example.com")
	w.addMember(w.tenant, "kyc-docs-admin@example.com", orgs.Admin)
	admin := w.signIn("kyc-docs-admin@example.com")
	for _, d := range s.Documents {
		path := "/api/uploads/" + w.tenant + "/" + d.UploadKey
		for _, reader := range []*apiClient{w.owner, admin, w.reviewer} {
			require.Equal(t, http.StatusOK, reader.call(http.MethodGet, path, nil).Code, d.Type)
		}
		requireStatus(t, member.call(http.MethodGet, path, nil), http.StatusNotFound, "UPLOAD_NOT_FOUND")
	}
	// The member's own KYC, for themselves: theirs to read, not another member's.
	photo := uploadsSend(member, "", uploadsFile("me.png", "image/png", uploadsPNG))
	require.Equal(t, http.StatusCreated, photo.Code, photo.Body.String())
	doc := uploadsSend(member, "", uploadsFile("me.pdf", "application/pdf", uploadsPDF))
	require.Equal(t, http.StatusCreated, doc.Code, doc.Body.String())
	photoKey, docKey := decode[uploadJSON](t, photo).Key, decode[uploadJSON](t, doc).Key
	rec := member.call(http.MethodPost, "/api/kyc", map[string]any{"fullName": "Kidist Alemu", "nationalId": "ET87654321",
		"dateOfBirth": "1991-04-05", "photoKey": photoKey, "documents": []map[string]any{{"type": "national_id", "uploadKey": docKey}}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	w.addMember(w.tenant, "kyc-docs-other@example.com", orgs.PlainMember)
	other := w.signIn("kyc-docs-other@example.com")
	require.Equal(t, http.StatusOK, member.call(http.MethodGet, "/api/uploads/"+w.tenant+"/"+photoKey, nil).Code)
	requireStatus(t, other.call(http.MethodGet, "/api/uploads/"+w.tenant+"/"+photoKey, nil), http.StatusNotFound, "UPLOAD_NOT_FOUND")
	// An upload no submission holds is any member's, as before.
	free := uploadsSend(member, "", uploadsFile("notes.pdf", "application/pdf", uploadsPDF))
	require.Equal(t, http.StatusCreated, free.Code, free.Body.String())
	require.Equal(t, http.StatusOK, other.call(http.MethodGet, "/api/uploads/"+w.tenant+"/"+decode[uploadJSON](t, free).Key, nil).Code)
}
