package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

type brandingOut struct {
	BusinessID, DisplayName, PrimaryColor, AccentColor string
	LogoUploadKey, LogoPath, PayslipFooter, UpdatedBy  *string
	Custom                                             bool
}

func (w *kycWorld) branding(t *testing.T, who *apiClient) brandingOut {
	t.Helper()
	rec := who.call(http.MethodGet, "/api/business/"+w.tenant+"/branding", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return decode[brandingOut](t, rec)
}

// A business's branding: the defaults until set; set whole by an admin (a PNG logo of its own,
// colours upper-cased, an Amharic footer), read by members and platform admins; each bad field a
// 400 with its code and nothing changed; a plain member or a stranger cannot set it; null clears.
func TestBusinessBranding(t *testing.T) {
	t.Parallel()
	w := newKycWorld(t)
	path := "/api/business/" + w.tenant + "/branding"

	def := w.branding(t, w.owner)
	require.False(t, def.Custom)
	require.Equal(t, orgs.DefaultPrimaryColor, def.PrimaryColor)
	require.Equal(t, orgs.DefaultAccentColor, def.AccentColor)
	require.NotEmpty(t, def.DisplayName, "the organization's name")
	require.Nil(t, def.LogoUploadKey)
	require.Nil(t, def.PayslipFooter)

	logo := w.upload("logo.png", "image/png", uploadsPNG)
	rec := w.owner.call(http.MethodPut, path, map[string]any{"displayName": " Abebe Coffee ", "primaryColor": "#1a2b3c",
		"accentColor": "#FFAA00", "logoUploadKey": logo, "payslipFooter": "አመሰግናለሁ — thank you"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	set := decode[brandingOut](t, rec)
	require.True(t, set.Custom)
	require.Equal(t, "Abebe Coffee", set.DisplayName)
	require.Equal(t, "#1A2B3C", set.PrimaryColor)
	require.Equal(t, logo, *set.LogoUploadKey)
	require.Equal(t, "/api/uploads/"+w.tenant+"/"+logo, *set.LogoPath)
	require.Equal(t, "አመሰግናለሁ — thank you", *set.PayslipFooter)
	require.Equal(t, set, w.branding(t, w.owner))
	require.Equal(t, set, w.branding(t, w.reviewer), "a platform admin reads it")
	var audits int
	ctx := tenancy.WithTenant(context.Background(), w.tenant)
	require.NoError(t, tenancy.InTx(ctx, w.d.App, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'UpdateBusinessBranding'`, w.tenant).Scan(&audits)
	}))
	require.Equal(t, 1, audits)

	pdf := w.upload("logo.pdf", "application/pdf", uploadsPDF)
	otherLogo := uploadsSend(w.other, "", uploadsFile("x.png", "image/png", uploadsPNG))
	require.Equal(t, http.StatusCreated, otherLogo.Code, otherLogo.Body.String())
	foreign := decode[struct {
		Key string `json:"key"`
	}](t, otherLogo).Key
	good := map[string]any{"primaryColor": "#000000", "accentColor": "#FFFFFF"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range good {
			m[a] = b
		}
		m[k] = v
		return m
	}
	for _, c := range []struct {
		body map[string]any
		code string
	}{
		{with("primaryColor", "red"), "INVALID_REQUEST"},
		{with("accentColor", "#12345"), "INVALID_REQUEST"},
		{with("displayName", "Abebe\u200bCoffee"), "INVALID_REQUEST"},
		{with("displayName", strings.Repeat("ሀ", 81)), "INVALID_REQUEST"},
		{with("payslipFooter", strings.Repeat("x", 501)), "INVALID_REQUEST"},
		{with("payslipFooter", "bell\u0007"), "INVALID_REQUEST"},
		{with("logoUploadKey", "../etc/passwd"), "INVALID_REQUEST"},
		{with("logoUploadKey", pdf), "BRANDING_LOGO_NOT_AN_IMAGE"},
		{with("logoUploadKey", foreign), "BRANDING_LOGO_NOT_FOUND"},
		{with("logoUploadKey", "upl_00000000-0000-0000-0000-000000000000"), "BRANDING_LOGO_NOT_FOUND"},
	} {
		send := w.owner.call
		if c.code == "INVALID_REQUEST" {
			send = w.owner.hostile // the contract refuses it too: the client would not send it
		}
		catalogStatus(t, send(http.MethodPut, path, c.body), http.StatusBadRequest, c.code)
	}
	require.Equal(t, set, w.branding(t, w.owner), "a refused update changes nothing")

	w.addMember(w.tenant, "clerk@branding.test", orgs.PlainMember)
	clerk := w.signIn("clerk@branding.test")
	require.Equal(t, set, w.branding(t, clerk), "members read it")
	catalogStatus(t, clerk.call(http.MethodPut, path, good), http.StatusForbidden, "INSUFFICIENT_ROLE")
	catalogStatus(t, w.other.call(http.MethodGet, path, nil), http.StatusForbidden, "NOT_A_MEMBER")
	catalogStatus(t, w.other.call(http.MethodPut, path, good), http.StatusForbidden, "NOT_A_MEMBER")

	// Replaced whole: no logo, no footer, the organization's name.
	rec = w.owner.call(http.MethodPut, path, map[string]any{"primaryColor": "#000000", "accentColor": "#ffffff", "logoUploadKey": nil})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	cleared := decode[brandingOut](t, rec)
	require.Nil(t, cleared.LogoUploadKey)
	require.Nil(t, cleared.PayslipFooter)
	require.Equal(t, def.DisplayName, cleared.DisplayName)
	require.Equal(t, "#FFFFFF", cleared.AccentColor)
}

// FuzzBrandingRoutes: any body on PUT …/branding answers 200 or 4xx, never 5xx, and a refused
// one leaves the branding as it was.
func FuzzBrandingRoutes(f *testing.F) {
	w := newKycWorld(f)
	path := "/api/business/" + w.tenant + "/branding"
	f.Add(`{"primaryColor":"#000000","accentColor":"#FFFFFF"}`)
	f.Add(`{"primaryColor":"#000000","accentColor":"#FFFFFF","displayName":"\u202eevil","payslipFooter":"=cmd()"}`)
	f.Add(`{"primaryColor":"#000000","accentColor":"#FFFFFF","logoUploadKey":"upl_00000000-0000-0000-0000-000000000000"}`)
	f.Add(`{"primaryColor":"#GGGGGG","accentColor":null}`)
	f.Add("\xff\xfe")
	f.Add(`{"primaryColor":"#000000","accentColor":"#FFFFFF","displayName":"` + strings.Repeat("ሀ", 80) + `"}`)
	f.Fuzz(func(t *testing.T, body string) {
		read := func() string {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.AddCookie(w.owner.cookie)
			w.srv.Engine.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET: %d %s", rec.Code, rec.Body.String())
			}
			return rec.Body.String()
		}
		before := read()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPut, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.AddCookie(w.owner.cookie)
		w.srv.Engine.ServeHTTP(rec, req)
		switch {
		case rec.Code >= 500:
			t.Fatalf("PUT %q: %d %s", body, rec.Code, rec.Body.String())
		case rec.Code >= 400:
			if after := read(); after != before {
				t.Fatalf("PUT %q refused %d but the branding changed:\n%s\n%s", body, rec.Code, before, after)
			}
		}
	})
}
