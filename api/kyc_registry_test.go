package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/gateway/gatewaytest"
	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/rpcclient"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/sandbox"
)

// registryWorld is the KYC world with the national ID registry behind it: the sandbox's registry,
// the real gateway over gRPC in front of it, the API's reviewer route and the worker's lookup
// consumer on a real outbox relay.
type registryWorld struct {
	*kycWorld
	stack     *gatewaytest.Stack
	relay     *outbox.Relay
	employees map[string]string // national id → employee id
}

func newRegistryWorld(t testing.TB) *registryWorld {
	t.Helper()
	d := testkit.NewDB(t)
	// The outage test waits for the registry's breaker to let a probe through: shortly.
	stack := gatewaytest.Start(t, d.App, gatewaytest.Options{Guard: func(g *gateway.GuardConfig) { g.BreakerOpenFor = 100 * time.Millisecond }})
	registry := activities.NationalIDRegistry{Gateway: gateway.NewClient(stack.Gateway, gateway.ClientOptions{Breaker: rpcclient.BreakerOptions{OpenFor: 100 * time.Millisecond}}),
		Registry: "sandbox"}
	u := newUploadsFixtureOn(t, d, func(deps *Deps) { deps.NationalIDRegistry = registry })
	relay, err := outbox.NewRelay(outbox.Config{Platform: d.Platform(t), Registerer: prometheus.NewRegistry(),
		MaxAttempts: 3, BackoffBase: time.Millisecond, BackoffCap: time.Millisecond})
	require.NoError(t, err)
	lookup := &kyc.RegistryLookup{DB: d.App, Registry: registry}
	require.NoError(t, relay.RegisterAll([]outbox.Subscription{lookup.Subscription()}))
	return &registryWorld{kycWorld: newKycWorldOn(t, u), stack: stack, relay: relay, employees: map[string]string{}}
}

// deliver runs the relay until it owes nothing: each delivery done, retried to its last attempt
// or dead-lettered.
func (w *registryWorld) deliver(t *testing.T) outbox.PollResult {
	t.Helper()
	var total outbox.PollResult
	for range 10 {
		res, err := w.relay.Poll(context.Background())
		require.NoError(t, err)
		total.Claimed += res.Claimed
		total.Retried += res.Retried
		total.DeadLettered += res.DeadLettered
		if res.Claimed == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond) // past the relay's backoff (1 ms): a retried delivery is due again
	}
	return total
}

// employeeWith adds an employee whose national id on record is nationalID (a KYC verifies the
// employee of that id), once per id.
func (w *registryWorld) employeeWith(t *testing.T, nationalID string) string {
	t.Helper()
	if id, ok := w.employees[nationalID]; ok {
		return id
	}
	n := len(w.employees) + 1
	rec := w.owner.call(http.MethodPost, "/api/employees", map[string]any{
		"firstName": "Abebe", "lastName": "Kebede", "email": fmt.Sprintf("abebe%d@registry.test", n), "phone": fmt.Sprintf("+25191123%04d", n),
		"nationalId": nationalID, "department": "Ops", "position": "Clerk", "employmentType": "Full time",
		"paymentFrequency": "Monthly", "hireDate": "2024-01-01", "grossMonthlySalarySantim": 1500000,
		"payoutAccount": map[string]any{"partner": "sandbox", "accountNumber": "1000123456789", "holderName": "Abebe Kebede"},
	})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	w.employees[nationalID] = decode[struct {
		ID string `json:"id"`
	}](t, rec).ID
	return w.employees[nationalID]
}

// submitID submits KYC for the employee of a national id.
func (w *registryWorld) submitID(t *testing.T, nationalID, fullName, dob string) kycSubmissionJSON {
	t.Helper()
	employee := w.employeeWith(t, nationalID)
	photo := w.upload("photo.png", "image/png", uploadsPNG)
	doc := w.upload("id.pdf", "application/pdf", uploadsPDF)
	rec := w.owner.call(http.MethodPost, "/api/kyc", map[string]any{"employeeId": employee, "fullName": fullName,
		"nationalId": nationalID, "dateOfBirth": dob, "photoKey": photo,
		"documents": []map[string]any{{"type": "national_id", "uploadKey": doc}}})
	require.Contains(t, []int{http.StatusCreated, http.StatusOK}, rec.Code, rec.Body.String())
	require.NotContains(t, rec.Body.String(), "registryCheck", "the applicant is not told what the registry holds")
	return decode[kycSubmissionJSON](t, rec)
}

// queued is the submission as the reviewers' queue shows it, with the raw registryCheck.
func (w *registryWorld) queued(t *testing.T, id string) (kycSubmissionJSON, json.RawMessage) {
	t.Helper()
	rec := w.reviewer.call(http.MethodGet, "/api/kyc/queue?limit=100", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &page))
	for _, raw := range page.Items {
		var s kycSubmissionJSON
		require.NoError(t, json.Unmarshal(raw, &s))
		if s.ID == id {
			var keys map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(raw, &keys))
			check, ok := keys["registryCheck"]
			require.True(t, ok, "the reviewers' answer always carries registryCheck")
			return s, check
		}
	}
	t.Fatalf("submission %s is not in the queue", id)
	return kycSubmissionJSON{}, nil
}

func (w *registryWorld) check(t *testing.T, id string) *kycRegistryCheckJSON {
	t.Helper()
	_, raw := w.queued(t, id)
	var c *kycRegistryCheckJSON
	require.NoError(t, json.Unmarshal(raw, &c))
	return c
}

func (w *registryWorld) checks(id string) int {
	return w.tenantCount(w.tenant, `SELECT count(*) FROM app.kyc_registry_checks WHERE submission_id = $1`, id)
}

// Every submission is looked up by the consumer, once per event: an id the registry holds with
// the same name and date of birth is VERIFIED and approves; one it does not hold is NOT_FOUND and
// refuses approval (409 KYC_REGISTRY_MISMATCH, audited DENIED) until the reviewer acknowledges that
// very check with a note. The applicant never sees the registry's answer.
func TestKycRegistryLookupGatesApproval(t *testing.T) {
	t.Parallel()
	w := newRegistryWorld(t)
	w.stack.Sandbox.Identity(t, "ETREG0000001", "Abebe Kebede", "1990-02-03", "")

	// An id the registry does not hold.
	s := w.submitID(t, "ETREG0000404", "Abebe Kebede", "1990-02-03")
	require.Nil(t, w.check(t, s.ID), "not looked up yet")
	lookups := w.stack.Sandbox.IdentityLookups()
	w.deliver(t)
	require.Equal(t, lookups+1, w.stack.Sandbox.IdentityLookups())
	c := w.check(t, s.ID)
	require.NotNil(t, c)
	require.Equal(t, kyc.RegistryNotFound, c.Outcome)
	require.Nil(t, c.IDStatus)
	require.False(t, c.NameMatches)
	require.Equal(t, "sandbox", c.Registry)
	require.Equal(t, "system:"+kyc.RegistryLookupConsumer, c.CheckedBy)
	require.Equal(t, 1, w.checks(s.ID))
	w.deliver(t)
	require.Equal(t, lookups+1, w.stack.Sandbox.IdentityLookups(), "looked up once")

	rec := w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/claim", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	rec = w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/approve", nil)
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, "KYC_REGISTRY_MISMATCH", errCode(rec))
	var refused struct {
		Error struct {
			Details struct {
				RegistryCheck kycRegistryCheckJSON `json:"registryCheck"`
			} `json:"details"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &refused))
	require.Equal(t, c.ID, refused.Error.Details.RegistryCheck.ID)
	require.Equal(t, 1, w.tenantCount(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'ApproveKyc' AND outcome = 'DENIED' AND target_id = $1`, s.ID))

	// Acknowledging another check, or without a note, approves nothing.
	rec = w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/approve", map[string]any{"acknowledgeRegistryCheck": "kycreg_other", "note": "checked the card"})
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, "KYC_REGISTRY_MISMATCH", errCode(rec))
	rec = w.reviewer.hostile(http.MethodPost, "/api/kyc/"+s.ID+"/approve", map[string]any{"acknowledgeRegistryCheck": c.ID})
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	rec = w.reviewer.hostile(http.MethodPost, "/api/kyc/"+s.ID+"/approve", map[string]any{"acknowledgeRegistryCheck": "kycreg\u0000x", "note": "x"})
	require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
	held, _ := w.queued(t, s.ID)
	require.Equal(t, kyc.InReview, held.Status)

	rec = w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/approve", map[string]any{"acknowledgeRegistryCheck": c.ID, "note": "registry outage; the card and the photo agree"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var approved struct {
		Submission kycSubmissionJSON `json:"submission"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &approved))
	require.Equal(t, kyc.Approved, approved.Submission.Status)
	require.NotNil(t, approved.Submission.RegistryCheck)
	require.Equal(t, c.ID, (*approved.Submission.RegistryCheck).ID)
	require.Equal(t, 1, w.tenantCount(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'ApproveKyc' AND outcome = 'SUCCESS'
		AND target_id = $1 AND details->>'registryCheckAcknowledged' = $2 AND details->>'registryOutcome' = 'NOT_FOUND'`, s.ID, c.ID))

	// Decided: the reviewer route looks nothing up.
	lookups = w.stack.Sandbox.IdentityLookups()
	rec = w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/registry-check", nil)
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, "KYC_NOT_OPEN", errCode(rec))
	require.Equal(t, lookups, w.stack.Sandbox.IdentityLookups())

	// A second submission of an id the registry holds, name and date of birth alike: VERIFIED,
	// and approval needs no acknowledgement.
	s2 := w.submitID(t, "ETREG0000001", "Abebe Kebede", "1990-02-03")
	w.deliver(t)
	require.Equal(t, kyc.RegistryVerified, w.check(t, s2.ID).Outcome)
	require.Equal(t, http.StatusOK, w.reviewer.call(http.MethodPost, "/api/kyc/"+s2.ID+"/claim", nil).Code)
	rec = w.reviewer.call(http.MethodPost, "/api/kyc/"+s2.ID+"/approve", nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

// The registry's other verdicts: a date of birth that differs is MISMATCH (the name matches); an
// amendment makes the earlier check stale (null) until the amended content is looked up; a revoked
// id is INACTIVE. The name matcher is the gateway's: case and spacing do not matter.
func TestKycRegistryVerdictsFollowAmendments(t *testing.T) {
	t.Parallel()
	w := newRegistryWorld(t)
	w.stack.Sandbox.Identity(t, "ETREG0000002", "Abebe Kebede", "1990-02-03", "")
	w.stack.Sandbox.Identity(t, "ETREG0000003", "Abebe Kebede", "1990-02-03", sandbox.IdentityRevoked)

	s := w.submitID(t, "ETREG0000002", "ABEBE  kebede", "1991-02-03")
	w.deliver(t)
	c := w.check(t, s.ID)
	require.Equal(t, kyc.RegistryMismatch, c.Outcome)
	require.True(t, c.NameMatches)
	require.False(t, c.DateOfBirthMatches)
	require.Equal(t, "ACTIVE", *c.IDStatus)

	require.Equal(t, http.StatusOK, w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/claim", nil).Code)
	rec := w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/request-more-info", map[string]any{"note": "Your date of birth does not match the national ID registry."})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	amended := w.submitID(t, "ETREG0000002", "Abebe Kebede", "1990-02-03")
	require.Equal(t, s.ID, amended.ID, "the same case, amended")
	require.Nil(t, w.check(t, s.ID), "the check was about the content before the amendment")
	w.deliver(t)
	require.Equal(t, kyc.RegistryVerified, w.check(t, s.ID).Outcome)
	require.Equal(t, 2, w.checks(s.ID), "both kept")

	require.Equal(t, http.StatusOK, w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/claim", nil).Code)
	require.Equal(t, http.StatusOK, w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/reject", map[string]any{"note": "test over"}).Code)
	s3 := w.submitID(t, "ETREG0000003", "Abebe Kebede", "1990-02-03")
	w.deliver(t)
	c = w.check(t, s3.ID)
	require.Equal(t, kyc.RegistryInactive, c.Outcome)
	require.Equal(t, "REVOKED", *c.IDStatus)
}

// A registry that does not answer: the consumer's delivery is retried and dead-lettered, nothing
// is recorded; the reviewer's lookup answers 503 NATIONAL_ID_REGISTRY_UNAVAILABLE and records
// nothing; once the registry is back the reviewer's lookup records the check, audited with the
// reviewer as actor. A route without a registry configured answers 503 NOT_CONFIGURED.
func TestKycRegistryDownIsRetriedAndAskedAgain(t *testing.T) {
	t.Parallel()
	w := newRegistryWorld(t)
	w.stack.Sandbox.Identity(t, "ETREG0000005", "Abebe Kebede", "1990-02-03", "")
	w.stack.Sandbox.RegistryFault(t, map[string]any{"errorRatePercent": 100})
	s := w.submitID(t, "ETREG0000005", "Abebe Kebede", "1990-02-03")
	res := w.deliver(t)
	require.Equal(t, 1, res.DeadLettered, "%+v", res)
	require.Zero(t, w.checks(s.ID))
	require.Nil(t, w.check(t, s.ID))

	rec := w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/registry-check", nil)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Equal(t, "NATIONAL_ID_REGISTRY_UNAVAILABLE", errCode(rec))
	require.Zero(t, w.checks(s.ID))

	w.stack.Sandbox.ClearFault(t, sandbox.RegistryScope)
	// The gateway's breaker, opened by the outage, lets a probe through shortly.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		rec = w.reviewer.call(http.MethodPost, "/api/kyc/"+s.ID+"/registry-check", nil)
		if rec.Code == http.StatusOK || time.Now().After(deadline) {
			break
		}
	}
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := decode[kycRegistryCheckJSON](t, rec)
	require.Equal(t, kyc.RegistryVerified, got.Outcome)
	require.Equal(t, 1, w.checks(s.ID))
	require.Equal(t, got.ID, w.check(t, s.ID).ID)
	require.Equal(t, 1, w.tenantCount(w.tenant, `SELECT count(*) FROM app.audit_log WHERE action = 'CheckNationalId' AND target_id = $1
		AND actor = $2 AND details->>'checkId' = $3`, s.ID, got.CheckedBy, got.ID))
	require.NotEqual(t, "system:"+kyc.RegistryLookupConsumer, got.CheckedBy)

	for _, id := range []string{"kyc_nope", "kyc%00"} {
		rec = w.reviewer.hostile(http.MethodPost, "/api/kyc/"+id+"/registry-check", nil)
		require.Contains(t, []int{http.StatusBadRequest, http.StatusNotFound}, rec.Code, id)
	}
	rec = w.owner.call(http.MethodPost, "/api/kyc/"+s.ID+"/registry-check", nil)
	require.Equal(t, http.StatusForbidden, rec.Code)

	plain := newKycWorld(t)
	sub, _, _ := plain.submit("Abebe Kebede")
	rec = plain.reviewer.call(http.MethodPost, "/api/kyc/"+sub.ID+"/registry-check", nil)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code)
	require.Equal(t, "NOT_CONFIGURED", errCode(rec))
}
