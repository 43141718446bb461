package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/wagerail/wagerail/internal/platform/rpcclient"
	"github.com/wagerail/wagerail/sandbox"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// nid is a registry-valid unique national id (a short upper-case prefix and digits).
func nid(prefix string) string { return fmt.Sprintf("%s%d", prefix, time.Now().UnixNano()) }

// TestVerifyNationalId_Verdicts: over real gRPC against the real sandbox registry, each kind of
// record gives its verdicts, and the answer never carries the registry's name or date of birth.
func TestVerifyNationalId_Verdicts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	active, revoked, deceased := nid("ACT"), nid("REV"), nid("DEC")
	e.sb.Identity(t, active, "Abebe Kebede", "1990-01-02", "")
	e.sb.Identity(t, active, "Abebe Kebede", "1990-01-02", "") // a replay is fine
	e.sb.Identity(t, revoked, "Almaz Tesfaye", "1994-03-12", "")
	e.sb.RevokeIdentity(t, revoked)
	e.sb.Identity(t, deceased, "Dawit Bekele", "1950-06-30", sandbox.IdentityDeceased)

	type want struct {
		found   bool
		status  gatewayv1.IdentityStatus
		name    gatewayv1.NameMatch
		dob     bool
		outcome string
	}
	cases := []struct {
		name        string
		id, who, at string
		want        want
	}{
		{"found, name and date match", active, "Abebe Kebede", "1990-01-02",
			want{true, gatewayv1.IdentityStatus_IDENTITY_STATUS_ACTIVE, gatewayv1.NameMatch_NAME_MATCH_MATCH, true, "verified"}},
		{"found, the name written otherwise", active, "  ABEBE  kebede ", "1990-01-02",
			want{true, gatewayv1.IdentityStatus_IDENTITY_STATUS_ACTIVE, gatewayv1.NameMatch_NAME_MATCH_MATCH, true, "verified"}},
		{"found, the name in Ethiopic", active, "አበበ ከበደ", "1990-01-02",
			want{true, gatewayv1.IdentityStatus_IDENTITY_STATUS_ACTIVE, gatewayv1.NameMatch_NAME_MATCH_MATCH, true, "verified"}},
		{"found, another name", active, "Abebe Kebede Tessema", "1990-01-02",
			want{true, gatewayv1.IdentityStatus_IDENTITY_STATUS_ACTIVE, gatewayv1.NameMatch_NAME_MATCH_MISMATCH, true, "name_mismatch"}},
		{"found, another date of birth", active, "Abebe Kebede", "1990-02-01",
			want{true, gatewayv1.IdentityStatus_IDENTITY_STATUS_ACTIVE, gatewayv1.NameMatch_NAME_MATCH_MATCH, false, "dob_mismatch"}},
		{"revoked", revoked, "Almaz Tesfaye", "1994-03-12",
			want{true, gatewayv1.IdentityStatus_IDENTITY_STATUS_REVOKED, gatewayv1.NameMatch_NAME_MATCH_MATCH, true, "revoked"}},
		{"deceased", deceased, "Dawit Bekele", "1950-06-30",
			want{true, gatewayv1.IdentityStatus_IDENTITY_STATUS_DECEASED, gatewayv1.NameMatch_NAME_MATCH_MATCH, true, "deceased"}},
		{"not found", nid("NONE"), "Abebe Kebede", "1990-01-02",
			want{false, gatewayv1.IdentityStatus_IDENTITY_STATUS_UNSPECIFIED, gatewayv1.NameMatch_NAME_MATCH_NOT_CHECKED, false, "not_found"}},
	}
	for _, c := range cases {
		resp, err := e.rpc.VerifyNationalId(ctxT(t), &gatewayv1.VerifyNationalIdRequest{
			Registry: SandboxRegistry, NationalId: c.id, FullName: c.who, DateOfBirth: c.at})
		require.NoError(t, err, c.name)
		require.Equal(t, c.want.found, resp.GetFound(), c.name)
		require.Equal(t, c.want.status, resp.GetStatus(), c.name)
		require.Equal(t, c.want.name, resp.GetNameMatch(), c.name)
		require.Equal(t, c.want.dob, resp.GetDateOfBirthMatches(), c.name)
		require.Equal(t, gatewayv1.AdapterHealth_ADAPTER_HEALTH_HEALTHY, resp.GetRegistryHealth(), c.name)
		// Data minimisation: whatever the submission, the answer holds verdicts only.
		raw, err := proto.Marshal(resp)
		require.NoError(t, err)
		for _, secret := range []string{"Abebe", "Almaz", "Dawit", "1990", "1994", "1950"} {
			require.NotContains(t, string(raw), secret, c.name)
		}
	}

	// The typed client gives the same answer.
	cl := NewClient(e.rpc, ClientOptions{})
	resp, err := cl.VerifyNationalID(ctxT(t), &gatewayv1.VerifyNationalIdRequest{
		Registry: SandboxRegistry, NationalId: active, FullName: "Abebe Kebede", DateOfBirth: "1990-01-02"})
	require.NoError(t, err)
	require.True(t, resp.GetFound())
	require.Equal(t, gatewayv1.NameMatch_NAME_MATCH_MATCH, resp.GetNameMatch())

	// Every outcome is counted under the registry, and every one started at 0.
	m := e.scrape(t)
	for _, o := range verifyOutcomes {
		require.Contains(t, m, fmt.Sprintf(`identity_verify_total{outcome=%q,registry="sandbox"}`, o))
	}
	require.Contains(t, m, `identity_verify_total{outcome="verified",registry="sandbox"} 4`)
	require.Contains(t, m, `identity_verify_total{outcome="not_found",registry="sandbox"} 1`)
	require.Contains(t, m, `identity_verify_latency_seconds_count{registry="sandbox"} 9`)
	require.Contains(t, m, `gateway_partner_calls_total{op="lookup_identity",partner="registry:sandbox",result="ok"} 8`)
}

// TestVerifyNationalId_DateOfBirthIsACalendarDate: the Go API compares the calendar date of the
// time it is given, in that time's own location, never an instant.
func TestVerifyNationalId_DateOfBirthIsACalendarDate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	id := nid("CAL")
	e.sb.Identity(t, id, "Hirut Alemu", "1988-07-21", "")
	addis := time.FixedZone("EAT", 3*60*60)
	for _, c := range []struct {
		at   time.Time
		want bool
	}{
		{time.Date(1988, 7, 21, 0, 0, 0, 0, time.UTC), true},
		{time.Date(1988, 7, 21, 23, 59, 0, 0, time.UTC), true},
		{time.Date(1988, 7, 21, 1, 0, 0, 0, addis), true}, // 1988-07-20 22:00 UTC, but the 21st where it was said
		{time.Date(1988, 7, 22, 0, 0, 0, 0, time.UTC), false},
		{time.Time{}, false},
	} {
		res, err := e.gw.VerifyNationalID(ctxT(t), SandboxRegistry, id, "Hirut Alemu", c.at)
		require.NoError(t, err)
		require.True(t, res.Found)
		require.Equal(t, c.want, res.DateOfBirthMatches, "%s", c.at)
	}
	// Not found is a result, not an error; an unknown registry is the unknown-partner error.
	res, err := e.gw.VerifyNationalID(ctxT(t), SandboxRegistry, nid("NO"), "Hirut Alemu", time.Date(1988, 7, 21, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.False(t, res.Found)
	require.Equal(t, NameNotChecked, res.NameMatch)
	_, err = e.gw.VerifyNationalID(ctxT(t), "fayda", id, "Hirut Alemu", time.Now())
	require.ErrorIs(t, err, ErrUnknownPartner)
}

// TestVerifyNationalId_BadInputNeverReachesTheRegistry: a refused field is InvalidArgument naming
// it, an unknown registry is NotFound UNKNOWN_PARTNER, and the sandbox receives no lookup: no
// hostile caller can trip the registry's breaker.
func TestVerifyNationalId_BadInputNeverReachesTheRegistry(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	e := newEnv(t, envOpt{guard: countCalls(&calls)})
	ok := func(mut func(*gatewayv1.VerifyNationalIdRequest)) *gatewayv1.VerifyNationalIdRequest {
		r := &gatewayv1.VerifyNationalIdRequest{Registry: SandboxRegistry, NationalId: "ETH1234567", FullName: "Abebe Kebede", DateOfBirth: "1990-01-02"}
		mut(r)
		return r
	}
	tomorrow := time.Now().UTC().Add(14*time.Hour).AddDate(0, 0, 1).Format(time.DateOnly)
	cases := []struct {
		name   string
		req    *gatewayv1.VerifyNationalIdRequest
		code   codes.Code
		reason Reason
		field  string
	}{
		{"control character in the id", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.NationalId = "ETH\x01234567" }), codes.InvalidArgument, ReasonInvalidArgument, "national_id"},
		{"NUL in the name", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.FullName = "Abebe\x00Kebede" }), codes.InvalidArgument, ReasonInvalidArgument, "full_name"},
		{"newline in the name", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.FullName = "Abebe\nKebede" }), codes.InvalidArgument, ReasonInvalidArgument, "full_name"},
		{"bidi override in the name", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.FullName = "Abebe\u202eKebede" }), codes.InvalidArgument, ReasonInvalidArgument, "full_name"},
		{"zero-width space in the name", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.FullName = "Abe\u200bbe Kebede" }), codes.InvalidArgument, ReasonInvalidArgument, "full_name"},
		{"invalid UTF-8 in the name", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.FullName = "Abebe \xff" }), codes.InvalidArgument, ReasonInvalidArgument, "request"},
		{"invalid UTF-8 in the id", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.NationalId = "ETH\xc3\x28" }), codes.InvalidArgument, ReasonInvalidArgument, "request"},
		{"blank name", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.FullName = "   " }), codes.InvalidArgument, ReasonInvalidArgument, "full_name"},
		{"oversized name", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.FullName = strings.Repeat("Abebe ", 100) }), codes.InvalidArgument, ReasonInvalidArgument, "full_name"},
		{"33-character id", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.NationalId = strings.Repeat("A", 33) }), codes.InvalidArgument, ReasonInvalidArgument, "national_id"},
		{"5-character id", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.NationalId = "AB123" }), codes.InvalidArgument, ReasonInvalidArgument, "national_id"},
		{"lower-case id", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.NationalId = "eth1234567" }), codes.InvalidArgument, ReasonInvalidArgument, "national_id"},
		{"id with a hyphen", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.NationalId = "ETH-1234567" }), codes.InvalidArgument, ReasonInvalidArgument, "national_id"},
		{"id as a path", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.NationalId = "../../accounts/1" }), codes.InvalidArgument, ReasonInvalidArgument, "national_id"},
		{"empty id", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.NationalId = "" }), codes.InvalidArgument, ReasonInvalidArgument, "national_id"},
		{"no date", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.DateOfBirth = "" }), codes.InvalidArgument, ReasonInvalidArgument, "date_of_birth"},
		{"February 30", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.DateOfBirth = "1990-02-30" }), codes.InvalidArgument, ReasonInvalidArgument, "date_of_birth"},
		{"February 29 of a common year", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.DateOfBirth = "1991-02-29" }), codes.InvalidArgument, ReasonInvalidArgument, "date_of_birth"},
		{"month 13", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.DateOfBirth = "1990-13-01" }), codes.InvalidArgument, ReasonInvalidArgument, "date_of_birth"},
		{"a timestamp", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.DateOfBirth = "1990-01-02T00:00:00Z" }), codes.InvalidArgument, ReasonInvalidArgument, "date_of_birth"},
		{"day first", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.DateOfBirth = "02-01-1990" }), codes.InvalidArgument, ReasonInvalidArgument, "date_of_birth"},
		{"before 1900", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.DateOfBirth = "1899-12-31" }), codes.InvalidArgument, ReasonInvalidArgument, "date_of_birth"},
		{"after today", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.DateOfBirth = tomorrow }), codes.InvalidArgument, ReasonInvalidArgument, "date_of_birth"},
		{"empty registry", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.Registry = "" }), codes.InvalidArgument, ReasonInvalidArgument, "registry"},
		{"malformed registry", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.Registry = "fay da" }), codes.InvalidArgument, ReasonInvalidArgument, "registry"},
		{"unknown registry", ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.Registry = "fayda" }), codes.NotFound, ReasonUnknownPartner, ""},
	}
	for _, c := range cases {
		_, err := e.invoke(ctxT(t), c.req)
		require.Equal(t, c.code, status.Code(err), "%s: %v", c.name, err)
		reason, name := errorField(err)
		require.Equal(t, c.reason, reason, c.name)
		require.Equal(t, c.field, name, "%s: %v", c.name, err)
	}
	// The oldest and the newest dates the edge accepts reach the registry.
	for _, at := range []string{"1900-01-01", time.Now().UTC().Format(time.DateOnly)} {
		resp, err := e.rpc.VerifyNationalId(ctxT(t), ok(func(r *gatewayv1.VerifyNationalIdRequest) { r.DateOfBirth = at }))
		require.NoError(t, err, at)
		require.False(t, resp.GetFound())
	}
	require.Equal(t, 2, e.sb.IdentityLookups(), "only the two valid requests reached the registry")
	require.EqualValues(t, 2, calls.Load())
	st := e.registry.Status()
	require.Equal(t, "closed", st.BreakerState)
	require.Zero(t, st.Stats.Errors)
}

// TestVerifyNationalId_RegistryDown: a registry that fails (injected 503) or is slower than the
// lookup deadline answers the retryable PARTNER_UNAVAILABLE / PARTNER_TIMEOUT, never a verdict;
// repeated failures open the registry's breaker, and then nothing reaches the registry, while
// the bank partner's breaker stays closed and its lookups go on; the registry comes back once
// its fault is cleared and the breaker's open period has passed.
func TestVerifyNationalId_RegistryDown(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{guard: func(g *GuardConfig) {
		g.LookupTimeout = 300 * time.Millisecond
		g.BreakerFailures = 3
		g.BreakerOpenFor = 500 * time.Millisecond
		g.Attempts = 1
	}})
	id := nid("DOWN")
	e.sb.Identity(t, id, "Yonas Girma", "1985-01-30", "")
	acc := acct("bank")
	e.account(t, acc, "Yonas Girma", 0)
	req := &gatewayv1.VerifyNationalIdRequest{Registry: SandboxRegistry, NationalId: id, FullName: "Yonas Girma", DateOfBirth: "1985-01-30"}
	cl := NewClient(e.rpc, ClientOptions{Breaker: rpcclient.BreakerOptions{Failures: 100}})

	// Slow: past the deadline, a timeout.
	e.sb.RegistryFault(t, map[string]any{"latencyMs": 2000})
	_, err := cl.VerifyNationalID(ctxT(t), req)
	require.ErrorIs(t, err, ErrPartnerTimeout)
	require.Equal(t, codes.DeadlineExceeded, ReasonOf(err).Code())
	e.sb.ClearFault(t, sandbox.RegistryScope)

	// Failing: 503s, unavailable; the third fault in a row opens the breaker.
	e.sb.RegistryFault(t, map[string]any{"errorRatePercent": 100})
	for i := 0; i < 2; i++ {
		_, err := cl.VerifyNationalID(ctxT(t), req)
		require.ErrorIs(t, err, ErrPartnerUnavail, "attempt %d", i)
		require.True(t, ReasonOf(err).Infra())
	}
	require.Equal(t, "open", e.registry.Status().BreakerState)
	seen := e.sb.IdentityLookups()
	_, err = cl.VerifyNationalID(ctxT(t), req)
	require.ErrorIs(t, err, ErrPartnerUnavail)
	require.Contains(t, err.Error(), "circuit breaker open")
	require.Equal(t, seen, e.sb.IdentityLookups(), "an open breaker sends nothing to the registry")
	st, err := e.rpc.GetAdapterStatus(ctxT(t), &gatewayv1.GetAdapterStatusRequest{Partner: SandboxPartner})
	require.NoError(t, err)
	require.Equal(t, "closed", st.GetBreakerState(), "the bank's breaker is the bank's")

	// The bank is untouched: its lookups answer while the registry is down.
	lk, err := e.rpc.LookupAccount(ctxT(t), &gatewayv1.LookupAccountRequest{Partner: SandboxPartner, AccountId: acc})
	require.NoError(t, err)
	require.True(t, lk.GetExists())
	require.Equal(t, "closed", e.partner.Status().BreakerState)
	require.Equal(t, Healthy, e.partner.Status().Health)
	require.Equal(t, Degraded, e.registry.Status().Health, "an open breaker is DEGRADED")

	// The probe reports the registry down, and the bank up.
	e.gw.ProbeDependencies(ctxT(t))
	m := e.scrape(t)
	require.Contains(t, m, `svc_dependency_up{dependency="registry:sandbox"} 0`)
	require.Contains(t, m, `svc_dependency_up{dependency="partner:sandbox"} 1`)
	require.Contains(t, m, `gateway_adapter_degraded{partner="registry:sandbox"} 1`)
	require.Contains(t, m, `gateway_adapter_degraded{partner="sandbox"} 0`)
	require.Contains(t, m, `identity_verify_total{outcome="timeout",registry="sandbox"} 1`)
	require.Contains(t, m, `identity_verify_total{outcome="unavailable",registry="sandbox"} 1`)
	require.Contains(t, m, `identity_verify_total{outcome="partner_error",registry="sandbox"} 2`)

	// Back: the fault cleared, the open period over, a trial call closes the breaker.
	e.sb.ClearFault(t, sandbox.RegistryScope)
	require.Eventually(t, func() bool {
		resp, err := cl.VerifyNationalID(ctxT(t), req)
		return err == nil && resp.GetFound() && resp.GetDateOfBirthMatches()
	}, 10*time.Second, 100*time.Millisecond)
	require.Equal(t, "closed", e.registry.Status().BreakerState)
}

// adapterStatus asks GetAdapterStatus about a partner bank (partner) or a registry (registry).
func (e *env) adapterStatus(t *testing.T, partner, registry string) *gatewayv1.GetAdapterStatusResponse {
	t.Helper()
	r, err := e.rpc.GetAdapterStatus(ctxT(t), &gatewayv1.GetAdapterStatusRequest{Partner: partner, Registry: registry})
	require.NoError(t, err)
	return r
}

// TestGetAdapterStatus_Registry: GetAdapterStatus answers for a configured national ID registry
// by the same health rule as for a bank, from the registry's own window and breaker: a healthy
// registry is HEALTHY; a registry whose lookups fail turns DEGRADED while the bank of the same
// name ("sandbox") stays HEALTHY, and a failing bank turns DEGRADED while the registry stays
// HEALTHY. A bank's answer is what it always was: partner set, registry empty.
func TestGetAdapterStatus_Registry(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := newEnv(t, envOpt{clock: clock, guard: func(g *GuardConfig) {
		g.BreakerFailures = 1000 // the error-rate rule alone, not the breaker
		g.Attempts = 1
	}})
	id := nid("HEALTH")
	e.sb.Identity(t, id, "Abebe Kebede", "1990-01-02", "")
	good, bad := acct("good"), acct("bad")
	e.account(t, good, "Good Account", 0)
	e.account(t, bad, "Bad Account", 0)
	verify := func() (*gatewayv1.VerifyNationalIdResponse, error) {
		return e.rpc.VerifyNationalId(ctxT(t), &gatewayv1.VerifyNationalIdRequest{
			Registry: SandboxRegistry, NationalId: id, FullName: "Abebe Kebede", DateOfBirth: "1990-01-02"})
	}
	traffic := func(n int) { // n good calls to each
		t.Helper()
		for range n {
			r, err := verify()
			require.NoError(t, err)
			require.True(t, r.GetFound())
			_, err = lookup(e, good, "")
			require.NoError(t, err)
		}
	}
	requireStatus := func(s *gatewayv1.GetAdapterStatusResponse, health gatewayv1.AdapterHealth, calls, errs int64) {
		t.Helper()
		require.Equal(t, health, s.GetHealth(), s.GetReason())
		require.Equal(t, calls, s.GetWindowCalls())
		require.Equal(t, errs, s.GetWindowErrors())
		require.Equal(t, "closed", s.GetBreakerState())
		require.Equal(t, 5*time.Minute, s.GetWindow().AsDuration())
		if health == gatewayv1.AdapterHealth_ADAPTER_HEALTH_HEALTHY {
			require.Empty(t, s.GetReason())
		} else {
			require.Contains(t, s.GetReason(), "error rate")
		}
	}

	// Healthy: each answers about its own calls, under the name of its kind.
	traffic(20)
	reg := e.adapterStatus(t, "", SandboxRegistry)
	requireStatus(reg, gatewayv1.AdapterHealth_ADAPTER_HEALTH_HEALTHY, 20, 0)
	require.Equal(t, SandboxRegistry, reg.GetRegistry())
	require.Empty(t, reg.GetPartner())
	require.NotNil(t, reg.GetP95Latency())
	bank := e.adapterStatus(t, SandboxPartner, "")
	requireStatus(bank, gatewayv1.AdapterHealth_ADAPTER_HEALTH_HEALTHY, 20, 0)
	require.Equal(t, SandboxPartner, bank.GetPartner())
	require.Empty(t, bank.GetRegistry(), "a bank's answer is what it was")
	// The typed client asks the same.
	cl := NewClient(e.rpc, ClientOptions{})
	viaClient, err := cl.GetAdapterStatus(ctxT(t), &gatewayv1.GetAdapterStatusRequest{Registry: SandboxRegistry})
	require.NoError(t, err)
	require.True(t, proto.Equal(reg, viaClient), "%v != %v", reg, viaClient)

	// The registry fails: three 503s of 23 lookups (13.04%) is over the 5% limit. The registry is
	// DEGRADED; the bank of the same name is not, and its lookups go on.
	e.sb.RegistryFault(t, map[string]any{"errorRatePercent": 100})
	for range 3 {
		_, err := verify()
		requireCode(t, err, codes.Unavailable, ReasonPartnerUnavail)
	}
	reg = e.adapterStatus(t, "", SandboxRegistry)
	requireStatus(reg, gatewayv1.AdapterHealth_ADAPTER_HEALTH_DEGRADED, 23, 3)
	require.Equal(t, int64(1304), reg.GetErrorRateBasisPoints())
	lk, err := lookup(e, good, "")
	require.NoError(t, err)
	require.Equal(t, gatewayv1.AdapterHealth_ADAPTER_HEALTH_HEALTHY, lk.GetPartnerHealth())
	requireStatus(e.adapterStatus(t, SandboxPartner, ""), gatewayv1.AdapterHealth_ADAPTER_HEALTH_HEALTHY, 21, 0)
	e.sb.ClearFault(t, sandbox.RegistryScope)
	r, err := verify()
	require.NoError(t, err)
	require.Equal(t, gatewayv1.AdapterHealth_ADAPTER_HEALTH_DEGRADED, r.GetRegistryHealth(), "the lookups report it too")

	// Five minutes on, the window has forgotten both.
	clock.Advance(5*time.Minute + time.Second)
	requireStatus(e.adapterStatus(t, "", SandboxRegistry), gatewayv1.AdapterHealth_ADAPTER_HEALTH_HEALTHY, 0, 0)
	requireStatus(e.adapterStatus(t, SandboxPartner, ""), gatewayv1.AdapterHealth_ADAPTER_HEALTH_HEALTHY, 0, 0)

	// And the other way round: the bank fails, the registry stays HEALTHY.
	traffic(20)
	e.fault(t, bad, map[string]any{"errorRatePercent": 100})
	for range 3 {
		_, err := lookup(e, bad, "")
		requireCode(t, err, codes.Unavailable, ReasonPartnerUnavail)
	}
	bank = e.adapterStatus(t, SandboxPartner, "")
	requireStatus(bank, gatewayv1.AdapterHealth_ADAPTER_HEALTH_DEGRADED, 23, 3)
	require.Equal(t, SandboxPartner, bank.GetPartner())
	require.Empty(t, bank.GetRegistry())
	requireStatus(e.adapterStatus(t, "", SandboxRegistry), gatewayv1.AdapterHealth_ADAPTER_HEALTH_HEALTHY, 20, 0)
	r, err = verify()
	require.NoError(t, err)
	require.Equal(t, gatewayv1.AdapterHealth_ADAPTER_HEALTH_HEALTHY, r.GetRegistryHealth())
}

// TestGetAdapterStatus_RegistryNames: an unknown registry is NotFound UNKNOWN_PARTNER, as an
// unknown partner is (and the partner field still names banks only, as before); a malformed
// registry name, or a request naming a bank and a registry at once, is InvalidArgument naming
// registry; a request naming neither is refused as before, naming partner. None reaches anyone.
func TestGetAdapterStatus_RegistryNames(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	e := newEnv(t, envOpt{guard: countCalls(&calls)})
	for _, c := range []struct {
		name   string
		req    *gatewayv1.GetAdapterStatusRequest
		code   codes.Code
		reason Reason
		field  string
	}{
		{"unknown registry", &gatewayv1.GetAdapterStatusRequest{Registry: "fayda"}, codes.NotFound, ReasonUnknownPartner, ""},
		{"unknown partner", &gatewayv1.GetAdapterStatusRequest{Partner: "fayda"}, codes.NotFound, ReasonUnknownPartner, ""},
		{"malformed registry", &gatewayv1.GetAdapterStatusRequest{Registry: "fay da"}, codes.InvalidArgument, ReasonInvalidArgument, "registry"},
		{"NUL in the registry", &gatewayv1.GetAdapterStatusRequest{Registry: "sand\x00box"}, codes.InvalidArgument, ReasonInvalidArgument, "registry"},
		{"oversized registry", &gatewayv1.GetAdapterStatusRequest{Registry: strings.Repeat("r", MaxPartnerName+1)}, codes.InvalidArgument, ReasonInvalidArgument, "registry"},
		{"both", &gatewayv1.GetAdapterStatusRequest{Partner: SandboxPartner, Registry: SandboxRegistry}, codes.InvalidArgument, ReasonInvalidArgument, "registry"},
		{"neither", &gatewayv1.GetAdapterStatusRequest{}, codes.InvalidArgument, ReasonInvalidArgument, "partner"},
	} {
		_, err := e.invoke(ctxT(t), c.req)
		require.Equal(t, c.code, status.Code(err), "%s: %v", c.name, err)
		reason, name := errorField(err)
		require.Equal(t, c.reason, reason, c.name)
		require.Equal(t, c.field, name, "%s: %v", c.name, err)
	}
	// The typed client's error for an unknown registry is the unknown-partner one.
	_, err := NewClient(e.rpc, ClientOptions{}).GetAdapterStatus(ctxT(t), &gatewayv1.GetAdapterStatusRequest{Registry: "fayda"})
	require.ErrorIs(t, err, ErrUnknownPartner)
	require.Zero(t, calls.Load())
	require.Zero(t, e.sb.IdentityLookups())
}

// TestVerifyNationalId_RetriesAFlakyRegistry: a lookup reads nothing, so the guard repeats it
// after a fault within its deadline, as it repeats a bank's reads.
func TestVerifyNationalId_RetriesAFlakyRegistry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{guard: func(g *GuardConfig) { g.Attempts = 3 }})
	id := nid("FLAKY")
	e.sb.Identity(t, id, "Abebe Kebede", "1990-01-02", "")
	// One id's scope: every attempt fails, so all three are made, then the error.
	e.fault(t, id, map[string]any{"errorRatePercent": 100})
	_, err := e.gw.VerifyNationalID(ctxT(t), SandboxRegistry, id, "Abebe Kebede", time.Date(1990, 1, 2, 0, 0, 0, 0, time.UTC))
	require.Error(t, err)
	require.True(t, IsKind(err, KindUnknown), "%v", err)
	require.Equal(t, 3, e.sb.IdentityLookups())
	var pe *PartnerError
	require.True(t, errors.As(err, &pe))
	require.Equal(t, 503, pe.Status)
}

// FuzzVerifyNationalId: whatever a client puts in the fields of VerifyNationalId (invalid UTF-8
// included, sent raw), the real gateway in front of the real sandbox registry answers a valid
// response or InvalidArgument (NotFound for a well-formed registry it does not know), never
// Internal, Unknown or a registry fault; a request the edge refuses never reaches the sandbox,
// and the registry's breaker (set to open at the first fault) stays closed.
func FuzzVerifyNationalId(f *testing.F) {
	e := newEnv(f, envOpt{guard: func(g *GuardConfig) {
		// Generous deadlines: a slow test machine must not pass for a registry fault.
		g.LookupTimeout, g.StatusTimeout = time.Minute, time.Minute
		g.BreakerFailures = 1
		g.Attempts = 1
	}})
	// Fixed ids: every fuzzing process has a database (and a sandbox) of its own.
	e.sb.Identity(f, "FZ1234567", "Abebe Kebede", "1990-01-02", "")
	e.sb.Identity(f, "FZREVOKED1", "Almaz Tesfaye", "1994-03-12", sandbox.IdentityRevoked)
	for _, s := range [][4]string{
		{SandboxRegistry, "FZ1234567", "Abebe Kebede", "1990-01-02"},
		{SandboxRegistry, "FZREVOKED1", "Almaz Tesfaye", "1994-03-12"},
		{SandboxRegistry, "FZ0000000", "አበበ ከበደ", "1900-01-01"},
		{SandboxRegistry, "fz1234567", "Abebe Kebede", "1990-02-30"},
		{SandboxRegistry, "FZ1234567/../x", "Abebe\x00Kebede", "19900102"},
		{"", strings.Repeat("A", 33), "\xff\xfe", "1899-12-31"},
		{"fayda", ".", "   ", "9999-12-31"},
		{"sand box", "..", "Abebe\u202eKebede", "1990-01-02T00:00:00Z"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, registry, nationalID, fullName, dob string) {
		req := &gatewayv1.VerifyNationalIdRequest{Registry: registry, NationalId: nationalID, FullName: fullName, DateOfBirth: dob}
		before := e.sb.IdentityLookups()
		resp, err := e.invoke(context.Background(), req)
		_, dobErr := checkBirthDate("date_of_birth", dob, time.Now())
		valid := firstInvalid(checkRegistry(registry), checkNationalID("national_id", nationalID),
			checkPersonName("full_name", fullName), dobErr) == nil
		switch c := status.Code(err); {
		case c == codes.OK:
			r := resp.(*gatewayv1.VerifyNationalIdResponse)
			require.True(t, valid, "an invalid request was answered: %+v", req)
			if !r.GetFound() {
				require.Equal(t, gatewayv1.IdentityStatus_IDENTITY_STATUS_UNSPECIFIED, r.GetStatus())
				require.Equal(t, gatewayv1.NameMatch_NAME_MATCH_NOT_CHECKED, r.GetNameMatch())
				require.False(t, r.GetDateOfBirthMatches())
			} else {
				require.NotEqual(t, gatewayv1.IdentityStatus_IDENTITY_STATUS_UNSPECIFIED, r.GetStatus())
				require.Contains(t, []gatewayv1.NameMatch{gatewayv1.NameMatch_NAME_MATCH_MATCH, gatewayv1.NameMatch_NAME_MATCH_MISMATCH}, r.GetNameMatch())
			}
		case c == codes.InvalidArgument:
			reason, _ := errorField(err)
			require.Equal(t, ReasonInvalidArgument, reason, "%v", err)
		case c == codes.NotFound && registry != SandboxRegistry:
			reason, _ := errorField(err)
			require.Equal(t, ReasonUnknownPartner, reason, "%v", err)
		default:
			t.Fatalf("VerifyNationalId(%q, %q, %q, %q) answered %v", registry, nationalID, fullName, dob, err)
		}
		if !valid || registry != SandboxRegistry {
			require.Equal(t, before, e.sb.IdentityLookups(), "a refused request reached the registry")
		}
		st := e.registry.Status()
		require.Equal(t, "closed", st.BreakerState)
		require.Zero(t, st.Stats.Errors, "a registry fault from a caller's input")
	})
}
