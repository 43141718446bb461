package api

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/uploads"
)

// Business organizations (the spec's "Business (organizations)" table) and the KYC documents of
// every kind of organization. A platform admin onboards a business (create, profile, documents,
// KYC review, status); its members read it, its admins edit its profile, its owners may delete
// it. Deleting is soft and final: the organization turns DELETED, its data stays, and the request
// pipeline refuses its members from then on. GET /api/business/<id>/employee-count is served by
// the employees area (api/employees.go).

// kycDocumentMount is where one kind of organization's KYC document routes live.
// Its KYC review and status routes live there too.
type kycDocumentMount struct {
	prefix       string
	kind         orgs.Kind
	noun         string
	target       string // the audit rows' target type
	verifyAction string
	statusAction string
}

var kycDocumentMounts = []kycDocumentMount{
	{"/api/business", orgs.Business, "business", targetBusiness, actionVerifyBusinessKYC, actionSetBusinessStatus},
	{"/api/financial-institutions", orgs.FI, "financial institution", targetOrganization, actionVerifyPartnerKYC, actionSetPartnerStatus},
	{"/api/merchants", orgs.Merchant, "merchant", targetOrganization, actionVerifyPartnerKYC, actionSetPartnerStatus},
}

// businessRoutes serves /api/business/* (organizations) and the KYC document routes of FIs and merchants.
func (s *Server) businessRoutes() []Route {
	rs := []Route{
		{Method: http.MethodPost, Path: "/api/business", Auth: Platform, Summary: "Create a business organization (platform onboarding)", Handler: s.createBusiness},
		{Method: http.MethodGet, Path: "/api/business", Auth: Session, Summary: "The caller's businesses (every business for a platform admin with all=true)", Handler: s.listBusinesses},
		{Method: http.MethodGet, Path: "/api/business/:id", Auth: Org, Role: orgs.PlainMember, Tenant: "id", Summary: "A business", Handler: s.getBusiness},
		{Method: http.MethodPut, Path: "/api/business/:id", Auth: Org, Role: orgs.Admin, Tenant: "id", Summary: "Update a business's name and profile", Handler: s.updateBusiness},
		{Method: http.MethodDelete, Path: "/api/business/:id", Auth: Org, Role: orgs.Owner, Tenant: "id", Summary: "Delete a business (soft: status DELETED, data kept)", Handler: s.deleteBusiness},
		{Method: http.MethodGet, Path: "/api/business/:id/employee-count", Auth: Org, Role: orgs.PlainMember, Tenant: "id", Summary: "How many employees a business has (and how many are ACTIVE)", Handler: s.businessEmployeeCount},
		{Method: http.MethodGet, Path: "/api/business/:id/branding", Auth: Org, Role: orgs.PlainMember, Tenant: "id", Summary: "A business's branding (the defaults until it sets its own)", Handler: s.getBranding},
		{Method: http.MethodPut, Path: "/api/business/:id/branding", Auth: Org, Role: orgs.Admin, Tenant: "id", Summary: "Replace a business's branding (display name, colours, logo, payslip footer)", Handler: s.putBranding},
		{Method: http.MethodGet, Path: "/api/business/:id/onboarding-progress", Auth: Platform, Summary: "A business's onboarding steps", Handler: s.businessOnboarding},
	}
	for _, m := range kycDocumentMounts {
		rs = append(rs,
			Route{Method: http.MethodPut, Path: m.prefix + "/:id/verify-kyc", Auth: Platform, Summary: "Record the KYC review of a " + m.noun, Handler: s.verifyKYC(m)},
			Route{Method: http.MethodPut, Path: m.prefix + "/:id/status", Auth: Platform, Summary: "Activate or suspend a " + m.noun, Handler: s.setOrganizationStatus(m)},
			Route{Method: http.MethodGet, Path: m.prefix + "/:id/documents", Auth: Platform, Summary: "A " + m.noun + "'s KYC documents", Handler: s.listKYCDocuments(m.kind)},
			Route{Method: http.MethodPut, Path: m.prefix + "/:id/documents/:docType", Auth: Platform, Summary: "File a " + m.noun + "'s KYC document", Handler: s.putKYCDocument(m.kind)},
			Route{Method: http.MethodDelete, Path: m.prefix + "/:id/documents/:docType", Auth: Platform, Summary: "Remove a " + m.noun + "'s KYC document", Handler: s.deleteKYCDocument(m.kind)},
		)
	}
	return rs
}

// Audit actions of this file.
const (
	actionCreateBusiness    = "CreateBusiness"
	actionUpdateBusiness    = "UpdateBusiness"
	actionVerifyBusinessKYC = "VerifyBusinessKyc"
	actionSetBusinessStatus = "SetBusinessStatus"
	actionVerifyPartnerKYC  = "VerifyPartnerKyc" // an FI's or merchant's (KYB)
	actionSetPartnerStatus  = "SetPartnerStatus"
	actionDeleteBusiness    = "DeleteBusiness"
	actionPutKYCDocument    = "PutKycDocument"
	actionDeleteKYCDocument = "DeleteKycDocument"
)

// businessJSON is a business as the API shows it; absent profile fields are null.
type businessJSON struct {
	ID                 string     `json:"id"`
	Name               string     `json:"name"`
	Kind               orgs.Kind  `json:"kind"`
	Status             string     `json:"status"`
	KYCStatus          string     `json:"kycStatus"`
	KYCNote            *string    `json:"kycNote"`
	KYCReviewedAt      *time.Time `json:"kycReviewedAt"`
	LegalName          *string    `json:"legalName"`
	TradeName          *string    `json:"tradeName"`
	TIN                *string    `json:"tin"`
	RegistrationNumber *string    `json:"registrationNumber"`
	Industry           *string    `json:"industry"`
	Address            *string    `json:"address"`
	ContactEmail       *string    `json:"contactEmail"`
	ContactPhone       *string    `json:"contactPhone"`
	CreatedAt          time.Time  `json:"createdAt"`
	UpdatedAt          time.Time  `json:"updatedAt"`
	DeletedAt          *time.Time `json:"deletedAt"`
	// Role is the caller's member role, in the list of the caller's own businesses only.
	Role orgs.MemberRole `json:"role,omitempty"`
}

func optionalString(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func toBusinessJSON(b orgs.BusinessOrg) businessJSON {
	p := b.Profile
	return businessJSON{
		ID: b.ID, Name: b.Name, Kind: b.Kind, Status: b.Status, KYCStatus: b.KYCStatus,
		KYCNote: optionalString(b.KYCNote), KYCReviewedAt: utcPtr(b.KYCReviewedAt),
		LegalName: optionalString(p.LegalName), TradeName: optionalString(p.TradeName), TIN: optionalString(p.TIN),
		RegistrationNumber: optionalString(p.RegistrationNo), Industry: optionalString(p.Industry),
		Address: optionalString(p.Address), ContactEmail: optionalString(p.ContactEmail), ContactPhone: optionalString(p.ContactPhone),
		CreatedAt: b.CreatedAt.UTC(), UpdatedAt: b.UpdatedAt.UTC(), DeletedAt: utcPtr(b.DeletedAt),
	}
}

// Bounds of profile fields beyond their kind's own.
const (
	maxBusinessCode    = 64  // TIN, registration number
	maxBusinessAddress = 512 // a postal address, lines allowed
)

// businessFields is the body of create (name required) and update (any subset, at least one);
// a field that is absent (or null) is left alone, "" clears an optional one.
type businessFields struct {
	Name               *string `json:"name"`
	LegalName          *string `json:"legalName"`
	TradeName          *string `json:"tradeName"`
	TIN                *string `json:"tin"`
	RegistrationNumber *string `json:"registrationNumber"`
	Industry           *string `json:"industry"`
	Address            *string `json:"address"`
	ContactEmail       *string `json:"contactEmail"`
	ContactPhone       *string `json:"contactPhone"`
}

// validate normalizes and checks every given field and returns their names.
func (r *businessFields) validate() ([]string, error) {
	var given []string
	name := func(f, v string) error { return field.Name(f, v) }
	code := func(f, v string) error { return field.Identifier(f, v, maxBusinessCode) }
	for _, f := range []struct {
		name     string
		v        *string
		norm     func(string) string
		check    func(string, string) error
		required bool
	}{
		{"name", r.Name, strings.TrimSpace, name, true},
		{"legalName", r.LegalName, strings.TrimSpace, name, false},
		{"tradeName", r.TradeName, strings.TrimSpace, name, false},
		{"tin", r.TIN, strings.TrimSpace, code, false},
		{"registrationNumber", r.RegistrationNumber, strings.TrimSpace, func(f, v string) error { return field.Reference(f, v, maxBusinessCode) }, false},
		{"industry", r.Industry, strings.TrimSpace, name, false},
		{"address", r.Address, strings.TrimSpace, func(f, v string) error { return field.Text(f, v, maxBusinessAddress) }, false},
		{"contactEmail", r.ContactEmail, identity.NormalizeEmail, field.Email, false},
		{"contactPhone", r.ContactPhone, strings.TrimSpace, field.Phone, false},
	} {
		if f.v == nil {
			continue
		}
		given = append(given, f.name)
		*f.v = f.norm(*f.v)
		if *f.v == "" && !f.required {
			continue
		}
		if err := f.check(f.name, *f.v); err != nil {
			return nil, err
		}
	}
	return given, nil
}

// apply writes the given fields onto b.
func (r *businessFields) apply(b *orgs.BusinessOrg) {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&b.Name, r.Name)
	p := &b.Profile
	set(&p.LegalName, r.LegalName)
	set(&p.TradeName, r.TradeName)
	set(&p.TIN, r.TIN)
	set(&p.RegistrationNo, r.RegistrationNumber)
	set(&p.Industry, r.Industry)
	set(&p.Address, r.Address)
	set(&p.ContactEmail, r.ContactEmail)
	set(&p.ContactPhone, r.ContactPhone)
}

// asPlatformIn runs fn on the platform's audited cross-tenant path with ctx scoped to tenant, so
// the audit rows fn writes land in that organization's trail.
func (s *Server) asPlatformIn(c *gin.Context, tenant string, fn func(ctx context.Context, tx pgx.Tx) error) error {
	ctx := tenancy.WithTenant(c.Request.Context(), tenant)
	return s.asPlatform(c, func(tx pgx.Tx) error { return fn(ctx, tx) })
}

// businessError maps the organization store's errors to the API's; anything else passes.
func businessError(err error) error {
	var missing *orgs.MissingDocumentsError
	switch {
	case errors.As(err, &missing):
		e := NewError(http.StatusConflict, "KYC_DOCUMENTS_MISSING", "file every required KYC document before verifying")
		e.Details = map[string]any{"missing": missing.Types}
		return e
	case errors.Is(err, orgs.ErrDocumentNotFound):
		return NewError(http.StatusNotFound, "NOT_FOUND", "the organization has no document of this type")
	case errors.Is(err, orgs.ErrNotFound):
		return NewError(http.StatusNotFound, "NOT_FOUND", "no such organization")
	case errors.Is(err, orgs.ErrAlreadyDeleted):
		return NewError(http.StatusConflict, "ALREADY_DELETED", "the organization is already deleted")
	case errors.Is(err, orgs.ErrDeleted):
		return NewError(http.StatusConflict, "ORGANIZATION_DELETED", "the organization is deleted; it can only be read")
	case errors.Is(err, orgs.ErrUnknownDocumentType):
		return NewError(http.StatusBadRequest, "UNKNOWN_DOCUMENT_TYPE", "unknown document type for this kind of organization")
	}
	return err
}

// businessFail answers a failed action on tenant. A refusal by a domain rule (409) is audited
// DENIED in a transaction of its own: the attempt's own transaction rolled back.
func (s *Server) businessFail(c *gin.Context, tenant, action, targetType string, err error) {
	err = businessError(err)
	var e *Error
	if errors.As(err, &e) && e.Status == http.StatusConflict {
		ctx := c.Request.Context()
		if aerr := s.auditIn(ctx, tenant, tenancy.Actor(ctx), audit.Entry{Action: action, Outcome: audit.Denied,
			TargetType: targetType, TargetID: tenant, Details: map[string]string{"code": e.Code}}); aerr != nil {
			writeError(c, aerr)
			return
		}
	}
	writeError(c, err)
}

const (
	targetBusiness     = "Business"
	targetOrganization = "Organization"
)

func (s *Server) createBusiness(c *gin.Context) {
	var req businessFields
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if req.Name == nil {
		writeError(c, fieldError(&field.Error{Field: "name", Problem: "is required"}))
		return
	}
	given, err := req.validate()
	if err != nil {
		writeError(c, fieldError(err))
		return
	}
	var b orgs.BusinessOrg
	req.apply(&b)
	id := orgs.NewOrganizationID()
	err = s.asPlatformIn(c, id, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if b, err = orgs.CreateBusiness(ctx, tx, id, b.Name, b.Profile); err != nil {
			return err
		}
		return audit.Write(ctx, tx, audit.Entry{Action: actionCreateBusiness, Outcome: audit.Success,
			TargetType: targetBusiness, TargetID: id, Details: map[string]any{"fields": given}})
	})
	if err != nil {
		writeError(c, businessError(err))
		return
	}
	c.JSON(http.StatusCreated, toBusinessJSON(b))
}

type businessListJSON struct {
	Businesses []businessJSON `json:"businesses"`
	NextCursor *string        `json:"nextCursor"`
}

func (s *Server) listBusinesses(c *gin.Context) {
	q := c.Request.URL.Query()
	for _, k := range []string{"all", "limit", "cursor"} {
		if len(q[k]) > 1 {
			writeError(c, fieldError(&field.Error{Field: k, Problem: "must be given at most once"}))
			return
		}
	}
	all := q.Get("all")
	if all != "" && all != "true" && all != "false" {
		writeError(c, fieldError(&field.Error{Field: "all", Problem: "must be true or false"}))
		return
	}
	cl := callerOf(c)
	if all != "true" {
		if q.Has("limit") || q.Has("cursor") {
			f := "limit"
			if !q.Has(f) {
				f = "cursor"
			}
			writeError(c, fieldError(&field.Error{Field: f, Problem: "pages the all=true list only"}))
			return
		}
		s.listOwnBusinesses(c, cl)
		return
	}
	if !cl.Platform {
		s.deny(c, crosstenant.PlatformTenant, "PLATFORM_ADMIN_REQUIRED", "all=true lists every business; it is for platform admins")
		return
	}
	limit, after, e := pageParams(q.Get("limit"), q.Get("cursor"))
	if q.Has("limit") && q.Get("limit") == "" {
		e = fieldError(&field.Error{Field: "limit", Problem: "must be a whole number from 1 to 100"})
	}
	if e != nil {
		writeError(c, e)
		return
	}
	var page []orgs.BusinessOrg
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		var err error
		page, err = orgs.ListBusinesses(c.Request.Context(), tx, after, limit+1)
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	out := businessListJSON{Businesses: []businessJSON{}}
	page, out.NextCursor = pageOf(page, limit, func(b orgs.BusinessOrg) string { return b.ID })
	for _, b := range page {
		out.Businesses = append(out.Businesses, toBusinessJSON(b))
	}
	c.JSON(http.StatusOK, out)
}

// listOwnBusinesses answers the businesses the caller is an active member of (a platform admin's
// own memberships too): RLS scoped to the user shows nothing else.
func (s *Server) listOwnBusinesses(c *gin.Context, cl *caller) {
	ctx := c.Request.Context()
	var ms []orgs.BusinessMembership
	err := tenancy.InUserTx(ctx, s.deps.DB, func(tx pgx.Tx) error {
		var err error
		ms, err = orgs.BusinessesForUser(ctx, tx, cl.User.ID)
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	out := businessListJSON{Businesses: []businessJSON{}}
	for _, m := range ms {
		b := toBusinessJSON(m.Business)
		b.Role = m.Role
		out.Businesses = append(out.Businesses, b)
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) getBusiness(c *gin.Context) {
	b, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (orgs.BusinessOrg, error) {
		return orgs.BusinessByID(ctx, tx, callerOf(c).Tenant)
	})
	if err != nil {
		writeError(c, businessError(err))
		return
	}
	c.JSON(http.StatusOK, toBusinessJSON(b))
}

func (s *Server) updateBusiness(c *gin.Context) {
	id := callerOf(c).Tenant
	var req businessFields
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	given, err := req.validate()
	if err != nil {
		writeError(c, fieldError(err))
		return
	}
	if len(given) == 0 {
		writeError(c, NewError(http.StatusBadRequest, "INVALID_REQUEST", "give at least one field to change"))
		return
	}
	b, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (orgs.BusinessOrg, error) {
		b, err := orgs.UpdateBusiness(ctx, tx, id, func(x *orgs.BusinessOrg) error { req.apply(x); return nil })
		if err != nil {
			return b, err
		}
		return b, audit.Write(ctx, tx, audit.Entry{Action: actionUpdateBusiness, Outcome: audit.Success,
			TargetType: targetBusiness, TargetID: id, Details: map[string]any{"fields": given}})
	})
	if err != nil {
		s.businessFail(c, id, actionUpdateBusiness, targetBusiness, err)
		return
	}
	c.JSON(http.StatusOK, toBusinessJSON(b))
}

func (s *Server) deleteBusiness(c *gin.Context) {
	id := callerOf(c).Tenant
	b, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (orgs.BusinessOrg, error) {
		b, err := orgs.DeleteBusiness(ctx, tx, id, s.now())
		if err != nil {
			return b, err
		}
		return b, audit.Write(ctx, tx, audit.Entry{Action: actionDeleteBusiness, Outcome: audit.Success,
			TargetType: targetBusiness, TargetID: id})
	})
	if err != nil {
		s.businessFail(c, id, actionDeleteBusiness, targetBusiness, err)
		return
	}
	s.access.InvalidateOrganization(id)
	c.JSON(http.StatusOK, toBusinessJSON(b))
}

type onboardingStepJSON struct {
	Key     string   `json:"key"`
	Done    bool     `json:"done"`
	Missing []string `json:"missing"`
}

type onboardingJSON struct {
	OrganizationID string               `json:"organizationId"`
	Steps          []onboardingStepJSON `json:"steps"`
	Percent        int                  `json:"percent"`
}

func (s *Server) businessOnboarding(c *gin.Context) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	var p orgs.Onboarding
	err := s.asPlatformIn(c, id, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		p, err = orgs.BusinessOnboarding(ctx, tx, id)
		return err
	})
	if err != nil {
		writeError(c, businessError(err))
		return
	}
	out := onboardingJSON{OrganizationID: id, Percent: p.Percent, Steps: []onboardingStepJSON{}}
	for _, st := range p.Steps {
		missing := st.Missing
		if missing == nil {
			missing = []string{}
		}
		out.Steps = append(out.Steps, onboardingStepJSON{Key: st.Key, Done: st.Done, Missing: missing})
	}
	c.JSON(http.StatusOK, out)
}

type verifyKYCRequest struct {
	Status string `json:"status"`
	Note   string `json:"note"`
}

// verifyKYC records the platform's KYC (KYB) review of an organization of m's kind.
func (s *Server) verifyKYC(m kycDocumentMount) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := pathID(c)
		if !ok {
			return
		}
		var req verifyKYCRequest
		if e := bindJSON(c, &req); e != nil {
			writeError(c, e)
			return
		}
		req.Note = strings.TrimSpace(req.Note)
		switch {
		case req.Status != orgs.KYCVerified && req.Status != orgs.KYCRejected:
			writeError(c, fieldError(&field.Error{Field: "status", Problem: "must be VERIFIED or REJECTED"}))
			return
		case req.Status == orgs.KYCRejected && req.Note == "":
			writeError(c, fieldError(&field.Error{Field: "note", Problem: "is required when rejecting (say why)"}))
			return
		}
		if err := field.Text("note", req.Note, 0); err != nil {
			writeError(c, fieldError(err))
			return
		}
		var out any
		err := s.asPlatformIn(c, id, func(ctx context.Context, tx pgx.Tx) error {
			if _, err := orgs.ReviewKYC(ctx, tx, id, m.kind, orgs.KYCReview{Status: req.Status, Note: req.Note,
				Reviewer: callerOf(c).User.ID, At: s.now()}); err != nil {
				return err
			}
			if err := audit.Write(ctx, tx, audit.Entry{Action: m.verifyAction, Outcome: audit.Success,
				TargetType: m.target, TargetID: id, Details: map[string]string{"status": req.Status}}); err != nil {
				return err
			}
			var err error
			out, err = organizationView(ctx, tx, id, m.kind)
			return err
		})
		if err != nil {
			s.businessFail(c, id, m.verifyAction, m.target, err)
			return
		}
		c.JSON(http.StatusOK, out)
	}
}

type businessStatusRequest struct {
	Status string `json:"status"`
}

// setOrganizationStatus activates or suspends an organization of m's kind. A suspended
// organization's members can only read; a suspended FI or merchant also takes no new business
// (internal/orgs standing.go).
func (s *Server) setOrganizationStatus(m kycDocumentMount) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := pathID(c)
		if !ok {
			return
		}
		var req businessStatusRequest
		if e := bindJSON(c, &req); e != nil {
			writeError(c, e)
			return
		}
		if req.Status != orgs.OrgActive && req.Status != orgs.OrgSuspended {
			writeError(c, fieldError(&field.Error{Field: "status", Problem: "must be ACTIVE or SUSPENDED (DELETE deletes)"}))
			return
		}
		var out any
		err := s.asPlatformIn(c, id, func(ctx context.Context, tx pgx.Tx) error {
			if _, err := orgs.SetStatus(ctx, tx, id, m.kind, req.Status); err != nil {
				return err
			}
			if err := audit.Write(ctx, tx, audit.Entry{Action: m.statusAction, Outcome: audit.Success,
				TargetType: m.target, TargetID: id, Details: map[string]string{"status": req.Status}}); err != nil {
				return err
			}
			var err error
			out, err = organizationView(ctx, tx, id, m.kind)
			return err
		})
		if err != nil {
			s.businessFail(c, id, m.statusAction, m.target, err)
			return
		}
		s.access.InvalidateOrganization(id)
		c.JSON(http.StatusOK, out)
	}
}

// partnerJSON is an FI or merchant as the platform's review and status routes answer it.
type partnerJSON struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Kind      orgs.Kind `json:"kind"`
	Status    string    `json:"status"`
	KYCStatus string    `json:"kycStatus"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// organizationView is organization id as the review and status routes answer it: a business with
// its profile, an FI or merchant as partnerJSON.
func organizationView(ctx context.Context, tx pgx.Tx, id string, k orgs.Kind) (any, error) {
	if k == orgs.Business {
		b, err := orgs.BusinessByID(ctx, tx, id)
		return toBusinessJSON(b), err
	}
	o, err := orgs.ByID(ctx, tx, id)
	return partnerJSON{ID: o.ID, Name: o.Name, Kind: o.Kind, Status: o.Status, KYCStatus: o.KYCStatus, UpdatedAt: o.UpdatedAt.UTC()}, err
}

// KYC documents.

type kycDocumentJSON struct {
	DocType     string    `json:"docType"`
	FileKey     string    `json:"fileKey"`
	FileName    string    `json:"fileName"`
	ContentType string    `json:"contentType"`
	SizeBytes   int64     `json:"sizeBytes"`
	UploadedAt  time.Time `json:"uploadedAt"`
	UploadedBy  string    `json:"uploadedBy"`
}

func toKYCDocumentJSON(docType string, d orgs.KYCDocument) kycDocumentJSON {
	return kycDocumentJSON{DocType: docType, FileKey: d.FileKey, FileName: d.FileName, ContentType: d.ContentType,
		SizeBytes: d.SizeBytes, UploadedAt: d.UploadedAt.UTC(), UploadedBy: d.UploadedBy}
}

type kycDocumentListJSON struct {
	OrganizationID string            `json:"organizationId"`
	Kind           orgs.Kind         `json:"kind"`
	Documents      []kycDocumentJSON `json:"documents"`
	Missing        []string          `json:"missing"`
}

// kycDocumentPath reads and checks :id and :docType of a document route of kind k.
func kycDocumentPath(c *gin.Context, k orgs.Kind) (id, docType string, ok bool) {
	if id, ok = pathID(c); !ok {
		return "", "", false
	}
	docType = c.Param("docType")
	if err := field.Identifier("docType", docType, 64); err != nil {
		writeError(c, fieldError(err))
		return "", "", false
	}
	if !orgs.ValidDocumentType(k, docType) {
		e := NewError(http.StatusBadRequest, "UNKNOWN_DOCUMENT_TYPE", "unknown document type for this kind of organization")
		e.Details = map[string]any{"allowed": orgs.DocumentTypes(k)}
		writeError(c, e)
		return "", "", false
	}
	return id, docType, true
}

func (s *Server) listKYCDocuments(k orgs.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, ok := pathID(c)
		if !ok {
			return
		}
		var o orgs.Organization
		err := s.asPlatformIn(c, id, func(ctx context.Context, tx pgx.Tx) error {
			var err error
			o, err = orgs.OrganizationOfKind(ctx, tx, id, k)
			return err
		})
		if err != nil {
			writeError(c, businessError(err))
			return
		}
		docs, err := orgs.Documents(o)
		if err != nil {
			writeError(c, err)
			return
		}
		out := kycDocumentListJSON{OrganizationID: id, Kind: k, Documents: []kycDocumentJSON{}, Missing: []string{}}
		for _, t := range orgs.SortedDocumentTypes(docs) {
			out.Documents = append(out.Documents, toKYCDocumentJSON(t, docs[t]))
		}
		out.Missing = append(out.Missing, orgs.MissingDocuments(k, o.KYCDocuments)...)
		c.JSON(http.StatusOK, out)
	}
}

type kycDocumentRequest struct {
	FileKey     string `json:"fileKey"`
	FileName    string `json:"fileName"`
	ContentType string `json:"contentType"`
	SizeBytes   int64  `json:"sizeBytes"`
}

// maxFileName bounds a declared file name (most file systems' limit).
const maxFileName = 255

func (r *kycDocumentRequest) validate() error {
	r.FileName = strings.TrimSpace(r.FileName)
	if err := field.Reference("fileKey", r.FileKey, 0); err != nil {
		return err
	}
	if err := field.Name("fileName", r.FileName); err != nil {
		return err
	}
	if len(r.FileName) > maxFileName || strings.ContainsAny(r.FileName, `/\`) {
		return &field.Error{Field: "fileName", Problem: "must be a file name of at most 255 bytes without '/' or '\\'"}
	}
	if !slices.Contains(orgs.DocumentContentTypes, r.ContentType) {
		return &field.Error{Field: "contentType", Problem: "must be " + strings.Join(orgs.DocumentContentTypes, ", ")}
	}
	if r.SizeBytes < 1 || r.SizeBytes > orgs.MaxDocumentBytes {
		return &field.Error{Field: "sizeBytes", Problem: "must be from 1 to " + strconv.Itoa(orgs.MaxDocumentBytes)}
	}
	return nil
}

func (s *Server) putKYCDocument(k orgs.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, docType, ok := kycDocumentPath(c, k)
		if !ok {
			return
		}
		var req kycDocumentRequest
		if e := bindJSON(c, &req); e != nil {
			writeError(c, e)
			return
		}
		if err := req.validate(); err != nil {
			writeError(c, fieldError(err))
			return
		}
		d := orgs.KYCDocument{FileKey: req.FileKey, FileName: req.FileName, ContentType: req.ContentType,
			SizeBytes: req.SizeBytes, UploadedAt: s.now().UTC(), UploadedBy: callerOf(c).User.ID}
		var replaced bool
		err := s.asPlatformIn(c, id, func(ctx context.Context, tx pgx.Tx) error {
			var err error
			if replaced, err = orgs.PutDocument(ctx, tx, id, k, docType, d); err != nil {
				return err
			}
			// After the organization's own refusals (404 unknown or of another kind, 409
			// deleted), in the same transaction: a refusal here rolls the write back.
			if err := documentIsUpload(ctx, tx, id, req); err != nil {
				return err
			}
			return audit.Write(ctx, tx, audit.Entry{Action: actionPutKYCDocument, Outcome: audit.Success,
				TargetType: targetOrganization, TargetID: id,
				Details: map[string]any{"docType": docType, "kind": k, "replaced": replaced}})
		})
		if err != nil {
			s.businessFail(c, id, actionPutKYCDocument, targetOrganization, err)
			return
		}
		status := http.StatusCreated
		if replaced {
			status = http.StatusOK
		}
		c.JSON(status, toKYCDocumentJSON(docType, d))
	}
}

// documentIsUpload holds a KYC document to the file it names: an upload of this organization
// (another organization's key, a made-up one and a nil UUID all look alike: not found), whose
// recorded content type and size are the declared ones. Without it a reviewer would verify a
// business on a "document" that is not there, or is not what the record says it is (a 9 MB PNG
// that is a 45-byte PDF).
func documentIsUpload(ctx context.Context, tx pgx.Tx, tenant string, req kycDocumentRequest) error {
	obj, err := uploads.Lookup(ctx, tx, tenant, req.FileKey)
	if errors.Is(err, uploads.ErrNotFound) {
		e := NewError(http.StatusBadRequest, "KYC_DOCUMENT_NOT_FOUND", "fileKey names no upload of this organization (POST /api/uploads first)")
		e.Details = map[string]string{"field": "fileKey"}
		return e
	}
	if err != nil {
		return err
	}
	mismatch := func(f string, declared, stored any) error {
		e := NewError(http.StatusBadRequest, "KYC_DOCUMENT_MISMATCH", f+" is not the uploaded file's")
		e.Details = map[string]any{"field": f, "declared": declared, "uploaded": stored}
		return e
	}
	if obj.ContentType != req.ContentType {
		return mismatch("contentType", req.ContentType, obj.ContentType)
	}
	if obj.SizeBytes != req.SizeBytes {
		return mismatch("sizeBytes", req.SizeBytes, obj.SizeBytes)
	}
	return nil
}

func (s *Server) deleteKYCDocument(k orgs.Kind) gin.HandlerFunc {
	return func(c *gin.Context) {
		id, docType, ok := kycDocumentPath(c, k)
		if !ok {
			return
		}
		var d orgs.KYCDocument
		err := s.asPlatformIn(c, id, func(ctx context.Context, tx pgx.Tx) error {
			var err error
			if d, err = orgs.DeleteDocument(ctx, tx, id, k, docType); err != nil {
				return err
			}
			return audit.Write(ctx, tx, audit.Entry{Action: actionDeleteKYCDocument, Outcome: audit.Success,
				TargetType: targetOrganization, TargetID: id, Details: map[string]any{"docType": docType, "kind": k}})
		})
		if err != nil {
			s.businessFail(c, id, actionDeleteKYCDocument, targetOrganization, err)
			return
		}
		c.JSON(http.StatusOK, toKYCDocumentJSON(docType, d))
	}
}
