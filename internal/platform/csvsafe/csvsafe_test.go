package csvsafe_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/csvsafe"
)

func TestNeutralize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"Abebe", "Abebe"},
		{"2500000", "2500000"},
		{"a=b", "a=b"},
		{" =1+1", " =1+1"}, // a leading space: spreadsheets show it as text already
		{"=1+1", "'=1+1"},
		{"=HYPERLINK(\"http://x.example\",\"click\")", "'=HYPERLINK(\"http://x.example\",\"click\")"},
		{"+251911234567", "'+251911234567"},
		{"-5", "'-5"},
		{"-1+cmd|' /C calc'!A0", "'-1+cmd|' /C calc'!A0"},
		{"@SUM(A1:A9)", "'@SUM(A1:A9)"},
		{"\t=1+1", "'\t=1+1"},
		{"\r=1+1", "'\r=1+1"},
		{"'=1", "'=1"}, // already text
		{"አበበ", "አበበ"},
	} {
		require.Equal(t, tc.want, csvsafe.Neutralize(tc.in), "%q", tc.in)
	}
}

func TestRowLeavesTheRecordAlone(t *testing.T) {
	t.Parallel()
	in := []string{"=1", "ok", "@x"}
	out := csvsafe.Row(in)
	require.Equal(t, []string{"'=1", "ok", "'@x"}, out)
	require.Equal(t, []string{"=1", "ok", "@x"}, in)
}

// FuzzNeutralize: whatever the cell, the neutralised one never starts with a formula trigger,
// and differs from the original only by one leading quote.
func FuzzNeutralize(f *testing.F) {
	for _, s := range []string{"", "=1+1", "+1", "-1", "@a", "\t=1", "\r=1", "plain", "\"=1\"", "a,b\nc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cell string) {
		out := csvsafe.Neutralize(cell)
		if out != "" {
			require.NotContains(t, "=+-@\t\r", out[:1], "%q starts with a formula trigger", out)
		}
		require.True(t, out == cell || out == "'"+cell, "%q → %q", cell, out)
		require.Equal(t, out, csvsafe.Neutralize(out), "neutralising twice changes nothing")
	})
}
