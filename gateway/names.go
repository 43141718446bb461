package gateway

import (
	"strings"

	"github.com/wagerail/wagerail/internal/platform/personname"
)

// NamesMatch reports whether two holder names are the same name written differently. Both are
// brought to the one normalised form of names (internal/platform/personname, the form sanctions
// screening compares in: case, diacritics, punctuation and invisible characters folded away,
// Ethiopic, Arabic, Cyrillic and Greek transliterated, so "አበበ ከበደ" matches "Abebe Kebede").
// Word boundaries are ignored too ("Mary-Jane" = "Mary Jane" = "MaryJane") but the letters and
// their order must agree, so a different person's name never matches. Empty names match nothing.
func NamesMatch(expected, resolved string) bool {
	a := strings.ReplaceAll(personname.Normalize(expected), " ", "")
	b := strings.ReplaceAll(personname.Normalize(resolved), " ", "")
	return a != "" && a == b
}
