package sandbox

import (
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAccountLookup(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("ACC-1", "Almaz Tesfaye", 5_000)
	e.openAccount("ACC-2", "Closed Holder", 0)
	require.Equal(t, 200, e.do("POST", "/api/v1/sandbox/accounts/ACC-2/close", nil).Status)

	r := e.do("GET", "/api/v1/accounts/ACC-1", nil)
	require.Equal(t, 200, r.Status)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &raw))
	require.Equal(t, map[string]any{"accountNumber": "ACC-1", "holderName": "Almaz Tesfaye", "currency": "ETB",
		"status": "ACTIVE"}, raw, "a lookup never reveals the balance")

	r = e.do("GET", "/api/v1/accounts/ACC-2", nil)
	require.Equal(t, 200, r.Status)
	require.Equal(t, AccountClosed, decodeAs[Account](t, r).Status)

	r = e.do("GET", "/api/v1/accounts/NOPE", nil)
	require.Equal(t, 404, r.Status)
	require.Equal(t, CodeAccountNotFound, r.errCode())

	// operator endpoints: duplicate account, bad bodies
	r = e.do("POST", "/api/v1/sandbox/accounts", CreateAccountRequest{AccountNumber: "ACC-1", HolderName: "X"})
	require.Equal(t, 409, r.Status)
	require.Equal(t, CodeAccountExists, r.errCode())
	for _, body := range []string{
		`{"accountNumber":"","holderName":"X"}`,
		`{"accountNumber":"A B","holderName":"X"}`,
		`{"accountNumber":"ACC-9","holderName":""}`,
		`{"accountNumber":"ACC-9","holderName":"X","balanceSantim":-1}`,
		`{"accountNumber":"ACC-9","holderName":"X","balanceSantim":1.5}`,
		`{"accountNumber":"ACC-9","holderName":"X","status":"FROZEN"}`,
		`{"accountNumber":"ACC-9","holderName":"X","iban":"x"}`,
	} {
		r := e.do("POST", "/api/v1/sandbox/accounts", body)
		require.Equal(t, 400, r.Status, body)
		require.Equal(t, CodeInvalidRequest, r.errCode(), body)
	}
	require.Equal(t, 404, e.do("GET", "/api/v1/sandbox/accounts/ACC-9", nil).Status, "nothing written")
	require.Equal(t, 404, e.do("POST", "/api/v1/sandbox/accounts/NOPE/close", nil).Status)
	e.checkBooks()
}

func TestTransferHoldThenSettle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("EMP-1", "Employer", 100_000)
	e.openAccount("WRK-1", "Worker", 1_000)

	req := e.transfer(ref("ewa"), "EMP-1", "WRK-1", 12_345)
	tr := e.create(req)
	require.Equal(t, StatusPending, tr.Status)
	require.Equal(t, req.Reference, tr.Reference)
	require.Equal(t, int64(12_345), tr.AmountSantim)
	require.Nil(t, tr.SettledAt)

	// Held: the source is debited at once, the destination not yet.
	require.Equal(t, int64(100_000-12_345), e.balance("EMP-1"))
	require.Equal(t, int64(1_000), e.balance("WRK-1"))
	require.Equal(t, StatusPending, e.getTransfer(tr.ID).Status)

	byRef := e.do("GET", "/api/v1/transfers/by-reference/"+req.Reference, nil)
	require.Equal(t, 200, byRef.Status)
	require.Equal(t, tr.ID, decodeAs[Transfer](t, byRef).ID)

	e.makeDue()
	settled := e.waitStatus(tr.ID, StatusSettled)
	require.NotNil(t, settled.SettledAt)
	require.Empty(t, settled.FailureCode)
	require.Equal(t, int64(100_000-12_345), e.balance("EMP-1"))
	require.Equal(t, int64(1_000+12_345), e.balance("WRK-1"))

	acked := e.recv.waitAcked(t, 10*time.Second, func(cs []receivedCallback) bool { return len(ackedFor(cs, tr.ID)) == 1 })
	cb := ackedFor(acked, tr.ID)[0]
	require.True(t, cb.Verified)
	require.Equal(t, CallbackBody{EventID: cb.Body.EventID, TenantID: "tenant-a", Domain: "EWA", Reference: req.Reference,
		TransferID: tr.ID, Status: StatusSettled, AmountSantim: 12_345, OccurredAt: cb.Body.OccurredAt}, cb.Body)
	require.NotEmpty(t, cb.Body.EventID)
	require.WithinDuration(t, *settled.SettledAt, cb.Body.OccurredAt, time.Second)

	// The body uses the contract's field names exactly.
	var raw map[string]any
	require.NoError(t, json.Unmarshal(cb.Raw, &raw))
	for _, k := range []string{"eventId", "tenant_id", "domain", "reference", "transferId", "status", "amountSantim", "occurredAt"} {
		require.Contains(t, raw, k)
	}
	require.NotContains(t, raw, "failureCode")

	// Unknown transfers.
	r := e.do("GET", "/api/v1/transfers/00000000-0000-4000-8000-000000000000", nil)
	require.Equal(t, 404, r.Status)
	require.Equal(t, CodeTransferNotFound, r.errCode())
	r = e.do("GET", "/api/v1/transfers/not-a-uuid", nil)
	require.Equal(t, 400, r.Status, "a path id that is not an id is the caller's error")
	require.Equal(t, CodeInvalidRequest, r.errCode())
	r = e.do("GET", "/api/v1/transfers/by-reference/nope", nil)
	require.Equal(t, 404, r.Status)
	require.Equal(t, CodeTransferNotFound, r.errCode())
	e.checkBooks()
}

func TestTransferFailsAndRefundsSource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("EMP-2", "Employer", 50_000)
	e.openAccount("WRK-2", "Worker", 0)
	e.openAccount("WRK-3", "Worker", 0)

	// Destination closed between hold and settlement.
	tr := e.create(e.transfer(ref("loan"), "EMP-2", "WRK-2", 20_000))
	require.Equal(t, int64(30_000), e.balance("EMP-2"))
	require.Equal(t, 200, e.do("POST", "/api/v1/sandbox/accounts/WRK-2/close", nil).Status)

	// Injected settlement failure (an addition to the contract's faults).
	e.setFaults("WRK-3", Faults{SettleFailureCode: "BENEFICIARY_BANK_REJECTED"})
	tr2 := e.create(e.transfer(ref("loan"), "EMP-2", "WRK-3", 5_000))
	require.Equal(t, int64(25_000), e.balance("EMP-2"))

	e.makeDue()
	failed := e.waitStatus(tr.ID, StatusFailed)
	require.Equal(t, CodeAccountClosed, failed.FailureCode)
	require.NotNil(t, failed.FailedAt)
	require.Nil(t, failed.SettledAt)
	failed2 := e.waitStatus(tr2.ID, StatusFailed)
	require.Equal(t, "BENEFICIARY_BANK_REJECTED", failed2.FailureCode)

	require.Equal(t, int64(50_000), e.balance("EMP-2"), "both holds refunded")
	require.Equal(t, int64(0), e.balance("WRK-2"))
	require.Equal(t, int64(0), e.balance("WRK-3"))

	acked := e.recv.waitAcked(t, 10*time.Second, func(cs []receivedCallback) bool {
		return len(ackedFor(cs, tr.ID)) == 1 && len(ackedFor(cs, tr2.ID)) == 1
	})
	cb := ackedFor(acked, tr.ID)[0].Body
	require.Equal(t, StatusFailed, cb.Status)
	require.Equal(t, CodeAccountClosed, cb.FailureCode)
	require.Equal(t, int64(20_000), cb.AmountSantim)
	require.Equal(t, "BENEFICIARY_BANK_REJECTED", ackedFor(acked, tr2.ID)[0].Body.FailureCode)

	// The refund is booked: HOLD debit then REFUND credit on the source.
	require.Equal(t, 2, e.count(`SELECT count(*) FROM sandbox.statement_lines WHERE transfer_id = $1::uuid`, tr.ID))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM sandbox.statement_lines WHERE transfer_id = $1::uuid AND kind = 'REFUND'
		AND account_number = 'EMP-2' AND direction = 'CRDT' AND amount_santim = 20000`, tr.ID))
	e.checkBooks()
}

func TestTransferRejectionsWriteNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("SRC", "Source", 10_000)
	e.openAccount("DST", "Destination", 0)
	e.openAccount("SRC-CLOSED", "Closed source", 10_000)
	e.openAccount("DST-CLOSED", "Closed destination", 0)
	require.Equal(t, 201, e.do("POST", "/api/v1/sandbox/accounts", CreateAccountRequest{AccountNumber: "DST-USD",
		HolderName: "Dollar account", Currency: "USD"}).Status)
	for _, a := range []string{"SRC-CLOSED", "DST-CLOSED"} {
		require.Equal(t, 200, e.do("POST", "/api/v1/sandbox/accounts/"+a+"/close", nil).Status)
	}
	ok := func(mut func(*TransferRequest)) TransferRequest {
		r := e.transfer(ref("rej"), "SRC", "DST", 1_000)
		mut(&r)
		return r
	}
	cases := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"insufficient funds", ok(func(r *TransferRequest) { r.AmountSantim = 10_001 }), 422, CodeInsufficientFunds},
		{"unknown source", ok(func(r *TransferRequest) { r.FromAccount = "GHOST" }), 422, CodeAccountNotFound},
		{"unknown destination", ok(func(r *TransferRequest) { r.ToAccount = "GHOST" }), 422, CodeAccountNotFound},
		{"closed source", ok(func(r *TransferRequest) { r.FromAccount = "SRC-CLOSED" }), 422, CodeAccountClosed},
		{"closed destination", ok(func(r *TransferRequest) { r.ToAccount = "DST-CLOSED" }), 422, CodeAccountClosed},
		{"currency of destination", ok(func(r *TransferRequest) { r.ToAccount = "DST-USD" }), 422, CodeCurrencyMismatch},
		{"currency of request", ok(func(r *TransferRequest) { r.Currency = "USD" }), 422, CodeCurrencyMismatch},
		{"zero amount", ok(func(r *TransferRequest) { r.AmountSantim = 0 }), 400, CodeInvalidRequest},
		{"negative amount", ok(func(r *TransferRequest) { r.AmountSantim = -5 }), 400, CodeInvalidRequest},
		{"same accounts", ok(func(r *TransferRequest) { r.ToAccount = "SRC" }), 400, CodeInvalidRequest},
		{"no reference", ok(func(r *TransferRequest) { r.Reference = "" }), 400, CodeInvalidRequest},
		{"no tenant", ok(func(r *TransferRequest) { r.TenantID = "" }), 400, CodeInvalidRequest},
		{"bad domain", ok(func(r *TransferRequest) { r.Domain = "CASINO" }), 400, CodeInvalidRequest},
		{"no currency", ok(func(r *TransferRequest) { r.Currency = "" }), 400, CodeInvalidRequest},
		{"bad callback url", ok(func(r *TransferRequest) { r.CallbackURL = "ftp://x" }), 400, CodeInvalidRequest},
		{"fractional amount", `{"reference":"r1","fromAccount":"SRC","toAccount":"DST","amountSantim":10.5,"currency":"ETB","tenantId":"t","domain":"EWA"}`, 400, CodeInvalidRequest},
		{"amount as string", `{"reference":"r1","fromAccount":"SRC","toAccount":"DST","amountSantim":"10","currency":"ETB","tenantId":"t","domain":"EWA"}`, 400, CodeInvalidRequest},
		{"unknown field", `{"reference":"r1","fromAccount":"SRC","toAccount":"DST","amountSantim":10,"currency":"ETB","tenantId":"t","domain":"EWA","fee":1}`, 400, CodeInvalidRequest},
		{"not json", `reference=r1`, 400, CodeInvalidRequest},
		{"two objects", `{"reference":"r1"} {}`, 400, CodeInvalidRequest},
	}
	for _, c := range cases {
		r := e.do("POST", "/api/v1/transfers", c.body)
		require.Equal(t, c.status, r.Status, "%s: %s", c.name, r.Body)
		require.Equal(t, c.code, r.errCode(), c.name)
	}
	require.Equal(t, 0, e.count(`SELECT count(*) FROM sandbox.transfers`), "nothing written")
	require.Equal(t, 0, e.count(`SELECT count(*) FROM sandbox.statement_lines WHERE kind NOT IN ('OPENING')`))
	require.Equal(t, int64(10_000), e.balance("SRC"))

	// A rejected reference is free: after funding, the same reference succeeds.
	req := ok(func(r *TransferRequest) { r.AmountSantim = 15_000 })
	require.Equal(t, 422, e.do("POST", "/api/v1/transfers", req).Status)
	require.Equal(t, 200, e.do("POST", "/api/v1/sandbox/accounts/SRC/fund", FundRequest{AmountSantim: 5_000}).Status)
	require.Equal(t, 201, e.do("POST", "/api/v1/transfers", req).Status)
	require.Equal(t, int64(0), e.balance("SRC"))
	e.checkBooks()
}

func TestTransferIdempotentUnder100ConcurrentDuplicates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("IDEM-SRC", "Source", 1_000_000)
	e.openAccount("IDEM-DST", "Destination", 0)

	req := e.transfer(ref("dup"), "IDEM-SRC", "IDEM-DST", 777)
	const n = 100
	results := postAtOnce(e, "/api/v1/transfers", slices.Repeat([]TransferRequest{req}, n))
	created, replayed := 0, 0
	ids := map[string]bool{}
	for _, r := range results {
		switch r.Status {
		case 201:
			created++
		case 200:
			replayed++
		default:
			t.Fatalf("unexpected %d: %s", r.Status, r.Body)
		}
		ids[decodeAs[Transfer](t, r).ID] = true
	}
	require.Equal(t, 1, created)
	require.Equal(t, n-1, replayed)
	require.Len(t, ids, 1, "every caller sees the same transfer")
	require.Equal(t, 1, e.count(`SELECT count(*) FROM sandbox.transfers WHERE reference = $1`, req.Reference))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM sandbox.statement_lines WHERE kind = 'HOLD'`))
	require.Equal(t, int64(1_000_000-777), e.balance("IDEM-SRC"), "held exactly once")

	// The same reference with a different body is a conflict, concurrently too: half the callers
	// send another amount; whichever body the bank booked first, the others with it replay and
	// the rest get 409.
	req2 := e.transfer(ref("dup"), "IDEM-SRC", "IDEM-DST", 100)
	other := req2
	other.AmountSantim = 200
	bodies := make([]TransferRequest, n)
	for i := range n {
		bodies[i] = req2
		if i%2 == 1 {
			bodies[i] = other
		}
	}
	results = postAtOnce(e, "/api/v1/transfers", bodies)
	var winner int64
	for i, r := range results {
		if r.Status == 201 {
			require.Zero(t, winner, "two transfers created")
			winner = bodies[i].AmountSantim
		}
	}
	require.NotZero(t, winner)
	for i, r := range results {
		if bodies[i].AmountSantim == winner {
			require.Contains(t, []int{200, 201}, r.Status, "%s", r.Body)
		} else {
			require.Equal(t, 409, r.Status, "%s", r.Body)
			require.Equal(t, CodeReferenceConflict, r.errCode())
		}
	}
	require.Equal(t, 1, e.count(`SELECT count(*) FROM sandbox.transfers WHERE reference = $1`, req2.Reference))
	require.Equal(t, int64(1_000_000-777-winner), e.balance("IDEM-SRC"))
	e.checkBooks()
}

func TestNoOverdraftUnderConcurrency(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("OD-SRC", "Source", 1_000)
	for i := range 5 {
		e.openAccount("OD-DST-"+itoa(i), "Destination", 0)
	}
	const n = 60
	results := make([]resp, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = e.do("POST", "/api/v1/transfers", e.transfer(ref("od"), "OD-SRC", "OD-DST-"+itoa(i%5), 100))
		}()
	}
	wg.Wait()
	ok, poor := 0, 0
	for _, r := range results {
		switch {
		case r.Status == 201:
			ok++
		case r.Status == 422 && r.errCode() == CodeInsufficientFunds:
			poor++
		default:
			t.Fatalf("unexpected %d: %s", r.Status, r.Body)
		}
	}
	require.Equal(t, 10, ok, "exactly the balance is spent")
	require.Equal(t, n-10, poor)
	require.Equal(t, int64(0), e.balance("OD-SRC"))
	e.makeDue()
	require.Eventually(t, func() bool {
		return e.count(`SELECT count(*) FROM sandbox.transfers WHERE status = 'SETTLED'`) == 10
	}, 20*time.Second, 20*time.Millisecond)
	var credited int64
	for i := range 5 {
		credited += e.balance("OD-DST-" + itoa(i))
	}
	require.Equal(t, int64(1_000), credited)
	e.checkBooks()
}

func TestSeveralSettlersShareTheWork(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *Config) { c.SettleChunk = 7 })
	// A second bank process on the same database: both settle and deliver, SKIP LOCKED and the
	// callback leases keep them from doing anything twice.
	second, err := New(e.db.App, e.bank.cfg, testLogger())
	require.NoError(t, err)
	e2 := startEnv(t, e.db, second, e.recv)

	e.openAccount("MS-SRC", "Source", 1_000_000)
	for i := range 10 {
		e.openAccount("MS-DST-"+itoa(i), "Destination", 0)
	}
	var ids []string
	for i := range 120 {
		via := e
		if i%2 == 1 {
			via = e2
		}
		ids = append(ids, via.create(e.transfer(ref("ms"), "MS-SRC", "MS-DST-"+itoa(i%10), int64(100+i))).ID)
	}
	e.makeDue()
	wake(second.settler.nudge)
	require.Eventually(t, func() bool {
		return e.count(`SELECT count(*) FROM sandbox.transfers WHERE status = 'SETTLED'`) == len(ids)
	}, 30*time.Second, 20*time.Millisecond)
	e.recv.waitAcked(t, 20*time.Second, func(cs []receivedCallback) bool { return len(cs) >= len(ids) })
	// Every callback delivered and no attempt of either bank still in flight: a second delivery,
	// had one been claimed, has reached the receiver by now, and none can be claimed any more.
	require.Eventually(t, func() bool {
		return e.count(`SELECT count(*) FROM sandbox.callbacks WHERE delivered_at IS NOT NULL`) == len(ids)
	}, 20*time.Second, 20*time.Millisecond)
	require.Zero(t, e.deliverRound(), "nothing is left to deliver")
	_, acked := e.recv.snapshot()
	perTransfer := map[string]int{}
	for _, c := range acked {
		perTransfer[c.Body.TransferID]++
	}
	for _, id := range ids {
		require.Equal(t, 1, perTransfer[id], "transfer %s", id)
	}
	require.Equal(t, len(ids), e.count(`SELECT count(*) FROM sandbox.statement_lines WHERE kind = 'CREDIT'`))
	e.checkBooks()
}

func TestSeedDemoIsIdempotent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	n, err := e.bank.SeedDemo(ctx)
	require.NoError(t, err)
	require.Equal(t, len(DemoAccounts), n)
	// Spend from the employer, then seed again: nothing reset.
	emp := DemoAccounts[0]
	e.create(e.transfer(ref("seed"), emp.AccountNumber, DemoAccounts[1].AccountNumber, 1_00))
	n, err = e.bank.SeedDemo(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Equal(t, emp.BalanceSantim-1_00, e.balance(emp.AccountNumber))
	r := e.do("GET", "/api/v1/accounts/"+emp.AccountNumber, nil)
	require.Equal(t, 200, r.Status)
	require.Equal(t, emp.HolderName, decodeAs[Account](t, r).HolderName)
	e.checkBooks()
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	_, err := New(nil, Config{}, nil)
	require.ErrorIs(t, err, errNoSecret)
	_, err = New(nil, Config{CallbackSecret: "s", CallbackURL: "not a url"}, nil)
	require.ErrorContains(t, err, "callback URL")
	c := Config{CallbackSecret: "s"}.Defaults()
	require.Equal(t, DefaultCallbackURL, c.CallbackURL)
	require.Equal(t, time.Second, c.CallbackBackoffMin)
	require.Equal(t, time.Minute, c.CallbackBackoffMax)
}
