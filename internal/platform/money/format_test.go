package money

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFormatETB(t *testing.T) {
	t.Parallel()
	for v, want := range map[int64]string{
		0:               "0.00 ETB",
		5:               "0.05 ETB",
		-5:              "-0.05 ETB",
		100:             "1.00 ETB",
		99_999:          "999.99 ETB",
		100_000:         "1,000.00 ETB",
		123_456:         "1,234.56 ETB",
		-150:            "-1.50 ETB",
		-123_456_789:    "-1,234,567.89 ETB",
		MaxAmountSantim: "10,000,000,000.00 ETB",
		math.MaxInt64:   "92,233,720,368,547,758.07 ETB",
		math.MinInt64:   "-92,233,720,368,547,758.08 ETB",
	} {
		require.Equal(t, want, FormatETB(v), "%d", v)
		back, err := ParseETB(want)
		require.NoError(t, err, want)
		require.Equal(t, v, back, want)
	}
}

func TestParseETBRefuses(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"", "ETB", " ETB", "1.00", "1.00ETB", "1.00  ETB", "1.00 etb", "1.00 USD", "ETB 1.00",
		"1 ETB", "1.0 ETB", "1.000 ETB", ".50 ETB", "1. ETB", "+1.00 ETB", "--1.00 ETB", "- 1.00 ETB",
		"1234.56 ETB", "1,23.45 ETB", "1,2345.67 ETB", ",123.45 ETB", "1,,234.56 ETB", "1,234,56 ETB",
		"01.00 ETB", "0,123.00 ETB", "1e3.00 ETB", "-0.00 ETB", "１.00 ETB", "1.0\u0660 ETB",
		"1,234.56 ETB\n", " 1,234.56 ETB",
	} {
		_, err := ParseETB(s)
		require.ErrorIs(t, err, ErrSyntax, "%q", s)
	}
	for _, s := range []string{"92,233,720,368,547,758.08 ETB", "-92,233,720,368,547,758.09 ETB", "100,000,000,000,000,000.00 ETB"} {
		_, err := ParseETB(s)
		require.ErrorIs(t, err, ErrOverflow, "%q", s)
	}
}

func TestMajor(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"0.01": 1, "1": 100, "1.5": 150, "1.05": 105, "1234.56": 123456, "0012.30": 1230, "-3.07": -307,
		"92233720368547758.07": math.MaxInt64, "-92233720368547758.08": math.MinInt64, "0": 0, "0.00": 0,
	} {
		got, err := ParseMajor(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", ".", "-", "1.", ".1", "1.234", "1,5", "+1", "1e2", " 1", "1 ", "１", "--1", "-0", "-0.00", "1.-5"} {
		_, err := ParseMajor(in)
		require.ErrorIs(t, err, ErrSyntax, "%q", in)
	}
	for _, in := range []string{"92233720368547758.08", "-92233720368547758.09", "99999999999999999999"} {
		_, err := ParseMajor(in)
		require.ErrorIs(t, err, ErrOverflow, "%q", in)
	}
	for v, want := range map[int64]string{0: "0.00", 1: "0.01", 105: "1.05", 123456: "1234.56", -150: "-1.50",
		math.MaxInt64: "92233720368547758.07", math.MinInt64: "-92233720368547758.08"} {
		require.Equal(t, want, FormatMajor(v))
	}
}

// Every int64 survives both renderings, and the two renderings say the same number.
func TestFormatsRoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(14, 0x5eed))
	check := func(v int64) {
		s := FormatETB(v)
		back, err := ParseETB(s)
		require.NoError(t, err, s)
		require.Equal(t, v, back, s)
		m := FormatMajor(v)
		back, err = ParseMajor(m)
		require.NoError(t, err, m)
		require.Equal(t, v, back, m)
		require.Equal(t, m+" "+Currency, strings.ReplaceAll(s, ",", ""))
	}
	for _, v := range edges {
		check(v)
	}
	for range draws() / 10 {
		check(anyInt64(r))
	}
}

// majorRat is the reference reading of a decimal string: big.Rat's, in santim.
func majorRat(t *testing.T, s string) *big.Rat {
	x, ok := new(big.Rat).SetString(s)
	require.True(t, ok, s)
	return x.Mul(x, big.NewRat(SantimPerBirr, 1))
}

// FuzzETBRoundTrip: every int64 renders, and reads back to itself.
func FuzzETBRoundTrip(f *testing.F) {
	for _, v := range edges {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v int64) {
		back, err := ParseETB(FormatETB(v))
		require.NoError(t, err)
		require.Equal(t, v, back)
		back, err = ParseMajor(FormatMajor(v))
		require.NoError(t, err)
		require.Equal(t, v, back)
	})
}

// FuzzParseETB: no text panics; text that parses is exactly the rendering of its value (so the
// format is one-to-one); text that does not is ErrSyntax or ErrOverflow.
func FuzzParseETB(f *testing.F) {
	for _, s := range []string{"1,234.56 ETB", "-0.05 ETB", "0.00 ETB", "92,233,720,368,547,758.07 ETB", "1234.56 ETB", "-0.00 ETB", "01.00 ETB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseETB(s)
		if err != nil {
			require.True(t, isParseError(err), "%q: %v", s, err)
			return
		}
		require.Equal(t, s, FormatETB(v))
	})
}

// FuzzParseMajor: no text panics; text that parses has the value big.Rat reads in it, and
// renders back to the same value.
func FuzzParseMajor(f *testing.F) {
	for _, s := range []string{"0.01", "1234.56", "1.5", "0012.30", "-3.07", "92233720368547758.07", "-92233720368547758.08", "1e3", "-0", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseMajor(s)
		if err != nil {
			require.True(t, isParseError(err), "%q: %v", s, err)
			return
		}
		require.Zero(t, majorRat(t, s).Cmp(new(big.Rat).SetInt64(v)), "%q → %d", s, v)
		back, err := ParseMajor(FormatMajor(v))
		require.NoError(t, err)
		require.Equal(t, v, back)
	})
}

func isParseError(err error) bool {
	return errors.Is(err, ErrSyntax) || errors.Is(err, ErrOverflow)
}
