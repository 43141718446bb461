package api

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/platform/webauthntest"
	"github.com/wagerail/wagerail/internal/sanctions"
)

// onboardingSteps is a checklist by step key.
func onboardingSteps(t testing.TB, o employeeOnboardingJSON) map[string]employeeOnboardingStepJSON {
	t.Helper()
	m := make(map[string]employeeOnboardingStepJSON, len(o.Steps))
	for _, s := range o.Steps {
		m[s.Key] = s
	}
	require.Len(t, m, len(o.Steps), "each key once")
	return m
}

// onboardingStep is what the tests compare of a step: state, status ("" for null), action ("" for
// null, else "METHOD path").
type onboardingStep struct{ State, Status, Action string }

func onboardingView(t testing.TB, o employeeOnboardingJSON) map[string]onboardingStep {
	t.Helper()
	out := map[string]onboardingStep{}
	for k, s := range onboardingSteps(t, o) {
		v := onboardingStep{State: s.State}
		if s.Status != nil {
			v.Status = *s.Status
		}
		if s.Action != nil {
			v.Action = s.Action.Method + " " + s.Action.Path
		}
		out[k] = v
	}
	return out
}

// TestEmployeeOnboarding: a freshly linked employee's checklist has every step but the link, the
// payout account and the employment pending; each fact then changes through the real routes (or
// the fixtures the gate tests use) and its step follows — e-mail, phone, two-factor, the KYC's
// whole course (submitted, claimed, sent back, answered, approved), the screening the approval
// records, a rename to a listed name (held back UNDER_REVIEW, never shown BLOCKED: no check says
// so), a listing that blocks the recorded check, the employment suspended — with progress and
// canUseMoneyFeatures following, the latter exactly when the EWA saga's gates would pass. Another
// linked employee of the same business sees only their own facts (and theirs never show in the
// first one's); an unlinked caller is 404 EMPLOYEE_NOT_LINKED, an anonymous one 401, and any query
// string 400.
func TestEmployeeOnboarding(t *testing.T) {
	t.Parallel()
	w := newKycWorld(t)
	const myEmail = "onboarding@emp.test"
	me := w.linkEmployeeUser(t, myEmail)
	read := func(c *apiClient) employeeOnboardingJSON {
		t.Helper()
		rec := c.call(http.MethodGet, "/api/employee/onboarding", nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[employeeOnboardingJSON](t, rec)
	}
	type want = map[string]onboardingStep
	expect := func(c *apiClient, employee string, done int, money bool, changes want) employeeOnboardingJSON {
		t.Helper()
		o := read(c)
		require.Equal(t, [2]string{employee, w.tenant}, [2]string{o.EmployeeID, o.BusinessID})
		keys := make([]string, 0, len(o.Steps))
		for _, s := range o.Steps {
			keys = append(keys, s.Key)
		}
		require.Equal(t, []string{"account_linked", "email_verified", "phone_verified", "second_factor", "identity_verification",
			"sanctions_screening", "payout_account", "employment_active"}, keys, "the steps, in order")
		require.Equal(t, changes, onboardingView(t, o))
		require.Equal(t, [2]int{done, 8}, [2]int{o.Progress.Done, o.Progress.Total})
		require.Equal(t, money, o.CanUseMoneyFeatures, "canUseMoneyFeatures")
		for _, s := range o.Steps {
			require.Equal(t, slices.Contains([]string{"identity_verification", "sanctions_screening", "employment_active"}, s.Key), s.MoneyGate, s.Key)
		}
		return o
	}
	fresh := func() want {
		return want{
			"account_linked":        {State: "DONE"},
			"email_verified":        {State: "ACTION_REQUIRED", Action: "POST /api/auth/send-verification-email"},
			"phone_verified":        {State: "ACTION_REQUIRED", Action: "POST /api/auth/phone-number/send-otp"},
			"second_factor":         {State: "ACTION_REQUIRED", Action: "POST /api/auth/two-factor/enable"},
			"identity_verification": {State: "ACTION_REQUIRED", Status: "NOT_STARTED", Action: "POST /api/kyc"},
			"sanctions_screening":   {State: "PENDING", Status: "NOT_SCREENED"},
			"payout_account":        {State: "DONE"},
			"employment_active":     {State: "DONE", Status: "ACTIVE"},
		}
	}

	// A fresh linked employee: linked, paid into an account, ACTIVE; everything else to do.
	cur := fresh()
	expect(me, w.employee, 3, false, cur)

	// The e-mail proved by the step's action: a new link mailed, its token spent.
	rec := me.call(http.MethodPost, "/api/auth/send-verification-email", map[string]any{"email": myEmail})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	tok := authxMailedToken(t, w.authFixture, myEmail, notify.VerifyEmail)
	rec = me.call(http.MethodPost, "/api/auth/verify-email", map[string]any{"token": tok})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	cur["email_verified"] = onboardingStep{State: "DONE"}
	expect(me, w.employee, 4, false, cur)

	// The phone proved with the texted code.
	const phone = "+251911000111"
	rec = me.call(http.MethodPost, "/api/auth/phone-number/send-otp", map[string]any{"phoneNumber": phone})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	sms, ok := w.inbox.LatestSMS(phone, notify.PhoneOTP)
	require.True(t, ok)
	rec = me.call(http.MethodPost, "/api/auth/phone-number/verify", map[string]any{"phoneNumber": phone, "code": sms.Secret})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	cur["phone_verified"] = onboardingStep{State: "DONE"}
	expect(me, w.employee, 5, false, cur)

	// Two-factor enrolled (enable, then a code).
	authxEnableTwoFactor(t, w.authFixture, me)
	cur["second_factor"] = onboardingStep{State: "DONE", Status: "TOTP"}
	expect(me, w.employee, 6, false, cur)

	// KYC: submitted, claimed, sent back for more, answered, claimed, approved (screened CLEAR).
	s, code, errc := w.submit("Abebe Kebede")
	require.Equal(t, http.StatusCreated, code, errc)
	cur["identity_verification"] = onboardingStep{State: "PENDING", Status: "PENDING"}
	expect(me, w.employee, 6, false, cur)
	require.Equal(t, http.StatusOK, w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/claim", nil).Code)
	cur["identity_verification"] = onboardingStep{State: "PENDING", Status: "IN_REVIEW"}
	expect(me, w.employee, 6, false, cur)
	rec = w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/request-more-info", map[string]any{"note": "the photo is blurred"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	cur["identity_verification"] = onboardingStep{State: "ACTION_REQUIRED", Status: "MORE_INFO_REQUESTED", Action: "POST /api/kyc"}
	expect(me, w.employee, 6, false, cur)
	rec = w.owner.call(http.MethodPost, "/api/kyc", map[string]any{"employeeId": w.employee, "fullName": "Abebe Kebede",
		"nationalId": "ET12345678", "dateOfBirth": "1990-02-03", "photoKey": s.Documents[0].UploadKey,
		"documents": []map[string]any{{"type": "national_id", "uploadKey": s.Documents[1].UploadKey}}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	cur["identity_verification"] = onboardingStep{State: "PENDING", Status: "PENDING"}
	expect(me, w.employee, 6, false, cur)
	require.Equal(t, http.StatusOK, w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/claim", nil).Code)
	rec = w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	cur["identity_verification"] = onboardingStep{State: "DONE", Status: "APPROVED"}
	cur["sanctions_screening"] = onboardingStep{State: "DONE", Status: "CLEAR"}
	all := expect(me, w.employee, 8, true, cur)
	for _, st := range all.Steps {
		require.Nil(t, st.Action, "%s: no action on a done step", st.Key)
	}

	// Another linked employee of the same business: only their own facts, both ways.
	const otherEmail = "onboarding-other@emp.test"
	hash, err := identity.HashPassword(testPassword)
	require.NoError(t, err)
	otherUser, err := identity.CreateUser(context.Background(), w.d.App, identity.NewUser{Email: otherEmail, Name: "Tigist Alemu", PasswordHash: hash})
	require.NoError(t, err)
	otherEmp := dashFixtureEmployee(t, w.d, w.tenant, "ACTIVE", otherUser.ID)
	other := w.signIn(otherEmail)
	expect(other, otherEmp, 3, false, fresh())
	passkeyRegister(t, other, webauthntest.New(passkeyOrigin), "Laptop")
	otherView := fresh()
	otherView["second_factor"] = onboardingStep{State: "DONE", Status: "PASSKEY"}
	expect(other, otherEmp, 4, false, otherView)
	expect(me, w.employee, 8, true, cur) // the other's passkey is not mine

	// The other's KYC rejected, then an approval whose validity has run out (the expiry sweep has
	// not marked it yet), and a REVIEW no reviewer decided: theirs, never mine.
	kycRow := func(status string, validUntil any, createdAt string) []any {
		return []any{`INSERT INTO app.kyc_submissions (id, tenant_id, subject_type, subject_id, full_name, national_id, date_of_birth,
				photo_key, status, valid_until, submitted_by, created_at)
			VALUES ($1, $2, 'EMPLOYEE', $3, 'Tigist Alemu', 'ET0000001', '1990-01-01', 'k', $4, $5::timestamptz, 'user_maker', $6::timestamptz)`,
			"kyc_" + testkit.Unique("o"), w.tenant, otherEmp, status, validUntil, createdAt}
	}
	dashFixture(t, w.d, w.tenant, kycRow("REJECTED", nil, "2026-01-01T00:00:00Z"))
	otherView["identity_verification"] = onboardingStep{State: "ACTION_REQUIRED", Status: "REJECTED", Action: "POST /api/kyc"}
	expect(other, otherEmp, 4, false, otherView)
	dashFixture(t, w.d, w.tenant, kycRow("APPROVED", w.now().Add(-time.Hour).Format(time.RFC3339), "2026-01-02T00:00:00Z"))
	otherView["identity_verification"] = onboardingStep{State: "ACTION_REQUIRED", Status: "EXPIRED", Action: "POST /api/kyc"}
	expect(other, otherEmp, 4, false, otherView)
	dashFixture(t, w.d, w.tenant, []any{`INSERT INTO app.sanctions_checks (id, tenant_id, subject_type, subject_id, name_screened,
			outcome, score, evidence, list_versions, trigger, needs_review)
		VALUES ($1, $2, 'EMPLOYEE', $3, 'Tigist Alemu', 'REVIEW', 0.9, '[]', '{}', 'SCREEN', true)`, "sc_" + testkit.Unique("o"), w.tenant, otherEmp})
	otherView["sanctions_screening"] = onboardingStep{State: "PENDING", Status: "UNDER_REVIEW"}
	expect(other, otherEmp, 4, false, otherView)
	expect(me, w.employee, 8, true, cur)

	// The record renamed to a listed name after the approval: the gate holds the money back, and
	// the step says UNDER_REVIEW — no recorded check says BLOCK, so the employee is not told one.
	rename := func(first, last string) {
		t.Helper()
		rec := w.owner.call(http.MethodPut, "/api/employees/"+w.employee, map[string]any{"firstName": first, "lastName": last})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
	rename("Girma", "Wolde Tesfaye")
	cur["sanctions_screening"] = onboardingStep{State: "PENDING", Status: "UNDER_REVIEW"}
	o := expect(me, w.employee, 7, false, cur)
	onboardingNamesNoEntry(t, o)
	rename("Abebe", "Kebede")
	cur["sanctions_screening"] = onboardingStep{State: "DONE", Status: "CLEAR"}
	expect(me, w.employee, 8, true, cur)

	// The employment suspended, then active again.
	setStatus := func(status string) {
		t.Helper()
		rec := w.owner.call(http.MethodPut, "/api/employees/"+w.employee+"/status", map[string]any{"status": status})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	}
	setStatus("SUSPENDED")
	cur["employment_active"] = onboardingStep{State: "BLOCKED", Status: "SUSPENDED"}
	expect(me, w.employee, 7, false, cur)
	setStatus("ACTIVE")
	cur["employment_active"] = onboardingStep{State: "DONE", Status: "ACTIVE"}
	expect(me, w.employee, 8, true, cur)

	// The name is listed after the approval; the re-screen records a BLOCK (as the gate test does).
	ctx := tenancy.WithActor(context.Background(), "system:test")
	_, err = sanctions.Ingest(ctx, w.d.Platform(t), sanctions.National, sanctions.IngestOptions{},
		sanctions.File{Name: "national.csv", Data: []byte("name,aliases,dob,reference\nAbebe Kebede,,1990-02-03,ETH-NAT-9\n")})
	require.NoError(t, err)
	_, err = sanctions.Rescreen(ctx, w.d.Platform(t))
	require.NoError(t, err)
	cur["sanctions_screening"] = onboardingStep{State: "BLOCKED", Status: "BLOCKED"}
	o = expect(me, w.employee, 7, false, cur)
	onboardingNamesNoEntry(t, o)
	expect(other, otherEmp, 4, false, otherView) // the first one's screening is not the other's

	// Not linked: 404; anonymous: 401; any query string: 400.
	requireStatus(t, w.owner.call(http.MethodGet, "/api/employee/onboarding", nil), http.StatusNotFound, "EMPLOYEE_NOT_LINKED")
	require.Equal(t, http.StatusUnauthorized, w.client().call(http.MethodGet, "/api/employee/onboarding", nil).Code)
	for _, q := range []string{"?organizationId=" + w.tenant, "?x", "?&", "?%zz", "?a=1&a=2", "?%00=1"} {
		requireStatus(t, me.hostile(http.MethodGet, "/api/employee/onboarding"+q, nil), http.StatusBadRequest, "INVALID_REQUEST")
	}
}

// onboardingNamesNoEntry: the checklist names no list entry (its reference or its name).
func onboardingNamesNoEntry(t testing.TB, o employeeOnboardingJSON) {
	t.Helper()
	b, err := json.Marshal(o)
	require.NoError(t, err)
	require.NotContains(t, string(b), "ETH-NAT")
	require.NotContains(t, string(b), "Girma")
}

// TestEmployeeOnboardingActionsAreRoutes: every step's action names a row of the route table that
// a signed-in user reaches.
func TestEmployeeOnboardingActionsAreRoutes(t *testing.T) {
	s := newTestServer()
	for _, a := range []*onboardingActionJSON{actionVerifyEmail, actionSendOTP, actionTwoFactor, submitKycAction("emp_1")} {
		r, ok := s.guards[a.Method+" "+a.Path]
		require.True(t, ok, "%s %s is a route", a.Method, a.Path)
		require.Contains(t, []Auth{Public, Session}, r.Auth, "%s %s", a.Method, a.Path)
	}
}
