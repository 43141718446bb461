package sanctions

import (
	"slices"
	"strings"

	"github.com/wagerail/wagerail/internal/platform/personname"
)

// NormalizerVersion names the matching rules: those of the name normaliser
// (internal/platform/personname) that screening compares names with, and those of the scorer
// (ScoringRevision). Each list version records the version its names were normalised with, and
// each check the version it was screened with: a change to the rules that could change a match
// raises it, so that screening refuses lists normalised by older rules (Rescreen renormalises
// them) and the gate treats checks made under older rules as stale until they are screened
// again. Both parts only ever rise, so their sum does too.
const NormalizerVersion = personname.Version + ScoringRevision

// ScoringRevision counts the changes to how names are scored that could turn a CLEAR into a
// match (the normaliser's rules unchanged):
//
//   - 1: a name whose words are broken up (Gir-ma Wol.de, G i r m a) is read with its pieces
//     joined again (rejoin); a check made before may have cleared one.
//   - 2: extra names around a whole listed name, and a disagreeing date of birth, no longer
//     lower a match below review (alignScore, adjust); the Arabic particles are read in one
//     spelling each (particles: ibn Ladin is bin Ladin, az-Zawahiri al-Zawahiri).
const ScoringRevision = 2

// MaxTokens bounds how many tokens of a name take part in aligning it with a listed name: names
// have a handful, and the alignment is quadratic in them.
const MaxTokens = 12

// MaxPieces bounds how many tokens of a name are read before they are aligned: a name broken up
// to slip past screening has more pieces than words (one per letter when its letters are spaced
// out, G i r m a), and the scorer joins them into words again (rejoin) before it takes
// MaxTokens of them.
const MaxPieces = 64

// Tokens are the normalised name's words, at most MaxPieces of them.
func Tokens(name string) []string {
	t := strings.Fields(personname.Normalize(name))
	if len(t) > MaxPieces {
		t = t[:MaxPieces]
	}
	return t
}

// matchTokens are the tokens of a normalised name as they are scored: at most MaxPieces, without
// the titles and honorifics it starts with (Mr, Dr, Sheikh, Haji, Ato, W/ro, …), which are not
// part of anyone's name and would otherwise count as unpaired tokens. A title is kept when only
// one token would be left: "Mullah Omar" stripped to "omar" would match every Omar in full,
// where one shared given name is otherwise capped below REVIEW. Both the subject's and the
// listed names are read this way, so a title on a list (OFAC writes some) and one on a subject
// cancel out.
func matchTokens(normalized string) []string {
	t := strings.Fields(normalized)
	for {
		n := titleAt(t)
		if n == 0 || len(t)-n < 2 {
			break
		}
		t = t[n:]
	}
	if len(t) > MaxPieces {
		t = t[:MaxPieces]
	}
	for i, tok := range t {
		if p, ok := particles[tok]; ok {
			t[i] = p
		}
	}
	return t
}

// particles are the spellings of the Arabic name particles, each read as one form: ibn (son
// of) is bin or bn or ben, and the article al- is el- or ul- or, before a "sun letter", written as
// the letter it assimilates to (az-Zawahiri, ad-Din, ash-Shabab, ar-Rahman). Two- and
// three-letter tokens this far apart are too short for the similarity measure to pair, so a
// listed "bin Ladin" written "ibn Ladin" would leave two unpaired tokens.
var particles = map[string]string{
	"bin": "bin", "ibn": "bin", "bn": "bin", "ben": "bin", "ebn": "bin", "bint": "bint", "binti": "bint",
	"al": "al", "el": "al", "ul": "al", "az": "al", "ad": "al", "as": "al", "ash": "al", "at": "al", "an": "al",
	"ar": "al", "ath": "al", "adh": "al", "ats": "al",
}

// titles are honorifics and titles in their normalised form; a title of two tokens (W/ro is
// "w ro") is written with a space.
var titles = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "miss": true, "mx": true, "dr": true, "doctor": true, "prof": true,
	"professor": true, "sir": true, "madam": true, "eng": true, "engr": true, "engineer": true,
	"sheikh": true, "sheik": true, "shaikh": true, "shaykh": true, "shaik": true,
	"haji": true, "hajji": true, "hadji": true, "hajj": true, "alhaj": true, "alhaji": true, "alhajj": true,
	"mullah": true, "mulla": true, "maulana": true, "mawlana": true, "maulvi": true, "mawlawi": true,
	// Amharic: Ato (Mr), W/ro (Mrs), W/t or W/rt (Miss), Dr in Latin letters and in Ge'ez
	// (አቶ, ወ/ሮ, ወ/ሪት, ዶ/ር as Normalize transliterates them).
	"ato": true, "w ro": true, "wro": true, "woizero": true, "weizero": true, "weyzero": true, "w t": true,
	"w rt": true, "wt": true, "weyzerit": true, "woizerit": true, "we ro": true, "we rit": true, "do r": true,
}

// titleAt is how many tokens the title at the start of t takes, 0 when t does not start with one.
func titleAt(t []string) int {
	if len(t) == 0 {
		return 0
	}
	if len(t) > 1 && titles[t[0]+" "+t[1]] {
		return 2
	}
	if titles[t[0]] {
		return 1
	}
	return 0
}

// Key is the order-independent form of a name: its normalised tokens sorted ("BIN LADIN, Usama"
// and "Usama bin Ladin" share one).
func Key(name string) string {
	t := strings.Fields(personname.Normalize(name))
	slices.Sort(t)
	return strings.Join(t, " ")
}
