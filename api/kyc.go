package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/logging"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/sanctions"
	"github.com/wagerail/wagerail/internal/uploads"
)

// KYC: a submission names its subject (an employee of the organization, or the caller), the full
// name sanctions screening needs, the national id (masked to its last 4 in every answer), the
// date of birth, a photo and documents — each an upload of the same organization, bound to the
// SHA-256 its content has when submitted and checked again at approval. Reviewers are platform
// admins: claim, then approve (which screens the name first), reject, or ask for more information.

func (s *Server) kycRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/api/kyc", Auth: Session, Summary: "Submit KYC for yourself or (admins) an employee", Handler: s.submitKyc},
		{Method: http.MethodGet, Path: "/api/kyc/status", Auth: Session, Summary: "Your own KYC state", Handler: s.kycStatus},
		{Method: http.MethodGet, Path: "/api/kyc/queue", Auth: Platform, Summary: "Submissions waiting for a reviewer", Handler: s.kycQueue},
		{Method: http.MethodGet, Path: "/api/kyc/:id/documents", Auth: Session, Summary: "A submission's documents, their upload records and whether each is intact", Handler: s.kycDocuments},
		{Method: http.MethodPost, Path: "/api/kyc/:id/claim", Auth: Platform, Summary: "Claim a submission for review", Handler: s.kycMove(kyc.Claim), Body: BodyNone},
		{Method: http.MethodPost, Path: "/api/kyc/:id/approve", Auth: Platform, Summary: "Approve a claimed submission (screens the name first)", Handler: s.approveKyc, Body: BodyOptionalJSON},
		{Method: http.MethodPost, Path: "/api/kyc/:id/reject", Auth: Platform, Summary: "Reject a claimed submission (terminal)", Handler: s.kycMove(kyc.Reject)},
		{Method: http.MethodPost, Path: "/api/kyc/:id/request-more-info", Auth: Platform, Summary: "Send a claimed submission back to the applicant with a note", Handler: s.kycMove(kyc.RequestMoreInfo)},
		{Method: http.MethodPost, Path: "/api/kyc/:id/registry-check", Auth: Platform, Summary: "Look an open submission's national id up in the registry again", Handler: s.kycRegistryCheck, Body: BodyNone},
	}
}

// kycDocTypes are the document types a submission may carry ("photo" is the photo itself).
var kycDocTypes = []string{"national_id", "passport", "driving_license", "residence_permit", "proof_of_address", "other"}

const maxKycDocuments = 10

type kycSubmissionDocJSON struct {
	Type      string `json:"type"`
	UploadKey string `json:"uploadKey"`
	SHA256    string `json:"sha256,omitempty"`
}

type kycSubmitRequest struct {
	EmployeeID  string                 `json:"employeeId"`
	FullName    string                 `json:"fullName"`
	NationalID  string                 `json:"nationalId"`
	DateOfBirth string                 `json:"dateOfBirth"`
	PhotoKey    string                 `json:"photoKey"`
	Documents   []kycSubmissionDocJSON `json:"documents"`
}

func (r *kycSubmitRequest) validate(now time.Time) (time.Time, error) {
	r.FullName = strings.TrimSpace(r.FullName)
	if r.EmployeeID != "" {
		if err := field.Identifier("employeeId", r.EmployeeID, 0); err != nil {
			return time.Time{}, err
		}
	}
	if err := sanctions.ValidName("fullName", r.FullName); err != nil {
		return time.Time{}, err
	}
	r.NationalID = employees.NormalizeNationalID(r.NationalID)
	if err := employees.ValidNationalID("nationalId", r.NationalID); err != nil {
		return time.Time{}, err
	}
	dob, err := time.Parse(time.DateOnly, r.DateOfBirth)
	if err != nil || dob.Year() < 1900 || !dob.Before(now.AddDate(-14, 0, 0)) {
		return time.Time{}, &field.Error{Field: "dateOfBirth", Problem: "must be a date (YYYY-MM-DD) after 1900 and at least 14 years ago"}
	}
	if !uploads.ValidKey(r.PhotoKey) {
		return time.Time{}, &field.Error{Field: "photoKey", Problem: "must be an upload key from POST /api/uploads"}
	}
	if len(r.Documents) == 0 || len(r.Documents) > maxKycDocuments {
		return time.Time{}, &field.Error{Field: "documents", Problem: fmt.Sprintf("must list 1 to %d documents", maxKycDocuments)}
	}
	seen := map[string]bool{}
	for i, d := range r.Documents {
		name := "documents[" + strconv.Itoa(i) + "]"
		if !slices.Contains(kycDocTypes, d.Type) {
			return time.Time{}, &field.Error{Field: name + ".type", Problem: "must be one of " + strings.Join(kycDocTypes, ", ")}
		}
		if seen[d.Type] {
			return time.Time{}, &field.Error{Field: name + ".type", Problem: "appears more than once"}
		}
		seen[d.Type] = true
		if !uploads.ValidKey(d.UploadKey) {
			return time.Time{}, &field.Error{Field: name + ".uploadKey", Problem: "must be an upload key from POST /api/uploads"}
		}
		if d.SHA256 != "" {
			return time.Time{}, &field.Error{Field: name + ".sha256", Problem: "is recorded by the server; do not send it"}
		}
	}
	return dob, nil
}

type kycSubmissionJSON struct {
	ID          string                 `json:"id"`
	SubjectType kyc.SubjectType        `json:"subjectType"`
	SubjectID   string                 `json:"subjectId"`
	FullName    string                 `json:"fullName"`
	NationalID  string                 `json:"nationalId"` // masked to its last 4
	DateOfBirth string                 `json:"dateOfBirth"`
	PhotoKey    string                 `json:"photoKey"`
	Status      kyc.Status             `json:"status"`
	Note        *string                `json:"note"`
	ClaimedBy   *string                `json:"claimedBy"`
	ValidUntil  *time.Time             `json:"validUntil"`
	Documents   []kycSubmissionDocJSON `json:"documents"`
	CreatedAt   time.Time              `json:"createdAt"`
	UpdatedAt   time.Time              `json:"updatedAt"`
	// RegistryCheck is in the reviewers' answers only (null: not looked up yet): an applicant is
	// not told what the registry holds.
	RegistryCheck **kycRegistryCheckJSON `json:"registryCheck,omitempty"`
}

// kycRegistryCheckJSON is the national ID registry's answer about a submission's current content.
type kycRegistryCheckJSON struct {
	ID                 string              `json:"id"`
	Registry           string              `json:"registry"`
	Outcome            kyc.RegistryOutcome `json:"outcome"`
	IDStatus           *string             `json:"idStatus"`
	NameMatches        bool                `json:"nameMatches"`
	DateOfBirthMatches bool                `json:"dateOfBirthMatches"`
	CheckedBy          string              `json:"checkedBy"`
	CheckedAt          time.Time           `json:"checkedAt"`
}

func toKycRegistryCheckJSON(c kyc.RegistryCheck) *kycRegistryCheckJSON {
	return &kycRegistryCheckJSON{ID: c.ID, Registry: c.Registry, Outcome: c.Outcome, IDStatus: optionalString(c.IDStatus),
		NameMatches: c.NameMatches, DateOfBirthMatches: c.DateOfBirthMatches, CheckedBy: c.CheckedBy, CheckedAt: c.CheckedAt.UTC()}
}

// toKycReviewJSON is a submission as its reviewers see it: with the registry's answer.
func toKycReviewJSON(k kyc.Submission) kycSubmissionJSON {
	out := toKycJSON(k)
	var check *kycRegistryCheckJSON
	if k.RegistryCheck != nil {
		check = toKycRegistryCheckJSON(*k.RegistryCheck)
	}
	out.RegistryCheck = &check
	return out
}

func toKycJSON(k kyc.Submission) kycSubmissionJSON {
	out := kycSubmissionJSON{ID: k.ID, SubjectType: k.SubjectType, SubjectID: k.SubjectID, FullName: k.FullName,
		NationalID: logging.MaskLast4(k.NationalID), DateOfBirth: k.DateOfBirth.Format(time.DateOnly), PhotoKey: k.PhotoKey,
		Status: k.Status, Note: optionalString(k.RejectionReason), ClaimedBy: optionalString(k.ClaimedBy),
		Documents: []kycSubmissionDocJSON{}, CreatedAt: k.CreatedAt.UTC(), UpdatedAt: k.UpdatedAt.UTC()}
	if !k.ValidUntil.IsZero() {
		v := k.ValidUntil.UTC()
		out.ValidUntil = &v
	}
	for _, d := range k.Documents {
		out.Documents = append(out.Documents, kycSubmissionDocJSON{Type: d.Type, UploadKey: d.UploadKey, SHA256: d.SHA256})
	}
	return out
}

// kycSubject is whom a submission is about, and in which organization.
type kycSubject struct {
	tenant string
	typ    kyc.SubjectType
	id     string
	userID string // the login user the subject is, when known
}

// selfSubject resolves the caller as a KYC subject: their employee row in the active
// organization, else themselves as a member of it, else their one linked employee row anywhere.
// It has answered when ok is false.
func (s *Server) selfSubject(c *gin.Context) (kycSubject, bool) {
	cl := callerOf(c)
	linked, ok := s.linkedEmployees(c)
	if !ok {
		return kycSubject{}, false
	}
	active := cl.Session.ActiveOrganizationID
	for _, e := range linked {
		if e.TenantID == active {
			return kycSubject{tenant: e.TenantID, typ: kyc.SubjectEmployee, id: e.ID, userID: cl.User.ID}, true
		}
	}
	if active != "" {
		if !s.admit(c, cl, active, orgs.PlainMember, orgs.Permission{}) {
			return kycSubject{}, false
		}
		return kycSubject{tenant: active, typ: kyc.SubjectUser, id: cl.User.ID, userID: cl.User.ID}, true
	}
	if len(linked) == 1 {
		return kycSubject{tenant: linked[0].TenantID, typ: kyc.SubjectEmployee, id: linked[0].ID, userID: cl.User.ID}, true
	}
	writeError(c, errEmployeeNotLinked)
	return kycSubject{}, false
}

func (s *Server) submitKyc(c *gin.Context) {
	var req kycSubmitRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	dob, err := req.validate(s.now())
	if err != nil {
		writeError(c, fieldError(err))
		return
	}
	if s.deps.Uploads == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "uploads are not configured"))
		return
	}
	cl := callerOf(c)
	var sub kycSubject
	own, ok := s.ownEmployee(c, req.EmployeeID)
	switch {
	case !ok:
		return
	case own != nil:
		// The employee submits for themselves, named: the employer's tenant, whatever organization
		// is active (the onboarding checklist's action).
		sub = kycSubject{tenant: own.TenantID, typ: kyc.SubjectEmployee, id: own.ID, userID: cl.User.ID}
	case req.EmployeeID != "":
		// An admin submits for one of the organization's employees.
		tenant := cl.Session.ActiveOrganizationID
		if tenant == "" {
			writeError(c, NewError(http.StatusForbidden, "TENANT_CONTEXT_MISSING", "choose an active organization first (organization/set-active)"))
			return
		}
		if !s.admit(c, cl, tenant, orgs.Admin, orgs.Permission{}) {
			return
		}
		sub = kycSubject{tenant: tenant, typ: kyc.SubjectEmployee, id: req.EmployeeID}
	default:
		if sub, ok = s.selfSubject(c); !ok {
			return
		}
	}
	ctx := tenancy.WithTenant(c.Request.Context(), sub.tenant)
	var (
		out     kyc.Submission
		amended bool
	)
	err = tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		if sub.typ == kyc.SubjectEmployee {
			e, err := employees.ByID(ctx, tx, sub.tenant, sub.id)
			if errors.Is(err, employees.ErrNotFound) {
				return errEmployeeNotFound
			}
			if err != nil {
				return err
			}
			sub.userID = e.UserID
			if e.NationalID != req.NationalID {
				// Another person's identity: approving it would verify the wrong one.
				r := refuse(http.StatusUnprocessableEntity, "KYC_SUBJECT_MISMATCH",
					"the national id is not the employee's on record: a KYC verifies the employee the money is paid to",
					"SubmitKyc", string(sub.typ), sub.id)
				r.err.Details = map[string]any{"field": "nationalId"}
				return r
			}
		}
		docs, err := s.bindKycDocuments(ctx, tx, sub.tenant, req.PhotoKey, req.Documents)
		if err != nil {
			return err
		}
		out, amended, err = kyc.Submit(ctx, tx, sub.tenant, kyc.NewSubmission{SubjectType: sub.typ, SubjectID: sub.id, FullName: req.FullName,
			NationalID: req.NationalID, DateOfBirth: dob, PhotoKey: req.PhotoKey, Documents: docs, SubmittedBy: cl.User.ID})
		if errors.Is(err, kyc.ErrOpenSubmission) {
			return refuse(http.StatusConflict, "KYC_ALREADY_OPEN", "the subject already has a submission waiting for review",
				"SubmitKyc", string(sub.typ), sub.id)
		}
		return err
	})
	if err != nil {
		s.answer(c, sub.tenant, err)
		return
	}
	if amended {
		// The answer to a reviewer's request for more information: the same submission.
		c.JSON(http.StatusOK, toKycJSON(out))
		return
	}
	c.JSON(http.StatusCreated, toKycJSON(out))
}

// bindKycDocuments finds each upload in the organization and binds it to the hash its stored
// content has now (re-read, so a file whose bytes no longer match its record is refused).
func (s *Server) bindKycDocuments(ctx context.Context, q pgx.Tx, tenant, photoKey string, in []kycSubmissionDocJSON) ([]kyc.Document, error) {
	all := append([]kycSubmissionDocJSON{{Type: "photo", UploadKey: photoKey}}, in...)
	out := make([]kyc.Document, 0, len(all))
	for _, d := range all {
		obj, err := uploads.Lookup(ctx, q, tenant, d.UploadKey)
		if errors.Is(err, uploads.ErrNotFound) {
			e := NewError(http.StatusBadRequest, "KYC_DOCUMENT_NOT_FOUND", "no upload "+d.UploadKey+" in this organization")
			e.Details = map[string]string{"type": d.Type}
			return nil, e
		}
		if err != nil {
			return nil, err
		}
		if err := s.verifyUpload(ctx, obj, d.Type); err != nil {
			return nil, err
		}
		out = append(out, kyc.Document{Type: d.Type, UploadKey: d.UploadKey, SHA256: obj.SHA256})
	}
	return out, nil
}

// verifyUpload refuses a document whose stored bytes no longer hash to the recorded SHA-256; any
// error reading them is a refusal too (the document cannot be trusted).
func (s *Server) verifyUpload(ctx context.Context, obj uploads.Object, docType string) error {
	err := uploads.VerifyContent(ctx, s.deps.Uploads, obj)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, uploads.ErrHashMismatch), errors.Is(err, uploads.ErrNotFound):
		return kycHashMismatch(docType)
	}
	return err
}

func kycHashMismatch(docType string) *Error {
	e := NewError(http.StatusConflict, "KYC_DOCUMENT_HASH_MISMATCH", "the stored "+docType+" no longer matches the content it was submitted with")
	e.Details = map[string]string{"type": docType}
	return e
}

func (s *Server) kycStatus(c *gin.Context) {
	sub, ok := s.selfSubject(c)
	if !ok {
		return
	}
	ctx := tenancy.WithTenant(c.Request.Context(), sub.tenant)
	var out *kycSubmissionJSON
	err := tenancy.InTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		k, err := kyc.Latest(ctx, tx, sub.tenant, sub.typ, sub.id)
		if errors.Is(err, kyc.ErrNotFound) {
			return nil
		}
		j := toKycJSON(k)
		out = &j
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	gateOpen := false
	if out != nil {
		gateOpen = out.Status == kyc.Approved && out.ValidUntil != nil && s.now().Before(*out.ValidUntil)
	}
	c.JSON(http.StatusOK, gin.H{"organizationId": sub.tenant, "subjectType": sub.typ, "subjectId": sub.id,
		"submission": out, "approved": gateOpen})
}

func (s *Server) kycQueue(c *gin.Context) {
	q := c.Request.URL.Query()
	statuses := []kyc.Status{kyc.Pending, kyc.InReview}
	if v := q.Get("status"); v != "" {
		if v != string(kyc.Pending) && v != string(kyc.InReview) {
			writeError(c, fieldError(&field.Error{Field: "status", Problem: "must be PENDING or IN_REVIEW"}))
			return
		}
		statuses = []kyc.Status{kyc.Status(v)}
	}
	limit, cursor, e := pageParams(q.Get("limit"), q.Get("cursor"))
	if e != nil {
		writeError(c, e)
		return
	}
	items := []kycSubmissionJSON{}
	var next *string
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		ks, err := kyc.Queue(c.Request.Context(), tx, statuses, cursor, limit+1)
		ks, next = pageOf(ks, limit, func(k kyc.Submission) string { return k.ID })
		for _, k := range ks {
			items = append(items, toKycReviewJSON(k))
		}
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"items": items, "nextCursor": next})
}

type kycNoteRequest struct {
	Note string `json:"note"`
}

// kycSubmissionTenant finds a submission's organization on the cross-tenant path.
func kycSubmissionTenant(ctx context.Context, tx pgx.Tx, id string) (string, error) {
	var tenant string
	err := tx.QueryRow(ctx, `SELECT tenant_id FROM app.kyc_submissions WHERE id = $1`, id).Scan(&tenant)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", NewError(http.StatusNotFound, "NOT_FOUND", "no such KYC submission")
	}
	return tenant, err
}

// kycMove serves claim, reject and request-more-info: one transition on the cross-tenant path.
func (s *Server) kycMove(action kyc.Action) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := pathID(c)
		if !ok {
			return
		}
		var req kycNoteRequest
		if action != kyc.Claim {
			if e := bindJSON(c, &req); e != nil {
				writeError(c, e)
				return
			}
			req.Note = strings.TrimSpace(req.Note)
			if req.Note == "" {
				writeError(c, fieldError(&field.Error{Field: "note", Problem: "is required: the applicant reads it"}))
				return
			}
			if err := field.Text("note", req.Note, 1000); err != nil {
				writeError(c, fieldError(err))
				return
			}
		}
		out, tenant, err := s.kycTransition(c, id, action, kyc.Change{Note: req.Note})
		if err != nil {
			s.kycFail(c, tenant, id, action, err)
			return
		}
		c.JSON(http.StatusOK, toKycReviewJSON(out))
	}
}

// kycTransition applies action to submission id on the cross-tenant path, as the caller.
func (s *Server) kycTransition(c *gin.Context, id string, action kyc.Action, ch kyc.Change) (kyc.Submission, string, error) {
	var out kyc.Submission
	var tenant string
	ch.Reviewer, ch.Now = callerOf(c).User.ID, s.now()
	if ch.Validity <= 0 {
		ch.Validity = s.deps.KycValidity
	}
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		var err error
		if tenant, err = kycSubmissionTenant(c.Request.Context(), tx, id); err != nil {
			return err
		}
		ctx := tenancy.WithTenant(c.Request.Context(), tenant)
		out, err = kyc.Transition(ctx, tx, tenant, id, action, ch)
		return err
	})
	return out, tenant, err
}

// kycFail answers a refused or failed move; a refusal by the lifecycle or a gate is audited DENIED
// under the submission's organization.
func (s *Server) kycFail(c *gin.Context, tenant, id string, action kyc.Action, err error) {
	var e *Error
	var negative *kyc.RegistryNegativeError
	switch {
	case errors.Is(err, kyc.ErrInvalidTransition):
		e = NewError(http.StatusConflict, "KYC_INVALID_TRANSITION", err.Error())
	case errors.Is(err, kyc.ErrClaimedByOther):
		e = NewError(http.StatusConflict, "KYC_CLAIMED_BY_OTHER", "another reviewer claimed this submission")
	case errors.Is(err, kyc.ErrSelfReview):
		e = NewError(http.StatusForbidden, "KYC_SELF_REVIEW", "you submitted this submission, or it verifies you: another reviewer reviews it")
	case errors.As(err, &negative):
		e = NewError(http.StatusConflict, "KYC_REGISTRY_MISMATCH", "the national ID registry check is "+string(negative.Check.Outcome)+
			": examine it, then approve with acknowledgeRegistryCheck (its id) and a note, or reject or ask for more information")
		e.Details = map[string]any{"registryCheck": toKycRegistryCheckJSON(negative.Check)}
	case errors.As(err, &e):
	default:
		writeError(c, err)
		return
	}
	if (e.Status == http.StatusConflict || e.Code == "KYC_SELF_REVIEW") && tenant != "" {
		if aerr := s.auditIn(c.Request.Context(), tenant, callerOf(c).User.ID, audit.Entry{Action: kyc.AuditAction(action),
			Outcome: audit.Denied, TargetType: "KycSubmission", TargetID: id, Details: map[string]string{"code": e.Code}}); aerr != nil {
			writeError(c, aerr)
			return
		}
	}
	writeError(c, e)
}

type kycApproveRequest struct {
	// AcknowledgeSanctionsReview approves despite a possible (REVIEW) sanctions match the reviewer
	// has examined: the check is recorded as cleared by them, with Note as the reason. A BLOCK
	// can never be acknowledged.
	AcknowledgeSanctionsReview bool `json:"acknowledgeSanctionsReview"`
	// AcknowledgeRegistryCheck is the id of the negative national-ID registry check the reviewer
	// has examined and approves despite (kyc.Change), with Note as the reason.
	AcknowledgeRegistryCheck string `json:"acknowledgeRegistryCheck"`
	Note                     string `json:"note"`
}

// approveKyc checks the documents' hashes again, screens the full name (and date of birth)
// against the active sanctions lists and records the check (kept whatever happens next), then
// approves. A BLOCK fails the approval (409 SANCTIONS_BLOCKED); a REVIEW fails it unless the
// reviewer acknowledges it (409 SANCTIONS_REVIEW); either way the submission stays IN_REVIEW.
func (s *Server) approveKyc(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var req kycApproveRequest
	// The body is optional (Body: BodyOptionalJSON): none, also an empty chunked one, approves
	// without a note.
	has, e := hasBody(c)
	if e == nil && has {
		e = bindJSON(c, &req)
	}
	if e != nil {
		writeError(c, e)
		return
	}
	req.Note = strings.TrimSpace(req.Note)
	if err := field.Text("note", req.Note, sanctions.MaxNoteBytes); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if req.AcknowledgeSanctionsReview && req.Note == "" {
		writeError(c, fieldError(&field.Error{Field: "note", Problem: "is required to acknowledge a sanctions review"}))
		return
	}
	if req.AcknowledgeRegistryCheck != "" {
		if err := field.Identifier("acknowledgeRegistryCheck", req.AcknowledgeRegistryCheck, 0); err != nil {
			writeError(c, fieldError(err))
			return
		}
		if req.Note == "" {
			writeError(c, fieldError(&field.Error{Field: "note", Problem: "is required to acknowledge a registry check"}))
			return
		}
	}
	if s.deps.Uploads == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "uploads are not configured"))
		return
	}
	ctx := c.Request.Context()
	reviewer := callerOf(c).User.ID
	var sub kyc.Submission
	var tenant, recorded string
	// 1. The submission (claimed by this reviewer) and its documents, as they are now, and the
	// name of the employee it verifies as the business records it.
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		var err error
		if tenant, err = kycSubmissionTenant(ctx, tx, id); err != nil {
			return err
		}
		if sub, err = kyc.ByID(ctx, tx, tenant, id); err != nil {
			return err
		}
		if sub.SubjectType == kyc.SubjectEmployee {
			e, err := employees.ByID(ctx, tx, tenant, sub.SubjectID)
			if err != nil && !errors.Is(err, employees.ErrNotFound) {
				return err
			}
			recorded = e.FullName
		}
		switch {
		case sub.Status != kyc.InReview:
			return fmt.Errorf("%w: approve from %s", kyc.ErrInvalidTransition, sub.Status)
		case sub.ClaimedBy != reviewer:
			return kyc.ErrClaimedByOther
		}
		for _, d := range sub.Documents {
			obj, err := uploads.Lookup(ctx, tx, tenant, d.UploadKey)
			switch {
			case errors.Is(err, uploads.ErrNotFound), err == nil && obj.SHA256 != d.SHA256:
				return kycHashMismatch(d.Type)
			case err != nil:
				return err
			}
			if err := s.verifyUpload(ctx, obj, d.Type); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.kycFail(c, tenant, id, kyc.Approve, err)
		return
	}
	// 2. Screening, recorded in a transaction of its own: the evidence stays whatever the outcome.
	// An employee's name on record is screened too when it is another name: the money is paid to
	// that employee, so the worse answer decides.
	res, err := sanctions.Screen(ctx, s.deps.DB, sub.FullName, sub.DateOfBirth)
	if err == nil && recorded != "" && sanctions.Key(recorded) != sanctions.Key(sub.FullName) {
		var other sanctions.Result
		if other, err = sanctions.Screen(ctx, s.deps.DB, recorded, sub.DateOfBirth); err == nil {
			res = sanctions.Worse(res, other)
		}
	}
	if errors.Is(err, sanctions.ErrNoActiveList) {
		writeError(c, NewError(http.StatusServiceUnavailable, "SANCTIONS_LISTS_MISSING", "no sanctions list is loaded; approval screens against them (wagerail sanctions ingest)"))
		return
	}
	if errors.Is(err, sanctions.ErrListOutdated) {
		// A build with new matching rules, before its lists were renormalised: refused, never
		// screened under mismatched rules.
		writeError(c, NewError(http.StatusServiceUnavailable, "SANCTIONS_LISTS_OUTDATED",
			"the sanctions lists await renormalisation under this build's matching rules (wagerail sanctions rescreen)"))
		return
	}
	var fe *field.Error
	if errors.As(err, &fe) {
		// A name stored before the submit refused it: nothing to screen, so nothing to approve.
		writeError(c, NewError(http.StatusUnprocessableEntity, "KYC_NAME_NOT_SCREENABLE",
			"the submission's full name "+fe.Problem+" for sanctions screening; reject it and have it submitted again"))
		return
	}
	if err != nil {
		writeError(c, err)
		return
	}
	subject := sanctions.Subject{Type: sanctions.SubjectType(sub.SubjectType), ID: sub.SubjectID}
	if sub.SubjectType == kyc.SubjectUser {
		subject.UserID = sub.SubjectID
	}
	var check sanctions.Check
	err = s.asPlatform(c, func(tx pgx.Tx) error {
		var err error
		if check, err = sanctions.RecordCheck(tenancy.WithTenant(ctx, tenant), tx, tenant, subject, res); err != nil {
			return err
		}
		if res.Outcome == sanctions.Review && req.AcknowledgeSanctionsReview {
			_, err = sanctions.ResolveReview(tenancy.WithTenant(ctx, tenant), tx, check.ID, sanctions.Cleared, reviewer, req.Note, s.now())
		}
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	switch {
	case res.Outcome == sanctions.Block:
		e := NewError(http.StatusConflict, "SANCTIONS_BLOCKED", "the name matches a sanctions list; the submission cannot be approved")
		e.Details = map[string]any{"checkId": check.ID, "evidence": res.Evidence}
		s.kycFail(c, tenant, id, kyc.Approve, e)
		return
	case res.Outcome == sanctions.Review && !req.AcknowledgeSanctionsReview:
		e := NewError(http.StatusConflict, "SANCTIONS_REVIEW", "the name may match a sanctions list: examine the evidence, then approve with acknowledgeSanctionsReview and a note, or reject")
		e.Details = map[string]any{"checkId": check.ID, "evidence": res.Evidence}
		s.kycFail(c, tenant, id, kyc.Approve, e)
		return
	}
	// 3. The approval.
	out, _, err := s.kycTransition(c, id, kyc.Approve, kyc.Change{Note: req.Note, AcknowledgeRegistryCheck: req.AcknowledgeRegistryCheck})
	if err != nil {
		s.kycFail(c, tenant, id, kyc.Approve, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"submission": toKycReviewJSON(out), "sanctionsCheck": gin.H{"id": check.ID, "outcome": res.Outcome}})
}

// kycRegistryCheck looks an open submission up in the national ID registry again (a reviewer's
// request: the automatic lookup was dead-lettered, or the registry has been corrected), recorded
// as a check of its own and audited CheckNationalId with the reviewer as actor.
func (s *Server) kycRegistryCheck(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	if s.deps.NationalIDRegistry == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "no national ID registry is configured"))
		return
	}
	var tenant string
	if err := s.asPlatform(c, func(tx pgx.Tx) (err error) {
		tenant, err = kycSubmissionTenant(c.Request.Context(), tx, id)
		return err
	}); err != nil {
		writeError(c, err)
		return
	}
	ctx := tenancy.WithTenant(c.Request.Context(), tenant)
	inTx := func(fn func(pgx.Tx) error) error { return s.asPlatform(c, fn) }
	check, err := kyc.CheckRegistry(ctx, inTx, s.deps.NationalIDRegistry, tenant, id, "request:"+identity.NewID())
	switch {
	case errors.Is(err, kyc.ErrNotOpen):
		writeError(c, NewError(http.StatusConflict, "KYC_NOT_OPEN", "the submission is decided; only an open one is looked up"))
	case errors.Is(err, kyc.ErrRegistryUnavailable):
		s.deps.Log.WarnContext(ctx, "national ID registry lookup failed", "submission", id, "err", err)
		writeError(c, NewError(http.StatusServiceUnavailable, "NATIONAL_ID_REGISTRY_UNAVAILABLE", "the national ID registry did not answer; nothing was recorded, try again later"))
	case err != nil:
		writeError(c, err)
	default:
		c.JSON(http.StatusOK, toKycRegistryCheckJSON(check))
	}
}
