package api

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/uploads"
)

// A business's branding: GET /api/business/<id>/branding (its members; the defaults until it sets
// its own) and PUT (its admins; the whole branding replaced, audited UpdateBusinessBranding). The
// logo is one of the organization's own uploads, a PNG or JPEG of at most MaxBrandingLogoBytes
// whose stored content is what its record says.

const (
	actionUpdateBusinessBranding = "UpdateBusinessBranding"
	// MaxBrandingLogoBytes bounds a logo (it is drawn on every payslip).
	MaxBrandingLogoBytes = 512 << 10
	// Bounds in characters (the contract's maxLength); 80 Ethiopic characters stay within a
	// name's byte bound (field.MaxName).
	maxBrandingFooter = 500
	maxBrandingName   = 80
)

var brandingColor = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)

type brandingJSON struct {
	BusinessID    string     `json:"businessId"`
	DisplayName   string     `json:"displayName"`
	PrimaryColor  string     `json:"primaryColor"`
	AccentColor   string     `json:"accentColor"`
	LogoUploadKey *string    `json:"logoUploadKey"`
	LogoPath      *string    `json:"logoPath"`
	PayslipFooter *string    `json:"payslipFooter"`
	Custom        bool       `json:"custom"`
	UpdatedBy     *string    `json:"updatedBy"`
	UpdatedAt     *time.Time `json:"updatedAt"`
}

type brandingRequest struct {
	DisplayName   *string `json:"displayName"`
	PrimaryColor  string  `json:"primaryColor"`
	AccentColor   string  `json:"accentColor"`
	LogoUploadKey *string `json:"logoUploadKey"`
	PayslipFooter *string `json:"payslipFooter"`
}

func (r brandingRequest) validate() (orgs.Branding, error) {
	var b orgs.Branding
	if r.DisplayName != nil {
		b.DisplayName = strings.TrimSpace(*r.DisplayName)
		if err := field.Name("displayName", b.DisplayName); err != nil {
			return b, err
		}
		if utf8.RuneCountInString(b.DisplayName) > maxBrandingName {
			return b, &field.Error{Field: "displayName", Problem: "must be at most 80 characters"}
		}
	}
	for _, c := range []struct {
		name, v string
		to      *string
	}{{"primaryColor", r.PrimaryColor, &b.PrimaryColor}, {"accentColor", r.AccentColor, &b.AccentColor}} {
		if !brandingColor.MatchString(c.v) {
			return b, &field.Error{Field: c.name, Problem: "must be a colour #RRGGBB"}
		}
		*c.to = strings.ToUpper(c.v)
	}
	if r.LogoUploadKey != nil {
		if !uploads.ValidKey(*r.LogoUploadKey) {
			return b, &field.Error{Field: "logoUploadKey", Problem: "is not an upload key"}
		}
		b.LogoUploadKey = *r.LogoUploadKey
	}
	if r.PayslipFooter != nil {
		b.PayslipFooter = strings.TrimSpace(*r.PayslipFooter)
		if b.PayslipFooter == "" {
			return b, &field.Error{Field: "payslipFooter", Problem: "must not be blank (null for none)"}
		}
		if utf8.RuneCountInString(b.PayslipFooter) > maxBrandingFooter {
			return b, &field.Error{Field: "payslipFooter", Problem: "must be at most 500 characters"}
		}
		if err := field.Text("payslipFooter", b.PayslipFooter, utf8.UTFMax*maxBrandingFooter); err != nil {
			return b, err
		}
	}
	return b, nil
}

func toBrandingJSON(b orgs.Branding, orgName string) brandingJSON {
	out := brandingJSON{BusinessID: b.TenantID, DisplayName: b.DisplayName, PrimaryColor: b.PrimaryColor, AccentColor: b.AccentColor,
		Custom: b.Custom, LogoUploadKey: optionalString(b.LogoUploadKey), PayslipFooter: optionalString(b.PayslipFooter)}
	if out.DisplayName == "" {
		out.DisplayName = orgName
	}
	if b.LogoUploadKey != "" {
		p := "/api/uploads/" + b.TenantID + "/" + b.LogoUploadKey
		out.LogoPath = &p
	}
	if b.Custom {
		out.UpdatedBy = optionalString(b.UpdatedBy)
		t := b.UpdatedAt.UTC()
		out.UpdatedAt = &t
	}
	return out
}

func (s *Server) getBranding(c *gin.Context) {
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (brandingJSON, error) {
		return s.brandingOf(ctx, tx, callerOf(c).Tenant)
	})
	if err != nil {
		writeError(c, businessError(err))
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) brandingOf(ctx context.Context, tx pgx.Tx, id string) (brandingJSON, error) {
	org, err := orgs.BusinessByID(ctx, tx, id)
	if err != nil {
		return brandingJSON{}, err
	}
	b, err := orgs.BrandingOf(ctx, tx, id)
	return toBrandingJSON(b, org.Name), err
}

func (s *Server) putBranding(c *gin.Context) {
	id := callerOf(c).Tenant
	var req brandingRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	b, err := req.validate()
	if err != nil {
		writeError(c, fieldError(err))
		return
	}
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (brandingJSON, error) {
		if _, err := orgs.BusinessByID(ctx, tx, id); err != nil {
			return brandingJSON{}, err
		}
		if b.LogoUploadKey != "" {
			if err := s.checkLogo(ctx, tx, id, b.LogoUploadKey); err != nil {
				return brandingJSON{}, err
			}
		}
		if _, err := orgs.SetBranding(ctx, tx, id, b, callerOf(c).User.ID, s.now()); err != nil {
			return brandingJSON{}, err
		}
		if err := audit.Write(ctx, tx, audit.Entry{Action: actionUpdateBusinessBranding, Outcome: audit.Success,
			TargetType: targetBusiness, TargetID: id, Details: map[string]any{"logo": b.LogoUploadKey != "", "footer": b.PayslipFooter != ""}}); err != nil {
			return brandingJSON{}, err
		}
		return s.brandingOf(ctx, tx, id)
	})
	if err != nil {
		writeError(c, businessError(err))
		return
	}
	c.JSON(http.StatusOK, out)
}

// checkLogo admits an upload of the organization as its logo: a PNG or JPEG (declared and
// sniffed), small enough, whose stored bytes are what was recorded.
func (s *Server) checkLogo(ctx context.Context, tx pgx.Tx, tenant, key string) error {
	logoErr := func(code, msg string) error {
		e := NewError(http.StatusBadRequest, code, msg)
		e.Details = map[string]string{"field": "logoUploadKey"}
		return e
	}
	obj, err := uploads.Lookup(ctx, tx, tenant, key)
	if errors.Is(err, uploads.ErrNotFound) {
		return logoErr("BRANDING_LOGO_NOT_FOUND", "no upload "+key+" in this organization")
	}
	if err != nil {
		return err
	}
	images := []string{"image/png", "image/jpeg"}
	if !slices.Contains(images, obj.ContentType) || !slices.Contains(images, obj.SniffedType) {
		return logoErr("BRANDING_LOGO_NOT_AN_IMAGE", "the logo must be a PNG or JPEG image")
	}
	if obj.SizeBytes > MaxBrandingLogoBytes {
		return logoErr("BRANDING_LOGO_TOO_LARGE", "the logo must be at most 512 KiB")
	}
	if s.deps.Uploads == nil {
		return NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "uploads are not configured")
	}
	switch err := uploads.VerifyContent(ctx, s.deps.Uploads, obj); {
	case errors.Is(err, uploads.ErrHashMismatch), errors.Is(err, uploads.ErrNotFound):
		return logoErr("BRANDING_LOGO_HASH_MISMATCH", "the stored logo no longer matches what was uploaded")
	default:
		return err
	}
}
