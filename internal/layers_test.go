package internal

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// This file holds the import-direction test: DESIGN's may-import table ("Packages (top level)")
// written as code and checked against every import of every non-test Go file of the module.
//
// The table is about Wagerail's own packages; third-party modules and the standard library are
// not in it. Files are read with go/parser, not `go list`, so files behind build tags (the
// noembed variant of cmd/wagerail, files for other platforms) are checked too. Test files
// (_test.go) may import anything: an integration test reaches across the layers on purpose.
//
// Test-support packages (internal/platform/testkit and every package whose name ends in "test",
// such as ledger/ledgertest) follow their folder's row and may also import each other, but no
// shipped package may import one.

// group is a row of the table: the folder a package is in.
type group string

const (
	gCmd        group = "cmd"
	gAPI        group = "api"
	gWorkflows  group = "workflows"
	gActivities group = "activities"
	gLedger     group = "ledger"
	gGateway    group = "gateway"
	gSandbox    group = "sandbox"
	gReconcile  group = "reconcile"
	gSchema     group = "schema"
	gDeploy     group = "deploy"
	gPlatform   group = "internal/platform"
	gDomain     group = "internal/<domain>"
	gInternal   group = "internal" // the doc package listing the others
	// gLeaf is a package of names every layer shares (standard library only), such as the chart
	// of accounts: any package may import it.
	gLeaf group = "leaf"
)

// leaves are the leaf packages (gLeaf).
var leaves = []string{"ledger/chart"}

// mayImport is DESIGN's "may import" column. A package may always import packages of its own
// group (a domain only its own domain; see domainOf).
var mayImport = map[group][]group{
	gCmd:        {gAPI, gWorkflows, gActivities, gLedger, gGateway, gSandbox, gReconcile, gSchema, gPlatform, gDomain},
	gAPI:        {gDomain, gPlatform, gWorkflows, gLedger, gGateway, gSchema},
	gWorkflows:  {gActivities, gDomain, gPlatform, gReconcile},
	gActivities: {gDomain, gPlatform, gLedger, gGateway, gReconcile, gSchema},
	gLedger:     {gDomain, gPlatform, gSchema},
	gGateway:    {gDomain, gPlatform, gSchema},
	gSandbox:    {gDomain, gPlatform},
	gReconcile:  {gDomain, gPlatform, gLedger, gGateway, gSchema},
	gSchema:     {},
	gDeploy:     {},
	gPlatform:   {gSchema},
	gDomain:     {gPlatform},
	gInternal:   {},
	gLeaf:       {},
}

// why is the rule's wording in DESIGN, quoted in a failure.
var why = map[group]string{
	gCmd:        "cmd/wagerail may import everything",
	gAPI:        "api imports domain packages, platform, workflows (to start and signal) and the ledger/gateway clients; never activities, reconcile, sandbox or cmd",
	gWorkflows:  "workflows imports activities (by reference), domain value types, platform and reconcile's value types; never api, the ledger/gateway clients, sandbox or cmd",
	gActivities: "activities import domain stores, platform, the ledger/gateway clients and reconcile; never api, workflows, sandbox or cmd",
	gLedger:     "ledger imports only internal/… and schema",
	gGateway:    "gateway imports only internal/… and schema",
	gSandbox:    "sandbox imports only the standard library and internal/…",
	gReconcile:  "reconcile imports internal/…, the ledger/gateway clients and schema",
	gSchema:     "schema imports no other Wagerail package",
	gDeploy:     "deploy holds manifests and rules; its Go code imports no Wagerail package",
	gPlatform:   "internal/platform/… imports only other platform packages (and schema); never a domain, api, workflows, activities, ledger, gateway, reconcile, sandbox or cmd",
	gDomain:     "a domain imports platform packages and other domains (acyclic); never api, workflows, activities, ledger, gateway, reconcile, sandbox or cmd",
	gInternal:   "the internal doc package imports nothing",
	gLeaf:       "a leaf (" + strings.Join(leaves, ", ") + ") imports no other Wagerail package",
}

// groupOf places a module-relative package path in a row of the table.
func groupOf(rel string) (group, bool) {
	if slices.Contains(leaves, rel) {
		return gLeaf, true
	}
	top, rest, _ := strings.Cut(rel, "/")
	switch top {
	case "cmd":
		return gCmd, true
	case "api":
		return gAPI, true
	case "workflows":
		return gWorkflows, true
	case "activities":
		return gActivities, true
	case "ledger":
		return gLedger, true
	case "gateway":
		return gGateway, true
	case "sandbox":
		return gSandbox, true
	case "reconcile":
		return gReconcile, true
	case "schema":
		return gSchema, true
	case "deploy":
		return gDeploy, true
	case "internal":
		switch {
		case rest == "":
			return gInternal, true
		case rest == "platform" || strings.HasPrefix(rest, "platform/"):
			return gPlatform, true
		default:
			return gDomain, true
		}
	}
	return "", false
}

// domainOf is the domain of a package under internal/<domain>/….
func domainOf(rel string) string {
	parts := strings.Split(rel, "/")
	if len(parts) < 2 || parts[0] != "internal" || parts[1] == "platform" {
		return ""
	}
	return parts[1]
}

// testSupport reports whether a package exists to be imported by tests.
func testSupport(rel string) bool {
	return rel == "internal/platform/testkit" || strings.HasSuffix(filepath.Base(rel), "test")
}

// importSite is one import of a first-party package by a non-test file.
type importSite struct {
	file string // module-relative, with the line: "api/router.go:12"
	pkg  string // the importing package (module-relative)
	dep  string // the imported package (module-relative)
}

// violations checks every import site against the table and the domains for cycles. It returns
// one line per broken rule, naming the import and the rule.
func violations(sites []importSite) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	domainEdges := map[string]map[string]importSite{} // domain -> domain -> first site
	for _, s := range sites {
		from, ok := groupOf(s.pkg)
		if !ok {
			add(fmt.Sprintf("%s: package %s is in no row of DESIGN's package table (add its folder to the table and to internal/layers_test.go)", s.file, s.pkg))
			continue
		}
		to, ok := groupOf(s.dep)
		if !ok {
			add(fmt.Sprintf("%s: %s imports %s, which is in no row of DESIGN's package table", s.file, s.pkg, s.dep))
			continue
		}
		if testSupport(s.dep) && !testSupport(s.pkg) {
			add(fmt.Sprintf("%s: %s imports the test-support package %s (only tests and other test-support packages may)", s.file, s.pkg, s.dep))
			continue
		}
		if from == gDomain && to == gDomain {
			fd, td := domainOf(s.pkg), domainOf(s.dep)
			if fd != td {
				if domainEdges[fd] == nil {
					domainEdges[fd] = map[string]importSite{}
				}
				if _, ok := domainEdges[fd][td]; !ok {
					domainEdges[fd][td] = s
				}
			}
			continue
		}
		if (from == to && from != gLeaf) || to == gLeaf || slices.Contains(mayImport[from], to) || (testSupport(s.pkg) && testSupport(s.dep)) {
			continue
		}
		add(fmt.Sprintf("%s: %s imports %s, breaking the %s row: %s", s.file, s.pkg, s.dep, from, why[from]))
	}
	for _, c := range domainCycles(domainEdges) {
		add(c)
	}
	return out
}

// domainCycles reports each cycle among domains once, with the import that closes each step.
func domainCycles(edges map[string]map[string]importSite) []string {
	var names []string
	for d := range edges {
		names = append(names, d)
	}
	sort.Strings(names)
	const (
		unseen = iota
		onPath
		done
	)
	state := map[string]int{}
	var path []string
	var out []string
	var visit func(d string)
	visit = func(d string) {
		state[d] = onPath
		path = append(path, d)
		var next []string
		for n := range edges[d] {
			next = append(next, n)
		}
		sort.Strings(next)
		for _, n := range next {
			switch state[n] {
			case onPath:
				i := slices.Index(path, n)
				cyc := append(slices.Clone(path[i:]), n)
				var steps []string
				for k := 0; k+1 < len(cyc); k++ {
					s := edges[cyc[k]][cyc[k+1]]
					steps = append(steps, fmt.Sprintf("%s imports %s (%s)", s.pkg, s.dep, s.file))
				}
				out = append(out, fmt.Sprintf("domains import each other in a cycle %s: %s; DESIGN: domains import other domains acyclically",
					strings.Join(cyc, " → "), strings.Join(steps, "; ")))
			case unseen:
				visit(n)
			}
		}
		path = path[:len(path)-1]
		state[d] = done
	}
	for _, d := range names {
		if state[d] == unseen {
			visit(d)
		}
	}
	return out
}

// moduleImports reads every non-test Go file under root (build tags ignored) and returns its
// imports of the module's own packages.
func moduleImports(t *testing.T, root string) []importSite {
	t.Helper()
	module := modulePath(t, root)
	var sites []importSite
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		fileRel := filepath.ToSlash(filepath.Join(rel, name))
		for _, im := range f.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return err
			}
			if p != module && !strings.HasPrefix(p, module+"/") {
				continue
			}
			sites = append(sites, importSite{
				file: fmt.Sprintf("%s:%d", fileRel, fset.Position(im.Pos()).Line),
				pkg:  pkg, dep: strings.TrimPrefix(strings.TrimPrefix(p, module), "/"),
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sites
}

func modulePath(t *testing.T, root string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.TrimSpace(m)
		}
	}
	t.Fatal("go.mod has no module line")
	return ""
}

// TestImportsFollowDesign enforces DESIGN's may-import table on the whole module.
func TestImportsFollowDesign(t *testing.T) {
	sites := moduleImports(t, "..")
	if len(sites) < 100 {
		t.Fatalf("found only %d first-party imports: the walk did not see the module", len(sites))
	}
	for _, v := range violations(sites) {
		t.Error(v)
	}
}

// TestImportRulesCatchViolations proves the checker flags each kind of broken rule, and names
// the import and the rule.
func TestImportRulesCatchViolations(t *testing.T) {
	site := func(file, pkg, dep string) importSite { return importSite{file: file, pkg: pkg, dep: dep} }
	allowed := []importSite{
		site("cmd/wagerail/main.go:3", "cmd/wagerail", "sandbox"),
		site("api/a.go:3", "api", "workflows"),
		site("api/a.go:4", "api", "ledger"),
		site("workflows/w.go:3", "workflows", "activities"),
		site("workflows/w.go:4", "workflows", "internal/ewa"),
		site("activities/a.go:3", "activities", "gateway"),
		site("ledger/l.go:3", "ledger", "internal/platform/money"),
		site("gateway/g.go:3", "gateway", "schema/proto/gateway/v1"),
		site("sandbox/s.go:3", "sandbox", "internal/platform/db"),
		site("ledger/ledgertest/l.go:3", "ledger/ledgertest", "internal/platform/testkit"),
		site("gateway/gatewaytest/g.go:3", "gateway/gatewaytest", "sandbox/sandboxtest"),
		site("internal/platform/testkit/t.go:3", "internal/platform/testkit", "schema"),
		site("internal/ewa/e.go:3", "internal/ewa", "internal/employees"),
		site("internal/employees/e.go:3", "internal/employees", "internal/identity"),
		site("workflows/w.go:5", "workflows", "ledger/chart"),
		site("api/a.go:5", "api", "ledger/chart"),
	}
	if v := violations(allowed); len(v) != 0 {
		t.Fatalf("allowed imports flagged: %q", v)
	}
	cases := []struct {
		site importSite
		want string
	}{
		{site("api/a.go:9", "api", "activities"), "api/a.go:9: api imports activities, breaking the api row: api imports domain packages"},
		{site("internal/platform/db/d.go:5", "internal/platform/db", "internal/ewa"), "internal/platform/db imports internal/ewa, breaking the internal/platform row"},
		{site("internal/platform/db/d.go:6", "internal/platform/db", "ledger"), "breaking the internal/platform row"},
		{site("internal/orgs/o.go:7", "internal/orgs", "workflows"), "internal/orgs imports workflows, breaking the internal/<domain> row"},
		{site("internal/orgs/o.go:8", "internal/orgs", "gateway"), "breaking the internal/<domain> row"},
		{site("workflows/w.go:9", "workflows", "api"), "workflows imports api, breaking the workflows row"},
		{site("sandbox/s.go:9", "sandbox", "gateway"), "sandbox imports gateway, breaking the sandbox row: sandbox imports only the standard library and internal/…"},
		{site("ledger/l.go:9", "ledger", "reconcile"), "ledger imports reconcile, breaking the ledger row"},
		{site("gateway/g.go:9", "gateway", "ledger"), "gateway imports ledger, breaking the gateway row"},
		{site("schema/s.go:9", "schema", "internal/platform/db"), "breaking the schema row"},
		{site("activities/a.go:9", "activities", "workflows"), "activities imports workflows, breaking the activities row"},
		{site("api/a.go:10", "api", "internal/platform/testkit"), "api imports the test-support package internal/platform/testkit"},
		{site("ledger/l.go:10", "ledger", "gateway/gatewaytest"), "ledger imports the test-support package gateway/gatewaytest"},
		{site("tools/x.go:1", "tools", "api"), "package tools is in no row of DESIGN's package table"},
		{site("ledger/chart/c.go:4", "ledger/chart", "ledger"), "ledger/chart imports ledger, breaking the leaf row"},
		{site("workflows/w.go:6", "workflows", "ledger"), "workflows imports ledger, breaking the workflows row"},
	}
	for _, c := range cases {
		v := violations(append(slices.Clone(allowed), c.site))
		if len(v) != 1 || !strings.Contains(v[0], c.want) {
			t.Errorf("%s → %s: got %q, want one violation containing %q", c.site.pkg, c.site.dep, v, c.want)
		}
	}
	// A cycle among domains, through a sub-package, is named with each of its imports.
	cyc := violations(append(slices.Clone(allowed), site("internal/identity/x/x.go:4", "internal/identity/x", "internal/ewa")))
	if len(cyc) != 1 || !strings.Contains(cyc[0], "employees → identity → ewa → employees") ||
		!strings.Contains(cyc[0], "internal/identity/x imports internal/ewa (internal/identity/x/x.go:4)") {
		t.Errorf("domain cycle: got %q", cyc)
	}
}
