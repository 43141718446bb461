package personname

import (
	"strings"
	"unicode"
)

// Arabic script (Arabic, Persian, Urdu letters) to Latin, as such names are written in English
// documents and on the OFAC and UN lists (Usama, Husayn, al-Tikriti): not a scholarly
// transliteration. Arabic writes long vowels (ا و ي) and usually leaves short ones out, so a
// letter-by-letter reading of مصطفى is "mstfa", which no Jaro–Winkler comparison takes for
// Mustafa. An "a" is therefore put into runs of consonants as Latin syllables would have it
// (see arabicStretch: مصطفى → mastafa, سلطان → saltan), which the vowel-insensitive comparison
// in score.go then lines
// up with Mahmud, Ahmad, Mustafa, Sultan. Written short vowels (harakat) are used when present.
// The article ال is read "al" and starts a new stretch (التكريتي → altakriti, which the scorer's
// token merging lines up with "al Tikriti").

// arabicConsonants maps consonant letters to Latin.
var arabicConsonants = map[rune]string{
	'ب': "b", 'ت': "t", 'ث': "th", 'ج': "j", 'ح': "h", 'خ': "kh", 'د': "d", 'ذ': "dh", 'ر': "r", 'ز': "z",
	'س': "s", 'ش': "sh", 'ص': "s", 'ض': "d", 'ط': "t", 'ظ': "z", 'غ': "gh", 'ف': "f", 'ق': "q", 'ك': "k",
	'ل': "l", 'م': "m", 'ن': "n", 'ه': "h",
	// Persian and Urdu.
	'پ': "p", 'چ': "ch", 'ژ': "zh", 'گ': "g", 'ک': "k", 'ڤ': "v", 'ٹ': "t", 'ڈ': "d", 'ڑ': "r", 'ں': "n",
	'ھ': "h", 'ہ': "h", 'ڭ': "ng", 'ڨ': "g",
}

// arabicVowels maps letters that stand for a vowel (alef and its hamza forms, alef maqsura, ta
// marbuta) to Latin.
var arabicVowels = map[rune]string{
	'ا': "a", 'أ': "a", 'آ': "a", 'ٱ': "a", 'إ': "i", 'ى': "a", 'ة': "a", 'ؤ': "u", 'ئ': "i", 'ۀ': "a",
	'ے': "e", 'ۓ': "e",
}

// arabicHarakat maps the short-vowel marks to Latin ("" for sukun: no vowel, said explicitly).
var arabicHarakat = map[rune]string{'\u064E': "a", '\u064F': "u", '\u0650': "i", '\u0652': "", '\u0670': "a"}

// arabicUnit is one sound of a word: a consonant or a vowel.
type arabicUnit struct {
	s     string
	vowel bool
}

// arabicWord transliterates one word of Arabic script (letters, marks, digits).
func arabicWord(w []rune) string {
	if len(w) > 3 && w[0] == 'ا' && w[1] == 'ل' {
		// The article: "al" and a fresh start, so no vowel is put between it and the noun.
		return "al" + arabicWord(w[2:])
	}
	// The two commonest stems of names, spelt as the lists spell them; what follows them in
	// the same word (عبدالله, محمدی) starts afresh.
	for _, stem := range arabicStems {
		if len(w) >= len(stem.arabic) && string(w[:len(stem.arabic)]) == string(stem.arabic) {
			rest := w[len(stem.arabic):]
			if len(rest) > 3 && rest[0] == 'ا' && rest[1] == 'ل' {
				return stem.latin + "al" + arabicStretch(rest[2:])
			}
			return stem.latin + arabicStretch(rest)
		}
	}
	return arabicStretch(w)
}

// arabicStems: عبد (Abd, servant of, in Abd al-Rahman, Abdullah) is written "abd", and محمد is
// Muhammad, whose doubled m the script does not show.
var arabicStems = []struct {
	arabic []rune
	latin  string
}{{[]rune("عبد"), "abd"}, {[]rune("محمد"), "muhammad"}}

func arabicStretch(w []rune) string {
	var units []arabicUnit
	prevVowel := func() bool { return len(units) > 0 && units[len(units)-1].vowel }
	nextVowelLetter := func(i int) bool {
		if i+1 >= len(w) {
			return false
		}
		_, ok := arabicVowels[w[i+1]]
		return ok || w[i+1] == 'ع'
	}
	for i, r := range w {
		switch {
		case arabicConsonants[r] != "":
			units = append(units, arabicUnit{s: arabicConsonants[r]})
		case arabicVowels[r] != "":
			if !prevVowel() || len(units) == 0 {
				units = append(units, arabicUnit{s: arabicVowels[r], vowel: true})
			}
		case r == 'ع':
			// Ain: a consonant Latin spellings leave out, but a vowel is heard with it (Ali,
			// Omar, Said, Jafar).
			if !prevVowel() {
				units = append(units, arabicUnit{s: "a", vowel: true})
			}
		case r == 'و' || r == 'ي' || r == 'ی' || r == 'ې':
			// A long vowel between consonants or at the end, a consonant at the start, after a
			// vowel or before one.
			vowel, cons := "u", "w"
			if r != 'و' {
				vowel, cons = "i", "y"
			}
			if len(units) == 0 || prevVowel() || nextVowelLetter(i) {
				units = append(units, arabicUnit{s: cons})
			} else {
				units = append(units, arabicUnit{s: vowel, vowel: true})
			}
		case arabicHarakat[r] != "" || r == '\u0652':
			units = append(units, arabicUnit{s: arabicHarakat[r], vowel: true})
		case r >= '٠' && r <= '٩':
			units = append(units, arabicUnit{s: string('0' + r - '٠'), vowel: true})
		case r >= '۰' && r <= '۹':
			units = append(units, arabicUnit{s: string('0' + r - '۰'), vowel: true})
		case unicode.IsLetter(r) && scriptOf(r) != scriptArabic && scriptOf(r) != scriptNone:
			units = append(units, arabicUnit{s: latinLetters([]rune{r}), vowel: true})
		default:
			// Hamza on the line, shadda, tanwin, tatweel, other marks: no sound of their own in
			// a Latin spelling.
		}
	}
	// In a run of consonants with no written vowel between them, Latin spellings put a vowel
	// after every other one, as the syllables go: a run at the start of a word begins a syllable
	// (محمد → mah-mad, حكمت → hak-mat, Hikmat), a run after a vowel first closes one (احمد →
	// ah-mad, عبد → abd, ابراهيم → ab-rahim).
	// Two consonants that end a word after a vowel are read with a vowel between them (حسن →
	// hasan, خالد → khalid, قاسم → qasim), as Latin spellings have them.
	var b strings.Builder
	onset := true  // the next consonant begins a syllable
	vowel := false // the last thing written is a vowel
	n := len(units)
	for i, u := range units {
		b.WriteString(u.s)
		if u.vowel {
			onset, vowel = false, u.s != ""
			continue
		}
		finalPair := i == n-2 && !units[n-1].vowel && vowel
		vowel = false
		if (onset || finalPair) && i+1 < n && !units[i+1].vowel {
			b.WriteByte('a')
			vowel = true
		}
		onset = !onset
	}
	return b.String()
}
