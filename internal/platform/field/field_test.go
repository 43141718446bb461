package field

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestKinds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		check func(string) error
		ok    []string
		bad   []string
	}{
		{"identifier", func(v string) error { return Identifier("id", v, 0) },
			[]string{"t1", "1000000000101", "partner-bank:sandbox:1", "a.b_c-d", strings.Repeat("x", MaxIdentifier)},
			[]string{"", "a b", "a\x00b", "ü", "a/b", "a\nb", strings.Repeat("x", MaxIdentifier+1), "x\xff"}},
		{"reference", func(v string) error { return Reference("ref", v, 0) },
			[]string{"ewa-1", "ref/with:punct#1", "amharic-ሰላም", strings.Repeat("r", MaxReference)},
			[]string{"", "a b", "a\tb", "a\x00", "\x7f", "\u0085x", "a\u202eb", "\xc3", "\ufffd", "a\u00a0b", strings.Repeat("r", MaxReference+1),
				// Noncharacters: encoding/xml writes them as U+FFFD (a camt.053 its reader refuses).
				"R\uFFFF1", "R\uFFFE", "\uFDD0", "x\uFDEF", "x\U0001FFFE", "x\U0010FFFF"}},
		{"name", func(v string) error { return Name("holder", v) },
			[]string{"Abebe Kebede", "Ábébé O'Neil-Tesfaye", "አበበ በቀለ",
				// ZWNJ and ZWJ where Persian and Devanagari spelling needs them.
				"می\u200cرود", "क्\u200dष"},
			[]string{"", "   ", "Abebe\x00", "Abebe\nKebede", "evil\u202Egnp.exe", "bad\xff", strings.Repeat("n", MaxName+1),
				// Issue 21: invisible characters that slipped a listed name past screening.
				"Usama bin La\u2060din", "Us\u200Bama", "Lad\u00ADin", "\uFEFFUsama", "Usama\uFE0F", "Usa\U000E0061ma",
				"Usa\u180Ema", "Usa\u034Fma", "\u3164", "Usa\u200Dma", "Usa\u200Cma", "\u200DUsama", "Usama\u200C",
				"\u0645\u200C", "Usa\u2061ma", "Abebe\uFFFE"}},
		{"text", func(v string) error { return Text("reason", v, 0) },
			[]string{"", "line one\nline two\ttabbed", "ሰላም"},
			[]string{"nul\x00", "bell\a", "bad\xe2\x82", strings.Repeat("t", MaxText+1), "non\uFFFFchar", "non\uFDD5char"}},
		{"email", func(v string) error { return Email("email", v) },
			[]string{"a@b.et", "first.last+tag@mail.example.com", strings.Repeat("l", 64) + "@x.et"},
			[]string{"", "a", "@b.et", "a@", "a@b", "a@@b.et", "a@b@c.et", "a b@c.et", "a@b..et", "a@.b.et", "a@b.et.",
				"\"a\"@b.et", "a@b.et,c@d.et", "<a@b.et>", "a\x00@b.et", "ü@b.et", "a@b.et\n", strings.Repeat("l", 65) + "@x.et",
				"a@" + strings.Repeat("d", 250) + ".et"}},
		{"phone", func(v string) error { return Phone("phone", v) },
			[]string{"+251911234567", "+12025550123", "+1234567"},
			[]string{"", "251911234567", "+0911234567", "+25191123456789012", "+251 911", "+251-911-234567", "+123456", "+25191123456\x00"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range tc.ok {
				require.NoError(t, tc.check(v), "%q", v)
			}
			for _, v := range tc.bad {
				err := tc.check(v)
				require.Error(t, err, "%q", v)
				var fe *Error
				require.ErrorAs(t, err, &fe)
				require.NotContains(t, fe.Error(), v[:min(len(v), 3)]+"\x00", "never echoes the value")
			}
		})
	}
}

// TestNoncharacter: exactly the 66 noncharacters, and the code points around them are characters.
func TestNoncharacter(t *testing.T) {
	t.Parallel()
	n := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if Noncharacter(r) {
			n++
		}
	}
	require.Equal(t, 66, n)
	for _, r := range []rune{0xFDCF, 0xFDF0, 0xFFFC, 0x1FFFD, 0x20000, 'R', 0x1200} {
		require.False(t, Noncharacter(r), "%U", r)
		require.NoError(t, Reference("ref", "a"+string(r)+"b", 0), "%U", r)
	}
	for _, r := range []rune{0xFDD0, 0xFDEF, 0xFFFE, 0xFFFF, 0x1FFFE, 0x10FFFF} {
		require.True(t, Noncharacter(r), "%U", r)
	}
}

func TestTighterBounds(t *testing.T) {
	t.Parallel()
	require.NoError(t, Identifier("account", strings.Repeat("1", 64), 64))
	require.Error(t, Identifier("account", strings.Repeat("1", 65), 64))
	require.Error(t, Reference("ref", strings.Repeat("1", 36), 35))
	require.Error(t, Text("msg", strings.Repeat("1", 101), 100))
	// A caller can never loosen a bound.
	require.Error(t, Identifier("account", strings.Repeat("1", MaxIdentifier+1), 1<<20))
}

// FuzzKinds: whatever a kind accepts is valid UTF-8 without NUL or other C0 controls and within
// its bound, so it can go into Postgres text and a unique index as it is.
func FuzzKinds(f *testing.F) {
	for _, s := range []string{"t1", "a b", "\x00", "\xff", "ሰላም", "\u202e", strings.Repeat("x", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		check := func(err error, max int, allowC0 string) {
			if err != nil {
				return
			}
			if !utf8.ValidString(v) || len(v) > max {
				t.Fatalf("accepted %q", v)
			}
			for _, r := range v {
				if r < 0x20 && !strings.ContainsRune(allowC0, r) || r == 0x7f {
					t.Fatalf("accepted control %q in %q", r, v)
				}
				if Noncharacter(r) {
					t.Fatalf("accepted noncharacter %U in %q", r, v)
				}
			}
		}
		check(Identifier("f", v, 0), MaxIdentifier, "")
		check(Reference("f", v, 0), MaxReference, "")
		check(Name("f", v), MaxName, "")
		if Name("f", v) == nil {
			for _, r := range v {
				if unicode.Is(unicode.Cf, r) && r != 0x200C && r != 0x200D || unicode.Is(unicode.Variation_Selector, r) {
					t.Fatalf("name accepted invisible %U in %q", r, v)
				}
			}
		}
		check(Text("f", v, 0), MaxText, "\n\t\r")
		check(Email("f", v), MaxEmail, "")
		check(Phone("f", v), 16, "")
	})
}
