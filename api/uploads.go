package api

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/uploads"
)

// File uploads (the spec's "File uploads"): a member of the active organization, or a platform
// admin naming the organization with ?tenantId=, stores one file; members of that organization
// and platform admins read it back. The rules a file must pass and the store live in
// internal/uploads; here are the access rules and the HTTP shape.

// uploadEnvelopeBytes is the room the multipart framing (boundaries, part headers) gets on top of
// the file's own limit in the route's body limit.
const uploadEnvelopeBytes = 64 << 10

// uploadAction is the audit action of an upload and of its refusals.
const uploadAction = "UploadFile"

// uploadRoutes serves file uploads (/api/uploads).
func (s *Server) uploadRoutes() []Route {
	return []Route{
		// One path serves two callers, so the row asks for a session and the handler applies the
		// spec's two gates itself (uploadTenant).
		{Method: http.MethodPost, Path: "/api/uploads", Auth: Session, Summary: "Upload a file for the active organization (or, platform admins, for ?tenantId=)",
			Handler: s.uploadFile, MaxBodyBytes: s.deps.MaxUploadBytes + uploadEnvelopeBytes, Body: BodyOwn},
		{Method: http.MethodGet, Path: "/api/uploads/:tenantId/:key", Auth: Org, Role: orgs.PlainMember, Tenant: "tenantId",
			Summary: "Download an uploaded file", Handler: s.downloadFile},
	}
}

type uploadJSON struct {
	TenantID    string `json:"tenantId"`
	Key         string `json:"key"`
	SHA256      string `json:"sha256"`
	SizeBytes   int64  `json:"sizeBytes"`
	ContentType string `json:"contentType"`
	FileName    string `json:"fileName"`
}

var (
	errUploadsOff      = NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "file uploads are not configured (UPLOAD_DIR)")
	errUploadNotFound  = NewError(http.StatusNotFound, "UPLOAD_NOT_FOUND", "no such upload")
	errUploadNoTenant  = NewError(http.StatusNotFound, "TENANT_NOT_FOUND", "no such organization")
	errUploadExtraPart = errors.New("a part after the file")
)

// uploadFile is POST /api/uploads: multipart/form-data with exactly one part, "file".
func (s *Server) uploadFile(c *gin.Context) {
	if s.deps.Uploads == nil {
		writeError(c, errUploadsOff)
		return
	}
	cl := callerOf(c)
	tenant, ok := s.uploadTenant(c, cl)
	if !ok {
		return
	}
	employee := c.Request.URL.Query().Has("employeeId") // the employee's own file (employeeUploadTenant)
	obj, err := s.receiveUpload(c, cl, tenant)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && (e.Status == http.StatusRequestEntityTooLarge || e.Status == http.StatusUnsupportedMediaType) {
			// A file refused by the upload rules is audited like any refused attempt.
			if aerr := s.auditIn(c.Request.Context(), tenant, cl.User.ID, audit.Entry{Action: uploadAction, Outcome: audit.Denied,
				Details: map[string]string{"code": e.Code}}); aerr != nil {
				err = aerr
			}
		}
		writeError(c, err)
		return
	}
	err = s.inTenant(c, func(ctx context.Context, tx pgx.Tx) error {
		if err := uploads.Record(ctx, tx, obj); err != nil {
			if errors.Is(err, uploads.ErrNotFound) {
				return errUploadNoTenant // the organization went away while the file came in
			}
			return err
		}
		return audit.Write(ctx, tx, audit.Entry{Action: uploadAction, Outcome: audit.Success, TargetType: "Upload", TargetID: obj.Key,
			Details: map[string]any{"sha256": obj.SHA256, "sizeBytes": obj.SizeBytes, "contentType": obj.ContentType, "platform": !cl.Access.Member && !employee, "employee": employee}})
	})
	if err != nil {
		// No row, so the stored bytes can never be reached: take them away again.
		if derr := s.deps.Uploads.Delete(context.WithoutCancel(c.Request.Context()), tenant, obj.Key); derr != nil {
			s.deps.Log.Warn("upload left without its row", "request_id", requestID(c), "key", obj.Key, "error", derr)
		}
		writeError(c, err)
		return
	}
	c.JSON(http.StatusCreated, uploadJSON{TenantID: obj.TenantID, Key: obj.Key, SHA256: obj.SHA256, SizeBytes: obj.SizeBytes,
		ContentType: obj.ContentType, FileName: obj.FileName})
}

// uploadTenant applies the spec's two gates and scopes the request to the organization the file
// is for: with ?tenantId= the caller must be a platform admin (403 PLATFORM_ADMIN_REQUIRED,
// audited) and the organization must exist (404 TENANT_NOT_FOUND); without it, the caller must be
// an active member of the active organization (403 TENANT_CONTEXT_MISSING, NOT_A_MEMBER, …), or a
// platform admin with an active organization. It has answered when ok is false.
func (s *Server) uploadTenant(c *gin.Context, cl *caller) (tenant string, ok bool) {
	q := c.Request.URL.Query()
	ids, named := q["tenantId"]
	if emps, own := q["employeeId"]; own {
		if named {
			writeError(c, fieldError(&field.Error{Field: "employeeId", Problem: "must not be given with tenantId"}))
			return "", false
		}
		return s.employeeUploadTenant(c, cl, emps)
	}
	if !named {
		active := cl.Session.ActiveOrganizationID
		if active == "" {
			writeError(c, NewError(http.StatusForbidden, "TENANT_CONTEXT_MISSING", "choose an active organization first (organization/set-active)"))
			return "", false
		}
		if !s.admit(c, cl, active, orgs.PlainMember, orgs.Permission{}) {
			return "", false
		}
		return active, true
	}
	if !cl.Platform {
		s.deny(c, crosstenant.PlatformTenant, "PLATFORM_ADMIN_REQUIRED", "only a platform admin uploads for an organization named by tenantId")
		return "", false
	}
	if len(ids) != 1 {
		writeError(c, fieldError(&field.Error{Field: "tenantId", Problem: "must be given once"}))
		return "", false
	}
	id := ids[0]
	if err := field.Identifier("tenantId", id, 0); err != nil {
		writeError(c, fieldError(err))
		return "", false
	}
	err := s.asPlatformIn(c, id, func(ctx context.Context, tx pgx.Tx) error {
		org, err := orgs.ByID(ctx, tx, id)
		if errors.Is(err, orgs.ErrNotFound) || err == nil && org.Status == orgs.OrgDeleted {
			return errUploadNoTenant
		}
		return err
	})
	if errors.Is(err, errUploadNoTenant) {
		if aerr := s.auditIn(c.Request.Context(), crosstenant.PlatformTenant, cl.User.ID, audit.Entry{Action: uploadAction, Outcome: audit.Denied,
			Details: map[string]string{"code": errUploadNoTenant.Code, "tenantId": id}}); aerr != nil {
			err = aerr
		}
	}
	if err != nil {
		writeError(c, err)
		return "", false
	}
	cl.Tenant = id // not a member: inTenant takes the audited cross-tenant path
	c.Request = c.Request.WithContext(tenancy.WithTenant(c.Request.Context(), id))
	return id, true
}

// employeeUploadTenant scopes an upload named ?employeeId= to that employee's business: the
// caller must be the employee linked to that row (404 EMPLOYEE_NOT_LINKED otherwise), within
// ruleEmployeeUpload (429), whichever organization is active — an employee's own KYC photo and documents, files of the tenant their
// submission is in. It has answered when ok is false.
func (s *Server) employeeUploadTenant(c *gin.Context, cl *caller, ids []string) (tenant string, ok bool) {
	if len(ids) != 1 {
		writeError(c, fieldError(&field.Error{Field: "employeeId", Problem: "must be given once"}))
		return "", false
	}
	if err := field.Identifier("employeeId", ids[0], 0); err != nil {
		writeError(c, fieldError(err))
		return "", false
	}
	own, ok := s.ownEmployee(c, ids[0])
	if !ok {
		return "", false
	}
	if own == nil {
		writeError(c, errEmployeeNotLinked)
		return "", false
	}
	if !s.allow(c, ruleEmployeeUpload, cl.User.ID) {
		return "", false
	}
	cl.Tenant, cl.Access = own.TenantID, orgs.Access{} // no member's role: the employee's own file
	c.Request = c.Request.WithContext(tenancy.WithTenant(c.Request.Context(), own.TenantID))
	return own.TenantID, true
}

// receiveUpload reads the multipart body and stores its file for tenant (not yet recorded). Its
// errors are *Error for everything the caller sent wrong.
func (s *Server) receiveUpload(c *gin.Context, cl *caller, tenant string) (uploads.Object, error) {
	mr, err := c.Request.MultipartReader()
	if errors.Is(err, http.ErrNotMultipart) {
		return uploads.Object{}, NewError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "send multipart/form-data with the file in a part named file")
	}
	if err != nil {
		return uploads.Object{}, NewError(http.StatusBadRequest, "INVALID_REQUEST", "the multipart body has no boundary")
	}
	part, err := mr.NextPart()
	if err != nil {
		if err == io.EOF {
			return uploads.Object{}, fieldError(&field.Error{Field: "file", Problem: "is required"})
		}
		return uploads.Object{}, uploadError(uploadBodyError{err}, s.deps.MaxUploadBytes)
	}
	if part.FormName() != "file" {
		return uploads.Object{}, fieldError(&field.Error{Field: "file", Problem: "must be the one part of the body"})
	}
	obj, err := uploads.Receive(c.Request.Context(), s.deps.Uploads, uploads.Upload{
		TenantID: tenant, UploadedBy: cl.User.ID, FileName: part.FileName(), DeclaredType: part.Header.Get("Content-Type"),
		Body: &uploadPart{part: part, mr: mr}, MaxBytes: s.deps.MaxUploadBytes, Now: s.now(),
	})
	if err != nil {
		return uploads.Object{}, uploadError(err, s.deps.MaxUploadBytes)
	}
	return obj, nil
}

// uploadError maps what Receive and the multipart reader return to the API's errors; anything
// else (the store failed) passes as it is and becomes a 500.
func uploadError(err error, limit int64) error {
	var tooLarge *http.MaxBytesError
	var body uploadBodyError
	switch {
	case errors.As(err, &tooLarge), errors.Is(err, uploads.ErrTooLarge):
		return NewError(http.StatusRequestEntityTooLarge, "UPLOAD_TOO_LARGE", fmt.Sprintf("files are limited to %d bytes", limit))
	case errors.Is(err, uploads.ErrUnsupportedType):
		e := NewError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "the file's Content-Type must be one of the allowed types")
		e.Details = map[string]any{"allowed": uploads.AllowedTypes}
		return e
	case errors.Is(err, uploads.ErrTypeMismatch):
		return NewError(http.StatusUnsupportedMediaType, "CONTENT_TYPE_MISMATCH", "the file's content is not of its declared Content-Type")
	case errors.Is(err, uploads.ErrEmpty):
		return fieldError(&field.Error{Field: "file", Problem: "is empty"})
	case errors.Is(err, errUploadExtraPart):
		return fieldError(&field.Error{Field: "file", Problem: "must be the one part of the body"})
	case errors.As(err, &body), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return NewError(http.StatusBadRequest, "INVALID_REQUEST", "could not read the multipart body")
	}
	return err
}

// uploadBodyError marks a failure to read the request (a malformed or cut multipart body), as
// opposed to a failure of the store.
type uploadBodyError struct{ err error }

func (e uploadBodyError) Error() string { return "upload body: " + e.err.Error() }
func (e uploadBodyError) Unwrap() error { return e.err }

// uploadPart reads the file part and, at its end, checks that the body ends there too: a store
// commits a file only when its reader ends cleanly, so a body with a second part or broken
// framing after the file never leaves a file behind.
type uploadPart struct {
	part *multipart.Part
	mr   *multipart.Reader
	done bool
}

func (u *uploadPart) Read(p []byte) (int, error) {
	if u.done {
		return 0, io.EOF
	}
	n, err := u.part.Read(p)
	switch {
	case err == io.EOF:
		if _, err := u.mr.NextPart(); err != io.EOF {
			if err == nil {
				err = errUploadExtraPart
			}
			return n, uploadBodyError{err}
		}
		u.done = true
		return n, io.EOF
	case err != nil:
		return n, uploadBodyError{err}
	}
	return n, nil
}

// downloadFile is GET /api/uploads/:tenantId/:key: the file as an attachment, with its recorded
// type, after its bytes have been checked against the recorded hash.
func (s *Server) downloadFile(c *gin.Context) {
	if s.deps.Uploads == nil {
		writeError(c, errUploadsOff)
		return
	}
	cl := callerOf(c)
	key := c.Param("key")
	if err := field.Identifier("key", key, 0); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if !uploads.ValidKey(key) {
		writeError(c, errUploadNotFound) // no key we mint looks like this
		return
	}
	obj, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (uploads.Object, error) {
		obj, err := uploads.Lookup(ctx, tx, cl.Tenant, key)
		if err != nil || cl.Platform || cl.Access.Role.AtLeast(orgs.Admin) {
			return obj, err
		}
		// An identity document or photo a KYC submission holds is its subject's: a plain member
		// who is not a party to it finds no such upload.
		if bound, party, err := kyc.DocumentParty(ctx, tx, cl.Tenant, key, cl.User.ID); err != nil || bound && !party {
			return uploads.Object{}, cmp.Or(err, uploads.ErrNotFound)
		}
		return obj, nil
	})
	if errors.Is(err, uploads.ErrNotFound) {
		writeError(c, errUploadNotFound)
		return
	}
	if err != nil {
		writeError(c, err)
		return
	}
	// A recorded file that is missing or no longer matches its hash is our fault (500, logged),
	// and is never served as if it were the file that was uploaded.
	rc, err := uploads.OpenVerified(c.Request.Context(), s.deps.Uploads, obj)
	if err != nil {
		writeError(c, fmt.Errorf("upload %s/%s: %w", obj.TenantID, obj.Key, err))
		return
	}
	defer rc.Close()
	ct := obj.ContentType
	if ct == "text/csv" {
		ct += "; charset=utf-8"
	}
	disposition := mime.FormatMediaType("attachment", map[string]string{"filename": obj.FileName})
	if disposition == "" {
		disposition = "attachment"
	}
	// Set, not passed to DataFromReader: its extra headers never replace one already set, and
	// securityHeaders has set the API's defaults; a file gets stricter ones.
	for name, v := range map[string]string{
		"Content-Disposition":     disposition,
		"X-Content-Type-Options":  "nosniff",
		"Cache-Control":           "private, no-store",
		"Content-Security-Policy": "default-src 'none'; sandbox; frame-ancestors 'none'",
	} {
		c.Header(name, v)
	}
	c.DataFromReader(http.StatusOK, obj.SizeBytes, ct, io.LimitReader(rc, obj.SizeBytes), nil)
}
