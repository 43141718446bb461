package logging

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Canary values: none may appear in any log line.
const (
	canaryAuth      = "Bearer CANARY-AUTH-7f3a"
	canarySig       = "CANARY-SIG-9b2c"
	canaryPassword  = "CANARY-PASSWORD-41d0"
	canaryNational  = "CANARY-NATID-5e61"
	canaryPhone     = "+251911CANARY1"
	canaryEmail     = "canary.person@example.org"
	canaryIdemKey   = "CANARY-IDEMKEY-0a9d"
	canaryRawBody   = "CANARY-RAWBODY-77aa"
	canaryCookie    = "CANARY-COOKIE-3c3c"
	emailMasked     = "****.org"
	correlationTx   = "tx-0001"
	correlationIdem = "idem-corr-42"
)

func logTo(buf *bytes.Buffer) *slog.Logger { return New(buf, slog.LevelDebug, "test") }

func requireClean(t *testing.T, out string) {
	t.Helper()
	for _, c := range []string{canaryAuth, "CANARY-AUTH", canarySig, canaryPassword, canaryNational, canaryPhone,
		"canary.person", canaryIdemKey, canaryRawBody, canaryCookie} {
		require.NotContains(t, out, c, "canary leaked into log output")
	}
}

func TestRedactsTopLevelAttributes(t *testing.T) {
	var buf bytes.Buffer
	logTo(&buf).Info("signup",
		"authorization", canaryAuth,
		"x-svc-signature", canarySig,
		"password", canaryPassword,
		"nationalId", canaryNational,
		"phone", canaryPhone,
		"email", canaryEmail,
		"idempotencyKey", canaryIdemKey,
		"rawBody", canaryRawBody,
		"tx_id", correlationTx,
		"idempotency_key", correlationIdem,
		"tenant_id", "ten-1", "account_id", "acc-1", "partner_reference", "pref-1", "disbursement_id", "d-1",
	)
	out := buf.String()
	requireClean(t, out)
	var rec map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &rec))
	for _, k := range []string{"authorization", "x-svc-signature", "password", "nationalId", "phone", "idempotencyKey", "rawBody"} {
		require.Equal(t, Masked, rec[k], k)
	}
	require.Equal(t, emailMasked, rec["email"])
	require.Equal(t, correlationTx, rec["tx_id"])
	require.Equal(t, correlationIdem, rec["idempotency_key"])
	require.Equal(t, "ten-1", rec["tenant_id"])
	require.Equal(t, "acc-1", rec["account_id"])
	require.Equal(t, "pref-1", rec["partner_reference"])
	require.Equal(t, "d-1", rec["disbursement_id"])
}

func TestRedactsHeadersGroupsMapsAndJSONBodies(t *testing.T) {
	var buf bytes.Buffer
	h := http.Header{}
	h.Set("Authorization", canaryAuth)
	h.Set("X-Svc-Signature", canarySig)
	h.Set("Cookie", canaryCookie)
	h.Set("Content-Type", "application/json")
	body := `{"user":{"password":"` + canaryPassword + `","email":"` + canaryEmail + `","phone":"` + canaryPhone +
		`"},"idempotencyKey":"` + canaryIdemKey + `","items":[{"nationalId":"` + canaryNational + `"}],"amountSantim":1500}`
	log := logTo(&buf)
	log.Info("request", "headers", h, "body", body)
	log.Info("bytes body", "body", []byte(body))
	log.Info("raw", "body", json.RawMessage(body))
	log.Info("map", "payload", map[string]any{"password": canaryPassword, "nested": map[string]any{"phone": canaryPhone}})
	log.Info("group", slog.Group("req", slog.String("authorization", canaryAuth), slog.Group("user", slog.String("email", canaryEmail))))
	log.With("password", canaryPassword).Info("with attrs")
	log.WithGroup("g").Info("in group", "nationalId", canaryNational)
	// A webhook body is masked whole, whatever it contains.
	log.Info("webhook", "raw_body", `{"status":"SETTLED","note":"`+canaryRawBody+`"}`)

	out := buf.String()
	requireClean(t, out)
	require.Contains(t, out, emailMasked)
	require.Contains(t, out, `"amountSantim":1500`, "non-sensitive body fields survive")
	require.Contains(t, out, "application/json", "non-sensitive headers survive")
	require.Equal(t, 8, strings.Count(out, "\n"))
}

func TestMaskLast4(t *testing.T) {
	require.Equal(t, "****.org", MaskLast4("someone@example.org"))
	require.Equal(t, "****", MaskLast4("abc"))
}

func FuzzRedactJSON(f *testing.F) {
	f.Add([]byte(`{"password":"x","a":[{"phone":"1"}]}`))
	f.Add([]byte(`not json "password"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out := RedactJSON(b)
		var v any
		if json.Unmarshal(b, &v) == nil {
			require.True(t, json.Valid(out))
		}
	})
}
