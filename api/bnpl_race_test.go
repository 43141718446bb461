package api

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/workflows"
)

// activeBnplAgreement creates an agreement of 1,200 ETB in 3 for the stack's employee and waits
// until it is ACTIVE.
func (s *bnplStack) activeBnplAgreement(t *testing.T, ref string) bnplAgreementJSON {
	t.Helper()
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(120_000, 3, ref), "Idempotency-Key", testkit.Unique("bnpl"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	return s.waitAgreement(t, decode[bnplActivateJSON](t, rec).ID, "ACTIVE")
}

// TestBnplRacingCollect: 20 racing collections of one instalment, each with its own key, and 10
// racing calls of one key on another instalment: no call is answered 5xx, each instalment is
// collected exactly once (one COLLECTED row, one journal, one event).
func TestBnplRacingCollect(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)
	a := s.activeBnplAgreement(t, "race-1")

	race := func(n int, idx string, key func() string) []*httptest.ResponseRecorder {
		out := make([]*httptest.ResponseRecorder, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i] = s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/installments/"+idx+"/collect", nil,
					"Idempotency-Key", key())
			}()
		}
		wg.Wait()
		return out
	}
	check := func(recs []*httptest.ResponseRecorder, conflicts ...string) {
		t.Helper()
		txs := map[string]bool{}
		for _, r := range recs {
			requireNoServerError(t, r, "racing collect")
			switch r.Code {
			case http.StatusOK: // the one collection, answered to every caller that reached its saga
				got := decode[bnplCollectJSON](t, r)
				require.Equal(t, "COLLECTED", got.Status)
				txs[got.LedgerTxID] = true
			case http.StatusAccepted: // the wait ran out on a loaded machine: the saga goes on
			case http.StatusConflict:
				require.Contains(t, conflicts, errCode(r), r.Body.String())
			default:
				t.Fatalf("racing collect: %d %s", r.Code, r.Body.String())
			}
		}
		require.LessOrEqual(t, len(txs), 1, "every 200 names the one collection's journal")
	}
	check(race(20, "0", func() string { return testkit.Unique("collect") }), "BNPL_INSTALMENT_NOT_DUE", "IDEMPOTENCY_KEY_IN_USE")
	one := testkit.Unique("collect")
	same := race(10, "1", func() string { return one })
	check(same, "BNPL_INSTALMENT_NOT_DUE", "IDEMPOTENCY_KEY_IN_USE")

	for _, idx := range []int{0, 1} {
		require.Eventually(t, func() bool {
			return s.count(t, `SELECT count(*) FROM app.bnpl_instalments WHERE tenant_id = $1 AND agreement_id = $2 AND idx = $3
				AND status = 'COLLECTED'`, s.tenant, a.ID, idx) == 1
		}, 60*time.Second, 50*time.Millisecond, "instalment %d collected", idx)
	}
	// Every racer's saga has closed: still one journal and one event per instalment.
	require.Eventually(t, func() bool {
		return s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1 AND idempotency_key LIKE 'bnpl-collect:%'`, s.tenant) == 2
	}, 30*time.Second, 50*time.Millisecond)
	time.Sleep(500 * time.Millisecond)
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1 AND idempotency_key LIKE 'bnpl-collect:%'`, s.tenant))
	// The ledger exact: each instalment's one journal (under its one saga's key) is its amount.
	for _, idx := range []int{0, 1} {
		require.ElementsMatch(t, []string{
			"D payroll-clearing:" + a.ID + " 40000",
			"C receivable-from-customer:" + a.ID + " 40000",
		}, entryLines(s.ledgerTx(t, "bnpl-collect:"+workflows.BnplCollectWorkflowID(s.tenant, a.ID, idx))))
	}
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = 'bnpl.instalment_collected.v1'`, s.tenant))
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'CollectBnplInstalment' AND outcome = 'SUCCESS'`, s.tenant))
	// The key's replay answers what its first call got (a stored answer).
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/installments/1/collect", nil, "Idempotency-Key", one)
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, rec.Code, rec.Body.String())
}

// TestBnplRacingActivationsStayAffordable: four agreements for one employee, each affordable
// alone (400,000 a month against the 600,000 limit) but not two together, race through the
// route: exactly one is made and its merchant paid; the others are refused BNPL_NOT_AFFORDABLE
// (a 202 whose saga is refused later ends with no agreement) with their postings voided.
func TestBnplRacingActivationsStayAffordable(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)

	const racers = 4
	recs := make([]*httptest.ResponseRecorder, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			recs[i] = s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(800_000, 2, testkit.Unique("order")),
				"Idempotency-Key", testkit.Unique("bnpl"))
		}()
	}
	wg.Wait()
	for _, r := range recs {
		requireNoServerError(t, r, "racing activation")
		switch r.Code {
		case http.StatusAccepted:
		case http.StatusUnprocessableEntity:
			require.Equal(t, "BNPL_NOT_AFFORDABLE", errCode(r), r.Body.String())
		default:
			t.Fatalf("racing activation: %d %s", r.Code, r.Body.String())
		}
	}
	// Every racer's saga has closed: one agreement made, every other posting voided.
	require.Eventually(t, func() bool {
		return s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1 AND idempotency_key LIKE 'bnpl-settle:%'
			AND status = 'PENDING'`, s.tenant) == 0 &&
			s.count(t, `SELECT count(*) FROM app.bnpl_agreements WHERE tenant_id = $1 AND status = 'ACCEPTED'`, s.tenant) == 0
	}, 60*time.Second, 50*time.Millisecond)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.bnpl_agreements WHERE tenant_id = $1`, s.tenant))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM app.bnpl_agreements WHERE tenant_id = $1 AND status = 'ACTIVE'`, s.tenant))
	require.Equal(t, 400_000, s.count(t, `SELECT coalesce(sum(amount_santim), 0)::int FROM app.bnpl_instalments
		WHERE tenant_id = $1 AND due_date = '2026-12-31'`, s.tenant), "the month's instalments stay within the limit")
	require.Equal(t, int64(800_000-20_000), s.balance(t, s.merchantSettle), "the merchant is paid for one order")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1 AND idempotency_key LIKE 'bnpl-settle:%'
		AND status = 'POSTED'`, s.tenant))
}
