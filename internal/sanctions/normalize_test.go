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
		"Ἀθῆναι":                  "αθηναι",
		"صدام حسين":               "صدام حسين",
	} {
		require.Equal(t, want, Normalize(in), "%q", in)
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
