package api

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/sanctions"
)

// TestEwaDisburseGateMatrix: each gate that says no answers its code synchronously and leaves
// exactly one audit row and nothing else — no ledger transaction, no partner transfer, no outbox
// event — and the request stays REQUESTED.
func TestEwaDisburseGateMatrix(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		opts   ewaStackOpts
		setup  func(t *testing.T, s *ewaStack)
		status int
		code   string
		audit  string
	}{
		{name: "KYC missing", setup: func(*testing.T, *ewaStack) {},
			status: http.StatusUnprocessableEntity, code: "EWA_KYC_NOT_APPROVED", audit: "KycGateBlocked"},
		{name: "KYC pending", setup: func(t *testing.T, s *ewaStack) {
			_, code, errc := s.submit("Abebe Kebede")
			require.Equal(t, http.StatusCreated, code, errc)
		}, status: http.StatusUnprocessableEntity, code: "EWA_KYC_NOT_APPROVED", audit: "KycGateBlocked"},
		{name: "KYC expired", setup: func(t *testing.T, s *ewaStack) {
			s.approveKyc(t)
			// The approval's validity has run out (the hourly expiry job has not marked it yet).
			require.NoError(t, db.InTenantTx(context.Background(), s.d.App, s.tenant, func(tx pgx.Tx) error {
				tag, err := tx.Exec(context.Background(),
					`UPDATE app.kyc_submissions SET valid_until = now() - interval '1 day' WHERE tenant_id = $1 AND status = 'APPROVED'`, s.tenant)
				if err == nil && tag.RowsAffected() != 1 {
					err = fmt.Errorf("%d approvals moved", tag.RowsAffected())
				}
				return err
			}))
		}, status: http.StatusUnprocessableEntity, code: "EWA_KYC_NOT_APPROVED", audit: "KycGateBlocked"},
		{name: "sanctions hit", setup: func(t *testing.T, s *ewaStack) {
			s.approveKyc(t)
			// The name is listed after the approval; the rescreen records a BLOCK.
			ctx := tenancy.WithActor(context.Background(), "system:test")
			_, err := sanctions.Ingest(ctx, s.d.Platform(t), sanctions.National, sanctions.IngestOptions{},
				sanctions.File{Name: "national.csv", Data: []byte("name,aliases,dob,reference\nAbebe Kebede,,1990-02-03,ETH-NAT-9\n")})
			require.NoError(t, err)
			_, err = sanctions.Rescreen(ctx, s.d.Platform(t))
			require.NoError(t, err)
		}, status: http.StatusUnprocessableEntity, code: "EWA_SANCTIONS_BLOCKED", audit: "SanctionsGateBlocked"},
		{name: "renamed to a listed name after the approval", setup: func(t *testing.T, s *ewaStack) {
			s.approveKyc(t)
			// The check screened "Abebe Kebede"; the money is paid under the record's name now.
			rec := s.owner.call(http.MethodPut, "/api/employees/"+s.employee, map[string]any{"firstName": "Girma",
				"lastName": "Wolde Tesfaye"})
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		}, status: http.StatusUnprocessableEntity, code: "EWA_SANCTIONS_BLOCKED", audit: "SanctionsGateBlocked"},
		{name: "account missing", setup: func(t *testing.T, s *ewaStack) {
			s.approveKyc(t)
			s.setPayoutAccount(t, testkit.Unique("nosuch"), "Abebe Kebede")
		}, status: http.StatusConflict, code: "EWA_DESTINATION_ACCOUNT_INVALID", audit: "AccountLookupGateBlocked"},
		{name: "name mismatch", setup: func(t *testing.T, s *ewaStack) {
			s.approveKyc(t)
			acct := testkit.Unique("other")
			s.bank.Account(t, acct, "Tigist Alemu", 0)
			s.setPayoutAccount(t, acct, "Abebe Kebede")
			s.setNameMatch(t, true)
		}, status: http.StatusConflict, code: "ACCOUNT_MISMATCH", audit: "AccountLookupGateBlocked"},
		{name: "partner down", setup: func(t *testing.T, s *ewaStack) {
			s.approveKyc(t)
			s.bank.Fault(t, "", map[string]any{"errorRatePercent": 100})
		}, status: http.StatusServiceUnavailable, code: "EWA_PARTNER_UNAVAILABLE", audit: "AccountLookupGateBlocked"},
		{name: "gateway down", opts: ewaStackOpts{gatewayDown: true}, setup: func(t *testing.T, s *ewaStack) {
			s.approveKyc(t)
		}, status: http.StatusServiceUnavailable, code: "EWA_PARTNER_UNAVAILABLE", audit: "AccountLookupGateBlocked"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newEwaStack(t, tc.opts)
			tc.setup(t, s)
			req := s.request(t, 10_000)
			rec := s.disburse(req.ID, testkit.Unique("disburse"))
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			require.Equal(t, tc.code, errCode(rec))
			ledgerTxs, transfers, events := s.sideEffects(t)
			require.Equal(t, [3]int{0, 0, 0}, [3]int{ledgerTxs, transfers, events}, "no ledger entry, no partner call, no event")
			require.Equal(t, 1, s.auditRows(t, tc.audit), "one %s row", tc.audit)
			got := s.waitStatus(t, req.ID, "REQUESTED")
			require.Equal(t, "REQUESTED", string(got.Status), "a refusal leaves the request to be disbursed once fixed")
		})
	}
}

// setPayoutAccount points the employee's payout at another sandbox account.
func (s *ewaStack) setPayoutAccount(t *testing.T, account, holder string) {
	t.Helper()
	rec := s.owner.call(http.MethodPut, "/api/employees/"+s.employee, map[string]any{
		"payoutAccount": map[string]any{"partner": "sandbox", "accountNumber": account, "holderName": holder}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}

func (s *ewaStack) setNameMatch(t *testing.T, on bool) {
	t.Helper()
	rec := s.owner.call(http.MethodPut, "/api/ewa/settings", map[string]any{
		"fundingAccount":   map[string]any{"partner": "sandbox", "accountNumber": s.funding},
		"accessCapPercent": 50, "feeFlatSantim": 500, "feeBasisPoints": 100, "accountNameMatch": on,
	})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}
