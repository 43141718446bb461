package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/reflect/protoreflect"

	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// Money never moves outside a workflow (DESIGN): no code of the API calls a write RPC of the
// ledger or the gateway. The write RPCs come from the services' proto definitions — every RPC
// whose name does not start with a read verb — so a new write RPC is covered without touching
// this test; the Go clients' own methods that reach one (ledger.Client.PostCreatingAccounts) are
// found by reading the clients' source. Reads (LookupAccount, GetBalance, …) are allowed.

// readVerbs start the names of the RPCs that only read. Anything else is a write: a new RPC is
// forbidden to the API until its name says it reads.
var readVerbs = []string{"Get", "List", "Lookup", "Fetch", "Verify"}

// TestAPICallsNoLedgerOrGatewayWrite scans api's non-test Go files for a use (call or method
// value) of a write method of the ledger or gateway clients.
func TestAPICallsNoLedgerOrGatewayWrite(t *testing.T) {
	writes := moneyWriteMethods(t)
	// The derivation finds what it must: the write RPCs and the clients' wrappers over them,
	// and none of the reads.
	for _, m := range []string{"PostTransaction", "PostTransactions", "CommitPending", "VoidPending", "Reverse", "PostAdjustment",
		"EnsureAccount", "InitiateDisbursement", "InitiateBulkDisbursement", "PostCreatingAccounts"} {
		require.True(t, writes[m], "%s is a write", m)
	}
	for _, m := range []string{"LookupAccount", "GetBalance", "GetTransaction", "ListEntries", "GetTransferStatus", "FetchStatement", "Close"} {
		require.False(t, writes[m], "%s is no write", m)
	}

	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var offences []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		offences = append(offences, moneyWrites(fset, f, writes)...)
	}
	require.Empty(t, offences, "the API moves money only by starting a saga (workflows); these call the ledger or the gateway to write")
}

// TestMoneyWriteScanCatches: the scan finds a write however it is reached (a call on the deps'
// client, on a copy of it, a method value) and leaves reads and same-named package functions.
func TestMoneyWriteScanCatches(t *testing.T) {
	writes := moneyWriteMethods(t)
	src := `package api

import "slices"

func (s *Server) planted() {
	_, _ = s.deps.Ledger.PostCreatingAccounts(nil, nil)
	g := s.deps.Gateway
	_, _ = g.InitiateDisbursement(nil, nil)
	post := s.deps.Ledger.Reverse
	_ = post
	_, _ = s.deps.Gateway.LookupAccount(nil, nil)
	_, _ = s.deps.Ledger.GetBalance(nil, nil)
	slices.Reverse([]int{1, 2})
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "planted.go", src, parser.SkipObjectResolution)
	require.NoError(t, err)
	require.Equal(t, []string{"planted.go:6: PostCreatingAccounts", "planted.go:8: InitiateDisbursement", "planted.go:9: Reverse"},
		moneyWrites(fset, f, writes))
}

// moneyWriteMethods is every write method name: the services' write RPCs, and the methods of the
// ledger's and the gateway's Client that reach one.
func moneyWriteMethods(t *testing.T) map[string]bool {
	t.Helper()
	writes := map[string]bool{}
	for _, fd := range []protoreflect.FileDescriptor{ledgerv1.File_ledger_proto, gatewayv1.File_gateway_proto} {
		for i := 0; i < fd.Services().Len(); i++ {
			ms := fd.Services().Get(i).Methods()
			for j := 0; j < ms.Len(); j++ {
				name := string(ms.Get(j).Name())
				if !hasReadVerb(name) {
					writes[name] = true
				}
			}
		}
	}
	require.NotEmpty(t, writes)
	for _, dir := range []string{"../ledger", "../gateway"} {
		for m := range clientWrappersOf(t, dir, writes) {
			writes[m] = true
		}
	}
	return writes
}

func hasReadVerb(name string) bool {
	for _, v := range readVerbs {
		if strings.HasPrefix(name, v) && len(name) > len(v) && name[len(v)] >= 'A' && name[len(v)] <= 'Z' {
			return true
		}
	}
	return false
}

// clientWrappersOf reads dir's non-test files and returns the methods of its Client type that
// name a write (an RPC or another such method) in their bodies, transitively.
func clientWrappersOf(t *testing.T, dir string, writes map[string]bool) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	uses := map[string]map[string]bool{} // Client method → the selector names its body uses
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Body == nil || receiverName(fn) != "Client" {
				continue
			}
			names := map[string]bool{}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					names[sel.Sel.Name] = true
				}
				return true
			})
			uses[fn.Name.Name] = names
		}
	}
	require.NotEmpty(t, uses, "no Client methods in %s", dir)
	out := map[string]bool{}
	for changed := true; changed; {
		changed = false
		for m, names := range uses {
			if out[m] || writes[m] {
				continue
			}
			for n := range names {
				if writes[n] || out[n] {
					out[m], changed = true, true
					break
				}
			}
		}
	}
	return out
}

func receiverName(fn *ast.FuncDecl) string {
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// moneyWrites lists f's uses of a write method ("file:line: Method"), leaving selectors on an
// imported package (slices.Reverse is no ledger call).
func moneyWrites(fset *token.FileSet, f *ast.File, writes map[string]bool) []string {
	pkgs := map[string]bool{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		pkgs[name] = true
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || !writes[sel.Sel.Name] {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && pkgs[id.Name] {
			return true
		}
		p := fset.Position(sel.Sel.Pos())
		out = append(out, p.Filename+":"+strconv.Itoa(p.Line)+": "+sel.Sel.Name)
		return true
	})
	sort.Strings(out)
	return out
}
