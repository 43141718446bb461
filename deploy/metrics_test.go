package deploy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/api"
	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/platform/inflight"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/rpcserve"
	"github.com/wagerail/wagerail/ledger"
	"github.com/wagerail/wagerail/reconcile"
	"github.com/wagerail/wagerail/workflows"
)

// The registries of every process that serves /metrics, built the way cmd/wagerail builds them
// (nothing here needs a database: the constructors only register series).
//
// When a process starts exporting series (the worker's /metrics port, the outbox relay, the
// sagas), it gets a line here; a rule on a metric that is not here fails
// TestAlertRulesNameExportedMetrics.
func processRegistries(t *testing.T) map[string]*prometheus.Registry {
	log := slog.New(slog.DiscardHandler)
	regs := map[string]*prometheus.Registry{}

	// api (runAPI): api.New registers the readiness gauge and the callback counter; the one
	// readiness round WatchDependencies runs at start gives svc_dependency_up its series.
	apiReg := prometheus.NewRegistry()
	srv := api.New(api.Deps{Log: log, Registry: apiReg, Probes: []api.Probe{
		{Name: "ledger", Check: func(context.Context) error { return nil }},
		{Name: "gateway", Check: func(context.Context) error { return errors.New("down") }},
	}})
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // WatchDependencies checks once, then sees the end of ctx
	srv.WatchDependencies(ctx)
	regs["api"] = apiReg

	// ledger (runLedger)
	lm := ledger.NewMetrics()
	ls := rpcserve.New("ledger", log, lm.UnaryInterceptor(log))
	t.Cleanup(ls.GRPC.Stop)
	require.NoError(t, lm.Register(ls.Registry))
	regs["ledger"] = ls.Registry

	// gateway (runGateway)
	gm := gateway.NewMetrics(nil, gateway.SystemClock{})
	gs := rpcserve.New("gateway", log, gm.UnaryInterceptor(log))
	t.Cleanup(gs.GRPC.Stop)
	require.NoError(t, gm.Register(gs.Registry))
	regs["gateway"] = gs.Registry

	// worker (runWorker): the outbox relay registers into the registry served on --metrics-addr.
	// NewRelay does not connect, so a pool on an unreachable address will do.
	wreg := prometheus.NewRegistry()
	pool, err := pgxpool.New(t.Context(), "postgres://wagerail_platform@127.0.0.1:1/none")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	_, err = outbox.NewRelay(outbox.Config{Platform: pool, Registerer: wreg})
	require.NoError(t, err)
	// The reconciliation's last success (runWorker registers it; it reads the database only
	// when scraped).
	require.NoError(t, wreg.Register(reconcile.NewMetrics(reconcile.NewStore(pool))))
	// The open disputes past their SLA deadline (runWorker registers it beside the platform pool;
	// it reads the database only when scraped).
	require.NoError(t, wreg.Register(disputes.NewSLAMetrics(pool, 0)))
	// The equb escrow reconciliation's drift per partner and last success (runWorker registers
	// it; it reads the database only when scraped).
	require.NoError(t, wreg.Register(reconcile.NewEscrowMetrics(pool)))
	// The money the sagas hold in flight (runWorker registers it beside the platform pool; it
	// reads the database only when scraped).
	inFlight, err := inflight.NewMetrics(pool, workflows.InFlight(), 0)
	require.NoError(t, err)
	require.NoError(t, wreg.Register(inFlight))
	// The sagas' settlement status lookups (runWorker's activities), the one settlement poller.
	activities.NewSettlementPollMetrics(wreg)
	regs["worker"] = wreg

	// notify (runNotify): its relay, in group "notify", registers the same outbox series.
	nreg := prometheus.NewRegistry()
	_, err = outbox.NewRelay(outbox.Config{Group: "notify", Platform: pool, Registerer: nreg})
	require.NoError(t, err)
	regs["notify"] = nreg

	// sandbox: the simulated bank exports no metrics.
	return regs
}

// rule is one alerting or recording rule of a rule file.
type rule struct {
	file, name, expr string
	record           bool
}

// loadRules reads every Prometheus rule file under prometheus/.
func loadRules(t *testing.T) []rule {
	files, err := filepath.Glob("prometheus/*.yml")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var out []rule
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var rf struct {
			Groups []struct {
				Rules []struct {
					Alert  string `yaml:"alert"`
					Record string `yaml:"record"`
					Expr   string `yaml:"expr"`
				} `yaml:"rules"`
			} `yaml:"groups"`
		}
		require.NoError(t, yaml.Unmarshal(b, &rf), f)
		for _, g := range rf.Groups {
			for _, r := range g.Rules {
				name, record := r.Alert, false
				if r.Record != "" {
					name, record = r.Record, true
				}
				require.NotEmpty(t, r.Expr, "%s: %s has no expr", f, name)
				out = append(out, rule{file: f, name: name, expr: r.Expr, record: record})
			}
		}
	}
	return out
}

// exports reports whether reg has a collector describing a metric named name. The registry's own
// consistency check answers it: registering a probe of that name with a help text no real series
// has fails exactly when a descriptor of that name is already registered. A histogram's or
// summary's _bucket, _sum and _count series belong to the metric without the suffix (when that
// metric has series, its type must say histogram or summary; a vector with no series yet has no
// type to check).
func exports(t *testing.T, reg *prometheus.Registry, name string) bool {
	t.Helper()
	if registered(t, reg, name) {
		return true
	}
	base, ok := histogramBase(name)
	if !ok || !registered(t, reg, base) {
		return false
	}
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == base {
			switch mf.GetType() {
			case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM, dto.MetricType_SUMMARY:
				return true
			}
			return false
		}
	}
	return true
}

func registered(t *testing.T, reg *prometheus.Registry, name string) bool {
	t.Helper()
	probe := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "deploy test probe: is this name registered?"})
	err := reg.Register(probe)
	if err == nil {
		reg.Unregister(probe)
		return false
	}
	var already prometheus.AlreadyRegisteredError
	if errors.As(err, &already) || strings.Contains(err.Error(), "previously registered descriptor with the same fully-qualified name") {
		return true
	}
	t.Fatalf("probing %s: %v", name, err)
	return false
}

func histogramBase(name string) (string, bool) {
	for _, s := range []string{"_bucket", "_sum", "_count"} {
		if b, ok := strings.CutSuffix(name, s); ok {
			return b, true
		}
	}
	return "", false
}

// Every metric an alert or recording rule reads is exported by some process (or recorded by a
// rule): a rule on a name nothing exports never fires, and nobody notices.
func TestAlertRulesNameExportedMetrics(t *testing.T) {
	regs := processRegistries(t)
	rules := loadRules(t)
	recorded := map[string]bool{}
	for _, r := range rules {
		if r.record {
			recorded[r.name] = true
		}
	}
	procs := make([]string, 0, len(regs))
	for p := range regs {
		procs = append(procs, p)
	}
	sort.Strings(procs)

	var missing []string
	for _, r := range rules {
		sels, err := selectors(r.expr)
		require.NoError(t, err, "%s: %s", r.file, r.name)
		require.NotEmpty(t, sels, "%s: %s reads no metric", r.file, r.name)
		for _, s := range sels {
			found := recorded[s.name]
			for _, p := range procs {
				found = found || exports(t, regs[p], s.name)
			}
			if !found {
				missing = append(missing, fmt.Sprintf("%s: rule %s reads %s, which no process exports (%s) and no rule records",
					r.file, r.name, s.name, strings.Join(procs, ", ")))
			}
		}
	}
	require.Empty(t, missing, "\n%s", strings.Join(missing, "\n"))
}

// A counter a rule reads has its series from the start, for every label value the rule selects
// by equality: Prometheus practice, so rate() sees 0 rather than no series and the alert is
// evaluated from the first scrape.
func TestAlertedCountersStartAtZero(t *testing.T) {
	regs := processRegistries(t)
	families := map[string]*dto.MetricFamily{}
	for _, reg := range regs {
		mfs, err := reg.Gather()
		require.NoError(t, err)
		for _, mf := range mfs {
			families[mf.GetName()] = mf
		}
	}
	for _, r := range loadRules(t) {
		sels, err := selectors(r.expr)
		require.NoError(t, err)
		for _, s := range sels {
			if !strings.HasSuffix(s.name, "_total") {
				continue
			}
			mf, ok := families[s.name]
			if !ok {
				continue // not exported at all: TestAlertRulesNameExportedMetrics says so
			}
			require.Equal(t, dto.MetricType_COUNTER, mf.GetType(), s.name)
			require.NotEmpty(t, mf.GetMetric(), "%s: rule %s reads %s, which has no series at start", r.file, r.name, s.name)
			for _, m := range s.matchers {
				if m.op != "=" {
					continue
				}
				has := slices.ContainsFunc(mf.GetMetric(), func(x *dto.Metric) bool {
					return slices.ContainsFunc(x.GetLabel(), func(l *dto.LabelPair) bool {
						return l.GetName() == m.label && l.GetValue() == m.value
					})
				})
				require.True(t, has, "%s: rule %s reads %s{%s=%q}, which has no series at start", r.file, r.name, s.name, m.label, m.value)
			}
		}
	}
}

// selector is one vector selector of a PromQL expression: a metric name and its label matchers.
type selector struct {
	name     string
	matchers []matcher
}

type matcher struct{ label, op, value string }

// Words of PromQL that are not metric names where they stand bare: aggregation operators (which
// may precede by/without rather than a parenthesis), binary and set operators, modifiers and
// number literals.
var promqlWords = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "group": true, "stddev": true, "stdvar": true,
	"count": true, "count_values": true, "bottomk": true, "topk": true, "quantile": true,
	"limitk": true, "limit_ratio": true,
	"and": true, "or": true, "unless": true, "atan2": true, "bool": true, "offset": true,
	"inf": true, "nan": true,
}

// Modifiers whose parenthesised list holds label names.
var labelListWords = map[string]bool{
	"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true,
}

type token struct {
	kind byte // 'i' identifier, 's' string, 'n' number or duration, else the punctuation itself
	text string
}

// lexPromQL splits an expression into identifiers, strings (unquoted), numbers and punctuation;
// operators of several characters come out one character at a time, which is all selectors needs.
func lexPromQL(expr string) ([]token, error) {
	var toks []token
	isIdentStart := func(c byte) bool { return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			var b strings.Builder
			for ; j < len(expr) && expr[j] != c; j++ {
				if expr[j] == '\\' && c != '`' && j+1 < len(expr) {
					j++
				}
				b.WriteByte(expr[j])
			}
			if j >= len(expr) {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			toks = append(toks, token{'s', b.String()})
			i = j + 1
		case isDigit(c) || c == '.' && i+1 < len(expr) && isDigit(expr[i+1]):
			j := i
			for j < len(expr) && (isIdentStart(expr[j]) || isDigit(expr[j]) || expr[j] == '.' ||
				(expr[j] == '+' || expr[j] == '-') && (expr[j-1] == 'e' || expr[j-1] == 'E') && !strings.HasPrefix(expr[i:], "0x")) {
				j++
			}
			toks = append(toks, token{'n', expr[i:j]})
			i = j
		case isIdentStart(c):
			j := i
			for j < len(expr) && (isIdentStart(expr[j]) || isDigit(expr[j])) {
				j++
			}
			toks = append(toks, token{'i', expr[i:j]})
			i = j
		default:
			toks = append(toks, token{c, string(c)})
			i++
		}
	}
	return toks, nil
}

// selectors returns the vector selectors of a PromQL expression: every bare name that is not a
// function (followed by a parenthesis), an operator or modifier word, or a label inside braces or
// a by/without/on/ignoring/group_left/group_right list; {__name__="x"} names x. Ranges and
// subqueries in brackets are skipped.
func selectors(expr string) ([]selector, error) {
	toks, err := lexPromQL(expr)
	if err != nil {
		return nil, err
	}
	next := func(i int) byte {
		if i+1 < len(toks) {
			return toks[i+1].kind
		}
		return 0
	}
	skipGroup := func(i int, open, close byte) (int, error) { // i at open; returns index after close
		depth := 0
		for j := i; j < len(toks); j++ {
			switch toks[j].kind {
			case open:
				depth++
			case close:
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("unbalanced %c", open)
	}
	matchers := func(i int) ([]matcher, int, error) { // i at '{'
		var ms []matcher
		j := i + 1
		for j < len(toks) && toks[j].kind != '}' {
			if toks[j].kind == ',' {
				j++
				continue
			}
			if toks[j].kind != 'i' || j+2 >= len(toks) {
				return nil, 0, fmt.Errorf("bad matcher near %q", toks[j].text)
			}
			label := toks[j].text
			j++
			op := ""
			for j < len(toks) && strings.ContainsRune("=!~", rune(toks[j].kind)) && toks[j].kind != 's' {
				op += toks[j].text
				j++
			}
			if j >= len(toks) || toks[j].kind != 's' || !slices.Contains([]string{"=", "!=", "=~", "!~"}, op) {
				return nil, 0, fmt.Errorf("bad matcher for %s", label)
			}
			ms = append(ms, matcher{label, op, toks[j].text})
			j++
		}
		if j >= len(toks) {
			return nil, 0, errors.New("unbalanced {")
		}
		return ms, j + 1, nil
	}

	var out []selector
	for i := 0; i < len(toks); {
		tk := toks[i]
		switch {
		case tk.kind == '[':
			j, err := skipGroup(i, '[', ']')
			if err != nil {
				return nil, err
			}
			i = j
		case tk.kind == '{': // a selector by matchers alone
			ms, j, err := matchers(i)
			if err != nil {
				return nil, err
			}
			s := selector{matchers: ms}
			for _, m := range ms {
				if m.label == "__name__" && m.op == "=" {
					s.name = m.value
				}
			}
			if s.name == "" {
				return nil, errors.New("a selector without a metric name")
			}
			out = append(out, s)
			i = j
		case tk.kind != 'i':
			i++
		case labelListWords[strings.ToLower(tk.text)]:
			i++
			if next(i-1) == '(' {
				j, err := skipGroup(i, '(', ')')
				if err != nil {
					return nil, err
				}
				i = j
			}
		case promqlWords[strings.ToLower(tk.text)] || next(i) == '(':
			i++ // an operator, or a function call
		default:
			s := selector{name: tk.text}
			i++
			if i < len(toks) && toks[i].kind == '{' {
				ms, j, err := matchers(i)
				if err != nil {
					return nil, err
				}
				s.matchers, i = ms, j
			}
			out = append(out, s)
		}
	}
	return out, nil
}

var metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

func names(sels []selector) []string {
	var out []string
	for _, s := range sels {
		out = append(out, s.name)
	}
	return out
}

// The extractor finds exactly the metrics of expressions in every PromQL shape the rules use or
// are likely to use, and nothing else (no functions, labels, keywords, durations or numbers).
func TestSelectors(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string][]string{
		`sum(rate(svc_bank_webhook_requests_total{result="signature_rejected"}[5m])) / clamp_min(sum(rate(svc_bank_webhook_requests_total[5m])), 1e-9) > 0.05`: {
			"svc_bank_webhook_requests_total", "svc_bank_webhook_requests_total"},
		`svc_dependency_up{dependency=~"gateway|ledger"} == 0`:                                {"svc_dependency_up"},
		`max(svc_outbox_oldest_unpublished_age_seconds) > 300`:                                {"svc_outbox_oldest_unpublished_age_seconds"},
		`sum(rate(svc_settlement_poller_ticks_total{outcome="error"}[5m])) * 60 > 0.5`:        {"svc_settlement_poller_ticks_total"},
		`max by (partner) (abs(svc_ledger_reconcile_drift_santim)) > 0`:                       {"svc_ledger_reconcile_drift_santim"},
		`time() - max(svc_reconcile_last_success_timestamp_seconds) > 26 * 3600`:              {"svc_reconcile_last_success_timestamp_seconds"},
		`histogram_quantile(0.95, sum without (instance) (rate(lat_bucket{job="x"}[5m:1m])))`: {"lat_bucket"},
		`a / on(instance) group_left(version) b{x!="y", z!~"w"} offset 1h30m`:                 {"a", "b"},
		`count_values("v", up) or vector(0) unless absent(foo) and bool 1`:                    {"up", "foo"},
		`{__name__="by_name", job="j"} + Inf - NaN + 0x1F + .5 + 2E+3`:                        {"by_name"},
		`label_replace(m, "dst", "$1", "src", "(.*)") # a comment with words`:                 {"m"},
		`topk(3, sum by(le,service)(x)) @ start()`:                                            {"x"},
		`rate(x{a="}", b='{'}[1m]) > ignoring(le) y`:                                          {"x", "y"},
	} {
		sels, err := selectors(expr)
		require.NoError(t, err, expr)
		require.Equal(t, want, names(sels), expr)
		for _, n := range names(sels) {
			require.Regexp(t, metricName, n)
		}
	}
	sels, err := selectors(`sum(rate(m{result="signature_rejected", code!="x"}[5m]))`)
	require.NoError(t, err)
	require.Equal(t, []matcher{{"result", "=", "signature_rejected"}, {"code", "!=", "x"}}, sels[0].matchers)
	for _, bad := range []string{`m{a="b"`, `rate(m[5m)`, `m{a=b}`, `{job="x"}`, `m{a="b`} {
		_, err := selectors(bad)
		require.Error(t, err, bad)
	}
}

// The registry probe tells registered names from others, histograms included, and leaves the
// registry as it was.
func TestExportsProbe(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c_total", Help: "c"}, []string{"l"})
	reg.MustRegister(c)
	c.WithLabelValues("x")
	reg.MustRegister(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "h_seconds", Help: "h"}))
	for name, want := range map[string]bool{"c_total": true, "h_seconds": true, "h_seconds_bucket": true, "h_seconds_count": true,
		"c": false, "c_total_sum": false, "other": false} {
		require.Equal(t, want, exports(t, reg, name), name)
		require.Equal(t, want, exports(t, reg, name), name+" again")
	}
}
