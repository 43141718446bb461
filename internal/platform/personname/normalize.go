// Package personname is the one normaliser of people's names: the form in which sanctions
// screening compares a name with the lists and the gateway compares an account's holder name with
// the name an employer gave. It removes what a reader cannot see, folds case, diacritics and
// look-alike letters, and brings Ethiopic, Arabic, Cyrillic and Greek words to Latin, so
// "አበበ ከበደ" and "Abebe Kebede" are one name. Version names its rules.
package personname

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/runenames"
)

// Version names the rules Normalize applies (sanctions.NormalizerVersion counts it). A
// change to the rules that could change a match must raise it: sanctions screening refuses lists
// normalised by older rules until they are renormalised, and treats checks made under older
// rules as stale until they are screened again.
//
//   - 1: case, diacritics, punctuation, Ethiopic transliterated.
//   - 2: default-ignorable and format characters removed, NFKC, letters of other scripts that
//     look like Latin ones folded to them (Unicode TR39 confusables), Cyrillic, Greek and Arabic
//     transliterated; names the rules cannot bring to Latin are flagged for review.
//   - 3: a capital letter of another script folds to the Latin letter its small form looks like
//     (Armenian Հ, whose small հ passes for h), as it would once lower-cased: normalising twice
//     gave another name (FuzzNormalize).
//   - 4: Latin letters named after a plain letter fold to it (small capitals ᴀ ʙ ɪ, ɓ ɗ ƙ: a
//     name in small capitals screened CLEAR); a Latin letter still not ASCII makes the name a
//     REVIEW.
const Version = 4

// ConfusablesVersion is the Unicode version of the TR39 confusables data
// (github.com/mtibben/confusables embeds confusables.txt of Unicode 13.0.0, dated 2020-02-13).
const ConfusablesVersion = "13.0.0"

// Normalize is the form every name is compared in: default-ignorable and other invisible
// formatting characters removed (zero-width spaces and joiners, soft hyphen, BOM, variation
// selectors, tag characters, bidi controls: they change nothing a reader sees, so they must change
// nothing the matcher sees), NFKC, lower case, diacritics dropped (José → jose), a few letters
// that do not decompose spelled out (ß → ss, ø → o, ł → l, …), apostrophes dropped (Sa'id →
// said), every other non-letter, non-digit a separator, and single spaces between tokens. Each
// word is then brought to Latin: Ethiopic, Arabic, Cyrillic and Greek words are transliterated;
// letters of another script inside a Latin word are folded to the Latin letter they look like
// (TR39 confusables), so "Usаma" with a Cyrillic а is "usama" (LookalikeReading reads whole
// Cyrillic or Greek words that way too). Token order is kept (Key sorts them). Invalid UTF-8 is
// a separator. Normalize is idempotent. Words it cannot bring to Latin are kept as they are;
// Unscreenable says why a name is one of those.
func Normalize(name string) string {
	s, _, _ := Analyze(name)
	return s
}

// Unscreenable says why name cannot be compared with the lists with confidence ("" when it can):
// a word in a script the screener cannot bring to Latin (Han, Hebrew, Devanagari, …), a word in
// Arabic script (transliterated, but its Latin reading is ambiguous), or a word mixing scripts
// whose foreign letters do not all look like Latin ones. Screening such a name is at least a
// REVIEW: it fails closed.
func Unscreenable(name string) string {
	_, _, why := Analyze(name)
	return why
}

// LookalikeReading is name read the other way where a word is written entirely in Cyrillic or
// Greek letters that each look like a Latin letter: Normalize transliterates such a word (Вера →
// vera), this reads it as it looks (bepa), since it may be a Latin name spelt in look-alikes to
// slip past screening (Ѕам → sam). Screening matches both readings. It is Normalize(name) when
// there is no such word.
func LookalikeReading(name string) string {
	_, alt, _ := Analyze(name)
	return alt
}

// Ignorable reports whether r is invisible in a name and is removed before matching: a
// Default_Ignorable_Code_Point (Unicode DerivedCoreProperties: the Other_Default_Ignorable_Code_Point
// property, variation selectors, format characters), and every other format character (Cf), such
// as the Arabic prepended concatenation marks, which have no place in a name either.
func Ignorable(r rune) bool {
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) ||
		unicode.Is(unicode.Variation_Selector, r)
}

// StripIgnorable is s without its Ignorable runes.
func StripIgnorable(s string) string {
	return strings.Map(func(r rune) rune {
		if Ignorable(r) {
			return -1
		}
		return r
	}, s)
}

// Analyze is Normalize, LookalikeReading and Unscreenable of name in one pass.
func Analyze(name string) (normalized, lookalike, unscreenable string) {
	var clean strings.Builder
	clean.Grow(len(name))
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		i += size
		switch {
		case r == utf8.RuneError && size <= 1:
			clean.WriteByte(' ')
		case !Ignorable(r):
			clean.WriteRune(r)
		}
	}
	// Ignorables go first: left in, one between a letter and its combining mark would keep NFKC
	// from composing them, and one inside a word would split it.
	s := norm.NFKC.String(clean.String())
	var out, alt []string
	why := ""
	var word []rune
	flush := func() {
		if len(word) == 0 {
			return
		}
		w, looks, problem := latinWord(word)
		out = append(out, strings.Fields(w)...)
		alt = append(alt, strings.Fields(looks)...)
		if why == "" {
			why = problem
		}
		word = word[:0]
	}
	for _, r := range s {
		switch {
		case Ignorable(r), isApostrophe(r):
			// Inside a word an apostrophe joins (O'Brien → obrien); elsewhere nothing.
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			word = append(word, r)
		default:
			flush()
		}
	}
	flush()
	return strings.Join(out, " "), strings.Join(alt, " "), why
}

// script is the writing system of a letter, as far as normalisation cares.
type script int

const (
	scriptNone script = iota // digits, marks
	scriptLatin
	scriptCyrillic
	scriptGreek
	scriptArabic
	scriptEthiopic
	scriptOther
)

func scriptOf(r rune) script {
	switch {
	case !unicode.IsLetter(r) || unicode.Is(unicode.Common, r):
		// Digits, marks, and letters every script shares (the Arabic tatweel, modifier
		// letters) say nothing about a word's script.
		return scriptNone
	case r < 0x80 || unicode.Is(unicode.Latin, r):
		return scriptLatin
	case unicode.Is(unicode.Cyrillic, r):
		return scriptCyrillic
	case unicode.Is(unicode.Greek, r):
		return scriptGreek
	case unicode.Is(unicode.Arabic, r):
		return scriptArabic
	case unicode.Is(unicode.Ethiopic, r):
		return scriptEthiopic
	}
	return scriptOther
}

// scriptName names the Unicode script of r, for a reviewer.
func scriptName(r rune) string {
	for name, t := range unicode.Scripts {
		if name != "Common" && name != "Inherited" && unicode.Is(t, r) {
			return name
		}
	}
	return "unknown"
}

// latinWord brings one word (letters, digits and marks, already NFKC) to Latin, gives its
// look-alike reading (see LookalikeReading; the same unless the word has two), and says why it
// could not bring it to Latin when it could not.
func latinWord(w []rune) (string, string, string) {
	seen := map[script]bool{}
	var other rune
	for _, r := range w {
		s := scriptOf(r)
		if s != scriptNone {
			seen[s] = true
		}
		if s == scriptOther && other == 0 {
			other = r
		}
	}
	delete(seen, scriptNone)
	if len(seen) == 1 {
		switch {
		case seen[scriptLatin]:
			l := latinLetters(w)
			return l, l, unfoldedWhy(l)
		case seen[scriptEthiopic]:
			var b strings.Builder
			for _, r := range w {
				if lat, ok := ethiopic(r); ok {
					b.WriteString(lat)
				} else {
					b.WriteString(latinLetters([]rune{r}))
				}
			}
			return b.String(), b.String(), ""
		case seen[scriptArabic]:
			// Arabic script leaves short vowels and doubled consonants unwritten, so a name has
			// many Latin readings and the transliteration finds the listed spelling only part of
			// the time (the recall test measures how often): the matches it finds are shown, and
			// a person always looks.
			a := arabicWord(w)
			return a, a, "a word is written in Arabic script, whose Latin reading is ambiguous (short vowels are not written)"
		case seen[scriptCyrillic], seen[scriptGreek]:
			// Transliterated; a word whose every letter also looks like a Latin letter has a
			// second reading, as it looks (Вера: vera, bepa), and screening matches both.
			t, why := translitWord(w)
			if folded, ok := foldWord(w); ok {
				return t, folded, why
			}
			return t, t, why
		}
		// Han, Hebrew, Devanagari, …: kept as written, so the same spelling on a list still
		// matches, but a transliterated listing would not: a person looks.
		l := latinLetters(w)
		return l, l, "a word is written in the " + scriptName(other) + " script, which the screener cannot compare with Latin names"
	}
	// Scripts mixed within one word: letters of other scripts that look like Latin letters are
	// folded to them; any other makes the name a REVIEW, transliterated as far as possible so a
	// list match still shows.
	var b strings.Builder
	why := ""
	for _, r := range w {
		s := scriptOf(r)
		if s == scriptLatin || s == scriptNone {
			b.WriteString(latinLetters([]rune{r}))
			continue
		}
		if f, ok := foldRune(r); ok {
			b.WriteString(f)
			continue
		}
		if why == "" {
			why = "a word mixes letters of different scripts"
		}
		t, _ := translitWord([]rune{r})
		b.WriteString(t)
	}
	if why == "" {
		why = unfoldedWhy(b.String())
	}
	return b.String(), b.String(), why
}

// unfoldedWhy says why a word with an unfolded Latin letter (unfoldedLatin) is unscreenable.
func unfoldedWhy(w string) string {
	if r := unfoldedLatin(w); r != 0 {
		return fmt.Sprintf("a word holds the Latin letter %q (U+%04X), which the screener cannot bring to the letters the lists use", r, r)
	}
	return ""
}

// latinLetters is the lower-case, compatibility-decomposed form of w with diacritics dropped and
// letters without a decomposition spelled out; a non-ASCII Latin letter that looks like an ASCII
// one (ɡ, ɑ) becomes that letter. Letters of other scripts are kept lower-case, without their
// non-spacing marks.
func latinLetters(w []rune) string {
	var b strings.Builder
	for _, r := range w {
		for _, d := range norm.NFKD.String(string(unicode.ToLower(r))) {
			switch {
			case unicode.Is(unicode.Mn, d) || unicode.Is(unicode.Me, d):
				// A diacritic: dropped.
			case d < 0x80:
				if unicode.IsLetter(d) || unicode.IsDigit(d) {
					b.WriteRune(unicode.ToLower(d))
				}
			case unicode.IsLetter(d) || unicode.IsDigit(d) || unicode.Is(unicode.Mc, d):
				if f, ok := letterFold[d]; ok {
					b.WriteString(f)
				} else if f, ok := foldRune(d); ok && scriptOf(d) == scriptLatin {
					b.WriteString(f)
				} else if f, ok := nameFold(d); ok {
					b.WriteString(f)
				} else {
					b.WriteRune(unicode.ToLower(d))
				}
			}
		}
	}
	return b.String()
}

// nameFold is the ASCII letter (or pair) a Latin letter without a decomposition or a TR39
// prototype is named after, in the Unicode character names: a small capital (ᴀ LATIN LETTER
// SMALL CAPITAL A, ꜱ, ᴁ) or a letter with a hook, stroke or tail drawn into it (ɓ LATIN SMALL
// LETTER B WITH HOOK). A reader takes each for that letter. Letters named otherwise (ɐ TURNED A,
// ʃ ESH) have none: unfoldedLatin flags them.
func nameFold(r rune) (string, bool) {
	rest, ok := strings.CutPrefix(runenames.Name(r), "LATIN ")
	if !ok {
		return "", false
	}
	ok = false
	for _, form := range []string{"SMALL LETTER ", "CAPITAL LETTER ", "LETTER SMALL CAPITAL ", "LETTER "} {
		if rest, ok = strings.CutPrefix(rest, form); ok {
			break
		}
	}
	base, _, _ := strings.Cut(rest, " WITH ")
	if !ok || len(base) == 0 || len(base) > 2 || strings.Trim(base, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
		return "", false
	}
	return strings.ToLower(base), true
}

// unfoldedLatin is the first Latin letter of a normalised word that is still not ASCII: one the
// rules could not bring to the letters the lists are compared in (0 when there is none).
func unfoldedLatin(w string) rune {
	for _, r := range w {
		if r >= 0x80 && scriptOf(r) == scriptLatin {
			return r
		}
	}
	return 0
}

// foldRune is the ASCII letter (or letters) r looks like, from the TR39 confusables data, when
// there is one: its own prototype, its capital's (Cyrillic м looks like a small M; its capital
// М is M: inside a Latin word either passes for the Latin letter) or its small form's (Armenian
// Հ: Normalize lower-cases it to հ, which passes for h, so it must fold as հ does). Only the
// prototype's letters count, lower-cased and without diacritics.
func foldRune(r rune) (string, bool) {
	return fold(r, r, unicode.ToUpper(r), unicode.ToLower(r))
}

// barLetters are letters that are a plain vertical stroke: TR39 gives them all the prototype
// "l", but a capital one passes for a capital I (ΑΜΙR, KІM), a small one for l.
var barLetters = map[rune]string{'Ι': "i", 'І': "i", 'Ӏ': "i", 'ӏ': "l", 'ǀ': "l", 'ı': "i"}

func fold(r rune, forms ...rune) (string, bool) {
	if r < 0x80 {
		return "", false
	}
	if f, ok := barLetters[r]; ok {
		return f, true
	}
	for _, c := range forms {
		sk := confusables.Skeleton(string(c))
		if sk == string(c) {
			continue
		}
		var b strings.Builder
		ok := true
		for _, d := range norm.NFKD.String(sk) {
			switch {
			case unicode.Is(unicode.Mn, d):
			case d < 0x80 && unicode.IsLetter(d):
				b.WriteRune(unicode.ToLower(d))
			case letterFold[unicode.ToLower(d)] != "":
				b.WriteString(letterFold[unicode.ToLower(d)])
			default:
				ok = false
			}
		}
		if ok && b.Len() > 0 {
			return b.String(), true
		}
	}
	return "", false
}

// foldWord folds every letter of w to the ASCII letter it looks like, if every letter has one.
func foldWord(w []rune) (string, bool) {
	var b strings.Builder
	for _, r := range w {
		if scriptOf(r) == scriptNone {
			b.WriteString(latinLetters([]rune{r}))
			continue
		}
		f, ok := foldRune(r)
		if !ok {
			return "", false
		}
		b.WriteString(f)
	}
	return b.String(), true
}

// translitWord transliterates a Cyrillic or Greek word (any letter without a transliteration is
// kept, and says so).
func translitWord(w []rune) (string, string) {
	var b strings.Builder
	why := ""
	for _, r := range norm.NFD.String(string(w)) {
		if unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) {
			continue
		}
		l := unicode.ToLower(r)
		if t, ok := cyrillicLatin[l]; ok {
			b.WriteString(t)
			continue
		}
		if t, ok := greekLatin[l]; ok {
			b.WriteString(t)
			continue
		}
		switch scriptOf(r) {
		case scriptArabic:
			b.WriteString(arabicWord([]rune{r}))
			continue
		case scriptEthiopic:
			if t, ok := ethiopic(r); ok {
				b.WriteString(t)
				continue
			}
		}
		if f, ok := foldRune(r); ok {
			b.WriteString(f)
			continue
		}
		b.WriteString(latinLetters([]rune{r}))
		if scriptOf(r) != scriptLatin && scriptOf(r) != scriptNone && why == "" {
			why = "a word holds a letter of the " + scriptName(r) + " script the screener cannot bring to Latin"
		}
	}
	return b.String(), why
}

// cyrillicLatin: Cyrillic letters as names are written in English documents (a simplified
// BGN/PCGN; Ukrainian, Belarusian, Serbian, Macedonian and Central Asian letters included).
var cyrillicLatin = map[rune]string{
	'а': "a", 'б': "b", 'в': "v", 'г': "g", 'д': "d", 'е': "e", 'ё': "e", 'ж': "zh", 'з': "z", 'и': "i",
	'й': "y", 'к': "k", 'л': "l", 'м': "m", 'н': "n", 'о': "o", 'п': "p", 'р': "r", 'с': "s", 'т': "t",
	'у': "u", 'ф': "f", 'х': "kh", 'ц': "ts", 'ч': "ch", 'ш': "sh", 'щ': "shch", 'ъ': "", 'ы': "y", 'ь': "",
	'э': "e", 'ю': "yu", 'я': "ya", 'і': "i", 'ї': "yi", 'є': "ye", 'ґ': "g", 'ў': "u", 'ђ': "dj", 'ј': "j",
	'љ': "lj", 'њ': "nj", 'ћ': "c", 'џ': "dz", 'ѓ': "gj", 'ќ': "kj", 'ѕ': "dz", 'ғ': "g", 'қ': "k", 'ң': "ng",
	'ү': "u", 'ұ': "u", 'һ': "h", 'ә': "a", 'ө': "o", 'ҳ': "h", 'ҷ': "j", 'ӣ': "i", 'ӯ': "u", 'ӏ': "l",
}

// greekLatin: Greek letters, after their accents are dropped.
var greekLatin = map[rune]string{
	'α': "a", 'β': "v", 'γ': "g", 'δ': "d", 'ε': "e", 'ζ': "z", 'η': "i", 'θ': "th", 'ι': "i", 'κ': "k",
	'λ': "l", 'μ': "m", 'ν': "n", 'ξ': "x", 'ο': "o", 'π': "p", 'ρ': "r", 'σ': "s", 'ς': "s", 'τ': "t",
	'υ': "y", 'φ': "f", 'χ': "ch", 'ψ': "ps", 'ω': "o",
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
