package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestIdentityRegistry: an identity registered by the operator is found by the registry's lookup
// (200, 404 IDENTITY_NOT_FOUND when unknown); registering the same identity again is a replay
// (200), the id with other content a conflict (409) that changes nothing; a revocation shows in
// the lookup, and a death is final.
func TestIdentityRegistry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	abebe := CreateIdentityRequest{NationalID: "ETH1234567", FullName: "Abebe Kebede", DateOfBirth: "1990-01-02"}

	r := e.do("POST", "/api/v1/sandbox/identities", abebe)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	want := Identity{NationalID: "ETH1234567", FullName: "Abebe Kebede", DateOfBirth: "1990-01-02", Status: IdentityActive}
	require.Equal(t, want, decodeAs[Identity](t, r))
	r = e.do("POST", "/api/v1/sandbox/identities", abebe)
	require.Equal(t, 200, r.Status, "a replay: %s", r.Body)
	require.Equal(t, want, decodeAs[Identity](t, r))
	withStatus := abebe
	withStatus.Status = IdentityActive
	require.Equal(t, 200, e.do("POST", "/api/v1/sandbox/identities", withStatus).Status, "ACTIVE is the default, so the same identity")
	for _, other := range []CreateIdentityRequest{
		{NationalID: "ETH1234567", FullName: "Abebe Kebede Tessema", DateOfBirth: "1990-01-02"},
		{NationalID: "ETH1234567", FullName: "Abebe Kebede", DateOfBirth: "1990-01-03"},
		{NationalID: "ETH1234567", FullName: "Abebe Kebede", DateOfBirth: "1990-01-02", Status: IdentityRevoked},
	} {
		r := e.do("POST", "/api/v1/sandbox/identities", other)
		require.Equal(t, 409, r.Status, "%s", r.Body)
		require.Equal(t, CodeIdentityExists, r.errCode())
	}

	r = e.do("GET", "/api/v1/identities/ETH1234567", nil)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	require.Equal(t, want, decodeAs[Identity](t, r), "the conflicts changed nothing")
	r = e.do("GET", "/api/v1/identities/ETH7654321", nil)
	require.Equal(t, 404, r.Status)
	require.Equal(t, CodeIdentityNotFound, r.errCode())
	r = e.do("GET", "/api/v1/identities/eth1234567", nil)
	require.Equal(t, 400, r.Status, "a malformed id is the caller's error, not an unknown one")
	require.Equal(t, CodeInvalidRequest, r.errCode())

	r = e.do("POST", "/api/v1/sandbox/identities/ETH1234567/revoke", nil)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	require.Equal(t, IdentityRevoked, decodeAs[Identity](t, e.do("GET", "/api/v1/identities/ETH1234567", nil)).Status)
	require.Equal(t, 200, e.do("POST", "/api/v1/sandbox/identities/ETH1234567/revoke", nil).Status, "revoking twice is fine")

	dead := CreateIdentityRequest{NationalID: "ETH0000001", FullName: "Dawit Bekele", DateOfBirth: "1950-06-30", Status: IdentityDeceased}
	require.Equal(t, 201, e.do("POST", "/api/v1/sandbox/identities", dead).Status)
	require.Equal(t, 200, e.do("POST", "/api/v1/sandbox/identities/ETH0000001/revoke", nil).Status)
	require.Equal(t, IdentityDeceased, decodeAs[Identity](t, e.do("GET", "/api/v1/identities/ETH0000001", nil)).Status, "death is final")
	require.Equal(t, 404, e.do("POST", "/api/v1/sandbox/identities/ETH9999999/revoke", nil).Status)

	// The bounds of a date of birth: 1900-01-01 and today are dates someone is born on.
	today := time.Now().UTC().Format(dateLayout)
	for _, d := range []string{"1900-01-01", today, "2000-02-29"} {
		r := e.do("POST", "/api/v1/sandbox/identities", CreateIdentityRequest{NationalID: "B" + d[:4] + d[5:7] + d[8:], FullName: "Baby", DateOfBirth: d})
		require.Equal(t, 201, r.Status, "%s: %s", d, r.Body)
	}
}

// TestIdentityRegistryFaults: faults reach the registry's lookup like any bank route: the global
// scope, RegistryScope (the registry alone: the bank's routes keep answering) and the national
// id's own scope; a malformed id is refused before any fault.
func TestIdentityRegistryFaults(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("IDF-ACC", "Abebe Kebede", 0)
	require.Equal(t, 201, e.do("POST", "/api/v1/sandbox/identities", CreateIdentityRequest{NationalID: "ETH1111111", FullName: "Abebe Kebede", DateOfBirth: "1990-01-02"}).Status)
	require.Equal(t, 201, e.do("POST", "/api/v1/sandbox/identities", CreateIdentityRequest{NationalID: "ETH2222222", FullName: "Almaz Tesfaye", DateOfBirth: "1994-03-12"}).Status)

	e.setFaults(RegistryScope, Faults{ErrorRatePercent: 100})
	for _, id := range []string{"ETH1111111", "ETH2222222", "ETH3333333"} {
		r := e.do("GET", "/api/v1/identities/"+id, nil)
		require.Equal(t, 503, r.Status, "%s: %s", id, r.Body)
		require.Equal(t, CodeInjectedFailure, r.errCode())
		require.Equal(t, "1", r.Header.Get("Retry-After"))
	}
	require.Equal(t, 400, e.do("GET", "/api/v1/identities/bad", nil).Status, "a malformed id is refused before any fault")
	require.Equal(t, 200, e.do("GET", "/api/v1/accounts/IDF-ACC", nil).Status, "the bank is up while the registry is down")
	require.Equal(t, 204, e.do("DELETE", "/api/v1/sandbox/faults/"+RegistryScope, nil).Status)

	// One id's scope: that id is slow, the others are not.
	e.setFaults("ETH1111111", Faults{LatencyMs: 300})
	start := time.Now()
	require.Equal(t, 200, e.do("GET", "/api/v1/identities/ETH1111111", nil).Status)
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	start = time.Now()
	require.Equal(t, 200, e.do("GET", "/api/v1/identities/ETH2222222", nil).Status)
	require.Less(t, time.Since(start), 300*time.Millisecond)

	// The global scope takes the registry down with the bank.
	e.setFaults(GlobalScope, Faults{ErrorRatePercent: 100})
	require.Equal(t, 503, e.do("GET", "/api/v1/identities/ETH2222222", nil).Status)
	require.Equal(t, 503, e.do("GET", "/api/v1/accounts/IDF-ACC", nil).Status)
}

// TestSeedDemoRegistersTheDemoIdentities: the demo employees' identities are registered at every
// start, and an identity an operator changed is left as it is.
func TestSeedDemoRegistersTheDemoIdentities(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	_, err := e.bank.SeedDemo(ctx)
	require.NoError(t, err)
	for _, d := range DemoIdentities {
		r := e.do("GET", "/api/v1/identities/"+d.NationalID, nil)
		require.Equal(t, 200, r.Status, "%s: %s", d.NationalID, r.Body)
		got := decodeAs[Identity](t, r)
		require.Equal(t, d.FullName, got.FullName)
		require.Equal(t, d.DateOfBirth, got.DateOfBirth)
	}
	require.Equal(t, 200, e.do("POST", "/api/v1/sandbox/identities/DEMO0000101/revoke", nil).Status)
	_, err = e.bank.SeedDemo(ctx)
	require.NoError(t, err)
	require.Equal(t, IdentityRevoked, decodeAs[Identity](t, e.do("GET", "/api/v1/identities/DEMO0000101", nil)).Status)
	require.Len(t, e.registry(t), len(DemoIdentities))
}
