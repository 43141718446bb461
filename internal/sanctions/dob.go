package sanctions

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DOBMatch says how a subject's date of birth compares with a listed entry's.
type DOBMatch string

const (
	// DOBUnknown: one side (or both) has no date of birth; the score is the name's alone.
	DOBUnknown DOBMatch = "UNKNOWN"
	// DOBAgree: one of the entry's dates of birth is the subject's, to the day.
	DOBAgree DOBMatch = "MATCH"
	// DOBPartial: one of the entry's dates of birth is a year, month or range that contains
	// the subject's: consistent, but too common to raise the score.
	DOBPartial DOBMatch = "PARTIAL"
	// DOBDisagree: none contains it.
	DOBDisagree DOBMatch = "MISMATCH"
)

// A list date of birth is kept as one of: YYYY, YYYY-MM, YYYY-MM-DD, or a year range YYYY..YYYY
// (inclusive). Lists also say "circa 1955" or "approximately": those are widened to a range of a
// year either side.

// listDate is the range of years a list date covers and, when exact to the month or day, the
// month and day.
type listDate struct {
	fromYear, toYear int
	month, day       int // 0 when not given
}

func parseListDate(s string) (listDate, bool) {
	if from, to, ok := strings.Cut(s, ".."); ok {
		f, err1 := strconv.Atoi(from)
		t, err2 := strconv.Atoi(to)
		if err1 != nil || err2 != nil || len(from) != 4 || len(to) != 4 || t < f {
			return listDate{}, false
		}
		return listDate{fromYear: f, toYear: t}, true
	}
	parts := strings.Split(s, "-")
	if len(parts) > 3 || len(parts[0]) != 4 {
		return listDate{}, false
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || (i > 0 && len(p) != 2) {
			return listDate{}, false
		}
		n[i] = v
	}
	if n[0] < 1000 || (len(parts) > 1 && (n[1] < 1 || n[1] > 12)) || (len(parts) > 2 && (n[2] < 1 || n[2] > 31)) {
		return listDate{}, false
	}
	return listDate{fromYear: n[0], toYear: n[0], month: n[1], day: n[2]}, true
}

// contains reports whether the subject's date of birth d falls within the list date.
func (l listDate) contains(d time.Time) bool {
	y := d.Year()
	if y < l.fromYear || y > l.toYear {
		return false
	}
	if l.month != 0 && int(d.Month()) != l.month {
		return false
	}
	return l.day == 0 || d.Day() == l.day
}

// CompareDOB compares the subject's date of birth (zero: unknown) with an entry's list dates.
func CompareDOB(subject time.Time, listed []string) DOBMatch {
	if subject.IsZero() {
		return DOBUnknown
	}
	out := DOBUnknown
	for _, s := range listed {
		l, ok := parseListDate(s)
		if !ok {
			continue
		}
		switch {
		case l.contains(subject) && l.day != 0:
			return DOBAgree
		case l.contains(subject):
			out = DOBPartial
		case out == DOBUnknown:
			out = DOBDisagree
		}
	}
	return out
}

// adjust applies the date-of-birth agreement to a name score. A disagreeing date lowers a score
// at most to ReviewThreshold: it can stop a BLOCK, never clear a name a person should look at
// (the subject's date of birth is the applicant's word).
func adjust(score float64, m DOBMatch) float64 {
	switch m {
	case DOBAgree:
		score += DOBBoost
	case DOBDisagree:
		floor := 0.0
		if score >= ReviewThreshold {
			floor = ReviewThreshold
		}
		score = max(score-DOBPenalty, floor)
	}
	return min(1, max(0, score))
}

// ParseDOB parses a subject's date of birth, YYYY-MM-DD ("" is none). It must be a real date, not
// in the future of now, and not before 1900.
func ParseDOB(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil || d.Format(time.DateOnly) != s {
		return time.Time{}, fmt.Errorf("date of birth must be a date YYYY-MM-DD")
	}
	if d.Year() < 1900 || d.After(now) {
		return time.Time{}, fmt.Errorf("date of birth must be between 1900-01-01 and today")
	}
	return d, nil
}

var monthNames = map[string]int{
	"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6,
	"jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12,
}

// ofacDate parses one of OFAC's date forms ("14 Jun 1975", "Jun 1975", "1975") into the pieces
// of a list date.
func ofacDate(s string) (listDate, bool) {
	f := strings.Fields(strings.TrimSuffix(strings.TrimSpace(s), "."))
	var d listDate
	switch len(f) {
	case 1:
	case 2:
		m, ok := monthNames[strings.ToLower(strings.TrimSuffix(f[0], "."))]
		if !ok {
			return d, false
		}
		d.month = m
	case 3:
		day, err := strconv.Atoi(f[0])
		m, ok := monthNames[strings.ToLower(strings.TrimSuffix(f[1], "."))]
		if err != nil || !ok || day < 1 || day > 31 {
			return d, false
		}
		d.month, d.day = m, day
	default:
		return d, false
	}
	y, err := strconv.Atoi(f[len(f)-1])
	if err != nil || y < 1000 || y > 9999 {
		return d, false
	}
	d.fromYear, d.toYear = y, y
	return d, true
}

// format writes a list date in its stored form.
func (l listDate) format() string {
	switch {
	case l.fromYear != l.toYear:
		return fmt.Sprintf("%04d..%04d", l.fromYear, l.toYear)
	case l.day != 0:
		return fmt.Sprintf("%04d-%02d-%02d", l.fromYear, l.month, l.day)
	case l.month != 0:
		return fmt.Sprintf("%04d-%02d", l.fromYear, l.month)
	}
	return fmt.Sprintf("%04d", l.fromYear)
}

// ofacDOB turns the text after "DOB" in an OFAC remark ("14 Jun 1975", "circa 1955", "1962 to
// 1964", "01 Jan 1960 to 31 Dec 1962", "circa 1955-1958") into a stored list date; ok is false
// for text it cannot read, which is skipped (a list's free text is not a reason to refuse it).
func ofacDOB(s string) (string, bool) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "."))
	approx := false
	if rest, ok := strings.CutPrefix(s, "circa "); ok {
		approx, s = true, rest
	}
	var from, to listDate
	var ok bool
	if a, b, found := strings.Cut(s, " to "); found {
		var ok2 bool
		from, ok = ofacDate(a)
		to, ok2 = ofacDate(b)
		if !ok || !ok2 || to.toYear < from.fromYear {
			return "", false
		}
		from = listDate{fromYear: from.fromYear, toYear: to.toYear}
		if from.fromYear == from.toYear && from.month == 0 {
			// "01 Jan 1989 to 31 Dec 1989" is the year.
			return from.format(), true
		}
	} else if a, b, found := strings.Cut(s, "-"); found && len(a) == 4 && len(b) == 4 {
		f, err1 := strconv.Atoi(a)
		t, err2 := strconv.Atoi(b)
		if err1 != nil || err2 != nil || t < f {
			return "", false
		}
		from = listDate{fromYear: f, toYear: t}
	} else if from, ok = ofacDate(s); !ok {
		return "", false
	}
	if approx {
		from = listDate{fromYear: from.fromYear - 1, toYear: from.toYear + 1}
	}
	return from.format(), true
}
