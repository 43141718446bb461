package disputes

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

var eat = time.FixedZone("EAT", 3*3600)

func TestEthiopianCalendarData(t *testing.T) {
	c := Ethiopia()
	require.Equal(t, "Meskel", c.Holiday(time.Date(2026, 9, 27, 10, 0, 0, 0, eat)))
	require.Equal(t, "Genna (Ethiopian Christmas)", c.Holiday(time.Date(2027, 1, 7, 0, 30, 0, 0, eat)))
	// The day is the calendar's (UTC+3): 21:30 UTC on 6 January is already Genna in Addis Ababa.
	require.Equal(t, "Genna (Ethiopian Christmas)", c.Holiday(time.Date(2027, 1, 6, 21, 30, 0, 0, time.UTC)))
	require.False(t, c.BusinessDay(time.Date(2026, 12, 5, 12, 0, 0, 0, eat)), "a Saturday")
	require.False(t, c.BusinessDay(time.Date(2026, 12, 6, 12, 0, 0, 0, eat)), "a Sunday")
	require.True(t, c.BusinessDay(time.Date(2026, 12, 7, 12, 0, 0, 0, eat)), "a Monday")
	require.False(t, c.BusinessDay(time.Date(2026, 5, 1, 12, 0, 0, 0, eat)), "Labour Day, a Friday")

	// The data covers 2027 whole: its end is midnight starting 2028 in Addis Ababa.
	require.Equal(t, time.Date(2028, 1, 1, 0, 0, 0, 0, eat).Unix(), c.CoveredUntil().Unix())

	for name, file := range map[string]string{
		"a date that is not one": `{"timezone_offset_minutes": 180, "through": "2026-12-31", "holidays": [{"date": "2026-13-01", "name": "x"}]}`,
		"an offset out of range": `{"timezone_offset_minutes": 100000, "through": "2026-12-31"}`,
		"no through":             `{"timezone_offset_minutes": 180, "holidays": [{"date": "2026-12-08", "name": "Announced"}]}`,
		"a bad through":          `{"timezone_offset_minutes": 180, "through": "2026-12-32"}`,
		"a holiday after it":     `{"timezone_offset_minutes": 180, "through": "2026-12-07", "holidays": [{"date": "2026-12-08", "name": "Announced"}]}`,
	} {
		_, err := ParseCalendar([]byte(file))
		require.Error(t, err, name)
	}
	own, err := ParseCalendar([]byte(`{"timezone_offset_minutes": 180, "through": "2026-12-31", "holidays": [{"date": "2026-12-08", "name": "Announced"}]}`))
	require.NoError(t, err)
	require.False(t, own.BusinessDay(time.Date(2026, 12, 8, 12, 0, 0, 0, eat)), "the holidays are data")
}

// TestCalendarMetric: the gauge says when the holiday data ends.
func TestCalendarMetric(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCalendarMetric(Ethiopia()))
	n, err := testutil.GatherAndCount(reg, CalendarMetric)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	mfs, err := reg.Gather()
	require.NoError(t, err)
	require.Equal(t, float64(time.Date(2028, 1, 1, 0, 0, 0, 0, eat).Unix()), mfs[0].GetMetric()[0].GetGauge().GetValue())
}

// TestSLADeadlines: each raiser's default, across weekends and holidays.
func TestSLADeadlines(t *testing.T) {
	c := Ethiopia()
	at := func(y int, m time.Month, d, h int) time.Time { return time.Date(y, m, d, h, 0, 0, 0, eat) }
	for _, tc := range []struct {
		name   string
		raised RaisedBy
		opened time.Time
		want   time.Time
	}{
		{"employee: 7 calendar days, weekend included", RaisedByEmployee, at(2026, 12, 4, 15), at(2026, 12, 11, 15)},
		{"internal: 14 calendar days", RaisedByInternal, at(2026, 12, 4, 15), at(2026, 12, 18, 15)},
		{"partner: 5 business days from a Monday", RaisedByPartnerBank, at(2026, 12, 7, 9), at(2026, 12, 14, 9)},
		{"partner: from a Friday, over the weekend", RaisedByPartnerBank, at(2026, 12, 4, 16), at(2026, 12, 11, 16)},
		{"partner: opened on a Saturday", RaisedByPartnerBank, at(2026, 12, 5, 11), at(2026, 12, 11, 11)},
		// Good Friday 10 April 2026 and Easter Sunday 12 April: Thu 9 → Mon 13 (1), Tue 14 (2) … Fri 17 (5).
		{"partner: over Siklet and Fasika", RaisedByPartnerBank, at(2026, 4, 9, 10), at(2026, 4, 17, 10)},
		// Labour Day (Fri 1 May) and Patriots' Day (Tue 5 May) 2026: Thu 30 Apr → Mon 4 (1), Wed 6 (2), Thu 7 (3), Fri 8 (4), Mon 11 (5).
		{"partner: over Labour Day and Patriots' Day", RaisedByPartnerBank, at(2026, 4, 30, 10), at(2026, 5, 11, 10)},
		// Genna (Thu 7 Jan 2027): Tue 5 → Wed 6 (1), Fri 8 (2), Mon 11 (3), Tue 12 (4), Wed 13 (5).
		{"partner: over Genna", RaisedByPartnerBank, at(2027, 1, 5, 8), at(2027, 1, 13, 8)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := c.Deadline(tc.opened.UTC(), DefaultPolicy(tc.raised))
			require.True(t, tc.want.Equal(got), "want %s, got %s", tc.want, got.In(eat))
			require.Equal(t, time.UTC, got.Location(), "the deadline keeps the caller's zone")
		})
	}
	require.True(t, at(2026, 12, 9, 9).Equal(c.Deadline(at(2026, 12, 7, 9), Policy{BusinessDays, 2})), "a tenant's override")
	require.Error(t, Policy{BusinessDays, 0}.Check())
	require.Error(t, Policy{"WEEKS", 2}.Check())
	require.Error(t, Policy{CalendarDays, MaxPolicyDays + 1}.Check())
}

// TestLifecycle: every legal transition of the spec's table, and every other (from, trigger) pair
// refused.
func TestLifecycle(t *testing.T) {
	legal := map[string]Status{
		"OPENED/investigate":                    UnderInvestigation,
		"OPENED/evidence":                       UnderInvestigation,
		"UNDER_INVESTIGATION/evidence":          UnderInvestigation,
		"OPENED/sla":                            Opened,
		"UNDER_INVESTIGATION/sla":               UnderInvestigation,
		"UNDER_INVESTIGATION/decide:NO_ACTION":  ClosedNoAction,
		"UNDER_INVESTIGATION/decide:ADJUSTMENT": ResolvedAdjustment,
		"UNDER_INVESTIGATION/decide:REVERSAL":   ResolvedReversal,
		"UNDER_INVESTIGATION/decide:CHARGEBACK": EscalatedToPartner,
		"CLOSED_NO_ACTION/reopen":               Reopened,
	}
	seen := 0
	for _, from := range Statuses {
		for _, tr := range []Trigger{TriggerInvestigate, TriggerEvidence, TriggerReopen, TriggerSLA, TriggerDecide} {
			decisions := []Decision{""}
			if tr == TriggerDecide {
				decisions = append(Decisions, "REFUND")
			}
			for _, d := range decisions {
				key := string(from) + "/" + string(tr)
				if d != "" {
					key += ":" + string(d)
				}
				got, err := Next(from, tr, d)
				if want, ok := legal[key]; ok {
					seen++
					require.NoError(t, err, key)
					require.Equal(t, want, got, key)
					continue
				}
				require.ErrorIs(t, err, ErrInvalidTransition, key)
				require.Equal(t, CodeInvalidState, CodeOf(err))
			}
		}
	}
	require.Equal(t, len(legal), seen)
}

func TestCodesTable(t *testing.T) {
	for _, s := range storeCodes {
		r, ok := RefusalOf(s.code)
		require.True(t, ok, s.code)
		require.GreaterOrEqual(t, r.Status, 400)
		require.NotEmpty(t, r.Message)
	}
	require.Equal(t, "", CodeOf(ErrInvalid))
}
