package sanctions

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/personname"
)

// Titles at the start of a name are not matched, unless only one token would be left.
func TestMatchTokens(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][]string{
		"Mr. Usama bin Ladin": {"usama", "bin", "ladin"},
		"Dr Sheikh Usama":     {"sheikh", "usama"},
		"W/ro Almaz Bekele":   {"almaz", "bekele"},
		"ወ/ሮ አልማዝ በቀለ":        {"almaz", "bekele"},
		"Ato Abebe":           {"ato", "abebe"},
		"Mullah Omar":         {"mullah", "omar"},
		"Haji":                {"haji"},
		"Abebe Ato":           {"abebe", "ato"},
	} {
		require.Equal(t, want, matchTokens(personname.Normalize(in)), "%q", in)
	}
}

func TestKeyAndTokens(t *testing.T) {
	t.Parallel()
	require.Equal(t, Key("Usama bin Ladin"), Key("BIN LADIN, Usama"))
	require.Equal(t, "bekele abebe", personname.Normalize("Bekele Abebe"))
	require.Equal(t, "abebe bekele", Key("Bekele, ABEBE"))
	long := strings.Repeat("a ", 80)
	require.Len(t, Tokens(long), MaxPieces)
	require.Empty(t, Tokens(" - "))
}

// FuzzNormalize: any input gives valid UTF-8 made of lower-case letters, digits, combining
// spacing marks and single spaces, without leading or trailing space, and normalising again
// changes nothing.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"Osama bin Laden", "José", "አበበ በቀለ", "ß\u0301", "\xff\xfe", "ǅemal", "İstanbul", "ኧኸ", "ᾼ", "ﷺ", "K\u212a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := personname.Normalize(s)
		require.True(t, utf8.ValidString(n))
		require.Equal(t, n, personname.Normalize(n), "idempotent for %q", s)
		require.Equal(t, strings.TrimSpace(n), n)
		require.NotContains(t, n, "  ")
		require.Equal(t, strings.ToLower(n), n)
		require.LessOrEqual(t, len(Tokens(s)), MaxPieces)
		require.Equal(t, Key(n), Key(s))
	})
}

// FuzzNormalizeIgnorable: inserting any invisible character anywhere in a name (at a character
// boundary) never changes its normalised form, key, or whether it can be screened — the evasion
// of issue 21 — and normalising never panics and is idempotent.
func FuzzNormalizeIgnorable(f *testing.F) {
	for _, s := range []string{"Usama bin Ladin", "Usаma", "أسامة بن لادن", "አበበ በቀለ", "e\u0301", "Ｆｕｌｌ", "Вера"} {
		f.Add(s, uint16(3), uint8(0))
	}
	ignorables := []rune{0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x180B, 0x180E, 0x200B, 0x200C, 0x200D, 0x200E,
		0x202A, 0x202E, 0x2060, 0x2064, 0x2066, 0x206F, 0x3164, 0xFE00, 0xFE0F, 0xFEFF, 0xFFA0, 0x1BCA0, 0x1D173,
		0xE0001, 0xE0061, 0xE007F, 0xE0100, 0xE01EF, 0xE0FFF}
	f.Fuzz(func(t *testing.T, s string, at uint16, which uint8) {
		if !utf8.ValidString(s) || strings.ContainsFunc(s, personname.Ignorable) {
			return
		}
		n := personname.Normalize(s)
		require.Equal(t, n, personname.Normalize(n), "idempotent for %q", s)
		rs := []rune(s)
		i := int(at) % (len(rs) + 1)
		with := string(rs[:i]) + string(ignorables[int(which)%len(ignorables)]) + string(rs[i:])
		require.True(t, personname.Ignorable(ignorables[int(which)%len(ignorables)]))
		require.Equal(t, n, personname.Normalize(with), "%q vs %q", s, with)
		require.Equal(t, Key(s), Key(with))
		require.Equal(t, personname.Unscreenable(s), personname.Unscreenable(with))
	})
}
