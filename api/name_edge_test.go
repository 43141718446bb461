package api

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/sanctions"
)

// Issue 21: a listed name with invisible characters inside (a WORD JOINER between letters) was
// accepted as an employee, screened CLEAR and paid. The edge now refuses names carrying invisible
// formatting characters with a 400 naming the field, and stores nothing; a name whose script needs
// a zero-width non-joiner between letters (Persian) is still accepted.
func TestNamesRefuseInvisibleCharacters(t *testing.T) {
	t.Parallel()
	w := newEmpWorld(t)
	for i, c := range []struct {
		name, field string
		set         func(map[string]any)
	}{
		{"word joiner in the last name", "lastName", func(b map[string]any) { b["firstName"], b["lastName"] = "Usama", "bin La\u2060din" }},
		{"zero-width space in the first name", "firstName", func(b map[string]any) { b["firstName"] = "Us\u200Bama" }},
		{"soft hyphen", "lastName", func(b map[string]any) { b["lastName"] = "Lad\u00ADin" }},
		{"byte order mark", "firstName", func(b map[string]any) { b["firstName"] = "\uFEFFUsama" }},
		{"tag character", "lastName", func(b map[string]any) { b["lastName"] = "Ladin\U000E0061" }},
		{"variation selector", "firstName", func(b map[string]any) { b["firstName"] = "Usama\uFE0F" }},
		{"zero-width joiner between Latin letters", "firstName", func(b map[string]any) { b["firstName"] = "Usa\u200Dma" }},
		{"invisible character in the account holder", "payoutAccount.holderName", func(b map[string]any) {
			b["payoutAccount"].(map[string]any)["holderName"] = "Usama bin\u2060 Ladin"
		}},
	} {
		body := w.body("ET3000000" + string(rune('0'+i)))
		c.set(body)
		rec := w.hostile(w.owner, http.MethodPost, "/api/employees", body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", c.name, rec.Body.String())
		require.Equal(t, "INVALID_REQUEST", errCode(rec), c.name)
		var e struct {
			Error struct {
				Message string            `json:"message"`
				Details map[string]string `json:"details"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e))
		require.Equal(t, c.field, e.Error.Details["field"], c.name)
		require.Contains(t, e.Error.Message, "invisible", c.name)
	}
	require.Zero(t, w.listed(t), "nothing was stored")
	require.Empty(t, w.events(w.a, eventEmployeeCreated))

	// A Persian name spelt with a zero-width non-joiner between letters is a name.
	body := w.body("ET30000099")
	body["lastName"] = "\u0645\u06CC\u200C\u0631\u0648\u062F"
	w.create(w.owner, body)
	require.Equal(t, 1, w.listed(t))

	// An organization's name at sign-up: the same refusal, which the document's pattern
	// (nameText) states too.
	signUp := map[string]any{
		"email": "evasive@example.org", "password": testPassword, "name": "Abebe Kebede",
		"organization": map[string]any{"name": "Red\u200B Sea Trading", "kind": "BUSINESS"},
	}
	anon := w.f.client()
	require.Error(t, anon.documentVerdict(http.MethodPost, "/api/auth/sign-up/email", signUp))
	rec := anon.hostile(http.MethodPost, "/api/auth/sign-up/email", signUp)
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	require.Equal(t, "INVALID_REQUEST", errCode(rec))
}

// Lists normalised by older matching rules than the build's are never screened against: the
// screen route answers 503 SANCTIONS_LISTS_OUTDATED until `wagerail sanctions rescreen`
// (sanctions.Rescreen) renormalised them; then it screens, under the current rules.
func TestSanctionsScreenRefusesOutdatedLists(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t)
	root := f.platformAdmin("root@outdated.example")
	f.sanctionsIngest()
	ctx := context.Background()
	owner, err := pgxpool.New(ctx, f.d.OwnerDSN)
	require.NoError(t, err)
	t.Cleanup(owner.Close)
	_, err = owner.Exec(ctx, `UPDATE app.sanctions_list_versions SET normalizer_version = 1`)
	require.NoError(t, err)

	rec := root.call(http.MethodPost, "/api/sanctions/screen", map[string]any{"name": "Osama bin Ladin"})
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Equal(t, "SANCTIONS_LISTS_OUTDATED", errCode(rec))

	rep, err := sanctions.Rescreen(tenancy.WithActor(ctx, sanctionsTestActor), f.d.Platform(t))
	require.NoError(t, err)
	require.Equal(t, 2, rep.Renormalized)
	rec = root.call(http.MethodPost, "/api/sanctions/screen", map[string]any{"name": "Osama bin Ladin"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var res struct {
		Outcome           string `json:"outcome"`
		NormalizerVersion int    `json:"normalizerVersion"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &res))
	require.Equal(t, "BLOCK", res.Outcome)
	require.Equal(t, sanctions.NormalizerVersion, res.NormalizerVersion)
}
