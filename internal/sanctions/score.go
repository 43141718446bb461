package sanctions

import (
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Outcome is a screening's verdict.
type Outcome string

const (
	// Clear: no list name is close enough to the subject's.
	Clear Outcome = "CLEAR"
	// Review: a possible match; a person decides (the gate stays closed until they clear it).
	Review Outcome = "REVIEW"
	// Block: a match; money must not move to or for this subject.
	Block Outcome = "BLOCK"
)

// rank orders outcomes from the mildest.
func (o Outcome) rank() int {
	switch o {
	case Block:
		return 2
	case Review:
		return 1
	}
	return 0
}

// Thresholds on the final score (name similarity adjusted by date of birth), from 0 to 1.
//
// They were set against the real OFAC and UN lists (the integration test screens listed names
// with spelling variants, aliases and reordered tokens, and unrelated names): an exact or
// near-exact name (transliteration variants such as Usama/Osama, Ladin/Laden within a full name)
// blocks; a partial name (a listed name inside a longer one, two of three tokens) or a looser
// spelling goes to review; a single shared given name, or names that merely share letters, are
// clear. BLOCK is high because it is final: the application never overrides one (a REVIEW a
// person can clear), so it is kept for names that are the listed name in all but spelling.
const (
	BlockThreshold  = 0.95
	ReviewThreshold = 0.85
	// DOBBoost is added when the list gives the subject's exact date of birth (DOBAgree);
	// DOBPenalty is taken off when both sides have one and they disagree (DOBDisagree). A
	// year or range that merely contains it (DOBPartial) changes nothing. The penalty can turn
	// a BLOCK into a REVIEW but never a REVIEW CLEAR (adjust): list dates of birth are often
	// approximate or wrong, and the subject's is what the applicant typed, so a person looks.
	DOBBoost   = 0.03
	DOBPenalty = 0.10
	// tokenMatchFloor: token pairs less similar than this do not count as matched at all (two
	// unrelated words of similar length would otherwise earn partial credit).
	tokenMatchFloor = 0.75
	// A token of the longer name that pairs with nothing takes extraTokenPenalty off the score,
	// plus extraWeightPenalty times the share of the longer name's length left unpaired, at
	// most maxExtraPenalty in all: "Abebe Bekele" within "Abebe Bekele Tesfaye" is a strong
	// partial match (REVIEW), not an exact one. When the longer name is the subject's and holds
	// every token of the listed one, the penalty stops at ReviewThreshold (alignScore).
	extraTokenPenalty  = 0.04
	extraWeightPenalty = 0.10
	maxExtraPenalty    = 0.20
	// singleTokenCap bounds the score when one side is a single token and the other has more: a
	// lone given name or surname shared with a listed name is not a hit.
	singleTokenCap = 0.84
	// vowelFoldWeight scales the similarity of two tokens compared with every vowel made the same
	// (Usama/Osama, Ladin/Laden, Muhammad/Mohammed): the commonest difference between two
	// transliterations of one name, counted as slightly less than the same spelling.
	vowelFoldWeight = 0.97
	// squeezeWeight scales the similarity of two tokens compared with doubled letters and vowel
	// pairs written once as well (see tokenSimilarity): lower than vowelFoldWeight, so that a
	// name whose every token differs this way is a REVIEW (a person looks), not a BLOCK.
	squeezeWeight = 0.94
	// rejoinWeight scales the score of a name read with adjacent pieces joined into words
	// (rejoin): a name that is a listed one but for where its words break (Gir-ma Wol.de, G i r
	// m a) is a REVIEW, a BLOCK only with the listed date of birth.
	rejoinWeight = 0.94
	// minLengthRatio and prefixLengthRatio: see tokenSimilarity.
	minLengthRatio    = 0.6
	prefixLengthRatio = 0.75
)

// Decide turns a final score into an outcome; weak is a match on a low-quality alias, which can
// raise a REVIEW but never a BLOCK.
func Decide(score float64, weak bool) Outcome {
	switch {
	case score >= BlockThreshold && !weak:
		return Block
	case score >= ReviewThreshold:
		return Review
	}
	return Clear
}

// JaroWinkler is the Jaro–Winkler similarity of a and b (compared by rune), from 0 (nothing in
// common) to 1 (equal): the Jaro similarity, raised for a common prefix of up to four runes with
// scaling factor 0.1 when the Jaro similarity is above 0.7 (Winkler's boost threshold).
func JaroWinkler(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	j := jaro(ra, rb)
	if j <= 0.7 {
		return j
	}
	prefix := 0
	for prefix < 4 && prefix < len(ra) && prefix < len(rb) && ra[prefix] == rb[prefix] {
		prefix++
	}
	return j + float64(prefix)*0.1*(1-j)
}

func jaro(a, b []rune) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 1
	}
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	window := max(len(a), len(b))/2 - 1
	if window < 0 {
		window = 0
	}
	am := make([]bool, len(a))
	bm := make([]bool, len(b))
	matches := 0
	for i := range a {
		lo, hi := max(0, i-window), min(len(b)-1, i+window)
		for k := lo; k <= hi; k++ {
			if !bm[k] && a[i] == b[k] {
				am[i], bm[k] = true, true
				matches++
				break
			}
		}
	}
	if matches == 0 {
		return 0
	}
	transpositions, k := 0, 0
	for i := range a {
		if !am[i] {
			continue
		}
		for !bm[k] {
			k++
		}
		if a[i] != b[k] {
			transpositions++
		}
		k++
	}
	m := float64(matches)
	return (m/float64(len(a)) + m/float64(len(b)) + (m-float64(transpositions/2))/m) / 3
}

// NameScore is the similarity of two names from 0 to 1, whatever their token order: each token
// of one is paired with at most one token of the other (the most similar pairs first; see
// tokenSimilarity), and the score is the squared pair similarity weighted by token length over
// the shorter name's tokens, reduced for each token of the longer name left unpaired. Two adjacent
// tokens of either name may also be read as one (Binladen, Bin Laden). Names are normalised
// here; a name with no letters or digits scores 0.
func NameScore(a, b string) float64 {
	return tokenScore(Tokens(a), Tokens(b))
}

// tokenScore is NameScore over normalised tokens: a is the subject's, b the listed name's; the
// first MaxTokens of each are aligned (after rejoin has read a's pieces as words).
func tokenScore(a, b []string) float64 {
	joined := rejoin(a, b)
	pieces := len(a)
	a, b, joined = a[:min(len(a), MaxTokens)], b[:min(len(b), MaxTokens)], joined[:min(len(joined), MaxTokens)]
	score := alignScore(a, b)
	for i := 0; i+1 < len(a); i++ {
		score = math.Max(score, alignScore(mergeAt(a, i), b))
	}
	for j := 0; j+1 < len(b); j++ {
		score = math.Max(score, alignScore(a, mergeAt(b, j)))
	}
	if len(joined) < pieces {
		score = math.Max(score, rejoinWeight*alignScore(joined, b))
	}
	return score
}

// rejoin reads the subject's tokens a as pieces of words broken up to slip past screening (a
// hyphen, dot or space inside a word: Gir-ma Wol.de; every letter spaced out: G i r m a): from
// each piece, the run of adjacent pieces whose join is most similar to a token of the listed
// name b is taken as one word, when that join is similar enough to count (tokenMatchFloor) and
// at least as similar as the piece alone (the a l a m i of al alami is alami, not al). Runs
// whose join is too long to be similar to any token of b are not tried (minLengthRatio), so a
// name of whole words costs a few comparisons.
func rejoin(a, b []string) []string {
	longest := 0
	for _, t := range b {
		longest = max(longest, utf8.RuneCountInString(t))
	}
	out := make([]string, 0, len(a))
	for i := 0; i < len(a); {
		best, run := closest(a[i], b), 1
		joined := a[i]
		for k := 2; i+k <= len(a); k++ {
			joined += a[i+k-1]
			if float64(utf8.RuneCountInString(joined))*minLengthRatio > float64(longest) {
				break
			}
			if sim := closest(joined, b); sim >= best && sim >= tokenMatchFloor { // the longer run of two as similar
				best, run = sim, k
			}
		}
		out = append(out, strings.Join(a[i:i+run], ""))
		i += run
	}
	return out
}

// closest is the similarity of token to the most similar of tokens.
func closest(token string, tokens []string) float64 {
	var best float64
	for _, t := range tokens {
		best = math.Max(best, tokenSimilarity(token, t))
	}
	return best
}

// mergeAt is t with tokens i and i+1 joined.
func mergeAt(t []string, i int) []string {
	out := make([]string, 0, len(t)-1)
	out = append(out, t[:i]...)
	out = append(out, t[i]+t[i+1])
	return append(out, t[i+2:]...)
}

// alignScore pairs the tokens of a and b and scores the pairing (see NameScore).
func alignScore(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	short, long := a, b
	if len(b) < len(a) {
		short, long = b, a
	}
	type pair struct {
		i, j int
		sim  float64
	}
	pairs := make([]pair, 0, len(short)*len(long))
	for i, s := range short {
		for j, l := range long {
			if sim := tokenSimilarity(s, l); sim >= tokenMatchFloor {
				pairs = append(pairs, pair{i, j, sim})
			}
		}
	}
	// Most similar first; ties by position, so the result does not depend on sort stability.
	slices.SortFunc(pairs, func(x, y pair) int {
		switch {
		case x.sim > y.sim:
			return -1
		case x.sim < y.sim:
			return 1
		case x.i != y.i:
			return x.i - y.i
		}
		return x.j - y.j
	})
	usedS := make([]bool, len(short))
	usedL := make([]bool, len(long))
	var got, total float64
	for _, p := range pairs {
		if usedS[p.i] || usedL[p.j] {
			continue
		}
		usedS[p.i], usedL[p.j] = true, true
		w := float64(len(short[p.i])+len(long[p.j])) / 2
		// Squared: two tokens a little off weigh more than one (Mohamed Ali, Mohammed Wali).
		got += p.sim * p.sim * w
		total += w
	}
	for i, s := range short {
		if !usedS[i] {
			total += float64(len(s))
		}
	}
	score := got / total
	var extra, all float64
	unpaired := 0
	for j, l := range long {
		all += float64(len(l))
		if !usedL[j] {
			extra += float64(len(l))
			unpaired++
		}
	}
	penalized := score * (1 - min(maxExtraPenalty, extraTokenPenalty*float64(unpaired)+extraWeightPenalty*extra/all))
	if len(b) < len(a) && len(short) > 1 && score >= BlockThreshold && !slices.Contains(usedS, false) {
		// The whole listed name, every token paired as it is spelt on the list (or nearly),
		// inside a longer subject name: extra names lower the score but never below review (a
		// listed name padded with four ordinary names, Usama bin Ladin Abebe Kebede Tesfaye
		// Worku, is the listed person until a person says otherwise). A looser pairing keeps
		// the whole penalty: Henok Alemu Mohammed is not SALEM, Mohamed.
		penalized = max(penalized, ReviewThreshold)
	}
	score = penalized
	if len(short) == 1 && len(long) > 1 {
		score = math.Min(score, singleTokenCap)
	}
	return score
}

// tokenSimilarity is the Jaro–Winkler similarity of two tokens; two tokens of the same length
// whose consonants are the same, in order, differ only in vowels (Usama/Osama, Ladin/Laden,
// Muhammad/Mohammed: the commonest difference between two transliterations of one name) and are
// compared with every vowel made the same, scaled by vowelFoldWeight, when that is higher.
//
// Tokens of very different lengths are not taken for one word: below minLengthRatio they are
// not similar at all (John, Johnsmith), and below prefixLengthRatio only their Jaro similarity
// counts (Winkler's prefix boost would make any token similar to its own prefix).
func tokenSimilarity(a, b string) float64 {
	// Spellings that differ in vowels and doubled letters only, where one has neither doubled
	// letters nor vowel pairs (Hussein/حسين → hasin, Saddam/صدام → sadam, Hassan/حسن → hasan):
	// Arabic leaves short vowels and doubling unwritten, so its transliterations differ from
	// Latin spellings in exactly these, and in length too. Two spellings that both double
	// (Hassan, Hussein) are compared as written: they are usually two names.
	if ca, cb := squeeze(a), squeeze(b); (ca == a) != (cb == b) {
		if len(ca) == len(cb) && consonants(ca) != "" && consonants(ca) == consonants(cb) {
			return math.Max(plainSimilarity(a, b), squeezeWeight*JaroWinkler(foldVowels(ca), foldVowels(cb)))
		}
	}
	return plainSimilarity(a, b)
}

// plainSimilarity is tokenSimilarity without the squeezed comparison.
func plainSimilarity(a, b string) float64 {
	ra, rb := utf8.RuneCountInString(a), utf8.RuneCountInString(b)
	ratio := float64(min(ra, rb)) / float64(max(ra, rb))
	switch {
	case ratio < minLengthRatio:
		return 0
	case ratio < prefixLengthRatio:
		return jaro([]rune(a), []rune(b))
	}
	sim := JaroWinkler(a, b)
	if sim == 1 || len(a) != len(b) || consonants(a) != consonants(b) {
		return sim
	}
	return math.Max(sim, vowelFoldWeight*JaroWinkler(foldVowels(a), foldVowels(b)))
}

func isVowel(r rune) bool {
	switch r {
	case 'a', 'e', 'i', 'o', 'u':
		return true
	}
	return false
}

// consonants is s without its vowels.
func consonants(s string) string {
	return strings.Map(func(r rune) rune {
		if isVowel(r) {
			return -1
		}
		return r
	}, s)
}

// squeeze is s with every run of one letter, and every run of vowels, written once (Hussein →
// husen, Saddam → sadam).
func squeeze(s string) string {
	var b strings.Builder
	var last rune = -1
	for _, r := range s {
		if r == last || isVowel(r) && isVowel(last) {
			continue
		}
		b.WriteRune(r)
		last = r
	}
	return b.String()
}

// foldVowels makes every vowel an a.
func foldVowels(s string) string {
	return strings.Map(func(r rune) rune {
		if isVowel(r) {
			return 'a'
		}
		return r
	}, s)
}
