package api

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBnplCancel: an agreement's merchant settlement is sent when it is made, so its cancellation
// is 409 BNPL_SETTLEMENT_SENT, audited DENIED each time and changing nothing (asked twice, the
// same answer); an unknown agreement and another organization's are 404, not audited; the
// merchant (not a business) is 403.
func TestBnplCancel(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	a := s.activeBnplAgreement(t, "cancel-1")
	events := s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type LIKE 'bnpl.%'`, s.tenant)

	for range 2 {
		rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/cancel", nil)
		require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
		require.Equal(t, "BNPL_SETTLEMENT_SENT", errCode(rec))
	}
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'CancelBnplAgreement'
		AND outcome = 'DENIED' AND target_id = $2`, s.tenant, a.ID))
	require.Equal(t, events, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type LIKE 'bnpl.%'`, s.tenant))
	after := s.waitAgreement(t, a.ID, "ACTIVE")
	require.Equal(t, a.Instalments, after.Instalments)

	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements/bnpl_00000000000000000000000000000000/cancel", nil)
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	require.Equal(t, "BNPL_AGREEMENT_NOT_FOUND", errCode(rec))
	other, _ := s.signUp("owner@cancel-other.test", "BUSINESS")
	rec = other.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/cancel", nil)
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	rec = s.merchant.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/cancel", nil)
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM app.audit_log WHERE action = 'CancelBnplAgreement' AND target_id = $1`, a.ID))
}
