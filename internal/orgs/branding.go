package orgs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// Branding is how a business presents itself to its employees (the portal, payslips). A business
// that never set it has the defaults: its organization name, the platform's colours, no logo and
// no footer (Custom false).
type Branding struct {
	TenantID      string
	DisplayName   string // "" = the organization's name
	PrimaryColor  string // #RRGGBB, upper case
	AccentColor   string
	LogoUploadKey string // "" = none; an upload of the same organization
	PayslipFooter string // "" = none
	Custom        bool   // set by the business (false: the defaults)
	UpdatedBy     string
	UpdatedAt     time.Time
}

// The platform's colours: a business's branding until it sets its own.
const (
	DefaultPrimaryColor = "#1F4E79"
	DefaultAccentColor  = "#F2A900"
)

// BrandingOf reads tenant's branding, or the defaults when it never set any. Run it in a tenant
// transaction (or on the cross-tenant path).
func BrandingOf(ctx context.Context, q db.Querier, tenant string) (Branding, error) {
	b := Branding{TenantID: tenant}
	var name, logo, footer *string
	err := q.QueryRow(ctx, `SELECT display_name, primary_color, accent_color, logo_upload_key, payslip_footer, updated_by, updated_at
		FROM app.business_branding WHERE tenant_id = $1`, tenant).Scan(&name, &b.PrimaryColor, &b.AccentColor, &logo, &footer, &b.UpdatedBy, &b.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Branding{TenantID: tenant, PrimaryColor: DefaultPrimaryColor, AccentColor: DefaultAccentColor}, nil
	}
	if err != nil {
		return Branding{}, fmt.Errorf("orgs: branding: %w", err)
	}
	b.Custom = true
	b.DisplayName, b.LogoUploadKey, b.PayslipFooter = deref(name), deref(logo), deref(footer)
	return b, nil
}

// SetBranding replaces tenant's branding with b (validated by the caller; the logo an upload of
// the same organization) as actor, and answers it as stored.
func SetBranding(ctx context.Context, q db.Querier, tenant string, b Branding, actor string, now time.Time) (Branding, error) {
	_, err := q.Exec(ctx, `INSERT INTO app.business_branding
		(tenant_id, display_name, primary_color, accent_color, logo_upload_key, payslip_footer, updated_by, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (tenant_id) DO UPDATE SET display_name = excluded.display_name, primary_color = excluded.primary_color,
			accent_color = excluded.accent_color, logo_upload_key = excluded.logo_upload_key,
			payslip_footer = excluded.payslip_footer, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		tenant, nullIfEmpty(b.DisplayName), b.PrimaryColor, b.AccentColor, nullIfEmpty(b.LogoUploadKey), nullIfEmpty(b.PayslipFooter), actor, now)
	if err != nil {
		return Branding{}, fmt.Errorf("orgs: set branding: %w", err)
	}
	return BrandingOf(ctx, q, tenant)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
