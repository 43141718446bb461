package disputes

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The default SLA per raiser (the spec's Limits): an employee's dispute 7 calendar days from
// openedAt, a partner bank's 5 business days, an internal one 14 calendar days. A tenant overrides
// them per raiser (app.dispute_sla_policies).
var defaultPolicies = map[RaisedBy]Policy{
	RaisedByEmployee:    {DayKind: CalendarDays, Days: 7},
	RaisedByPartnerBank: {DayKind: BusinessDays, Days: 5},
	RaisedByInternal:    {DayKind: CalendarDays, Days: 14},
}

// DefaultPolicy is the spec's SLA for a raiser.
func DefaultPolicy(r RaisedBy) Policy { return defaultPolicies[r] }

// DayKind is how an SLA's days are counted.
type DayKind string

const (
	CalendarDays DayKind = "CALENDAR"
	BusinessDays DayKind = "BUSINESS"
)

// MaxPolicyDays bounds an override (the table's CHECK says the same).
const MaxPolicyDays = 90

// Policy is an SLA: Days days of DayKind from the dispute's openedAt.
type Policy struct {
	DayKind DayKind `json:"dayKind"`
	Days    int     `json:"days"`
}

// Check refuses a policy the table would refuse.
func (p Policy) Check() error {
	if (p.DayKind != CalendarDays && p.DayKind != BusinessDays) || p.Days < 1 || p.Days > MaxPolicyDays {
		return fmt.Errorf("%w: policy", ErrInvalid)
	}
	return nil
}

//go:embed holidays_et.json
var holidaysET []byte

// Calendar says which days are business days: Monday to Friday in its zone, except its public
// holidays. The holidays are data (holidays_et.json, replaceable with ParseCalendar), known up to
// and including the day the data says it covers ("through"). After that day only weekends are
// known: a deadline counted past it may come earlier than it should, never later (the SLA errs
// strict), and svc_disputes_calendar_through_timestamp_seconds lets an alert ask for new data
// well before (CalendarMetric).
type Calendar struct {
	zone     *time.Location
	holidays map[string]string // yyyy-mm-dd → name
	through  time.Time         // midnight at the start of the last covered day, in zone
}

type calendarFile struct {
	TimezoneOffsetMinutes int    `json:"timezone_offset_minutes"`
	Through               string `json:"through"`
	Holidays              []struct {
		Date string `json:"date"`
		Name string `json:"name"`
	} `json:"holidays"`
}

// ParseCalendar reads a calendar in holidays_et.json's format.
func ParseCalendar(b []byte) (*Calendar, error) {
	var f calendarFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("disputes: calendar: %w", err)
	}
	if f.TimezoneOffsetMinutes < -14*60 || f.TimezoneOffsetMinutes > 14*60 {
		return nil, fmt.Errorf("disputes: calendar: timezone offset out of range")
	}
	c := &Calendar{zone: time.FixedZone("calendar", f.TimezoneOffsetMinutes*60), holidays: map[string]string{}}
	through, err := time.ParseInLocation(time.DateOnly, f.Through, c.zone)
	if err != nil {
		return nil, fmt.Errorf("disputes: calendar: through (the last day the holidays are known for, YYYY-MM-DD): %w", err)
	}
	c.through = through
	for _, h := range f.Holidays {
		if _, err := time.Parse(time.DateOnly, h.Date); err != nil {
			return nil, fmt.Errorf("disputes: calendar: holiday %q: %w", h.Date, err)
		}
		if h.Date > f.Through {
			return nil, fmt.Errorf("disputes: calendar: holiday %q is after through %q", h.Date, f.Through)
		}
		c.holidays[h.Date] = h.Name
	}
	return c, nil
}

// CoveredUntil is the end of the last day the calendar knows the holidays of (the start of the
// day after "through", in its zone).
func (c *Calendar) CoveredUntil() time.Time { return c.through.AddDate(0, 0, 1) }

// CalendarMetric is the gauge NewCalendarMetric exports: when the business-day calendar's
// holiday data ends (Unix seconds).
const CalendarMetric = "svc_disputes_calendar_through_timestamp_seconds"

// NewCalendarMetric exports CalendarMetric for c (the API registers it for the calendar its
// dispute deadlines are counted on).
func NewCalendarMetric(c *Calendar) prometheus.Collector {
	until := float64(c.CoveredUntil().Unix())
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: CalendarMetric,
		Help: "When the public-holiday data partner-bank dispute SLAs count business days on ends (Unix seconds)."},
		func() float64 { return until })
}

// Ethiopia is the Ethiopian business-day calendar built in (East Africa Time, UTC+3, no DST).
func Ethiopia() *Calendar {
	c, err := ParseCalendar(holidaysET)
	if err != nil {
		panic(err) // the embedded file is checked by the tests
	}
	return c
}

// Holiday names the public holiday on t's day in the calendar's zone ("" for none).
func (c *Calendar) Holiday(t time.Time) string {
	return c.holidays[t.In(c.zone).Format(time.DateOnly)]
}

// BusinessDay reports whether t's day (in the calendar's zone) is a business day.
func (c *Calendar) BusinessDay(t time.Time) bool {
	l := t.In(c.zone)
	if wd := l.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	return c.Holiday(l) == ""
}

// AddBusinessDays is t moved forward n business days, at the same time of day in the calendar's
// zone: the day the dispute opened never counts, whatever day it is, and each following day counts
// when it is a business day. (Opened on a Friday afternoon, five business days end the next Friday
// afternoon; opened on a Saturday, they end the Friday after, unless a holiday intervenes.)
func (c *Calendar) AddBusinessDays(t time.Time, n int) time.Time {
	l := t.In(c.zone)
	for n > 0 {
		l = l.AddDate(0, 0, 1)
		if c.BusinessDay(l) {
			n--
		}
	}
	return l.In(t.Location())
}

// Deadline is the SLA deadline of a dispute opened at openedAt under p.
func (c *Calendar) Deadline(openedAt time.Time, p Policy) time.Time {
	if p.DayKind == BusinessDays {
		return c.AddBusinessDays(openedAt, p.Days)
	}
	return openedAt.AddDate(0, 0, p.Days)
}

// BreachWarningLead is how long before its deadline a dispute's SLA breach is announced
// (dispute.sla_breach_imminent.v1).
const BreachWarningLead = 24 * time.Hour
