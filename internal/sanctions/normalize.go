package sanctions

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxTokens bounds how many tokens of a name take part in matching: names have a handful, and the
// alignment is quadratic in them.
const MaxTokens = 12

// Normalize is the form every name is compared in: Ethiopic (Ge'ez) syllables transliterated to
// Latin, lower case, compatibility-decomposed with diacritics dropped (José → jose), a few letters
// that do not decompose spelled out (ß → ss, ø → o, ł → l, …), apostrophes dropped inside a word
// (Sa'id → said), every other non-letter, non-digit a separator, and single spaces between
// tokens. Token order is kept (Key sorts them). Invalid UTF-8 is a separator. Normalize is
// idempotent.
func Normalize(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	space := true // suppress leading and repeated spaces
	sep := func() {
		if !space {
			b.WriteByte(' ')
			space = true
		}
	}
	emit := func(s string) {
		b.WriteString(s)
		space = false
	}
	// Ethiopic first: its syllables do not decompose, and transliteration yields plain ASCII.
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		i += size
		if r == utf8.RuneError && size <= 1 {
			sep()
			continue
		}
		if lat, ok := ethiopic(r); ok {
			if lat == " " {
				sep()
			} else {
				emit(lat)
			}
			continue
		}
		// Lower-case, then decompose: a lower-case letter may decompose where its capital
		// did not, and decomposing first could leave a capital's marks behind.
		for _, d := range norm.NFKD.String(string(unicode.ToLower(r))) {
			switch {
			case unicode.Is(unicode.Mn, d) || unicode.Is(unicode.Me, d):
				// A diacritic: dropped.
			case isApostrophe(d):
				// Inside a word it joins (O'Brien → obrien); elsewhere nothing.
			case unicode.IsLetter(d) || unicode.IsDigit(d) || unicode.Is(unicode.Mc, d):
				if f, ok := letterFold[d]; ok {
					emit(f)
				} else {
					emit(string(unicode.ToLower(d)))
				}
			default:
				sep()
			}
		}
	}
	return strings.TrimSuffix(b.String(), " ")
}

// Tokens are the normalised name's words, at most MaxTokens of them.
func Tokens(name string) []string {
	t := strings.Fields(Normalize(name))
	if len(t) > MaxTokens {
		t = t[:MaxTokens]
	}
	return t
}

// Key is the order-independent form of a name: its normalised tokens sorted ("BIN LADIN, Usama"
// and "Usama bin Ladin" share one).
func Key(name string) string {
	t := strings.Fields(Normalize(name))
	slices.Sort(t)
	return strings.Join(t, " ")
}

func isApostrophe(r rune) bool {
	switch r {
	case '\'', '`', '\u00B4', '\u2018', '\u2019', '\u02BB', '\u02BC', '\u02BD', '\u02BE', '\u02BF', '\u02C8':
		return true
	}
	return false
}

// letterFold spells out lower-case letters that have no canonical decomposition to Latin letters.
var letterFold = map[rune]string{
	'ß': "ss", 'æ': "ae", 'œ': "oe", 'ø': "o", 'đ': "d", 'ð': "d", 'ł': "l", 'þ': "th",
	'ı': "i", 'ħ': "h", 'ŧ': "t", 'ŀ': "l", 'ĸ': "k", 'ŋ': "ng", 'ƒ': "f", 'ɨ': "i", 'ʉ': "u",
	'ǝ': "e", 'ə': "e", 'ɛ': "e", 'ɔ': "o",
}
