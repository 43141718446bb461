package gateway

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/rpcclient"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// rawCodec sends a request exactly as wire() encoded it. The generated client refuses to marshal
// a string that is not UTF-8, but a hostile client is not the generated client: these tests put
// such strings on the wire to see what the server makes of them.
type rawCodec struct{}

type rawMsg []byte

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) {
	if m, ok := v.(rawMsg); ok {
		return m, nil
	}
	return proto.Marshal(v.(proto.Message))
}

func (rawCodec) Unmarshal(data []byte, v any) error { return proto.Unmarshal(data, v.(proto.Message)) }

// wire encodes m field by field without the UTF-8 check of proto.Marshal.
func wire(m protoreflect.Message) []byte {
	var b []byte
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.IsList() {
			for i := 0; i < v.List().Len(); i++ {
				b = wireValue(b, fd, v.List().Get(i))
			}
			return true
		}
		b = wireValue(b, fd, v)
		return true
	})
	return b
}

func wireValue(b []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) []byte {
	switch fd.Kind() {
	case protoreflect.StringKind:
		b = protowire.AppendTag(b, fd.Number(), protowire.BytesType)
		return protowire.AppendString(b, v.String())
	case protoreflect.MessageKind:
		b = protowire.AppendTag(b, fd.Number(), protowire.BytesType)
		return protowire.AppendBytes(b, wire(v.Message()))
	case protoreflect.Int64Kind:
		b = protowire.AppendTag(b, fd.Number(), protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.Int()))
	case protoreflect.EnumKind:
		b = protowire.AppendTag(b, fd.Number(), protowire.VarintType)
		return protowire.AppendVarint(b, uint64(v.Enum()))
	case protoreflect.BoolKind:
		b = protowire.AppendTag(b, fd.Number(), protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeBool(v.Bool()))
	}
	panic(fmt.Sprintf("wire: kind %v", fd.Kind()))
}

// rpcMethod is the gRPC method name of a request type.
func rpcMethod(req proto.Message) string {
	return strings.TrimSuffix(string(req.ProtoReflect().Descriptor().Name()), "Request")
}

// invoke calls the method of req over the real connection with req's raw encoding.
func (e *env) invoke(ctx context.Context, req proto.Message) (proto.Message, error) {
	var resp proto.Message
	switch req.(type) {
	case *gatewayv1.LookupAccountRequest:
		resp = &gatewayv1.LookupAccountResponse{}
	case *gatewayv1.InitiateDisbursementRequest:
		resp = &gatewayv1.InitiateDisbursementResponse{}
	case *gatewayv1.InitiateBulkDisbursementRequest:
		resp = &gatewayv1.InitiateBulkDisbursementResponse{}
	case *gatewayv1.GetTransferStatusRequest:
		resp = &gatewayv1.GetTransferStatusResponse{}
	case *gatewayv1.GetBatchStatusRequest:
		resp = &gatewayv1.GetBatchStatusResponse{}
	case *gatewayv1.GetAdapterStatusRequest:
		resp = &gatewayv1.GetAdapterStatusResponse{}
	case *gatewayv1.FetchStatementRequest:
		resp = &gatewayv1.FetchStatementResponse{}
	case *gatewayv1.VerifyNationalIdRequest:
		resp = &gatewayv1.VerifyNationalIdResponse{}
	default:
		panic(fmt.Sprintf("invoke: %T", req))
	}
	method := "/" + gatewayv1.GatewayService_ServiceDesc.ServiceName + "/" + rpcMethod(req)
	err := e.conn.Invoke(ctx, method, rawMsg(wire(req.ProtoReflect())), resp, grpc.ForceCodec(rawCodec{}))
	return resp, err
}

// countCalls makes the env count every call that reaches the partner adapter.
func countCalls(n *atomic.Int64) func(*GuardConfig) {
	return func(g *GuardConfig) {
		prev := g.Observe
		g.Observe = func(op string, latency time.Duration, err error) {
			n.Add(1)
			if prev != nil {
				prev(op, latency, err)
			}
		}
	}
}

// gatewayWrites is how many rows the gateway has ever tried to insert, read from its sequences
// (which no rollback and no row-level security hides).
func gatewayWrites(t testing.TB, e *env) int64 {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), e.db.OwnerDSN)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var n int64
	for _, seq := range []string{"statement_lines_id_seq", "statement_fetches_id_seq", "recon_runs_id_seq", "recon_flags_id_seq", "transfers_id_seq"} {
		var last int64
		var called bool
		require.NoError(t, conn.QueryRow(context.Background(), "SELECT last_value, is_called FROM gateway."+seq).Scan(&last, &called))
		if called {
			n += last
		}
	}
	return n
}

// errorField returns the ErrorInfo reason and "field" metadata of a gRPC error.
func errorField(err error) (reason Reason, fieldName string) {
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return Reason(info.GetReason()), info.GetMetadata()["field"]
		}
	}
	return "", ""
}

// setField sets a string or int64 field by its proto name; "items[0].x" reaches into the first
// bulk item.
func setField(m proto.Message, name string, v any) {
	r := m.ProtoReflect()
	if rest, ok := strings.CutPrefix(name, "items[0]."); ok {
		r = r.Get(r.Descriptor().Fields().ByName("items")).List().Get(0).Message()
		name = rest
	}
	fd := r.Descriptor().Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		panic("setField: no field " + name)
	}
	switch v := v.(type) {
	case string:
		r.Set(fd, protoreflect.ValueOfString(v))
	case int64:
		r.Set(fd, protoreflect.ValueOfInt64(v))
	}
}

type hostile struct{ class, v string }

// everywhere is refused by every kind of string field.
var everywhere = []hostile{
	{"NUL", "a\x00b"}, {"NUL", "\x00"},
	{"C0 control", "a\x01b"}, {"C0 control", "a\nb"}, {"C0 control", "a\tb"}, {"C0 control", "a\x1b[2Jb"},
	{"DEL/C1 control", "a\x7fb"}, {"DEL/C1 control", "a\u0085b"}, {"DEL/C1 control", "a\u009bb"},
	{"invalid UTF-8", "a\xffb"}, {"invalid UTF-8", "\xc3\x28"}, {"invalid UTF-8", "\xed\xa0\x80"},
	{"U+FFFD", "a\uFFFDb"}, {"noncharacter", "a\uFFFFb"}, {"noncharacter", "R\uFFFE1"}, {"noncharacter", "a\uFDD0b"},
	{"bidi override", "a\u202eb"}, {"bidi override", "a\u2066b"},
	{"oversized", strings.Repeat("a", 64<<10)},
}

// byKind is refused by one kind of field only (the others may accept these).
var byKind = map[string][]hostile{
	"partner": {{"empty", ""}, {"malformed id", "sand box"}, {"malformed id", "sandbox/x"}, {"oversized", strings.Repeat("a", MaxPartnerName+1)}},
	// GetAdapterStatus's registry: not empty, which asks about a partner instead.
	"registry": {{"malformed id", "sand box"}, {"malformed id", "sandbox/x"}, {"oversized", strings.Repeat("a", MaxPartnerName+1)}},
	"account": {
		{"empty", ""}, {"malformed id", "has space"}, {"malformed id", "a/b"}, {"malformed id", "."}, {"malformed id", ".."},
		{"malformed id", "a?b"}, {"malformed id", "a#b"}, {"malformed id", "ü"}, {"malformed id", "a%2Fb"}, {"malformed id", "a\u00a0b"},
		{"oversized", strings.Repeat("a", MaxAccountLen+1)},
	},
	"tenant": {{"empty", ""}, {"malformed id", "has space"}, {"malformed id", "t/x"}, {"malformed id", "ü"}, {"oversized", strings.Repeat("t", 129)}},
	"reference": {
		{"empty", ""}, {"malformed reference", "has space"}, {"malformed reference", "a\u00a0b"}, {"malformed reference", "a\u2028b"},
		{"malformed reference", "."}, {"malformed reference", ".."},
		{"oversized", strings.Repeat("r", MaxReferenceLen+1)},
	},
	"name":     {{"blank", "   "}, {"oversized", strings.Repeat("n", 257)}},
	"currency": {{"malformed currency", "etb"}, {"malformed currency", "ETBX"}, {"malformed currency", "E1B"}, {"malformed currency", "€"}},
	"domain":   {{"empty", ""}, {"malformed domain", "ewa"}, {"malformed domain", "CASINO"}, {"malformed domain", "EWA "}},
	"url": {
		{"malformed URL", "ftp://x/cb"}, {"malformed URL", "http://"}, {"malformed URL", "javascript:alert(1)"},
		{"malformed URL", "http://u:p@h/cb"}, {"malformed URL", "http://h/cb#f"}, {"malformed URL", "/relative"},
		{"malformed URL", "http://h/a b"}, {"malformed URL", "http:opaque"}, {"oversized", "http://h/" + strings.Repeat("a", 250)},
	},
	"date": {
		{"empty", ""}, {"malformed date", "2026-13-01"}, {"malformed date", "2026-02-30"}, {"malformed date", "20260301"},
		{"malformed date", "2026-3-1"}, {"malformed date", "2026-03-01T00:00:00Z"},
	},
	"nationalId": {
		{"empty", ""}, {"malformed id", "ab12345"}, {"malformed id", "AB1234a"}, {"malformed id", "AB123"},
		{"malformed id", "AB-12345"}, {"malformed id", "AB 12345"}, {"malformed id", "AB.12345"}, {"malformed id", "ÄB12345"},
		{"malformed id", "AB12345/"}, {"malformed id", "."}, {"malformed id", ".."}, {"malformed id", "AB12345 "},
		{"oversized", strings.Repeat("A", MaxNationalIDLen+1)},
	},
	"birth": {
		{"empty", ""}, {"malformed date", "1990-13-01"}, {"malformed date", "1990-02-30"}, {"malformed date", "1991-02-29"},
		{"malformed date", "19900301"}, {"malformed date", "1990-3-1"}, {"malformed date", "1990-03-01T00:00:00Z"},
		{"malformed date", " 1990-03-01"}, {"date out of range", "1899-12-31"}, {"date out of range", "0000-01-01"},
		{"date out of range", "9999-12-31"}, {"date out of range", time.Now().AddDate(0, 0, 2).Format(time.DateOnly)},
	},
}

// probe is one hostile request and the field the refusal must name.
type probe struct {
	class string
	req   proto.Message
	field string
}

// hostileProbes mutates one field of a valid request of every RPC at a time.
func hostileProbes(src, dst string) []probe {
	bases := []struct {
		req    proto.Message
		fields map[string]string // proto field → kind
	}{
		{&gatewayv1.LookupAccountRequest{Partner: SandboxPartner, AccountId: dst, ExpectedHolderName: "Abebe Kebede"},
			map[string]string{"partner": "partner", "account_id": "account", "expected_holder_name": "name"}},
		{&gatewayv1.InitiateDisbursementRequest{Partner: SandboxPartner, Reference: "ref-1", FromAccount: src, ToAccount: dst, AmountSantim: 100,
			Currency: "ETB", TenantId: "tenant-a", Domain: "EWA", CallbackUrl: "http://127.0.0.1:1/cb"},
			map[string]string{"partner": "partner", "reference": "reference", "from_account": "account", "to_account": "account",
				"currency": "currency", "tenant_id": "tenant", "domain": "domain", "callback_url": "url"}},
		{&gatewayv1.InitiateBulkDisbursementRequest{Partner: SandboxPartner, BatchReference: "batch-1", FromAccount: src, Currency: "ETB",
			TenantId: "tenant-a", Domain: "PAYROLL", CallbackUrl: "http://127.0.0.1:1/cb",
			Items: []*gatewayv1.BulkItem{{Reference: "item-1", ToAccount: dst, AmountSantim: 100}}},
			map[string]string{"partner": "partner", "batch_reference": "reference", "from_account": "account", "currency": "currency",
				"tenant_id": "tenant", "domain": "domain", "callback_url": "url", "items[0].reference": "reference", "items[0].to_account": "account"}},
		{&gatewayv1.GetTransferStatusRequest{Partner: SandboxPartner, Reference: "ref-1"},
			map[string]string{"partner": "partner", "reference": "reference"}},
		{&gatewayv1.GetBatchStatusRequest{Partner: SandboxPartner, BatchReference: "batch-1"},
			map[string]string{"partner": "partner", "batch_reference": "reference"}},
		{&gatewayv1.GetAdapterStatusRequest{Partner: SandboxPartner}, map[string]string{"partner": "partner"}},
		{&gatewayv1.GetAdapterStatusRequest{Registry: SandboxRegistry}, map[string]string{"registry": "registry"}},
		{&gatewayv1.FetchStatementRequest{Partner: SandboxPartner, TenantId: "tenant-a", Account: src, FromDate: "2026-03-01", ToDate: "2026-03-02"},
			map[string]string{"partner": "partner", "tenant_id": "tenant", "account": "account", "from_date": "date", "to_date": "date"}},
		{&gatewayv1.VerifyNationalIdRequest{Registry: SandboxRegistry, NationalId: "ETH1234567", FullName: "Abebe Kebede", DateOfBirth: "1990-01-02"},
			map[string]string{"registry": "partner", "national_id": "nationalId", "full_name": "name", "date_of_birth": "birth"}},
	}
	var out []probe
	for _, b := range bases {
		for f, kind := range b.fields {
			for _, h := range append(append([]hostile{}, everywhere...), byKind[kind]...) {
				req := proto.Clone(b.req)
				setField(req, f, h.v)
				want := f
				if h.class == "invalid UTF-8" {
					want = "request" // refused while decoding, before any field is read
				}
				out = append(out, probe{h.class, req, want})
			}
		}
	}
	// Amounts.
	for _, a := range []int64{0, -1, money.MaxAmountSantim + 1, math.MaxInt64, math.MinInt64} {
		req := proto.Clone(bases[1].req)
		setField(req, "amount_santim", a)
		out = append(out, probe{"amount out of range", req, "amount_santim"})
		req = proto.Clone(bases[2].req)
		setField(req, "items[0].amount_santim", a)
		out = append(out, probe{"amount out of range", req, "items[0].amount_santim"})
	}
	// Shapes: the same account twice, empty and oversized batches, repeated item references, a
	// batch whose total passes the bound, statement periods backwards or too long.
	same := proto.Clone(bases[1].req).(*gatewayv1.InitiateDisbursementRequest)
	same.ToAccount = same.FromAccount
	out = append(out, probe{"malformed shape", same, "to_account"})
	bulk := func(items ...*gatewayv1.BulkItem) *gatewayv1.InitiateBulkDisbursementRequest {
		r := proto.Clone(bases[2].req).(*gatewayv1.InitiateBulkDisbursementRequest)
		r.Items = items
		return r
	}
	item := func(i int, to string, amount int64) *gatewayv1.BulkItem {
		return &gatewayv1.BulkItem{Reference: fmt.Sprintf("item-%d", i), ToAccount: to, AmountSantim: amount}
	}
	out = append(out, probe{"malformed shape", bulk(), "items"})
	var many, huge []*gatewayv1.BulkItem
	for i := 0; i <= MaxBulkItems; i++ {
		many = append(many, item(i, dst, 1))
	}
	for i := 0; i <= int(money.MaxTransactionSantim/money.MaxAmountSantim); i++ {
		huge = append(huge, item(i, dst, money.MaxAmountSantim))
	}
	out = append(out,
		probe{"malformed shape", bulk(many...), "items"},
		probe{"amount out of range", bulk(huge...), "items"},
		probe{"malformed shape", bulk(item(1, dst, 1), item(1, dst, 1)), "items[1].reference"},
		probe{"malformed shape", bulk(item(1, src, 1)), "items[0].to_account"},
		probe{"malformed shape", &gatewayv1.FetchStatementRequest{Partner: SandboxPartner, TenantId: "t", Account: src, FromDate: "2026-03-02", ToDate: "2026-03-01"}, "to_date"},
		probe{"malformed shape", &gatewayv1.FetchStatementRequest{Partner: SandboxPartner, TenantId: "t", Account: src, FromDate: "2026-01-01", ToDate: "2026-06-01"}, "to_date"},
		probe{"malformed shape", &gatewayv1.FetchStatementRequest{Partner: SandboxPartner, TenantId: "t", Account: src, FromDate: "2026-03-01", ToDate: "2026-03-01", Format: 99}, "format"},
		probe{"malformed shape", &gatewayv1.GetAdapterStatusRequest{Partner: SandboxPartner, Registry: SandboxRegistry}, "registry"},
	)
	return out
}

// TestHardening4_HostileInputRefusedAtTheEdge sends every hostile probe to every field of every
// RPC over real gRPC: each is InvalidArgument, reason INVALID_ARGUMENT, naming the field, and
// nothing reaches the bank or the database.
func TestHardening4_HostileInputRefusedAtTheEdge(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	e := newEnv(t, envOpt{guard: countCalls(&calls)})
	src, dst := acct("src"), acct("dst")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)
	writes := gatewayWrites(t, e)

	counts := map[string]int{}
	for _, p := range hostileProbes(src, dst) {
		_, err := e.invoke(ctxT(t), p.req)
		what := fmt.Sprintf("%s %s (%s)", rpcMethod(p.req), p.field, p.class)
		require.Equal(t, codes.InvalidArgument, status.Code(err), "%s: %v", what, err)
		reason, name := errorField(err)
		require.Equal(t, ReasonInvalidArgument, reason, what)
		require.Equal(t, p.field, name, "%s: %v", what, err)
		require.LessOrEqual(t, len(status.Convert(err).Message()), rpcclient.MaxStatusMessage+len("…"), what)
		counts[p.class]++
	}
	// A well-formed partner name the gateway does not know is NotFound, not InvalidArgument.
	_, err := e.invoke(ctxT(t), &gatewayv1.GetAdapterStatusRequest{Partner: "nobank"})
	requireCode(t, err, codes.NotFound, ReasonUnknownPartner)

	require.Zero(t, calls.Load(), "no hostile probe may reach the partner")
	require.Zero(t, e.sb.IdentityLookups(), "no hostile probe may reach the registry")
	require.Equal(t, writes, gatewayWrites(t, e), "no hostile probe may write to the database")
	for _, st := range []Status{e.partner.Status(), e.registry.Status()} {
		require.Equal(t, "closed", st.BreakerState)
		require.Zero(t, st.Stats.Calls)
	}
	total := 0
	for class, n := range counts {
		t.Logf("probes %-22s %4d: all InvalidArgument", class, n)
		total += n
	}
	t.Logf("probes total %d", total)
}

// TestHardening4_StatementLinesHoldToTheEdgeRules: a statement's text fields follow internal/platform/field
// and its amounts the money bounds; a refusal never echoes the hostile value.
func TestHardening4_StatementLinesHoldToTheEdgeRules(t *testing.T) {
	t.Parallel()
	header := strings.Join(csvColumns, ",") + "\n"
	csvLine := func(entryRef, ref, dir, amount, cp, bal string) []byte {
		return []byte(header + strings.Join([]string{"2026-03-02", "2026-03-02", entryRef, ref, dir, amount, "ETB", cp, bal}, ",") + "\n")
	}
	long := strings.Repeat("Z", 10_000)
	for name, raw := range map[string][]byte{
		"entryRef with a space":        csvLine(`"E 1"`, "r", "CRDT", "1", "cp", "1"),
		"entryRef oversized":           csvLine(strings.Repeat("E", 256), "r", "CRDT", "1", "cp", "1"),
		"entryRef invalid UTF-8":       csvLine("E\xff", "r", "CRDT", "1", "cp", "1"),
		"reference bidi":               csvLine("E1", "r\u202e", "CRDT", "1", "cp", "1"),
		"reference U+FFFD":             csvLine("E1", "r\uFFFD", "CRDT", "1", "cp", "1"),
		"counterparty newline":         csvLine("E1", "r", "CRDT", "1", "\"c\np\"", "1"),
		"counterparty oversized":       csvLine("E1", "r", "CRDT", "1", strings.Repeat("c", 257), "1"),
		"amount above the bound":       csvLine("E1", "r", "CRDT", fmt.Sprint(money.MaxAmountSantim+1), "cp", "1"),
		"balance beyond the bound":     csvLine("E1", "r", "CRDT", "1", "cp", fmt.Sprint(-money.MaxAccountTotalSantim-1)),
		"direction echo":               csvLine("E1", "r", long, "1", "cp", "1"),
		"amount echo":                  csvLine("E1", "r", "CRDT", long, "cp", "1"),
		"date echo":                    []byte(header + long + ",2026-03-02,E1,r,CRDT,1,ETB,cp,1\n"),
		"currency echo":                []byte(header + "2026-03-02,2026-03-02,E1,r,CRDT,1," + long + ",cp,1\n"),
		"camt NtryRef with a space":    camtWith(t, "<NtryRef>E0001</NtryRef>", "<NtryRef>E 1</NtryRef>"),
		"camt amount above the bound":  camtWith(t, "1250.50", "10000000000.01"),
		"camt status echo":             camtWith(t, "<Sts>BOOK</Sts>", "<Sts>"+long+"</Sts>"),
		"camt counterparty bidi":       camtWith(t, "1000200030", "1000\u202e200030"),
		"camt counterparty oversized":  camtWith(t, "1000200030", strings.Repeat("9", 257)),
		"camt indicator echo":          camtWith(t, "<CdtDbtInd>DBIT", "<CdtDbtInd>"+long),
		"camt namespace echo":          camtWith(t, "camt.053.001.02", long),
		"camt reference control":       camtWith(t, "ewa-1001", "ewa&#x1;1001"),
		"camt reference invalid UTF-8": camtWith(t, "ewa-1001", "ewa\xff1001"),
	} {
		format := FormatCSV
		if strings.HasPrefix(name, "camt") {
			format = FormatCamt053
		}
		_, err := ParseStatement(format, raw)
		require.ErrorIs(t, err, ErrStatement, name)
		require.NotContains(t, err.Error(), "ZZZZ", "%s: the refusal echoes the value", name)
		require.Less(t, len(err.Error()), 300, name)
	}
}

func camtWith(t *testing.T, old, new string) []byte {
	raw, err := os.ReadFile("testdata/statement.camt053.xml")
	require.NoError(t, err)
	require.Contains(t, string(raw), old)
	return []byte(strings.Replace(string(raw), old, new, 1))
}

// TestHardening5_BadInputNeverOpensBreaker: with a breaker that opens after two partner faults,
// many malformed calls of every kind (refused at the edge, refused by the bank with a 4xx,
// unknown accounts and references, conflicts, rejections, callers that give up early) leave it
// closed and the partner HEALTHY, and a valid disbursement then succeeds.
func TestHardening5_BadInputNeverOpensBreaker(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	e := newEnv(t, envOpt{guard: func(g *GuardConfig) {
		g.BreakerFailures = 2
		g.Attempts = 1
		countCalls(&calls)(g)
	}})
	src, dst, slow := acct("src"), acct("dst"), acct("slow")
	e.account(t, src, "Employer PLC", 1_000_000)
	e.account(t, dst, "Abebe Kebede", 0)
	e.account(t, slow, "Slow Account", 0)
	e.fault(t, slow, map[string]any{"latencyMs": 400})
	ctx := ctxT(t)
	// notFault: the answer is the caller's or a business outcome, never a partner fault.
	notFault := func(resp proto.Message, err error) {
		t.Helper()
		switch status.Code(err) {
		case codes.OK, codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.PermissionDenied, codes.FailedPrecondition:
		default:
			t.Fatalf("a malformed call was answered %v", err)
		}
		if r, ok := resp.(*gatewayv1.InitiateDisbursementResponse); ok && err == nil {
			require.NotEqual(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_UNKNOWN, r.GetOutcome(), r.GetUnknownReason())
		}
		if r, ok := resp.(*gatewayv1.InitiateBulkDisbursementResponse); ok && err == nil {
			require.NotEqual(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_UNKNOWN, r.GetOutcome(), r.GetUnknownReason())
		}
	}
	disb := func(ref, from, to string, amount int64, callback string) *gatewayv1.InitiateDisbursementRequest {
		return &gatewayv1.InitiateDisbursementRequest{Partner: SandboxPartner, Reference: ref, FromAccount: from, ToAccount: to,
			AmountSantim: amount, TenantId: "tenant-a", Domain: "EWA", CallbackUrl: callback}
	}
	bulk := func(from, to string) *gatewayv1.InitiateBulkDisbursementRequest {
		return &gatewayv1.InitiateBulkDisbursementRequest{Partner: SandboxPartner, BatchReference: uniq("b"), FromAccount: from, TenantId: "tenant-a",
			Domain: "PAYROLL", Items: []*gatewayv1.BulkItem{{Reference: uniq("i"), ToAccount: to, AmountSantim: 1}}}
	}
	stmt := func(account string) *gatewayv1.FetchStatementRequest {
		return &gatewayv1.FetchStatementRequest{Partner: SandboxPartner, TenantId: uniq("tenant"), Account: account, FromDate: "2026-03-01", ToDate: "2026-03-01"}
	}
	conflictRef := uniq("c")
	_, err := e.invoke(ctx, disb(conflictRef, src, dst, 10, ""))
	require.NoError(t, err)

	sent := 0
	for round := 0; round < 5; round++ {
		var reqs []proto.Message
		// Refused at the edge.
		for _, id := range []string{".", "..", "a b", "a/b", "a\x00b", "a\xffb", strings.Repeat("a", 65), "a\u202eb"} {
			reqs = append(reqs, &gatewayv1.LookupAccountRequest{Partner: SandboxPartner, AccountId: id},
				disb(uniq("r"), src, id, 1, ""), bulk(src, id), stmt(id),
				&gatewayv1.GetTransferStatusRequest{Partner: SandboxPartner, Reference: id + " x"})
		}
		reqs = append(reqs, disb(uniq("r"), src, dst, 1, "http://h/\x00"), disb(uniq("r"), src, dst, 0, ""))
		// Identifiers the edge allows but the bank refuses with a 4xx, unknown accounts and
		// references, a reference conflict, a rejection for funds.
		for _, id := range []string{"a.b", "a:b", uniq("nobody")} {
			reqs = append(reqs, &gatewayv1.LookupAccountRequest{Partner: SandboxPartner, AccountId: id},
				disb(uniq("r"), src, id, 1, ""), disb(uniq("r"), id, dst, 1, ""), bulk(src, id), bulk(id, dst), stmt(id))
		}
		reqs = append(reqs,
			&gatewayv1.GetTransferStatusRequest{Partner: SandboxPartner, Reference: uniq("none")},
			disb(conflictRef, src, dst, 11, ""),
			disb(uniq("r"), src, dst, 999_999_999, ""),
			disb(uniq("r"), src, dst, 1, "http://127.0.0.1:1/not-allowed"))
		for _, req := range reqs {
			resp, err := e.invoke(ctx, req)
			notFault(resp, err)
			sent++
		}
		// A caller whose own deadline runs out while the bank is still working gave up; that
		// says nothing about the bank.
		for i := 0; i < 3; i++ {
			short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			_, err := e.invoke(short, &gatewayv1.LookupAccountRequest{Partner: SandboxPartner, AccountId: slow})
			cancel()
			require.Equal(t, codes.DeadlineExceeded, status.Code(err), "%v", err)
			sent++
		}
	}
	// Straight to the guarded partner, past the edge's validation: what the adapter or the bank
	// refuses as the caller's error is still never a fault (a path segment, which the adapter
	// refuses without asking the bank; an oversized id, which the bank refuses with a 4xx).
	for _, id := range []string{".", "..", strings.Repeat("x", 100<<10)} {
		_, err := e.partner.LookupAccount(ctx, id)
		require.Error(t, err)
		require.False(t, partnerFault(err), "%.80v", err)
		_, err = e.partner.TransferByReference(ctx, id)
		require.Error(t, err)
		require.False(t, partnerFault(err), "%.80v", err)
		sent += 2
	}
	require.Equal(t, "closed", e.partner.Status().BreakerState)

	r, err := e.invoke(ctx, disb(uniq("ok"), src, dst, 500, ""))
	require.NoError(t, err)
	require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.(*gatewayv1.InitiateDisbursementResponse).GetOutcome())

	s, err := e.rpc.GetAdapterStatus(ctx, &gatewayv1.GetAdapterStatusRequest{Partner: SandboxPartner})
	require.NoError(t, err)
	require.Equal(t, "closed", s.GetBreakerState())
	require.Equal(t, gatewayv1.AdapterHealth_ADAPTER_HEALTH_HEALTHY, s.GetHealth(), s.GetReason())
	require.Zero(t, s.GetWindowErrors())
	require.GreaterOrEqual(t, s.GetWindowCalls(), DefaultHealthRule.MinCalls, "enough calls reached the bank for the 5%% rule to apply")
	t.Logf("malformed calls %d, of which %d reached the bank; breaker closed, HEALTHY", sent, calls.Load())
}

// TestHardening6_IdenticalBulkBatchesRaceToOneResult: 20 identical bulk disbursements at once,
// five rounds; every caller gets the same accepted batch, and exactly one of them created it.
func TestHardening6_IdenticalBulkBatchesRaceToOneResult(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpt{})
	src := acct("payroll")
	e.account(t, src, "Employer PLC", 1_000_000_000)
	var dsts []string
	for i := 0; i < 5; i++ {
		d := acct(fmt.Sprintf("emp%d", i))
		e.account(t, d, "Employee", 0)
		dsts = append(dsts, d)
	}
	const callers = 20
	for round := 0; round < 5; round++ {
		ref := uniq("race")
		req := &gatewayv1.InitiateBulkDisbursementRequest{Partner: SandboxPartner, BatchReference: ref, FromAccount: src, TenantId: "tenant-a", Domain: "PAYROLL"}
		for i, d := range dsts {
			req.Items = append(req.Items, &gatewayv1.BulkItem{Reference: fmt.Sprintf("%s-%d", ref, i), ToAccount: d, AmountSantim: int64(1000 + i)})
		}
		var (
			wg    sync.WaitGroup
			resps [callers]*gatewayv1.InitiateBulkDisbursementResponse
			errs  [callers]error
		)
		start := make(chan struct{})
		for i := 0; i < callers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				resps[i], errs[i] = e.rpc.InitiateBulkDisbursement(ctxT(t), req)
			}()
		}
		close(start)
		wg.Wait()
		created := 0
		for i := 0; i < callers; i++ {
			require.NoError(t, errs[i], "round %d caller %d", round, i)
			r := resps[i]
			require.Equal(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_ACCEPTED, r.GetOutcome(), "round %d caller %d: %s", round, i, r.GetUnknownReason())
			require.Equal(t, resps[0].GetBatchId(), r.GetBatchId())
			require.Equal(t, int64(len(dsts)), r.GetItemCount())
			require.Equal(t, resps[0].GetTotalSantim(), r.GetTotalSantim())
			require.Len(t, r.GetItems(), len(dsts))
			for j, it := range r.GetItems() {
				require.Equal(t, resps[0].GetItems()[j].GetReference(), it.GetReference())
				require.Equal(t, resps[0].GetItems()[j].GetTransferId(), it.GetTransferId())
			}
			if !r.GetReplayed() {
				created++
			}
		}
		require.Equal(t, 1, created, "round %d: exactly one caller creates the batch", round)
	}
}

// FuzzGatewayEdge: whatever a client puts in the string and amount fields of any RPC (invalid
// UTF-8 included, sent raw), the real gateway in front of the real sandbox answers with success
// or a caller's error, never Internal, Unknown or a partner fault, and the breaker (set to open
// at the first fault) stays closed.
func FuzzGatewayEdge(f *testing.F) {
	e := newEnv(f, envOpt{guard: func(g *GuardConfig) {
		// Generous deadlines: a slow test machine must not pass for a partner fault.
		g.LookupTimeout, g.TransferTimeout, g.BatchTimeout, g.StatusTimeout, g.StatementTimeout = time.Minute, time.Minute, time.Minute, time.Minute, time.Minute
		g.BreakerFailures = 1
		g.Attempts = 1
	}})
	// Fixed names: every fuzzing process has a database of its own.
	e.account(f, "fz-src", "Employer PLC", money.MaxAmountSantim)
	e.account(f, "fz-dst", "Abebe Kebede", 0)
	for op := uint8(0); op < 7; op++ {
		f.Add(op, "fz-src", "fz-dst", "fz-ref-1", "2026-03-01", "tenant-a", int64(100))
		f.Add(op, "fz-dst", "Abebe Kebede", "fz-dst", "2026-03-02", "tenant-a", int64(1))
		f.Add(op|0x80, "a\x00b", "\xff\xfe", "a b", "2026-02-30", "t\u202e", int64(-1))
		f.Add(op, ".", "..", "fz-src", "", strings.Repeat("x", 300), int64(math.MaxInt64))
		f.Add(op, "a.b", "fz-src", "a:b", "2026-03-01", "T", money.MaxAmountSantim+1)
	}
	// GetAdapterStatus about a registry: alone, malformed, unknown, and with a partner too.
	f.Add(uint8(4|0x40|0x80), SandboxRegistry, "", "", "", "", int64(0))
	f.Add(uint8(4|0x40|0x80), "fay da", "", "", "", "", int64(0))
	f.Add(uint8(4|0x40|0x80), "fayda", "", "", "", "", int64(0))
	f.Add(uint8(4|0x40), SandboxRegistry, "", "", "", "", int64(0))
	f.Fuzz(func(t *testing.T, op uint8, s1, s2, s3, s4, s5 string, amount int64) {
		partner := SandboxPartner
		if op&0x80 != 0 {
			partner = s5
		}
		var req proto.Message
		switch op % 7 {
		case 0:
			req = &gatewayv1.LookupAccountRequest{Partner: partner, AccountId: s1, ExpectedHolderName: s2}
		case 1:
			req = &gatewayv1.InitiateDisbursementRequest{Partner: partner, Reference: s3, FromAccount: s1, ToAccount: s2,
				AmountSantim: amount, TenantId: s5, Domain: "EWA", Currency: s4}
		case 2:
			req = &gatewayv1.InitiateBulkDisbursementRequest{Partner: partner, BatchReference: s3, FromAccount: s1, TenantId: s5, Domain: "PAYROLL",
				CallbackUrl: s4, Items: []*gatewayv1.BulkItem{{Reference: s3 + "-1", ToAccount: s2, AmountSantim: amount}}}
		case 3:
			req = &gatewayv1.GetTransferStatusRequest{Partner: partner, Reference: s3}
		case 4:
			r := &gatewayv1.GetAdapterStatusRequest{Partner: partner}
			if op&0x40 != 0 { // a registry, alone or (refused) with the partner
				r.Registry = s1
			}
			req = r
		case 5:
			req = &gatewayv1.FetchStatementRequest{Partner: partner, TenantId: s5, Account: s1, FromDate: s4, ToDate: s4, OmitLines: true}
		case 6:
			req = &gatewayv1.GetBatchStatusRequest{Partner: partner, BatchReference: s3}
		}
		resp, err := e.invoke(context.Background(), req)
		switch c := status.Code(err); c {
		case codes.OK, codes.InvalidArgument, codes.NotFound, codes.AlreadyExists, codes.PermissionDenied, codes.FailedPrecondition:
		default:
			t.Fatalf("%s answered %v", rpcMethod(req), err)
		}
		if r, ok := resp.(*gatewayv1.InitiateDisbursementResponse); ok && err == nil {
			require.NotEqual(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_UNKNOWN, r.GetOutcome(), r.GetUnknownReason())
		}
		if r, ok := resp.(*gatewayv1.InitiateBulkDisbursementResponse); ok && err == nil {
			require.NotEqual(t, gatewayv1.DisbursementOutcome_DISBURSEMENT_OUTCOME_UNKNOWN, r.GetOutcome(), r.GetUnknownReason())
		}
		st := e.partner.Status()
		require.Equal(t, "closed", st.BreakerState)
		require.Zero(t, st.Stats.Errors, "a partner fault from a caller's input")
	})
}
