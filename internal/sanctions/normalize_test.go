package sanctions

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Osama bin Laden":         "osama bin laden",
		"  BIN LADIN,   Usama ":   "bin ladin usama",
		"José":                    "jose",
		"JOSÉ  María Núñez":       "jose maria nunez",
		"Mladen Naletilić":        "mladen naletilic",
		"Straße Øster Łódź Þór":   "strasse oster lodz thor",
		"AL-QA'IDA":               "al qaida",
		"Sa‘id O’Brien":           "said obrien",
		"ʿAbd al-Raḥmān":          "abd al rahman",
		"Ｆｕｌｌｗｉｄｔｈ":               "fullwidth",
		"a.k.a. 'EL OJON'":        "a k a el ojon",
		"Kim\tJong\nUn":           "kim jong un",
		"Ⅻ ﬁle":                   "xii file",
		"":                        "",
		"!!! ... ---":             "",
		"abc\xffdef":              "abc def",
		"አበበ በቀለ":                 "abebe bekele",
		"ተስፋዬ ወርቁ":                "tesfaye werku",
		"ኃይሌ፡ገብረሥላሴ":              "hayle gebreslase",
		"እስክንድር":                  "eskndr",
		"ጠና ቀለመወርቅ":               "tena kelemewerk",
		"Abebe Bekele / አበበ በቀለ።": "abebe bekele abebe bekele",
		"Ahmed 2nd":               "ahmed 2nd",
		"Ἀθῆναι":                  "athinai",
		"Θεσσαλονίκη":             "thessaloniki",
		"صدام حسين":               "sadam hasin",
		"أسامة بن لادن":           "asama ban ladan",
		"علي حسن المجيد":          "ali hasan almajid",
		"مُحَمَّد":                "muhamad",
		"Усама бин Ладен":         "usama bin laden",
		// Issue 21: invisible characters, look-alike letters of other scripts.
		"Usama bin La\u2060din":       "usama bin ladin",
		"U\u200Bsa\u00ADma\uFEFF bin": "usama bin",
		"Usa\U000E0061ma\uFE0F":       "usama",
		"Usа\u200Dma":                 "usama",
		"Usaмa bіn Lаdin":             "usama bin ladin",
		"ɡɑmal":                       "gamal",
		"ｕｓａｍａ":                       "usama",
		"e\u2060\u0301":               "e",
	} {
		require.Equal(t, want, Normalize(in), "%q", in)
	}
}

// Names the screener cannot bring to Latin with confidence say why; names it can say nothing.
func TestUnscreenable(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{
		"Usama bin Ladin":    "",
		"Usаma bin Ladin":    "", // a Cyrillic а inside a Latin word folds
		"أسامة بن لادن":      "Arabic script",
		"አበበ በቀለ":            "",
		"Усама бин Ладен":    "",
		"山田太郎":               "Han script",
		"יוסף כהן":           "Hebrew script",
		"Usa\u05d0ma":        "mixes letters",
		"Abeበe":              "mixes letters",
		"Вера":               "",
		"Usama \u0939\u093f": "Devanagari",
	} {
		got := Unscreenable(name)
		if want == "" {
			require.Empty(t, got, "%q", name)
		} else {
			require.Contains(t, got, want, "%q", name)
		}
	}
}

// A word in Cyrillic or Greek letters that all look Latin is read both ways.
func TestLookalikeReading(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]string{
		"Вера Usama":  {"vera usama", "bepa usama"},
		"Ѕам РΑ":      {"dzam pa", "sam pa"}, // РΑ mixes Cyrillic and Greek: folded
		"Усама":       {"usama", "ycama"},
		"AΜΙR RАHΙΜІ": {"amir rahimi", "amir rahimi"},
		"Usama Ladin": {"usama ladin", "usama ladin"},
	} {
		require.Equal(t, want[0], Normalize(in), "%q", in)
		require.Equal(t, want[1], LookalikeReading(in), "%q", in)
	}
}

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
		require.Equal(t, want, matchTokens(Normalize(in)), "%q", in)
	}
}

func TestKeyAndTokens(t *testing.T) {
	t.Parallel()
	require.Equal(t, Key("Usama bin Ladin"), Key("BIN LADIN, Usama"))
	require.Equal(t, "bekele abebe", Normalize("Bekele Abebe"))
	require.Equal(t, "abebe bekele", Key("Bekele, ABEBE"))
	long := strings.Repeat("a ", 40)
	require.Len(t, Tokens(long), MaxTokens)
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
		n := Normalize(s)
		require.True(t, utf8.ValidString(n))
		require.Equal(t, n, Normalize(n), "idempotent for %q", s)
		require.Equal(t, strings.TrimSpace(n), n)
		require.NotContains(t, n, "  ")
		require.Equal(t, strings.ToLower(n), n)
		require.LessOrEqual(t, len(Tokens(s)), MaxTokens)
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
		if !utf8.ValidString(s) || strings.ContainsFunc(s, Ignorable) {
			return
		}
		n := Normalize(s)
		require.Equal(t, n, Normalize(n), "idempotent for %q", s)
		rs := []rune(s)
		i := int(at) % (len(rs) + 1)
		with := string(rs[:i]) + string(ignorables[int(which)%len(ignorables)]) + string(rs[i:])
		require.True(t, Ignorable(ignorables[int(which)%len(ignorables)]))
		require.Equal(t, n, Normalize(with), "%q vs %q", s, with)
		require.Equal(t, Key(s), Key(with))
		require.Equal(t, Unscreenable(s), Unscreenable(with))
	})
}
