package money

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// FormatETB renders an amount for statements and payslips: birr with thousands separated by
// commas, always two decimals, and the currency code after one space: 123456 → "1,234.56 ETB",
// 5 → "0.05 ETB", -150 → "-1.50 ETB" (a leading minus, not parentheses, so it survives a copy into
// a spreadsheet). Every int64 has a rendering, math.MinInt64 included. ParseETB reads it back.
func FormatETB(santim int64) string {
	m := magnitude(santim)
	whole := strconv.FormatUint(m/uint64(SantimPerBirr), 10)
	var b strings.Builder
	b.Grow(len(whole)*4/3 + 8)
	if santim < 0 {
		b.WriteByte('-')
	}
	for i, c := range []byte(whole) {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(c)
	}
	fmt.Fprintf(&b, ".%02d %s", m%uint64(SantimPerBirr), Currency)
	return b.String()
}

// ParseETB reads exactly what FormatETB writes and nothing else (a statement or payslip of ours
// read back): optional '-', the birr grouped by commas in threes with no leading zero, a point,
// two digits, " ETB". Other text is ErrSyntax; an amount outside int64 is ErrOverflow. "-0.00 ETB"
// is refused: FormatETB never writes it.
func ParseETB(s string) (int64, error) {
	num, ok := strings.CutSuffix(s, " "+Currency)
	if !ok {
		return 0, fmt.Errorf("%w: %q does not end in %q", ErrSyntax, s, " "+Currency)
	}
	neg := strings.HasPrefix(num, "-")
	if neg {
		num = num[1:]
	}
	whole, frac, ok := strings.Cut(num, ".")
	if !ok || len(frac) != 2 || !digits(frac) || !grouped(whole) {
		return 0, fmt.Errorf("%w: %q is not of the form 1,234.56 ETB", ErrSyntax, s)
	}
	return fromDecimal(s, strings.ReplaceAll(whole, ",", ""), frac, neg)
}

// FormatMajor renders an amount as plain decimal birr with two decimals, the form of files
// (ISO 20022 camt.053, CSV): 123456 → "1234.56", -5 → "-0.05". ParseMajor reads it back.
func FormatMajor(santim int64) string {
	m := magnitude(santim)
	sign := ""
	if santim < 0 {
		sign = "-"
	}
	return fmt.Sprintf("%s%d.%02d", sign, m/uint64(SantimPerBirr), m%uint64(SantimPerBirr))
}

// ParseMajor reads a decimal amount of birr to santim without floating point: an optional '-',
// digits (leading zeros allowed, as ISO 20022 decimals allow them), and optionally a point and one
// or two digits: "1234.56", "10", "0.5", "-3.07". No '+', exponent, space or separator; no third
// decimal (the birr has two). Other text is ErrSyntax; an amount outside int64 is ErrOverflow.
// Negative zero is refused. ParseMajor(FormatMajor(v)) == v for every int64.
func ParseMajor(s string) (int64, error) {
	num := s
	neg := strings.HasPrefix(num, "-")
	if neg {
		num = num[1:]
	}
	whole, frac, hasPoint := strings.Cut(num, ".")
	if whole == "" || !digits(whole) || (hasPoint && (frac == "" || len(frac) > 2 || !digits(frac))) {
		return 0, fmt.Errorf("%w: %q is not a decimal amount with at most two decimals", ErrSyntax, s)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	return fromDecimal(s, whole, frac, neg)
}

// fromDecimal combines checked digit strings (whole non-empty, frac two digits) into santim.
func fromDecimal(s, whole, frac string, neg bool) (int64, error) {
	whole = strings.TrimLeft(whole, "0")
	limit := uint64(math.MaxInt64)
	if neg {
		limit++ // 2^63: MinInt64 has a rendering too
	}
	var m uint64
	for _, c := range []byte(whole + frac) {
		d := uint64(c - '0')
		if m > (limit-d)/10 {
			return 0, fmt.Errorf("%w: %q", ErrOverflow, s)
		}
		m = m*10 + d
	}
	if neg && m == 0 {
		return 0, fmt.Errorf("%w: %q is a negative zero", ErrSyntax, s)
	}
	v, _ := signed(m, neg) // m ≤ limit
	return v, nil
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// grouped reports whether s is a natural number written with thousands separators as FormatETB
// writes it: "0", "7", "1,234", "12,345,678"; not "01", "1234", ",123", "1,23".
func grouped(s string) bool {
	groups := strings.Split(s, ",")
	first := groups[0]
	if len(first) == 0 || len(first) > 3 || !digits(first) || (first[0] == '0' && (len(first) > 1 || len(groups) > 1)) {
		return false
	}
	for _, g := range groups[1:] {
		if len(g) != 3 || !digits(g) {
			return false
		}
	}
	return true
}
