package ledger

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// edge drives the ledger's gRPC edge as a hostile client would: every request goes over real
// gRPC to the real store, except one a Go client cannot send (a string field that is not
// UTF-8: protobuf refuses to marshal it), which goes straight into the same handler.
type edge struct {
	e      *env
	srv    *Server
	tenant string
	ids    map[string]string
	txID   string
	seq    atomic.Int64
}

func newEdge(t testing.TB) *edge {
	e := newEnv(t)
	g := &edge{e: e, srv: NewServer(e.store, testAdjustmentKey, NewMetrics()), tenant: testkit.Unique("edge")}
	g.ids = e.ensure(t, g.tenant, "payroll-clearing", "fee-income")
	r, err := e.client.PostTransaction(ctxT(t), twoLeg(g.tenant, "edge-seed", "payroll-clearing", "fee-income", 100))
	require.NoError(t, err)
	g.txID = r.GetTransaction().GetId()
	return g
}

// edgeCall sends req over gRPC when it can be marshalled, else to the handler in process, and
// returns the status code the caller sees.
func edgeCall[Req proto.Message, Resp any](ctx context.Context, wire func(context.Context, Req, ...grpc.CallOption) (Resp, error),
	local func(context.Context, Req) (Resp, error), req Req) (Resp, codes.Code) {
	if _, err := proto.Marshal(req); err != nil {
		resp, err := local(ctx, req)
		return resp, ToStatus(err).Code()
	}
	resp, err := wire(ctx, req)
	return resp, status.Code(err)
}

// probe is one request's variable part: string fields by name, an amount and a timestamp.
type probe struct {
	s      map[string]string
	amount int64
	ts     *timestamppb.Timestamp
}

func (p probe) get(name, def string) string {
	if v, ok := p.s[name]; ok {
		return v
	}
	return def
}

// entry is the first leg of a probe's posting: by id when the probe sets account_id.
func (p probe) entry(d ledgerv1.Direction) *ledgerv1.EntryInput {
	if id, ok := p.s["account_id"]; ok {
		return &ledgerv1.EntryInput{AccountId: id, Direction: d, AmountSantim: p.amount}
	}
	return &ledgerv1.EntryInput{AccountName: p.get("account_name", "payroll-clearing"), Direction: d, AmountSantim: p.amount}
}

func (p probe) metadata() map[string]string {
	return map[string]string{p.get("metadata_key", "bank_reference"): p.get("metadata_value", "ref 1")}
}

func (p probe) lineage() *ledgerv1.Lineage {
	return &ledgerv1.Lineage{WorkflowId: p.get("workflow_id", "wf-1"), RunId: p.get("run_id", "run-1"), Step: p.get("step", "post")}
}

// accountRef is the account of a read: by id when the probe sets account_id.
func (p probe) accountRef() (string, string) {
	if id, ok := p.s["account_id"]; ok {
		return id, ""
	}
	return "", p.get("account_name", "payroll-clearing")
}

// edgeRPC is one RPC of the ledger with the string fields a probe may set. amount and ts say
// whether the probe's amount and timestamp reach it.
type edgeRPC struct {
	name       string
	fields     []string
	amount, ts bool
	do         func(ctx context.Context, g *edge, p probe) codes.Code
}

func (g *edge) key(p probe) string {
	return p.get("idempotency_key", fmt.Sprintf("edge-%d", g.seq.Add(1)))
}

var postingFields = []string{"tenant_id", "idempotency_key", "account_name", "account_id", "metadata_key", "metadata_value", "workflow_id", "run_id", "step"}

var edgeRPCs = []edgeRPC{
	{name: "EnsureAccount", fields: []string{"tenant_id", "name", "currency"}, do: func(ctx context.Context, g *edge, p probe) codes.Code {
		_, c := edgeCall(ctx, g.e.rpc.EnsureAccount, g.srv.EnsureAccount, &ledgerv1.EnsureAccountRequest{
			TenantId: p.get("tenant_id", g.tenant), Name: p.get("name", "misc-loss"), Currency: p.get("currency", "ETB")})
		return c
	}},
	{name: "GetAccount", fields: []string{"tenant_id", "account_id", "account_name"}, do: func(ctx context.Context, g *edge, p probe) codes.Code {
		id, name := p.accountRef()
		_, c := edgeCall(ctx, g.e.rpc.GetAccount, g.srv.GetAccount, &ledgerv1.GetAccountRequest{TenantId: p.get("tenant_id", g.tenant), AccountId: id, AccountName: name})
		return c
	}},
	{name: "ListAccounts", fields: []string{"tenant_id", "name_prefix", "page_token"}, do: func(ctx context.Context, g *edge, p probe) codes.Code {
		_, c := edgeCall(ctx, g.e.rpc.ListAccounts, g.srv.ListAccounts, &ledgerv1.ListAccountsRequest{
			TenantId: p.get("tenant_id", g.tenant), NamePrefix: p.get("name_prefix", "pay"), PageToken: p.get("page_token", "")})
		return c
	}},
	{name: "PostTransaction", fields: postingFields, amount: true, do: func(ctx context.Context, g *edge, p probe) codes.Code {
		_, c := edgeCall(ctx, g.e.rpc.PostTransaction, g.srv.PostTransaction, &ledgerv1.PostTransactionRequest{
			TenantId: p.get("tenant_id", g.tenant), IdempotencyKey: g.key(p),
			Entries:  []*ledgerv1.EntryInput{p.entry(dr), leg("fee-income", cr, p.amount)},
			Metadata: p.metadata(), Lineage: p.lineage()})
		return c
	}},
	{name: "PostTransactions", fields: append([]string{"batch_tenant_id"}, postingFields...), amount: true, do: func(ctx context.Context, g *edge, p probe) codes.Code {
		r, c := edgeCall(ctx, g.e.rpc.PostTransactions, g.srv.PostTransactions, &ledgerv1.PostTransactionsRequest{
			TenantId: p.get("batch_tenant_id", g.tenant), Transactions: []*ledgerv1.PostTransactionRequest{{
				TenantId: p.get("tenant_id", ""), IdempotencyKey: g.key(p),
				Entries:  []*ledgerv1.EntryInput{p.entry(dr), leg("fee-income", cr, p.amount)},
				Metadata: p.metadata(), Lineage: p.lineage()}}})
		if c == codes.OK && len(r.GetResults()) == 1 {
			return codes.Code(r.GetResults()[0].GetErrorCode())
		}
		return c
	}},
	{name: "CommitPending", fields: []string{"tenant_id", "transaction_id"}, do: func(ctx context.Context, g *edge, p probe) codes.Code {
		_, c := edgeCall(ctx, g.e.rpc.CommitPending, g.srv.CommitPending, &ledgerv1.CommitPendingRequest{
			TenantId: p.get("tenant_id", g.tenant), TransactionId: p.get("transaction_id", uuid.NewString())})
		return c
	}},
	{name: "VoidPending", fields: []string{"tenant_id", "transaction_id", "reason", "idempotency_key"}, do: func(ctx context.Context, g *edge, p probe) codes.Code {
		r := &ledgerv1.VoidPendingRequest{TenantId: p.get("tenant_id", g.tenant), Reason: p.get("reason", "no longer needed")}
		if k, ok := p.s["idempotency_key"]; ok {
			r.IdempotencyKey, r.TransactionId = k, p.get("transaction_id", "")
		} else {
			r.TransactionId = p.get("transaction_id", uuid.NewString())
		}
		_, c := edgeCall(ctx, g.e.rpc.VoidPending, g.srv.VoidPending, r)
		return c
	}},
	{name: "Reverse", fields: []string{"tenant_id", "transaction_id", "reason", "idempotency_key", "workflow_id", "run_id", "step"}, do: func(ctx context.Context, g *edge, p probe) codes.Code {
		_, c := edgeCall(ctx, g.e.rpc.Reverse, g.srv.Reverse, &ledgerv1.ReverseRequest{
			TenantId: p.get("tenant_id", g.tenant), TransactionId: p.get("transaction_id", uuid.NewString()),
			Reason: p.get("reason", "refund"), IdempotencyKey: g.key(p), Lineage: p.lineage()})
		return c
	}},
	{name: "PostAdjustment", fields: append([]string{"source", "adjustment_reason", "approved_by", "requested_by"}, postingFields...), amount: true,
		do: func(ctx context.Context, g *edge, p probe) codes.Code {
			r := &ledgerv1.PostAdjustmentRequest{
				TenantId: p.get("tenant_id", g.tenant), IdempotencyKey: g.key(p),
				Adjustment: &ledgerv1.Adjustment{Source: p.get("source", "dispute"), Reason: p.get("adjustment_reason", "dsp_1: confirmed"),
					ApprovedBy: p.get("approved_by", "admin@bank.et"), RequestedBy: p.get("requested_by", "operator-7")},
				Entries:  []*ledgerv1.EntryInput{p.entry(dr), leg("fee-income", cr, p.amount)},
				Metadata: p.metadata(), Lineage: p.lineage()}
			SignAdjustmentRequest(testAdjustmentKey, r)
			_, c := edgeCall(ctx, g.e.rpc.PostAdjustment, g.srv.PostAdjustment, r)
			return c
		}},
	{name: "GetBalance", fields: []string{"tenant_id", "account_id", "account_name"}, ts: true, do: func(ctx context.Context, g *edge, p probe) codes.Code {
		id, name := p.accountRef()
		_, c := edgeCall(ctx, g.e.rpc.GetBalance, g.srv.GetBalance, &ledgerv1.GetBalanceRequest{TenantId: p.get("tenant_id", g.tenant), AccountId: id, AccountName: name, AsOf: p.ts})
		return c
	}},
	{name: "GetBalances", fields: []string{"tenant_id", "account_id", "account_name"}, ts: true, do: func(ctx context.Context, g *edge, p probe) codes.Code {
		// The probe's account beside one no tenant has: the call answers both or refuses both,
		// and the code is that of the probe's own result. (The absent one never gets a
		// checkpoint, so a refused probe writes nothing.)
		id, name := p.accountRef()
		r, c := edgeCall(ctx, g.e.rpc.GetBalances, g.srv.GetBalances, &ledgerv1.GetBalancesRequest{
			TenantId: p.get("tenant_id", g.tenant), AsOf: p.ts,
			Accounts: []*ledgerv1.AccountRef{{AccountId: id, AccountName: name}, {AccountId: otherUUID}}})
		if c == codes.OK && len(r.GetResults()) == 2 {
			return codes.Code(r.GetResults()[0].GetErrorCode())
		}
		return c
	}},
	{name: "ListEntries", fields: []string{"tenant_id", "account_id", "account_name", "page_token"}, ts: true, do: func(ctx context.Context, g *edge, p probe) codes.Code {
		id, name := p.accountRef()
		_, c := edgeCall(ctx, g.e.rpc.ListEntries, g.srv.ListEntries, &ledgerv1.ListEntriesRequest{
			TenantId: p.get("tenant_id", g.tenant), AccountId: id, AccountName: name, From: p.ts, PageToken: p.get("page_token", "")})
		return c
	}},
	{name: "GetTransaction", fields: []string{"tenant_id", "transaction_id", "idempotency_key"}, do: func(ctx context.Context, g *edge, p probe) codes.Code {
		r := &ledgerv1.GetTransactionRequest{TenantId: p.get("tenant_id", g.tenant), TransactionId: p.get("transaction_id", "")}
		if k, ok := p.s["idempotency_key"]; ok {
			r.IdempotencyKey = k
		} else if r.TransactionId == "" {
			r.TransactionId = g.txID
		}
		_, c := edgeCall(ctx, g.e.rpc.GetTransaction, g.srv.GetTransaction, r)
		return c
	}},
	{name: "GetTransactions", fields: []string{"tenant_id", "transaction_id"}, do: func(ctx context.Context, g *edge, p probe) codes.Code {
		// The probe's id among known ones: one bad id refuses the whole request.
		_, c := edgeCall(ctx, g.e.rpc.GetTransactions, g.srv.GetTransactions, &ledgerv1.GetTransactionsRequest{
			TenantId: p.get("tenant_id", g.tenant), TransactionIds: []string{g.txID, p.get("transaction_id", uuid.NewString()), g.txID}})
		return c
	}},
	{name: "ReconcileWithBank", fields: []string{"tenant_id", "partner", "account", "reference"}, amount: true, ts: true, do: func(ctx context.Context, g *edge, p probe) codes.Code {
		_, c := edgeCall(ctx, g.e.rpc.ReconcileWithBank, g.srv.ReconcileWithBank, &ledgerv1.ReconcileWithBankRequest{
			TenantId: p.get("tenant_id", g.tenant), Partner: p.get("partner", "cbe"), PeriodEnd: p.ts,
			Accounts: []*ledgerv1.BankStatementAccount{{Account: p.get("account", "1000"), Lines: []*ledgerv1.BankStatementLine{
				{Reference: p.get("reference", "FT 123/45"), AmountSantim: p.amount}}}}})
		return c
	}},
	{name: "VerifyCheckpoints", fields: []string{"tenant_id"}, do: func(ctx context.Context, g *edge, p probe) codes.Code {
		_, c := edgeCall(ctx, g.e.rpc.VerifyCheckpoints, g.srv.VerifyCheckpoints, &ledgerv1.VerifyCheckpointsRequest{TenantId: p.get("tenant_id", g.tenant)})
		return c
	}},
}

// hostileStrings are the values every string field of every RPC must refuse, by class.
var hostileStrings = map[string][]string{
	"NUL":               {"\x00", "a\x00b", "payroll-clearing\x00"},
	"control character": {"a\x01b", "a\x1bb", "a\x7fb", "a\u0085b"},
	"bidi override":     {"a\u202eb", "\u2066x"},
	"U+FFFD":            {"a\ufffdb"},
	"invalid UTF-8":     {"\xff", "a\xc3\x28", "\xed\xa0\x80"},
	"oversized (4 KiB)": {strings.Repeat("a", 4096)},
	"oversized (1 MiB)": {strings.Repeat("7", 1<<20)},
}

// hostileAmounts are refused wherever an amount is taken.
var hostileAmounts = []int64{0, -1, math.MaxInt64, math.MinInt64, money.MaxAmountSantim + 1}

// hostileTimes are refused wherever a timestamp is taken.
var hostileTimes = []*timestamppb.Timestamp{
	{Seconds: math.MaxInt64}, {Seconds: math.MinInt64}, {Seconds: 1, Nanos: -1}, {Seconds: 1, Nanos: 1e9},
	{Seconds: 253402300800}, // 10000-01-01
}

// malformedIDs are not uuids; uuidSpellings are other spellings of real ones, which must not
// reach Postgres in a form it does not read.
var malformedIDs = []string{"x", "not-a-uuid", strings.Repeat("f", 36), "00000000-0000-0000-0000-00000000000g", "12345678-1234-1234-1234-1234567890123"}

func uuidSpellings(id string) []string {
	return []string{strings.ToUpper(id), "{" + id + "}", "urn:uuid:" + id, strings.ReplaceAll(id, "-", "")}
}

var badPageTokens = map[string][]string{
	"ListAccounts": {"%%%", base64.RawURLEncoding.EncodeToString([]byte("a\x00b")), base64.RawURLEncoding.EncodeToString([]byte{0xff, 0xfe}),
		base64.RawURLEncoding.EncodeToString([]byte(strings.Repeat("n", 600))), strings.Repeat("A", 4096)},
	"ListEntries": {"%%", "-1", "zzzzzzzzzzzzzzzzzzzz", strings.Repeat("1", 600)},
}

// TestHardening4_HostileInputAtEveryRPC sends every hostile value to every string field of every
// RPC (and hostile amounts, timestamps, ids and page tokens where they are taken): each is
// InvalidArgument, and nothing is written. Other spellings of a real uuid are never Internal.
func TestHardening4_HostileInputAtEveryRPC(t *testing.T) {
	t.Parallel()
	g := newEdge(t)
	ctx := ctxT(t)
	ok := probe{amount: 100}
	for _, r := range edgeRPCs {
		c := r.do(ctx, g, ok)
		require.Contains(t, []codes.Code{codes.OK, codes.NotFound}, c, "%s: the probe's baseline must not be refused", r.name)
	}
	before := g.e.counts(t, g.tenant)

	counts := map[string]int{}
	expect := func(class, rpc, what string, p probe, want codes.Code) {
		t.Helper()
		counts[class]++
		got := edgeRPCs[rpcIndex(rpc)].do(ctx, g, p)
		require.Equal(t, want, got, "%s %s: %s", rpc, what, class)
	}
	for _, r := range edgeRPCs {
		for _, f := range r.fields {
			for class, vals := range hostileStrings {
				for _, v := range vals {
					expect(class, r.name, fmt.Sprintf("%s=%.20q", f, v), probe{s: map[string]string{f: v}, amount: 100}, codes.InvalidArgument)
				}
			}
			if f == "account_id" || f == "transaction_id" {
				for _, v := range malformedIDs {
					expect("malformed uuid", r.name, f+"="+v, probe{s: map[string]string{f: v}, amount: 100}, codes.InvalidArgument)
				}
			}
		}
		if r.amount {
			for _, a := range hostileAmounts {
				if a == -1 && r.name == "ReconcileWithBank" {
					continue // a statement line of -1 is money out of the account, not an error
				}
				expect("amount", r.name, fmt.Sprint("amount ", a), probe{amount: a}, codes.InvalidArgument)
			}
		}
		if r.ts {
			for _, ts := range hostileTimes {
				expect("timestamp", r.name, fmt.Sprint("timestamp ", ts), probe{amount: 100, ts: ts}, codes.InvalidArgument)
			}
		}
		for _, tok := range badPageTokens[r.name] {
			expect("page token", r.name, fmt.Sprintf("page_token %.20q", tok), probe{s: map[string]string{"page_token": tok}}, codes.InvalidArgument)
		}
	}
	require.Equal(t, before, g.e.counts(t, g.tenant), "no hostile probe wrote anything")

	// Other spellings of a real id are read as that id.
	for _, v := range uuidSpellings(g.ids["payroll-clearing"]) {
		for _, rpc := range []string{"GetAccount", "GetBalance", "GetBalances", "ListEntries"} {
			expect("uuid spelling", rpc, "account_id="+v, probe{s: map[string]string{"account_id": v}}, codes.OK)
		}
	}
	for _, v := range uuidSpellings(g.txID) {
		expect("uuid spelling", "GetTransaction", "transaction_id="+v, probe{s: map[string]string{"transaction_id": v}}, codes.OK)
		expect("uuid spelling", "GetTransactions", "transaction_id="+v, probe{s: map[string]string{"transaction_id": v}}, codes.OK)
		expect("uuid spelling", "CommitPending", "transaction_id="+v, probe{s: map[string]string{"transaction_id": v}}, codes.FailedPrecondition)
	}

	classes := make([]string, 0, len(counts))
	total := 0
	for c, n := range counts {
		classes = append(classes, fmt.Sprintf("%s: %d", c, n))
		total += n
	}
	sort.Strings(classes)
	t.Logf("%d probes over %d RPCs: %s", total, len(edgeRPCs), strings.Join(classes, ", "))
}

func rpcIndex(name string) int {
	for i, r := range edgeRPCs {
		if r.name == name {
			return i
		}
	}
	panic("no rpc " + name)
}

// fieldRefuses reports whether internal/platform/field refuses v as the kind of field the ledger
// checks name as: Identifier for tenants, metadata keys and adjustment sources, Reference for keys,
// user ids and name prefixes, Text (the loosest kind) for the rest, whose own rules (names of the
// chart, uuids, currencies, page tokens) are stricter still. Empty values are left out: several
// fields are optional.
func fieldRefuses(name, v string) bool {
	if v == "" {
		return false
	}
	switch name {
	case "tenant_id", "batch_tenant_id", "metadata_key", "source":
		return field.Identifier(name, v, 0) != nil
	case "idempotency_key", "approved_by", "requested_by":
		return field.Reference(name, v, 0) != nil
	case "name_prefix":
		return field.Reference(name, v, maxAccountBytes) != nil
	case "reference":
		return field.Text(name, v, field.MaxReference) != nil
	}
	return field.Text(name, v, 0) != nil
}

// FuzzLedgerGRPC throws arbitrary strings, amounts and timestamps at every RPC of the ledger,
// over real gRPC to the real store (see edge): whatever comes in, the answer is success or a
// caller's error, never Internal or Unknown; a value internal/platform/field refuses is
// InvalidArgument; and a refused call wrote nothing. The seed corpus is the hostile probes'
// classes.
func FuzzLedgerGRPC(f *testing.F) {
	g := newEdge(f)
	for i := range edgeRPCs {
		f.Add(uint8(i), uint8(0), "payroll-clearing", int64(100), int64(0), int32(0))
		f.Add(uint8(i), uint8(1), "a\x00b", int64(0), int64(math.MaxInt64), int32(-1))
		f.Add(uint8(i), uint8(2), "\xff\xfe", int64(-1), int64(math.MinInt64), int32(0))
		f.Add(uint8(i), uint8(3), strings.Repeat("x", 300), int64(math.MaxInt64), int64(253402300800), int32(0))
		f.Add(uint8(i), uint8(4), "urn:uuid:"+g.ids["payroll-clearing"], int64(math.MinInt64), int64(1), int32(1e9))
		f.Add(uint8(i), uint8(5), "\u202e%s'--", money.MaxAmountSantim, int64(-62135596801), int32(0))
		f.Add(uint8(i), uint8(6), "a b\ufdd0", int64(100), int64(0), int32(0))
		f.Add(uint8(i), uint8(7), strings.Repeat("y", field.MaxText+1), int64(100), int64(0), int32(0))
	}
	f.Fuzz(func(t *testing.T, rpc, fieldIdx uint8, v string, amount, seconds int64, nanos int32) {
		r := edgeRPCs[int(rpc)%len(edgeRPCs)]
		name := r.fields[int(fieldIdx)%len(r.fields)]
		p := probe{s: map[string]string{name: v}, amount: amount}
		if seconds != 0 || nanos != 0 {
			p.ts = &timestamppb.Timestamp{Seconds: seconds, Nanos: nanos}
		}
		// The tenants the call could write to: the edge's, and the probe's when it names one.
		tenants := []string{g.tenant}
		if (name == "tenant_id" || name == "batch_tenant_id") && v != g.tenant && field.Identifier(name, v, 0) == nil {
			tenants = append(tenants, v)
		}
		before := make([]counts, len(tenants))
		for i, tn := range tenants {
			before[i] = g.e.counts(t, tn)
		}
		ctx := ctxT(t)
		code := r.do(ctx, g, p)
		if code == codes.Internal || code == codes.Unknown {
			t.Fatalf("%s %s=%q amount=%d ts=%v: %s", r.name, name, v, amount, p.ts, code)
		}
		if !utf8.ValidString(v) && code == codes.OK {
			t.Fatalf("%s accepted invalid UTF-8", r.name)
		}
		if fieldRefuses(name, v) && code != codes.InvalidArgument {
			t.Fatalf("%s %s=%q: field refuses it, the ledger answered %s", r.name, name, v, code)
		}
		if code != codes.OK {
			for i, tn := range tenants {
				if after := g.e.counts(t, tn); after != before[i] {
					t.Fatalf("%s %s=%q refused with %s, yet tenant %s's rows went from %+v to %+v", r.name, name, v, code, tn, before[i], after)
				}
			}
		}
	})
}
