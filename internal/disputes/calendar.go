package disputes

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"time"
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
// holidays. The holidays are data (holidays_et.json, replaceable with ParseCalendar).
type Calendar struct {
	zone     *time.Location
	holidays map[string]string // yyyy-mm-dd → name
}

type calendarFile struct {
	TimezoneOffsetMinutes int `json:"timezone_offset_minutes"`
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
	for _, h := range f.Holidays {
		if _, err := time.Parse(time.DateOnly, h.Date); err != nil {
			return nil, fmt.Errorf("disputes: calendar: holiday %q: %w", h.Date, err)
		}
		c.holidays[h.Date] = h.Name
	}
	return c, nil
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
