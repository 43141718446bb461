package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNormalizeName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"Abebe Kebede", "abebe kebede"},
		{"  ABEBE   kebede\t", "abebe kebede"},
		{"José-María O'Neill", "josemaria oneill"},
		{"Zoë Ångström", "zoe angstrom"},
		{"Straße Øster", "strasse oster"},
		{"አበበ ከበደ", "አበበ ከበደ"},
		{"ＡＢＥＢＥ", "abebe"}, // full-width letters fold by compatibility decomposition
		{"...", ""},
	} {
		require.Equal(t, tc.want, NormalizeName(tc.in), "NormalizeName(%q)", tc.in)
	}
}

func TestNamesMatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"Abebe Kebede", "ABEBE KEBEDE", true},
		{"abebe  kebede.", "Abebe Kebede", true},
		{"Mary-Jane Smith", "Mary Jane Smith", true},
		{"Sélam Tesfaye", "Selam Tesfaye", true},
		{"Abebe Kebede", "Abebe Kebede Tesfaye", false},
		{"Abebe Kebede", "Kebede Abebe", false},
		{"Abebe Kebede", "Almaz Kebede", false},
		{"", "", false},
		{"!!", "??", false},
	} {
		require.Equal(t, tc.want, NamesMatch(tc.a, tc.b), "NamesMatch(%q, %q)", tc.a, tc.b)
	}
}
