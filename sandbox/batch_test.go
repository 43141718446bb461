package sandbox

import (
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBatchWithMixedItems(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("PAY-SRC", "Employer payroll", 100_000)
	e.openAccount("PAY-A", "Worker A", 0)
	e.openAccount("PAY-B", "Worker B", 500)
	e.openAccount("PAY-CLOSED", "Worker gone", 0)
	e.openAccount("PAY-BLOCKED", "Worker blocked", 0)
	require.Equal(t, 201, e.do("POST", "/api/v1/sandbox/accounts", CreateAccountRequest{AccountNumber: "PAY-USD",
		HolderName: "Dollar worker", Currency: "USD"}).Status)
	require.Equal(t, 200, e.do("POST", "/api/v1/sandbox/accounts/PAY-CLOSED/close", nil).Status)
	e.setFaults("PAY-BLOCKED", Faults{RejectCode: "BENEFICIARY_BLOCKED"})

	bref := ref("payroll-run")
	req := BatchRequest{BatchReference: bref, FromAccount: "PAY-SRC", Currency: "ETB", TenantID: "tenant-p", Domain: "PAYROLL",
		Items: []BatchItemRequest{
			{Reference: bref + "-1", ToAccount: "PAY-A", AmountSantim: 30_000},
			{Reference: bref + "-2", ToAccount: "PAY-GHOST", AmountSantim: 1_000},
			{Reference: bref + "-3", ToAccount: "PAY-B", AmountSantim: 20_000},
			{Reference: bref + "-4", ToAccount: "PAY-CLOSED", AmountSantim: 2_000},
			{Reference: bref + "-5", ToAccount: "PAY-USD", AmountSantim: 3_000},
			{Reference: bref + "-6", ToAccount: "PAY-BLOCKED", AmountSantim: 4_000},
			{Reference: bref + "-7", ToAccount: "PAY-A", AmountSantim: 1},
		}}
	r := e.do("POST", "/api/v1/transfer-batches", req)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	b := decodeAs[Batch](t, r)
	require.Equal(t, BatchAccepted, b.Status)
	require.Equal(t, bref, b.BatchReference)
	require.Equal(t, 7, b.ItemCount)
	require.Equal(t, int64(60_001), b.TotalSantim)
	require.Len(t, b.Items, 7)
	want := []struct{ status, code string }{
		{StatusPending, ""}, {StatusFailed, CodeAccountNotFound}, {StatusPending, ""}, {StatusFailed, CodeAccountClosed},
		{StatusFailed, CodeCurrencyMismatch}, {StatusFailed, "BENEFICIARY_BLOCKED"}, {StatusPending, ""},
	}
	for i, w := range want {
		require.Equal(t, req.Items[i].Reference, b.Items[i].Reference)
		require.Equal(t, w.status, b.Items[i].Status, "item %d", i)
		require.Equal(t, w.code, b.Items[i].FailureCode, "item %d", i)
		require.NotEmpty(t, b.Items[i].TransferID)
	}
	// Only the accepted items are held.
	require.Equal(t, int64(100_000-50_001), e.balance("PAY-SRC"))

	// Every item is a transfer of its own, found by its reference, carrying the batch id.
	tr := e.do("GET", "/api/v1/transfers/by-reference/"+url.PathEscape(bref+"-2"), nil)
	require.Equal(t, 200, tr.Status)
	item2 := decodeAs[Transfer](t, tr)
	require.Equal(t, b.ID, item2.BatchID)
	require.Equal(t, StatusFailed, item2.Status)
	require.Equal(t, "PAYROLL", item2.Domain)

	// Replay: same body → 200, same batch; another body → 409; nothing new written.
	r = e.do("POST", "/api/v1/transfer-batches", req)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	require.Equal(t, b.ID, decodeAs[Batch](t, r).ID)
	changed := req
	changed.Items = append([]BatchItemRequest(nil), req.Items...)
	changed.Items[0].AmountSantim++
	r = e.do("POST", "/api/v1/transfer-batches", changed)
	require.Equal(t, 409, r.Status)
	require.Equal(t, CodeReferenceConflict, r.errCode())
	require.Equal(t, 7, e.count(`SELECT count(*) FROM sandbox.transfers`))

	// A new batch reusing an item reference → 409, nothing written.
	clash := BatchRequest{BatchReference: ref("payroll-run"), FromAccount: "PAY-SRC", Currency: "ETB", TenantID: "tenant-p",
		Domain: "PAYROLL", Items: []BatchItemRequest{{Reference: ref("fresh"), ToAccount: "PAY-A", AmountSantim: 1}, {Reference: bref + "-3", ToAccount: "PAY-B", AmountSantim: 1}}}
	r = e.do("POST", "/api/v1/transfer-batches", clash)
	require.Equal(t, 409, r.Status)
	require.Equal(t, CodeReferenceConflict, r.errCode())
	require.Equal(t, 1, e.count(`SELECT count(*) FROM sandbox.batches`))

	// Settle: accepted items settle, each with its own callback; failed items already have theirs.
	e.makeDue()
	require.Eventually(t, func() bool {
		g := decodeAs[Batch](t, e.do("GET", "/api/v1/transfer-batches/"+b.ID, nil))
		return g.Items[0].Status == StatusSettled && g.Items[2].Status == StatusSettled && g.Items[6].Status == StatusSettled
	}, 20*time.Second, 20*time.Millisecond)
	require.Equal(t, int64(30_001), e.balance("PAY-A"))
	require.Equal(t, int64(20_500), e.balance("PAY-B"))
	require.Equal(t, int64(0), e.balance("PAY-CLOSED"))

	acked := e.recv.waitAcked(t, 10*time.Second, func(cs []receivedCallback) bool { return len(cs) == 7 })
	byRef := map[string]CallbackBody{}
	for _, c := range acked {
		require.True(t, c.Verified)
		byRef[c.Body.Reference] = c.Body
	}
	for i, it := range req.Items {
		cb, ok := byRef[it.Reference]
		require.True(t, ok, "callback for item %d", i)
		require.Equal(t, b.Items[i].TransferID, cb.TransferID)
		require.Equal(t, "tenant-p", cb.TenantID)
		require.Equal(t, "PAYROLL", cb.Domain)
		require.Equal(t, it.AmountSantim, cb.AmountSantim)
		if want[i].code == "" {
			require.Equal(t, StatusSettled, cb.Status)
		} else {
			require.Equal(t, StatusFailed, cb.Status)
			require.Equal(t, want[i].code, cb.FailureCode)
		}
	}

	byBatchRef := e.do("GET", "/api/v1/transfer-batches/by-reference/"+bref, nil)
	require.Equal(t, 200, byBatchRef.Status)
	require.Equal(t, b.ID, decodeAs[Batch](t, byBatchRef).ID)
	require.Equal(t, 404, e.do("GET", "/api/v1/transfer-batches/00000000-0000-4000-8000-000000000000", nil).Status)
	require.Equal(t, CodeInvalidRequest, e.do("GET", "/api/v1/transfer-batches/x", nil).errCode(), "a path id that is not an id")
	e.checkBooks()
}

func TestBatchRejectionsWriteNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("BR-SRC", "Employer", 10_000)
	e.openAccount("BR-SRC-CLOSED", "Closed employer", 10_000)
	e.openAccount("BR-A", "Worker", 0)
	require.Equal(t, 200, e.do("POST", "/api/v1/sandbox/accounts/BR-SRC-CLOSED/close", nil).Status)
	item := func(ref, to string, amt int64) BatchItemRequest {
		return BatchItemRequest{Reference: ref, ToAccount: to, AmountSantim: amt}
	}
	base := func(mut func(*BatchRequest)) BatchRequest {
		b := BatchRequest{BatchReference: ref("b"), FromAccount: "BR-SRC", Currency: "ETB", TenantID: "t", Domain: "PAYROLL",
			Items: []BatchItemRequest{item(ref("i"), "BR-A", 6_000), item(ref("i"), "BR-GHOST", 9_000)}}
		mut(&b)
		return b
	}
	cases := []struct {
		name   string
		body   BatchRequest
		status int
		code   string
	}{
		// the unknown destination's 9,000 is not held, so 6,000 + 5,000 is what must be covered
		{"insufficient for the whole batch", base(func(b *BatchRequest) { b.Items = append(b.Items, item(ref("i"), "BR-A", 5_000)) }), 422, CodeInsufficientFunds},
		{"unknown source", base(func(b *BatchRequest) { b.FromAccount = "BR-NOPE" }), 422, CodeAccountNotFound},
		{"closed source", base(func(b *BatchRequest) { b.FromAccount = "BR-SRC-CLOSED" }), 422, CodeAccountClosed},
		{"currency", base(func(b *BatchRequest) { b.Currency = "USD" }), 422, CodeCurrencyMismatch},
		{"no items", base(func(b *BatchRequest) { b.Items = nil }), 400, CodeInvalidRequest},
		{"repeated item reference", base(func(b *BatchRequest) { b.Items[1].Reference = b.Items[0].Reference }), 400, CodeInvalidRequest},
		{"item to the source", base(func(b *BatchRequest) { b.Items[0].ToAccount = "BR-SRC" }), 400, CodeInvalidRequest},
		{"zero item", base(func(b *BatchRequest) { b.Items[0].AmountSantim = 0 }), 400, CodeInvalidRequest},
		{"no batch reference", base(func(b *BatchRequest) { b.BatchReference = "" }), 400, CodeInvalidRequest},
		{"bad domain", base(func(b *BatchRequest) { b.Domain = "" }), 400, CodeInvalidRequest},
	}
	for _, c := range cases {
		r := e.do("POST", "/api/v1/transfer-batches", c.body)
		require.Equal(t, c.status, r.Status, "%s: %s", c.name, r.Body)
		require.Equal(t, c.code, r.errCode(), c.name)
	}
	r := e.do("POST", "/api/v1/transfer-batches", `{"batchReference":"x","fromAccount":"BR-SRC","currency":"ETB","tenantId":"t","domain":"PAYROLL","items":[{"reference":"a","toAccount":"BR-A","amountSantim":1,"bic":"X"}]}`)
	require.Equal(t, 400, r.Status)
	require.Equal(t, 0, e.count(`SELECT count(*) FROM sandbox.transfers`))
	require.Equal(t, 0, e.count(`SELECT count(*) FROM sandbox.batches`))
	require.Equal(t, 0, e.count(`SELECT count(*) FROM sandbox.callbacks`))
	require.Equal(t, int64(10_000), e.balance("BR-SRC"))

	// Exactly covering the batch is fine.
	ok := base(func(b *BatchRequest) { b.Items = append(b.Items, item(ref("i"), "BR-A", 4_000)) })
	r = e.do("POST", "/api/v1/transfer-batches", ok)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	require.Equal(t, int64(0), e.balance("BR-SRC"))
	e.checkBooks()
}
