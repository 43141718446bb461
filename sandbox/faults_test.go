package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/callbacksig"
)

func TestFaultLatencyAndErrorRate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("FL-A", "A", 10_000)
	e.openAccount("FL-B", "B", 0)

	// Per-account error rate: only requests touching FL-A fail, and they write nothing.
	e.setFaults("FL-A", Faults{ErrorRatePercent: 100})
	r := e.do("GET", "/api/v1/accounts/FL-A", nil)
	require.Equal(t, 503, r.Status)
	require.Equal(t, CodeInjectedFailure, r.errCode())
	require.Equal(t, 200, e.do("GET", "/api/v1/accounts/FL-B", nil).Status)
	r = e.do("POST", "/api/v1/transfers", e.transfer(ref("fl"), "FL-A", "FL-B", 100))
	require.Equal(t, 503, r.Status)
	require.Equal(t, CodeInjectedFailure, r.errCode())
	require.Equal(t, 0, e.count(`SELECT count(*) FROM sandbox.transfers`))
	require.Equal(t, 204, e.do("DELETE", "/api/v1/sandbox/faults/FL-A", nil).Status)

	// A global error rate of 50%: some requests fail, some pass.
	e.setFaults(GlobalScope, Faults{ErrorRatePercent: 50})
	fails := 0
	for range 100 {
		r := e.do("GET", "/api/v1/accounts/FL-B", nil)
		require.Contains(t, []int{200, 503}, r.Status)
		if r.Status == 503 {
			fails++
		}
	}
	require.Greater(t, fails, 10)
	require.Less(t, fails, 90)
	require.Equal(t, 204, e.do("DELETE", "/api/v1/sandbox/faults", nil).Status)

	// Latency: the answer comes no sooner than the injected delay.
	e.setFaults("FL-B", Faults{LatencyMs: 400})
	start := time.Now()
	r = e.do("GET", "/api/v1/accounts/FL-B", nil)
	require.Equal(t, 200, r.Status)
	require.GreaterOrEqual(t, time.Since(start), 400*time.Millisecond)
	start = time.Now()
	tr := e.create(e.transfer(ref("fl"), "FL-A", "FL-B", 100))
	require.GreaterOrEqual(t, time.Since(start), 400*time.Millisecond, "the destination's latency applies")
	require.Equal(t, StatusPending, tr.Status)
}

func TestFaultExecuteThenTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("ET-A", "A", 10_000)
	e.openAccount("ET-B", "B", 0)
	e.setFaults("ET-A", Faults{ExecuteThenTimeoutMs: 3_000})

	req := e.transfer(ref("et"), "ET-A", "ET-B", 2_500)
	raw, err := json.Marshal(req)
	require.NoError(t, err)
	client := &http.Client{Timeout: 300 * time.Millisecond}
	_, err = client.Post(e.srv.URL+"/api/v1/transfers", "application/json", bytes.NewReader(raw))
	var ue *url.Error
	require.ErrorAs(t, err, &ue)
	require.True(t, ue.Timeout(), "the caller times out: %v", err)

	// …yet the transfer exists and the money is held: the outcome was unknown, not failed.
	r := e.do("GET", "/api/v1/transfers/by-reference/"+req.Reference, nil)
	require.Equal(t, 200, r.Status)
	tr := decodeAs[Transfer](t, r)
	require.Equal(t, StatusPending, tr.Status)
	require.Equal(t, int64(7_500), e.balance("ET-A"))

	// A retry with the same reference after the fault is gone replays it.
	require.Equal(t, 204, e.do("DELETE", "/api/v1/sandbox/faults/ET-A", nil).Status)
	r = e.do("POST", "/api/v1/transfers", req)
	require.Equal(t, 200, r.Status)
	require.Equal(t, tr.ID, decodeAs[Transfer](t, r).ID)
	require.Equal(t, int64(7_500), e.balance("ET-A"))

	// The same for a batch.
	e.setFaults(GlobalScope, Faults{ExecuteThenTimeoutMs: 3_000})
	breq := BatchRequest{BatchReference: ref("etb"), FromAccount: "ET-A", Currency: "ETB", TenantID: "t", Domain: "PAYROLL",
		Items: []BatchItemRequest{{Reference: ref("etb-i"), ToAccount: "ET-B", AmountSantim: 500}}}
	raw, err = json.Marshal(breq)
	require.NoError(t, err)
	_, err = client.Post(e.srv.URL+"/api/v1/transfer-batches", "application/json", bytes.NewReader(raw))
	require.True(t, errors.As(err, &ue) && ue.Timeout(), "batch caller times out: %v", err)
	require.Equal(t, 204, e.do("DELETE", "/api/v1/sandbox/faults", nil).Status)
	r = e.do("GET", "/api/v1/transfer-batches/by-reference/"+breq.BatchReference, nil)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	require.Equal(t, int64(7_000), e.balance("ET-A"))
	e.checkBooks()
}

func TestFaultReject(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("RJ-A", "A", 10_000)
	e.openAccount("RJ-B", "B", 0)
	e.setFaults("RJ-B", Faults{RejectCode: "ACCOUNT_BLOCKED"})
	r := e.do("POST", "/api/v1/transfers", e.transfer(ref("rj"), "RJ-A", "RJ-B", 100))
	require.Equal(t, 422, r.Status)
	require.Equal(t, "ACCOUNT_BLOCKED", r.errCode())
	require.Equal(t, 0, e.count(`SELECT count(*) FROM sandbox.transfers`))
	require.Equal(t, int64(10_000), e.balance("RJ-A"))

	e.setFaults(GlobalScope, Faults{RejectCode: "BANK_HOLIDAY"})
	r = e.do("POST", "/api/v1/transfer-batches", BatchRequest{BatchReference: ref("rjb"), FromAccount: "RJ-A", Currency: "ETB",
		TenantID: "t", Domain: "PAYROLL", Items: []BatchItemRequest{{Reference: ref("rjb-i"), ToAccount: "RJ-B", AmountSantim: 1}}})
	require.Equal(t, 422, r.Status)
	require.Equal(t, "BANK_HOLIDAY", r.errCode())
	require.Equal(t, 0, e.count(`SELECT count(*) FROM sandbox.batches`))

	// Operator view and validation of faults.
	list := decodeAs[FaultList](t, e.do("GET", "/api/v1/sandbox/faults", nil))
	require.Equal(t, "BANK_HOLIDAY", list.Global.RejectCode)
	require.Equal(t, "ACCOUNT_BLOCKED", list.Accounts["RJ-B"].RejectCode)
	for _, body := range []string{`{"errorRatePercent":101}`, `{"latencyMs":-1}`, `{"rejectCode":"nope"}`,
		`{"executeThenTimeoutMs":1e9}`, `{"dropCallbacks":true}`} {
		r := e.do("PUT", "/api/v1/sandbox/faults/RJ-A", body)
		require.Equal(t, 400, r.Status, body)
		require.Equal(t, CodeInvalidRequest, r.errCode(), body)
	}
	require.Equal(t, 204, e.do("DELETE", "/api/v1/sandbox/faults?all=true", nil).Status)
	list = decodeAs[FaultList](t, e.do("GET", "/api/v1/sandbox/faults", nil))
	require.Nil(t, list.Global)
	require.Empty(t, list.Accounts)
	require.Equal(t, 201, e.do("POST", "/api/v1/transfers", e.transfer(ref("rj"), "RJ-A", "RJ-B", 100)).Status)
}

// TestFaultRejectAnswersReplays: an injected rejection refuses new transfers and batches only. A
// retry of one the bank already holds, after the fault was set, answers the stored transfer (200,
// same id), as a real bank would: a 422 there would make the caller record a rejection of a
// transfer that settles.
func TestFaultRejectAnswersReplays(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("RR-A", "A", 10_000)
	e.openAccount("RR-B", "B", 0)
	req := e.transfer(ref("rr"), "RR-A", "RR-B", 100)
	first := e.create(req)

	e.setFaults("RR-B", Faults{RejectCode: "ACCOUNT_BLOCKED"})
	r := e.do("POST", "/api/v1/transfers", req)
	require.Equal(t, 200, r.Status, "replay under a reject fault: %s", r.Body)
	require.Equal(t, first.ID, decodeAs[Transfer](t, r).ID)
	// A reuse of the reference with another body is still a conflict, not a rejection.
	other := req
	other.AmountSantim = 101
	r = e.do("POST", "/api/v1/transfers", other)
	require.Equal(t, 409, r.Status, "%s", r.Body)
	require.Equal(t, CodeReferenceConflict, r.errCode())
	// A new transfer is still rejected, writing nothing.
	r = e.do("POST", "/api/v1/transfers", e.transfer(ref("rr-new"), "RR-A", "RR-B", 100))
	require.Equal(t, 422, r.Status, "%s", r.Body)
	require.Equal(t, "ACCOUNT_BLOCKED", r.errCode())
	require.Equal(t, 1, e.count(`SELECT count(*) FROM sandbox.transfers`))

	breq := BatchRequest{BatchReference: ref("rrb"), FromAccount: "RR-A", Currency: "ETB", TenantID: "t", Domain: "PAYROLL",
		Items: []BatchItemRequest{{Reference: ref("rrb-i"), ToAccount: "RR-B", AmountSantim: 1}}}
	require.Equal(t, 204, e.do("DELETE", "/api/v1/sandbox/faults?all=true", nil).Status)
	r = e.do("POST", "/api/v1/transfer-batches", breq)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	batch := decodeAs[Batch](t, r)
	e.setFaults(GlobalScope, Faults{RejectCode: "BANK_HOLIDAY"})
	r = e.do("POST", "/api/v1/transfer-batches", breq)
	require.Equal(t, 200, r.Status, "batch replay under a reject fault: %s", r.Body)
	require.Equal(t, batch.ID, decodeAs[Batch](t, r).ID)
	breq.BatchReference, breq.Items[0].Reference = ref("rrb-new"), ref("rrb-new-i")
	r = e.do("POST", "/api/v1/transfer-batches", breq)
	require.Equal(t, 422, r.Status, "%s", r.Body)
	require.Equal(t, "BANK_HOLIDAY", r.errCode())
	require.Equal(t, 1, e.count(`SELECT count(*) FROM sandbox.batches`))
	// A new transfer from an unknown source is refused with the injected code, as before.
	r = e.do("POST", "/api/v1/transfers", e.transfer(ref("rr-nosrc"), "RR-NOPE", "RR-B", 100))
	require.Equal(t, 422, r.Status, "%s", r.Body)
	require.Equal(t, "BANK_HOLIDAY", r.errCode())
	r = e.do("POST", "/api/v1/transfer-batches", BatchRequest{BatchReference: ref("rrb-nosrc"), FromAccount: "RR-NOPE",
		Currency: "ETB", TenantID: "t", Domain: "PAYROLL", Items: []BatchItemRequest{{Reference: ref("rrb-nosrc-i"), ToAccount: "RR-B", AmountSantim: 1}}})
	require.Equal(t, 422, r.Status, "%s", r.Body)
	require.Equal(t, "BANK_HOLIDAY", r.errCode())
	require.Equal(t, 2, e.count(`SELECT count(*) FROM sandbox.transfers`))
	e.checkBooks()
}

func TestFaultDuplicateAndDroppedCallbacks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("DC-SRC", "Source", 10_000)
	e.openAccount("DC-DUP", "Gets callbacks twice", 0)
	e.openAccount("DC-DROP", "Callbacks lost", 0)
	e.openAccount("DC-OK", "Plain", 0)
	e.setFaults("DC-DUP", Faults{DuplicateCallback: true})
	e.setFaults("DC-DROP", Faults{DropCallback: true})
	dup := e.create(e.transfer(ref("dc"), "DC-SRC", "DC-DUP", 100))
	drop := e.create(e.transfer(ref("dc"), "DC-SRC", "DC-DROP", 200))
	plain := e.create(e.transfer(ref("dc"), "DC-SRC", "DC-OK", 300))
	e.makeDue()
	acked := e.recv.waitAcked(t, 10*time.Second, func(cs []receivedCallback) bool {
		return len(ackedFor(cs, dup.ID)) == 2 && len(ackedFor(cs, plain.ID)) == 1
	})
	d := ackedFor(acked, dup.ID)
	require.Equal(t, d[0].Body.EventID, d[1].Body.EventID, "a duplicate is the same event")
	require.Equal(t, string(d[0].Raw), string(d[1].Raw))
	require.NotEqual(t, d[0].Nonce, d[1].Nonce)

	// The dropped callback never comes, though its transfer settled: it is due, yet a delivery
	// round claims nothing.
	require.Zero(t, e.deliverRound(), "a dropped callback is never claimed")
	attempts, _ := e.recv.snapshot()
	require.Empty(t, ackedFor(attempts, drop.ID))
	require.Equal(t, StatusSettled, e.getTransfer(drop.ID).Status)
	recs := decodeAs[struct{ Callbacks []CallbackRecord }](t, e.do("GET", "/api/v1/sandbox/callbacks?transferId="+drop.ID, nil)).Callbacks
	require.Len(t, recs, 1)
	require.True(t, recs[0].Dropped)
	require.Zero(t, recs[0].Attempts)
	e.checkBooks()
}

func TestFaultOutOfOrderCallbacks(t *testing.T) {
	t.Parallel()
	// A window far longer than the test: the burst ends when the test says so (below), not when
	// a loaded machine happens to take longer than the window between two settlements.
	e := newEnv(t, func(c *Config) { c.OutOfOrderWindow = time.Minute })
	e.openAccount("OO-SRC", "Source", 10_000)
	e.openAccount("OO-DST", "Out of order", 0)
	e.openAccount("OO-OK", "In order", 0)
	e.setFaults("OO-DST", Faults{OutOfOrderCallbacks: true})

	// Three transfers settle one after the other…
	var ids []string
	for i := range 3 {
		tr := e.create(e.transfer(ref("oo"), "OO-SRC", "OO-DST", int64(100+i)))
		e.makeDue()
		e.waitStatus(tr.ID, StatusSettled)
		ids = append(ids, tr.ID)
	}
	// …then one on an account without the fault.
	plain := e.create(e.transfer(ref("oo"), "OO-SRC", "OO-OK", 999))
	e.makeDue()
	e.waitStatus(plain.ID, StatusSettled)

	// The latest event overtakes the held ones…
	first := e.recv.waitAcked(t, 15*time.Second, func(cs []receivedCallback) bool { return len(cs) >= 1 })
	require.Len(t, first, 1, "the held callbacks wait while their burst goes on")
	// …which are delivered once the burst is over: here, when their last one is older than the
	// window.
	_, err := e.db.App.Exec(context.Background(), `UPDATE sandbox.callbacks SET created_at = created_at - interval '2 minutes'
		WHERE out_of_order AND delivered_at IS NULL`)
	require.NoError(t, err)
	wake(e.bank.deliverer.nudge)
	acked := e.recv.waitAcked(t, 15*time.Second, func(cs []receivedCallback) bool { return len(cs) == 4 })
	var order []string
	for _, c := range acked {
		order = append(order, c.Body.TransferID)
	}
	// The latest event overtakes the held ones, which then arrive newest first.
	require.Equal(t, []string{plain.ID, ids[2], ids[1], ids[0]}, order)
	require.True(t, acked[1].Body.OccurredAt.After(acked[3].Body.OccurredAt), "the receiver can tell they are out of order")
}

func TestFaultWrongSignature(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("WS-SRC", "Source", 10_000)
	e.openAccount("WS-DST", "Destination", 0)
	e.setFaults("WS-DST", Faults{WrongSignature: true})
	tr := e.create(e.transfer(ref("ws"), "WS-SRC", "WS-DST", 100))
	e.makeDue()
	// The receiver rejects the badly signed callback (401), and the bank keeps retrying it.
	require.Eventually(t, func() bool {
		attempts, _ := e.recv.snapshot()
		return len(ackedFor(attempts, tr.ID)) >= 2
	}, 10*time.Second, 20*time.Millisecond)
	attempts, acked := e.recv.snapshot()
	require.Empty(t, acked)
	for _, a := range ackedFor(attempts, tr.ID) {
		require.False(t, a.Verified)
		require.False(t, callbacksig.Verify([]byte(testSecret), a.Timestamp, a.Nonce, a.Raw, a.Signature))
		require.Regexp(t, `^[0-9a-f]{64}$`, a.Signature, "well-formed, just wrong")
	}
	require.Eventually(t, func() bool {
		return e.count(`SELECT count(*) FROM sandbox.callbacks WHERE last_status = 401`) == 1
	}, 5*time.Second, 20*time.Millisecond)
	// Once the fault is cleared, the next retry is signed right and acknowledged.
	require.Equal(t, 204, e.do("DELETE", "/api/v1/sandbox/faults/WS-DST", nil).Status)
	got := e.recv.waitAcked(t, 10*time.Second, func(cs []receivedCallback) bool { return len(ackedFor(cs, tr.ID)) == 1 })
	require.True(t, ackedFor(got, tr.ID)[0].Verified)
}

func TestOperatorListsTransfers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("OL-A", "A", 10_000)
	e.openAccount("OL-B", "B", 0)
	for i := range 3 {
		e.create(e.transfer(ref("ol"), "OL-A", "OL-B", int64(i+1)))
	}
	type list struct{ Transfers []Transfer }
	require.Len(t, decodeAs[list](t, e.do("GET", "/api/v1/sandbox/transfers", nil)).Transfers, 3)
	require.Len(t, decodeAs[list](t, e.do("GET", "/api/v1/sandbox/transfers?status=PENDING&limit=2", nil)).Transfers, 2)
	require.Empty(t, decodeAs[list](t, e.do("GET", "/api/v1/sandbox/transfers?status=SETTLED", nil)).Transfers)
	require.Equal(t, 400, e.do("GET", "/api/v1/sandbox/transfers?status=DONE", nil).Status)
	require.Equal(t, 400, e.do("GET", "/api/v1/sandbox/transfers?limit=0", nil).Status)
	// A reference with a slash, '#' and '?' is found by reference when path-escaped; a space is
	// refused (field.Reference: two references that look alike are alike).
	spaced := e.transfer("ewa/2024 run", "OL-A", "OL-B", 5)
	require.Equal(t, 400, e.do("POST", "/api/v1/transfers", spaced).Status)
	odd := e.transfer("ewa/2024-run#1?x", "OL-A", "OL-B", 5)
	tr := e.create(odd)
	r := e.do("GET", "/api/v1/transfers/by-reference/"+url.PathEscape(odd.Reference), nil)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	require.Equal(t, tr.ID, decodeAs[Transfer](t, r).ID)

	r = e.do("GET", "/api/v1/nowhere", nil)
	require.Equal(t, 404, r.Status)
	require.Equal(t, CodeNotFound, r.errCode())
	require.Equal(t, 200, e.do("GET", "/healthz", nil).Status)
}

func TestErrorBackoffStretchesWhileFailingAndResets(t *testing.T) {
	var b errorBackoff
	poll := 200 * time.Millisecond
	fail := errors.New("database down")
	require.Equal(t, poll, b.next(nil, poll))
	require.Equal(t, poll, b.next(fail, poll))
	require.Equal(t, 2*poll, b.next(fail, poll))
	for range 20 {
		b.next(fail, poll)
	}
	require.Equal(t, 30*time.Second, b.next(fail, poll))
	require.Equal(t, poll, b.next(nil, poll))
	require.Equal(t, poll, b.next(fail, poll))
}
