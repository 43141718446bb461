package deploy

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// The spec's five alert rules exist, each on the metric it names, with the spec's thresholds,
// the reconciliation's heartbeat (no success for 26 hours), open disputes past their SLA
// deadline (issue 27), the equb escrow drift (issue 28), the dispute calendar's end and money the
// sagas hold in flight too long.
func TestAlertRulesParseAndCoverTheSpec(t *testing.T) {
	b, err := os.ReadFile("prometheus/alerts.yml")
	require.NoError(t, err)
	var f ruleFile
	require.NoError(t, yaml.Unmarshal(b, &f))
	require.Len(t, f.Groups, 1)

	want := map[string]struct{ metric, threshold, forDur string }{
		"WebhookSignatureRejectedShareHigh": {"svc_bank_webhook_requests_total", "> 0.05", ""},
		"DependencyDown":                    {"svc_dependency_up", "== 0", "1m"},
		"OutboxBacklog":                     {"svc_outbox_oldest_unpublished_age_seconds", "> 300", ""},
		"SettlementPollerErrors":            {"svc_settlement_poller_ticks_total", "> 0.5", ""},
		"ReconciliationDrift":               {"svc_ledger_reconcile_drift_santim", "> 0", ""},
		"ReconciliationNotSucceeding":       {"svc_reconcile_last_success_timestamp_seconds", "> 26 * 3600", ""},
		"DisputeSLABreached":                {"svc_disputes_sla_breached", "> 0", "10m"},
		"EqubEscrowDrift":                   {"svc_equb_escrow_drift_santim", "> 0", ""},
		"DisputeCalendarEnding":             {"svc_disputes_calendar_through_timestamp_seconds", "< 60 * 86400", ""},
		"SagaMoneyInFlightLong":             {"svc_saga_oldest_in_flight_age_seconds", "> 86400", ""},
		"SagaMoneyOrphaned":                 {"svc_saga_oldest_in_flight_age_seconds", "> 8 * 86400", ""},
	}
	seen := map[string]bool{}
	tenantLabel := regexp.MustCompile(`tenant`)
	for _, r := range f.Groups[0].Rules {
		w, ok := want[r.Alert]
		require.True(t, ok, "unexpected alert %s", r.Alert)
		require.Contains(t, r.Expr, w.metric, r.Alert)
		require.Contains(t, r.Expr, w.threshold, r.Alert)
		require.Equal(t, w.forDur, r.For, r.Alert)
		require.NotEmpty(t, r.Labels["severity"], r.Alert)
		require.NotEmpty(t, r.Annotations["summary"], r.Alert)
		require.False(t, tenantLabel.MatchString(r.Expr), "%s groups by tenant", r.Alert)
		require.Equal(t, balanced(r.Expr), true, "%s: unbalanced brackets", r.Alert)
		seen[r.Alert] = true
	}
	require.Len(t, seen, len(want))
}

func balanced(s string) bool {
	pairs := map[rune]rune{')': '(', ']': '[', '}': '{'}
	var stack []rune
	for _, c := range s {
		switch c {
		case '(', '[', '{':
			stack = append(stack, c)
		case ')', ']', '}':
			if len(stack) == 0 || stack[len(stack)-1] != pairs[c] {
				return false
			}
			stack = stack[:len(stack)-1]
		}
	}
	return len(stack) == 0
}
