package gateway

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// foldExtra maps letters that Unicode decomposition leaves alone but that people and banks
// write without their stroke or ligature.
var foldExtra = map[rune]string{
	'ß': "ss", 'ø': "o", 'ł': "l", 'đ': "d", 'ð': "d", 'þ': "th", 'æ': "ae", 'œ': "oe", 'ı': "i",
}

// NormalizeName is a holder name in the form the gateway compares: compatibility-decomposed,
// combining marks (diacritics) dropped, lower case, punctuation and symbols dropped, runs of
// whitespace collapsed to one space. "  José-María  O'Neill " → "josemaria oneill".
func NormalizeName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range norm.NFKD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
			continue
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space {
				b.WriteByte(' ')
				space = false
			}
			r = unicode.ToLower(r)
			if f, ok := foldExtra[r]; ok {
				b.WriteString(f)
			} else {
				b.WriteRune(r)
			}
		default:
			// Punctuation and symbols vanish without splitting a word: "O'Neill" = "ONeill".
		}
	}
	return b.String()
}

// NamesMatch reports whether two holder names are the same name written differently. Word
// boundaries are ignored too ("Mary-Jane" = "Mary Jane" = "MaryJane") but the letters and their
// order must agree, so a different person's name never matches. Empty names match nothing.
func NamesMatch(expected, resolved string) bool {
	a := strings.ReplaceAll(NormalizeName(expected), " ", "")
	b := strings.ReplaceAll(NormalizeName(resolved), " ", "")
	return a != "" && a == b
}
