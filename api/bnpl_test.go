package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// bnplStack is the EWA stack (every real component) with a merchant whose settlement account is
// at the sandbox, and a stub projection of the employee's pay (2026-12: 20,000 ETB net, 6,000
// recoverable).
type bnplStack struct {
	*ewaStack
	merchant       *apiClient
	merchantID     string
	merchantSettle string
}

func newBnplStack(t testing.TB) *bnplStack { t.Helper(); return newBnplStackWith(t, ewaStackOpts{}) }

// newBnplStackWith is newBnplStack on the EWA stack of options o.
func newBnplStackWith(t testing.TB, o ewaStackOpts) *bnplStack {
	t.Helper()
	return bnplOn(t, newEwaStack(t, o))
}

// bnplOn adds the merchant and the projection to an EWA stack (a loan stack's, say).
func bnplOn(t testing.TB, es *ewaStack) *bnplStack {
	t.Helper()
	s := &bnplStack{ewaStack: es}
	s.srv.deps.LoanProjection = func(context.Context, db.BunTx, string) (lending.Projection, error) {
		return lending.Projection{Period: "2026-12", NetSantim: 2_000_000, RecoverableSantim: 600_000}, nil
	}
	var res signUpResult
	s.merchant, res = s.signUpPartner("owner@shop.test", "MERCHANT")
	s.merchantID = res.Organization.ID
	s.merchantSettle = testkit.Unique("msettle")
	s.bank.Account(t, s.merchantSettle, "Shop Settlement", 0)
	rec := s.merchant.call(http.MethodPut, "/api/bnpl/merchant", map[string]any{
		"settlementAccount":   map[string]any{"partner": "sandbox", "accountNumber": s.merchantSettle},
		"discountBasisPoints": 250})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return s
}

func (s *bnplStack) agreementBody(purchase int64, n int, ref string) map[string]any {
	return map[string]any{"employeeId": s.employee, "merchantId": s.merchantID, "merchantReference": ref,
		"purchaseSantim": purchase, "instalments": n}
}

func (s *bnplStack) balance(t *testing.T, account string) int64 {
	t.Helper()
	var acct struct {
		BalanceSantim int64 `json:"balanceSantim"`
	}
	s.bank.Sandbox.Call(t, http.MethodGet, "/api/v1/sandbox/accounts/"+account, nil, http.StatusOK, &acct)
	return acct.BalanceSantim
}

func (s *bnplStack) waitAgreement(t *testing.T, id, want string) bnplAgreementJSON {
	t.Helper()
	var last bnplAgreementJSON
	require.Eventually(t, func() bool {
		rec := s.owner.call(http.MethodGet, "/api/bnpl/agreements/"+id, nil)
		if rec.Code != http.StatusOK {
			return false
		}
		last = decode[bnplAgreementJSON](t, rec)
		return last.Status == want
	}, 60*time.Second, 50*time.Millisecond, "agreement %s never reached %s", id, want)
	return last
}

func (s *bnplStack) ledgerTx(t *testing.T, key string) *ledgerv1.Transaction {
	t.Helper()
	r, err := s.ledger.GetTransaction(context.Background(), &ledgerv1.GetTransactionRequest{TenantId: s.tenant, IdempotencyKey: key})
	require.NoError(t, err, key)
	return r.GetTransaction()
}

// TestBnplEndToEnd: the merchant sets its account; a quote (plan and affordability; an
// unaffordable one refused); the agreement → the gates → the merchant paid at the sandbox → ACTIVE,
// the journals exact; 20 racing collections of one instalment (20 keys) → one; the other two
// collected → SETTLED, every subledger at zero; events, audit rows, the lists, another tenant's 404,
// the same key's replay and a reused merchant reference.
func TestBnplEndToEnd(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)

	// The quote: 1,200 ETB in 3 → 400 ETB a month from 2026-12; the merchant gives up 2.5%.
	rec := s.owner.call(http.MethodPost, "/api/bnpl/quotes", map[string]any{"employeeId": s.employee, "merchantId": s.merchantID,
		"purchaseSantim": 120_000, "instalments": 3})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	q := decode[bnplQuoteJSON](t, rec)
	require.Equal(t, []bnplScheduledJSON{{0, "2026-12-31", 40_000}, {1, "2027-01-31", 40_000}, {2, "2027-02-28", 40_000}}, q.Instalments)
	require.Equal(t, int64(3_000), q.DiscountSantim)
	require.Equal(t, int64(117_000), q.MerchantReceivesSantim)
	require.True(t, q.Affordability.Affordable)
	require.Equal(t, int64(600_000), q.Affordability.LimitSantim) // 30% of 20,000 ETB = 6,000 = the recoverable
	rec = s.owner.call(http.MethodPost, "/api/bnpl/quotes", map[string]any{"employeeId": s.employee, "merchantId": s.merchantID,
		"purchaseSantim": 1_300_000, "instalments": 2})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	require.Equal(t, "BNPL_NOT_AFFORDABLE", errCode(rec))
	rec = s.owner.call(http.MethodPost, "/api/bnpl/quotes", map[string]any{"employeeId": s.employee, "merchantId": s.tenant,
		"purchaseSantim": 120_000, "instalments": 3})
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	require.Equal(t, "BNPL_MERCHANT_NOT_FOUND", errCode(rec))
	require.Zero(t, s.count(t, `SELECT count(*) FROM app.bnpl_agreements WHERE tenant_id = $1`, s.tenant), "a quote stores nothing")

	// The agreement.
	key := testkit.Unique("bnpl")
	body := s.agreementBody(120_000, 3, "order-1")
	rec = s.owner.call(http.MethodPost, "/api/bnpl/agreements", body, "Idempotency-Key", key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	acc := decode[bnplActivateJSON](t, rec)
	require.Equal(t, idempotency.WorkflowID(s.tenant, "POST /api/bnpl/agreements", key), acc.WorkflowID)
	a := s.waitAgreement(t, acc.ID, "ACTIVE")
	require.Equal(t, int64(120_000), a.OutstandingSantim)
	require.Len(t, a.Instalments, 3)
	require.NotNil(t, a.ActivatedAt)

	// The journals, exact.
	tx := s.ledgerTx(t, "bnpl-settle:"+acc.WorkflowID)
	require.Equal(t, ledgerv1.TransactionStatus_TRANSACTION_STATUS_POSTED, tx.GetStatus())
	require.ElementsMatch(t, []string{
		"D receivable-from-customer:" + a.ID + " 120000",
		"C payable-to-merchant:" + s.merchantID + ":" + a.ID + " 117000",
		"C fee-income 3000",
	}, entryLines(tx))
	paid := s.ledgerTx(t, "bnpl-settle-paid:"+acc.WorkflowID)
	require.ElementsMatch(t, []string{
		"D payable-to-merchant:" + s.merchantID + ":" + a.ID + " 117000",
		"C partner-bank:sandbox:" + s.funding + " 117000",
	}, entryLines(paid))
	ref := partnerref.Leg(partnerref.BnplSettle, acc.WorkflowID, 1)
	require.Equal(t, ref, paid.GetMetadata()[partnerref.LedgerMetadataKey])
	require.Equal(t, int64(117_000), s.balance(t, s.merchantSettle), "the merchant got the purchase less its discount")
	require.Equal(t, int64(stackFundingBalance)-117_000, s.balance(t, s.funding), "from the business's funding account")
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1 AND reference = $2 AND domain = 'BNPL'`, s.tenant, ref))
	settled := []settledTransfer{{Kind: "merchant_settlement", SubjectID: a.ID, AmountSantim: 117_000}}
	require.Equal(t, settled, settledTransfers(t, s.d, s.tenant, bnpl.EventBankTransferSettled), "the merchant's settlement, once")

	// The same key again: the same answer; another key for the same order: refused, nothing new.
	rec = s.owner.call(http.MethodPost, "/api/bnpl/agreements", body, "Idempotency-Key", key)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Equal(t, acc.ID, decode[bnplActivateJSON](t, rec).ID)
	rec = s.owner.call(http.MethodPost, "/api/bnpl/agreements", body, "Idempotency-Key", testkit.Unique("bnpl"))
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, "BNPL_DUPLICATE_MERCHANT_REFERENCE", errCode(rec))
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM gateway.transfers WHERE tenant_id = $1 AND domain = 'BNPL'`, s.tenant))

	// 20 racing collections of instalment 0, each with its own key: one collects it.
	const racers = 20
	codes := make([]*httptest.ResponseRecorder, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/installments/0/collect", nil,
				"Idempotency-Key", testkit.Unique("collect"))
		}()
	}
	wg.Wait()
	won, pending := 0, 0
	journals := map[string]bool{}
	for _, r := range codes {
		requireNoServerError(t, r, "racing collect")
		switch r.Code {
		case http.StatusOK: // every caller that reached the instalment's one saga gets its one collection
			won++
			got := decode[bnplCollectJSON](t, r)
			require.Equal(t, "COLLECTED", got.Status)
			journals[got.LedgerTxID] = true
		case http.StatusAccepted: // the wait ran out on a loaded machine: the saga goes on
			pending++
		case http.StatusConflict:
			require.Contains(t, []string{"BNPL_INSTALMENT_NOT_DUE", "IDEMPOTENCY_KEY_IN_USE"}, errCode(r), r.Body.String())
		default:
			t.Fatalf("collect: %d %s", r.Code, r.Body.String())
		}
	}
	require.LessOrEqual(t, len(journals), 1, "one collection of one instalment")
	require.GreaterOrEqual(t, won+pending, 1)
	a = s.waitAgreement(t, a.ID, "ACTIVE")
	require.Eventually(t, func() bool {
		return s.count(t, `SELECT count(*) FROM app.bnpl_instalments WHERE tenant_id = $1 AND agreement_id = $2 AND idx = 0
			AND status = 'COLLECTED'`, s.tenant, a.ID) == 1
	}, 60*time.Second, 50*time.Millisecond)
	var winnerWF string
	require.NoError(t, db.InTenantTx(context.Background(), s.d.App, s.tenant, func(tx pgx.Tx) error {
		return tx.QueryRow(context.Background(), `SELECT collect_workflow_id FROM app.bnpl_instalments WHERE agreement_id = $1 AND idx = 0`,
			a.ID).Scan(&winnerWF)
	}))
	require.ElementsMatch(t, []string{
		"D payroll-clearing:" + a.ID + " 40000",
		"C receivable-from-customer:" + a.ID + " 40000",
	}, entryLines(s.ledgerTx(t, "bnpl-collect:"+winnerWF)))
	// Every racer's saga has finished: still one journal.
	require.Eventually(t, func() bool {
		return s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'CollectBnplInstalment'`, s.tenant) >= 1
	}, 10*time.Second, 50*time.Millisecond)
	require.Equal(t, 1, s.count(t, `SELECT count(*) FROM ledger.transactions WHERE tenant_id = $1 AND idempotency_key LIKE 'bnpl-collect:%'`, s.tenant))
	// The activation's and the collection's histories (WAGERAIL_RECORD_HISTORY=1), replayed by
	// TestBnplReplay in package workflows.
	testkit.RecordHistory(t, s.tc, acc.WorkflowID, "", "../workflows/testdata/bnpl_activate_history.json")
	testkit.RecordHistory(t, s.tc, winnerWF, "", "../workflows/testdata/bnpl_collect_history.json")

	for _, idx := range []string{"1", "2"} {
		rec = s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/installments/"+idx+"/collect", nil, "Idempotency-Key", testkit.Unique("collect"))
		// 200 once recorded; 202 when the wait ran out on a loaded machine (the saga goes on).
		require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, rec.Code, rec.Body.String())
	}
	a = s.waitAgreement(t, a.ID, "SETTLED")
	require.Zero(t, a.OutstandingSantim)
	rec = s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/installments/2/collect", nil, "Idempotency-Key", testkit.Unique("collect"))
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	rec = s.owner.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/installments/11/collect", nil, "Idempotency-Key", testkit.Unique("collect"))
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	require.Equal(t, "BNPL_INSTALMENT_NOT_FOUND", errCode(rec))

	// Every subledger of the agreement closes.
	for _, acct := range []string{"receivable-from-customer:" + a.ID, "payable-to-merchant:" + s.merchantID + ":" + a.ID} {
		require.Equal(t, 1, s.count(t, `SELECT count(*) FROM ledger.accounts a WHERE a.tenant_id = $1 AND a.name = $2 AND 0 =
			(SELECT coalesce(sum(CASE e.direction WHEN 'DEBIT' THEN e.amount ELSE -e.amount END), 0) FROM ledger.entries e
			 WHERE e.account_id = a.id AND e.phase = 'POSTED')`, s.tenant, acct), acct)
	}

	// Events and audit rows.
	for ev, n := range map[string]int{"bnpl.accepted.v1": 1, "bnpl.activated.v1": 1, "bnpl.instalment_collected.v1": 3, "bnpl.settled.v1": 1} {
		require.Equal(t, n, s.count(t, `SELECT count(*) FROM app.outbox WHERE tenant_id = $1 AND type = $2`, s.tenant, ev), ev)
	}
	// The collections are journals of what payroll withheld: no bank transfer settled but the merchant's.
	require.Equal(t, settled, settledTransfers(t, s.d, s.tenant, bnpl.EventBankTransferSettled))
	require.Equal(t, 1, s.auditRows(t, "CreateBnplAgreement"))
	require.Equal(t, 1, s.auditRows(t, "BnplAgreementActivated"))
	require.Equal(t, 1, s.auditRows(t, "BnplAgreementSettled"))
	require.Equal(t, 3, s.count(t, `SELECT count(*) FROM app.audit_log WHERE tenant_id = $1 AND action = 'CollectBnplInstalment' AND outcome = 'SUCCESS'`, s.tenant))

	// The lists; another organization does not see it.
	rec = s.owner.call(http.MethodGet, "/api/bnpl/agreements?status=SETTLED&employeeId="+s.employee, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	page := decode[bnplAgreementPageJSON](t, rec)
	require.Len(t, page.Items, 1)
	require.Equal(t, a.ID, page.Items[0].ID)
	other, _ := s.signUp("owner@other-biz.test", "BUSINESS")
	rec = other.call(http.MethodGet, "/api/bnpl/agreements/"+a.ID, nil)
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	rec = other.call(http.MethodPost, "/api/bnpl/agreements/"+a.ID+"/installments/0/collect", nil, "Idempotency-Key", testkit.Unique("collect"))
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	// A merchant is not a business: the business routes are closed to it.
	rec = s.merchant.call(http.MethodGet, "/api/bnpl/agreements", nil)
	require.Equal(t, http.StatusForbidden, rec.Code, rec.Body.String())
}

// FuzzBnplRoutes: every BNPL route on the real stack (the sagas' routes start real sagas) with
// hostile ids, indexes, queries, bodies and keys, as the business's owner, the merchant, an
// operator, the employee (a linked customer) or nobody: 4xx or success, never 5xx.
func FuzzBnplRoutes(f *testing.F) {
	s := newBnplStack(f)
	operator := s.operator("support@bnpl-fuzz.test")
	customer := s.linkEmployeeUser(f, "fuzz-bnpl-customer@example.com")
	routes := s.srv.bnplRoutes()
	quote := func(purchase, n any) string {
		return fmt.Sprintf(`{"employeeId":%q,"merchantId":%q,"purchaseSantim":%v,"instalments":%v}`, s.employee, s.merchantID, purchase, n)
	}
	agreement := func(ref string, purchase any) string {
		return fmt.Sprintf(`{"employeeId":%q,"merchantId":%q,"merchantReference":%q,"purchaseSantim":%v,"instalments":3}`,
			s.employee, s.merchantID, ref, purchase)
	}
	f.Add(uint8(0), uint8(1), "", "", "", "", "")
	f.Add(uint8(1), uint8(1), "", "", "", "", `{"settlementAccount":{"partner":"sandbox","accountNumber":"nope-1"},"discountBasisPoints":10}`)
	f.Add(uint8(1), uint8(1), "", "", "", "", `{"settlementAccount":{"partner":"NO PE","accountNumber":"\u0000"},"discountBasisPoints":1e400}`)
	f.Add(uint8(1), uint8(0), "", "", "", "", `{}`)
	f.Add(uint8(2), uint8(0), "", "", "", "", quote(120_000, 3))
	f.Add(uint8(2), uint8(0), "", "", "", "", quote(-1, 99))
	f.Add(uint8(2), uint8(0), "", "", "", "", quote(`"1"`, "null"))
	f.Add(uint8(2), uint8(0), "", "", "", "", `{"employeeId":"%00","merchantId":[],"purchaseSantim":9223372036854775807,"instalments":2}`)
	f.Add(uint8(3), uint8(0), "", "", "", "k-1", agreement("fuzz-order", 120_000))
	f.Add(uint8(3), uint8(0), "", "", "", "k-2", agreement("\u0000 bad", 120_000))
	f.Add(uint8(3), uint8(0), "", "", "", "", agreement("fuzz-order-2", 120_000))
	f.Add(uint8(3), uint8(0), "", "", "", "k-3", agreement("fuzz-order-3", "1e400"))
	f.Add(uint8(4), uint8(0), "", "", "status=ACTIVE&employeeId="+s.employee+"&limit=1", "", "")
	f.Add(uint8(4), uint8(0), "", "", "status=NOPE&cursor=%zz&limit=0", "", "")
	f.Add(uint8(5), uint8(0), "bnpl_00000000000000000000000000000000", "", "", "", "")
	f.Add(uint8(5), uint8(0), "..%2f", "", "", "", "")
	f.Add(uint8(6), uint8(0), "bnpl_00000000000000000000000000000000", "", "", "", "")
	f.Add(uint8(6), uint8(1), "bnpl_x", "", "", "", "{}")
	f.Add(uint8(6), uint8(0), "%00", "", "", "k-7", `{"reason":1}`)
	f.Add(uint8(7), uint8(0), "bnpl_00000000000000000000000000000000", "0", "", "k-4", "")
	f.Add(uint8(7), uint8(0), "bnpl_x", "-1", "", "k-5", "")
	f.Add(uint8(7), uint8(0), "bnpl_x", "012", "", "k-6", "{}")
	f.Add(uint8(7), uint8(0), "bnpl_x", "99999999999999999999", "", "", "")
	f.Add(uint8(8), uint8(2), "bnpl_00000000000000000000000000000000", "", "", "k-8", `{"instalments":3,"firstPeriod":"2027-01","reason":"r"}`)
	f.Add(uint8(8), uint8(2), "%00", "", "", "k-9", `{"instalments":1e400,"firstPeriod":"2027-13","reason":"\u0000"}`)
	f.Add(uint8(8), uint8(2), "bnpl_x", "", "", "", `{"instalments":3,"firstPeriod":"2027-01","reason":"r"}`)
	f.Add(uint8(8), uint8(2), "bnpl_x", "", "", "k-10", `{"instalments":-1,"firstPeriod":"1999-12","reason":" "}`)
	f.Add(uint8(8), uint8(0), "bnpl_x", "", "", "k-11", `{"instalments":3,"firstPeriod":"2027-01","reason":"r"}`)
	f.Add(uint8(9), uint8(0), "", "", "limit=101", "", "")
	// The instalment mandate opt-in (the last route): bodies and ids that are not one, the periods' rules.
	f.Add(uint8(11), uint8(0), "bnpl_00000000000000000000000000000000", "", "", "", `{"startPeriod":"2026-12"}`)
	f.Add(uint8(11), uint8(3), "bnpl_x", "", "", "", `{"startPeriod":"2026-12"}`)
	f.Add(uint8(11), uint8(3), "bnpl_00000000000000000000000000000000", "", "", "", `{"startPeriod":"2026-12","endPeriod":"2027-01"}`)
	f.Add(uint8(11), uint8(3), "bnpl_x", "", "", "", `{"startPeriod":"2026-12","endPeriod":"2026-11"}`)
	f.Add(uint8(11), uint8(4), "bnpl_x", "", "", "", `{"startPeriod":"2026-12"}`)
	f.Add(uint8(11), uint8(0), "%00", "", "", "", `{"startPeriod":"2026-13","endPeriod":""}`)
	f.Add(uint8(11), uint8(0), "bnpl_x", "", "", "", `{"startPeriod":"2026-12","endPeriod":"2026-11","amountSantim":1}`)
	f.Add(uint8(11), uint8(1), "bnpl_x", "", "", "", `{"startPeriod":null,"endPeriod":[]}`)
	f.Add(uint8(11), uint8(2), "bnpl_x", "", "", "", `[`)
	// The write-off (after the opt-in): its one field, ids that are not one, callers that are not operators.
	f.Add(uint8(12), uint8(2), "bnpl_00000000000000000000000000000000", "", "", "k-12", `{"reason":"refunded"}`)
	f.Add(uint8(12), uint8(2), "%00", "", "", "k-13", `{"reason":"\u0000"}`)
	f.Add(uint8(12), uint8(2), "bnpl_x", "", "", "k-14", `{"reason":" ","extra":1}`)
	f.Add(uint8(12), uint8(2), "bnpl_x", "", "", "", `{"reason":"r"}`)
	f.Add(uint8(12), uint8(0), "bnpl_x", "", "", "k-15", `{"reason":"r"}`)
	f.Add(uint8(12), uint8(2), "bnpl_x", "", "", "k-16", `[`)
	// The merchant's orders (the last two routes): filters that are none of theirs, ids that are not one.
	f.Add(uint8(13), uint8(1), "", "", "settlementStatus=PAID&merchantStatus=NONE&merchantReference=fuzz-order&limit=1", "", "")
	f.Add(uint8(13), uint8(1), "", "", "settlementStatus=SETTLED&merchantStatus=none&merchantReference=%00&cursor=%ff", "", "")
	f.Add(uint8(13), uint8(0), "", "", "merchantStatus=DELIVERED&merchantStatus=REFUNDED", "", "")
	f.Add(uint8(14), uint8(1), "bnpl_00000000000000000000000000000000", "", "", "", "")
	f.Add(uint8(14), uint8(1), "%E2%80%8B", "", "", "", "")
	f.Add(uint8(14), uint8(3), "bnpl_x", "", "", "", "")
	// A member's report on an order (the last route): kinds, times and keys that are not one, callers that may not.
	f.Add(uint8(15), uint8(1), "bnpl_00000000000000000000000000000000", "", "", "k-17", `{"kind":"DELIVERED"}`)
	f.Add(uint8(15), uint8(1), "bnpl_x", "", "", "k-18", `{"kind":"REFUNDED","occurredAt":"2999-01-01T00:00:00Z"}`)
	f.Add(uint8(15), uint8(1), "bnpl_x", "", "", "k-19", `{"kind":"CANCELLED","occurredAt":"0000-00-00T00:00:00Z"}`)
	f.Add(uint8(15), uint8(1), "%00", "", "", "", `{"kind":"DELIVERED"}`)
	f.Add(uint8(15), uint8(0), "bnpl_x", "", "", "k-20", `{"kind":1e400}`)
	f.Add(uint8(15), uint8(4), "bnpl_x", "", "", "k-21", `{"kind":"DELIVERED"}`)
	// The merchant's settlement statement: windows that are not one, parameters it does not take, callers that may not.
	var statement uint8
	for i, r := range routes {
		if r.Path == "/api/bnpl/merchant/settlements" {
			statement = uint8(i)
		}
	}
	f.Add(statement, uint8(1), "", "", "from=2027-03-01&to=2027-03-31", "", "")
	f.Add(statement, uint8(1), "", "", "from=2027-01-01&to=2028-01-01", "", "")
	f.Add(statement, uint8(1), "", "", "from=2027-02-29&to=2027-03-01&from=2027-03-01", "", "")
	f.Add(statement, uint8(1), "", "", "from=2027-03-02&to=2027-03-01", "", "")
	f.Add(statement, uint8(1), "", "", "from=0001-01-01&to=9999-12-31&limit=1", "", "")
	f.Add(statement, uint8(1), "", "", "from=%00&to=%ff&%00=1", "", "")
	f.Add(statement, uint8(0), "", "", "from=2027-03-01&to=2027-03-31", "", "")
	f.Add(statement, uint8(3), "", "", "from=2027-03-01&to=2027-03-31", "", "")
	f.Add(uint8(0), uint8(0), "", "", "", "", "")
	f.Fuzz(func(t *testing.T, route, who uint8, id, idx, query, key, body string) {
		r := routes[int(route)%len(routes)]
		path := strings.NewReplacer(":id", id, ":idx", idx).Replace(r.Path)
		req := httptest.NewRequest(r.Method, "/", strings.NewReader(body))
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		req.RemoteAddr = "192.0.2.84:40000"
		switch who % 5 {
		case 0:
			req.AddCookie(s.owner.cookie)
		case 1:
			req.AddCookie(s.merchant.cookie)
		case 2:
			req.AddCookie(operator.cookie)
		case 3:
			req.AddCookie(customer.cookie)
		}
		rec := httptest.NewRecorder()
		s.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q %q", r.Method, path, query, body))
	})
}

// TestBnplFailedOrderMayBeBoughtAgain: an activation whose settlement failed (nothing owed, the
// posting voided) leaves the merchant's order free: a new agreement for the same reference is
// made and paid; a second one while that one stands is BNPL_DUPLICATE_MERCHANT_REFERENCE.
func TestBnplFailedOrderMayBeBoughtAgain(t *testing.T) {
	t.Parallel()
	s := newBnplStack(t)
	s.approveKyc(t)

	s.bank.Sandbox.Fault(t, s.funding, map[string]any{"rejectCode": "ACCOUNT_BLOCKED"})
	rec := s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(120_000, 3, "order-9"), "Idempotency-Key", testkit.Unique("bnpl"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	failed := s.waitAgreement(t, decode[bnplActivateJSON](t, rec).ID, "FAILED")
	s.bank.Sandbox.ClearFault(t, s.funding)
	require.Empty(t, settledTransfers(t, s.d, s.tenant, bnpl.EventBankTransferSettled), "a FAILED settlement settled nothing")

	rec = s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(120_000, 3, "order-9"), "Idempotency-Key", testkit.Unique("bnpl"))
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	again := s.waitAgreement(t, decode[bnplActivateJSON](t, rec).ID, "ACTIVE")
	require.NotEqual(t, failed.ID, again.ID)
	require.Equal(t, int64(117_000), s.balance(t, s.merchantSettle), "the merchant is paid once, by the second agreement")
	require.Equal(t, []settledTransfer{{Kind: "merchant_settlement", SubjectID: again.ID, AmountSantim: 117_000}},
		settledTransfers(t, s.d, s.tenant, bnpl.EventBankTransferSettled))

	rec = s.owner.call(http.MethodPost, "/api/bnpl/agreements", s.agreementBody(120_000, 3, "order-9"), "Idempotency-Key", testkit.Unique("bnpl"))
	refused(t, rec, http.StatusConflict, "BNPL_DUPLICATE_MERCHANT_REFERENCE")
	require.Equal(t, 2, s.count(t, `SELECT count(*) FROM app.bnpl_agreements WHERE tenant_id = $1 AND merchant_reference = 'order-9'`, s.tenant))
}
