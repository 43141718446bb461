package sanctions_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/personname"
	"github.com/wagerail/wagerail/internal/sanctions"
)

// Recall and false-positive targets of screening (issue 21). They are measured through Screen
// against the real lists in a real Postgres, because the trigram candidate index is part of what
// is measured: an evasion that keeps the listed name out of the candidates is a miss however the
// scorer would have scored it.
const (
	recallSample       = 300  // listed names the evasions are made from (make soak, make bench)
	recallSampleShort  = 120  // the same in make test, spread over the lists the same way
	recallTarget       = 0.99 // share of all evasion variants screened REVIEW or BLOCK
	recallClassTarget  = 0.95 // the same, in every class
	ethiopianNames     = 1000 // ordinary names, each screened in Latin and in Ge'ez spelling
	ethiopianFPTarget  = 0.99 // share of them screened CLEAR
	recallScreenWorker = 3
)

// TestScreeningRecallAgainstEvasions asserts the targets (see recallReport).
func TestScreeningRecallAgainstEvasions(t *testing.T) {
	if testing.Short() {
		t.Skip("screens about 3,300 names against the real lists (6,000 under WAGERAIL_SOAK)")
	}
	// make test screens fewer listed names (and every other Arabic original); the sample is
	// seeded and spread evenly over the lists like the full one, the Ethiopian false-positive
	// population is the same 1,000 names, and the targets are the same. make soak screens all.
	r := measureRecall(t, os.Getenv("WAGERAIL_SOAK") != "")
	t.Log(r.table())
	r.assert(t)
}

// TestBenchmarkReportScreeningRecall prints the recall and false-positive tables (make bench).
func TestBenchmarkReportScreeningRecall(t *testing.T) {
	if os.Getenv("WAGERAIL_BENCH") == "" {
		t.Skip("set WAGERAIL_BENCH=1 (make bench)")
	}
	r := measureRecall(t, true)
	fmt.Print(r.table())
	r.assert(t)
}

// recallClass is one kind of evasion: it makes a variant of a listed name (ok false: it does
// not apply to this name).
type recallClass struct {
	name string
	make func(rng *rand.Rand, n listedName) (string, bool)
}

// listedName is a name from the lists the variants are made from.
type listedName struct {
	ref      string
	display  string   // as a person would write it: given names first
	tokens   []string // display's words
	original []string // the entry's names in Arabic script (the UN's NAME_ORIGINAL_SCRIPT)
}

type classResult struct {
	name                  string
	total, caught, blocks int
	// matched counts names with a list match (evidence) of REVIEW or BLOCK strength, as opposed
	// to a REVIEW for the name's script alone (Result.Reason).
	matched int
	misses  []string
	elapsed time.Duration
}

type recallReport struct {
	classes []classResult
	fp      []classResult
}

func (r recallReport) table() string {
	var b strings.Builder
	b.WriteString("\nScreening recall against evasions (share screened REVIEW or BLOCK; real OFAC + UN lists, through Screen)\n")
	fmt.Fprintf(&b, "%-38s %6s %8s %8s %8s %11s\n", "class", "names", "caught", "recall", "BLOCK", "list match")
	all, caught := 0, 0
	for _, c := range r.classes {
		fmt.Fprintf(&b, "%-38s %6d %8d %7.2f%% %7.2f%% %10.2f%%\n", c.name, c.total, c.caught, pct(c.caught, c.total),
			pct(c.blocks, c.total), pct(c.matched, c.total))
		if !strings.HasPrefix(c.name, "baseline") {
			all += c.total
			caught += c.caught
		}
	}
	fmt.Fprintf(&b, "%-38s %6d %8d %7.2f%%\n", "all evasion classes", all, caught, pct(caught, all))
	b.WriteString("\nOrdinary Ethiopian names screened CLEAR (false positives are REVIEW or BLOCK)\n")
	fmt.Fprintf(&b, "%-38s %6s %8s %8s %8s\n", "spelling", "names", "clear", "clear%", "BLOCK")
	for _, c := range r.fp {
		fmt.Fprintf(&b, "%-38s %6d %8d %7.2f%% %8d\n", c.name, c.total, c.total-c.caught, pct(c.total-c.caught, c.total), c.blocks)
		for _, m := range c.misses {
			fmt.Fprintf(&b, "    flagged: %s\n", m)
		}
	}
	for _, c := range r.classes {
		for i, m := range c.misses {
			if i == 5 {
				fmt.Fprintf(&b, "    … %d more missed in %s\n", len(c.misses)-5, c.name)
				break
			}
			fmt.Fprintf(&b, "    missed (%s): %s\n", c.name, m)
		}
	}
	return b.String()
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

func (r recallReport) assert(t *testing.T) {
	t.Helper()
	all, caught := 0, 0
	for _, c := range r.classes {
		require.Positive(t, c.total, c.name)
		if strings.HasPrefix(c.name, "baseline") {
			continue
		}
		all += c.total
		caught += c.caught
		require.GreaterOrEqual(t, float64(c.caught)/float64(c.total), recallClassTarget, "class %s: %d of %d caught; missed %q\n%s",
			c.name, c.caught, c.total, c.misses, r.table())
	}
	require.GreaterOrEqual(t, len(r.classes), 9)
	require.GreaterOrEqual(t, float64(caught)/float64(all), recallTarget, r.table())
	for _, c := range r.fp {
		require.GreaterOrEqual(t, c.total, ethiopianNames)
		require.GreaterOrEqual(t, float64(c.total-c.caught)/float64(c.total), ethiopianFPTarget, "%s: flagged %q\n%s", c.name, c.misses, r.table())
	}
}

// originalScript matches the UN list's names in original script; the recall lists are loaded
// without them, so that an Arabic-script spelling must be matched by transliteration against
// the Latin names (as OFAC lists them), not by being on the list verbatim.
var originalScript = regexp.MustCompile(`(?s)<NAME_ORIGINAL_SCRIPT>.*?</NAME_ORIGINAL_SCRIPT>`)

// measureRecall screens the variants of recallSample listed names and every Arabic original
// (full), or of recallSampleShort names and every other original.
func measureRecall(t *testing.T, full bool) recallReport {
	l := newListDB(t)
	sdn, alt, un := realFile(t, "ofac-sdn.csv"), realFile(t, "ofac-alt.csv"), realFile(t, "un-consolidated.xml")
	unLatin := sanctions.File{Name: un.Name, Data: originalScript.ReplaceAll(un.Data, nil)}
	l.ingest(t, sanctions.OFAC, sdn, alt)
	l.ingest(t, sanctions.UN, unLatin)

	ofacList, err := sanctions.Parse(sanctions.OFAC, sdn, alt)
	require.NoError(t, err)
	unList, err := sanctions.Parse(sanctions.UN, un)
	require.NoError(t, err)
	size, arabicEvery := recallSample, 1
	if !full {
		size, arabicEvery = recallSampleShort, 2
	}
	sample := sampleListed(ofacList, size*2/3)
	sample = append(sample, sampleListed(unList, size-len(sample))...)
	require.Len(t, sample, size)
	var arabic []listedName
	for _, e := range unList.Entries {
		if n := listedFrom(e); n != nil && len(n.original) > 0 {
			arabic = append(arabic, *n)
		}
	}

	rng := rand.New(rand.NewPCG(21, 2026))
	var r recallReport
	for _, c := range evasionClasses() {
		var names []string
		for _, n := range sample {
			if v, ok := c.make(rng, n); ok {
				names = append(names, v)
			}
		}
		r.classes = append(r.classes, screenAll(t, l, c.name, names, false))
	}
	var arabicNames []string
	for i, n := range arabic {
		if i%arabicEvery == 0 {
			arabicNames = append(arabicNames, n.original...)
		}
	}
	r.classes = append(r.classes, screenAll(t, l, "arabic script (UN originals)", arabicNames, false))

	latin, geez := ethiopianPopulation(ethiopianNames)
	r.fp = append(r.fp, screenAll(t, l, "Latin spelling", latin, true))
	r.fp = append(r.fp, screenAll(t, l, "Ge'ez spelling", geez, true))
	for _, c := range append(slices.Clone(r.classes), r.fp...) {
		t.Logf("%s: %d screened in %v", c.name, c.total, c.elapsed)
	}
	return r
}

// screenAll screens names (no date of birth) and counts those not CLEAR; misses lists the CLEAR
// ones, or with fp the flagged ones.
func screenAll(t *testing.T, l *listDB, class string, names []string, fp bool) classResult {
	t.Helper()
	res := classResult{name: class, total: len(names)}
	start := time.Now()
	var mu sync.Mutex
	var wg sync.WaitGroup
	work := make(chan string)
	errs := make(chan error, recallScreenWorker)
	for range recallScreenWorker {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range work {
				out, err := sanctions.Screen(l.ctx, l.App, name, time.Time{})
				if err != nil {
					errs <- fmt.Errorf("%q: %w", name, err)
					for range work {
					}
					return
				}
				mu.Lock()
				if out.Outcome != sanctions.Clear {
					res.caught++
				}
				if out.Outcome == sanctions.Block {
					res.blocks++
				}
				if len(out.Evidence) > 0 {
					res.matched++
				}
				switch {
				case !fp && out.Outcome == sanctions.Clear:
					res.misses = append(res.misses, fmt.Sprintf("%q (score %.3f)", name, out.Score))
				case fp && out.Outcome != sanctions.Clear:
					why := out.Reason
					if len(out.Evidence) > 0 {
						why = fmt.Sprintf("%s %s %q", out.Evidence[0].ListSource, out.Evidence[0].SourceRef, out.Evidence[0].MatchedName)
					}
					res.misses = append(res.misses, fmt.Sprintf("%q %s %.3f: %s", name, out.Outcome, out.Score, why))
				}
				mu.Unlock()
			}
		}()
	}
	for _, n := range names {
		work <- n
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	slices.Sort(res.misses)
	res.elapsed = time.Since(start)
	return res
}

// sampleListed takes n individuals' primary names spread evenly over the list (by position), of
// two to five words of Latin letters.
func sampleListed(list sanctions.List, n int) []listedName {
	var all []listedName
	for _, e := range list.Entries {
		if ln := listedFrom(e); ln != nil {
			all = append(all, *ln)
		}
	}
	out := make([]listedName, 0, n)
	for i := range n {
		out = append(out, all[i*len(all)/n])
	}
	return out
}

var latinWord = regexp.MustCompile(`^[A-Za-z]{2,}$`)

// listedFrom makes the sample name of an individual entry, or nil when its primary name is not
// two to five words of Latin letters. OFAC writes "LAST, Given Names": turned around.
func listedFrom(e sanctions.Entry) *listedName {
	if e.Type != sanctions.Individual {
		return nil
	}
	name := e.Names[0].Name
	if last, given, ok := strings.Cut(name, ","); ok {
		name = strings.TrimSpace(given) + " " + strings.TrimSpace(last)
	}
	words := strings.FieldsFunc(name, func(r rune) bool { return r == ' ' || r == '-' })
	if len(words) < 2 || len(words) > 5 {
		return nil
	}
	for _, w := range words {
		if !latinWord.MatchString(w) {
			return nil
		}
	}
	n := &listedName{ref: e.SourceRef, display: strings.Join(words, " "), tokens: words}
	for _, a := range e.Names[1:] {
		// One original-script name in the UN file carries U+FFFD (mangled at the source), which
		// the edge refuses; the others are taken.
		if strings.ContainsFunc(a.Name, func(r rune) bool { return unicode.Is(unicode.Arabic, r) }) && !strings.ContainsRune(a.Name, '\uFFFD') {
			n.original = append(n.original, a.Name)
		}
	}
	return n
}

// Evasion material.
var (
	invisibles = []rune{0x200B, 0x200C, 0x200D, 0x2060, 0x00AD, 0xFEFF, 0xFE0F, 0x180E, 0xE0061, 0x2066, 0x202A, 0x034F,
		0x061C, 0x2063, 0x200E}
	// lookalikes maps Latin letters to Cyrillic and Greek letters that look like them.
	lookalikes = map[rune][]rune{
		'a': {'а', 'α'}, 'e': {'е'}, 'o': {'о', 'ο'}, 'p': {'р', 'ρ'}, 'c': {'с'}, 'y': {'у'}, 'x': {'х', 'χ'},
		'i': {'і', 'ι'}, 'j': {'ј'}, 's': {'ѕ'}, 'h': {'һ'}, 'k': {'κ'}, 'v': {'ν'}, 'd': {'ԁ'}, 'q': {'ԛ'},
		'w': {'ԝ'}, 'l': {'ӏ'}, 'b': {'Ь'}, 'm': {'м'}, 't': {'т'}, 'n': {'п'},
		'A': {'А', 'Α'}, 'B': {'В', 'Β'}, 'C': {'С'}, 'E': {'Е', 'Ε'}, 'H': {'Н', 'Η'}, 'I': {'І', 'Ι'}, 'J': {'Ј'},
		'K': {'К', 'Κ'}, 'M': {'М', 'Μ'}, 'N': {'Ν'}, 'O': {'О', 'Ο'}, 'P': {'Р', 'Ρ'}, 'S': {'Ѕ'}, 'T': {'Т', 'Τ'},
		'X': {'Х', 'Χ'}, 'Y': {'Υ', 'Ү'}, 'Z': {'Ζ'},
	}
	// Latin letters that read as another: small capitals, and letters with a hook drawn in.
	latinLookalikes = map[rune][]rune{
		'a': {'ᴀ'}, 'b': {'ʙ', 'ɓ'}, 'c': {'ᴄ'}, 'd': {'ᴅ', 'ɗ'}, 'e': {'ᴇ'}, 'f': {'ꜰ'}, 'g': {'ɢ'}, 'h': {'ʜ'},
		'i': {'ɪ'}, 'j': {'ᴊ'}, 'k': {'ᴋ', 'ƙ'}, 'l': {'ʟ'}, 'm': {'ᴍ'}, 'n': {'ɴ'}, 'o': {'ᴏ'}, 'p': {'ᴘ'},
		'r': {'ʀ'}, 's': {'ꜱ'}, 't': {'ᴛ'}, 'u': {'ᴜ'}, 'v': {'ᴠ'}, 'w': {'ᴡ'}, 'y': {'ʏ'}, 'z': {'ᴢ'},
	}
	accents = map[rune][]string{
		'a': {"á", "à", "â", "ä", "ā", "a\u0301"}, 'e': {"é", "è", "ê", "ë", "ē", "e\u0300"}, 'i': {"í", "ï", "ī"},
		'o': {"ó", "ö", "ô", "ø"}, 'u': {"ú", "ü", "ū"}, 'n': {"ñ"}, 'c': {"ç"}, 's': {"ş", "š"}, 'z': {"ž"},
		'A': {"Á", "Ä"}, 'E': {"É"}, 'O': {"Ö", "Ó"}, 'U': {"Ü"}, 'I': {"Í"},
	}
	// paddingNames are ordinary given names and surnames an evader adds around a listed name.
	paddingNames = []string{"Abebe", "Kebede", "Tesfaye", "Worku", "Alemu", "Girma", "Hailu", "Tadesse", "Bekele", "Mulugeta",
		"Yohannes", "Desta", "Mengistu", "Assefa", "Getachew"}
	separators = []string{"-", ".", " - ", ",  ", "_", "   ", ". ", "/"}
	// inWord split a word in two.
	inWord     = []string{"-", ".", "_", " ", "·", "/", "*"}
	honorifics = []string{"Mr", "Mr.", "Dr", "Dr.", "Sheikh", "Shaykh", "Haji", "Hajji", "Ato", "W/ro", "Mrs.", "Prof.",
		"Mullah", "Alhaji", "አቶ", "ወ/ሮ"}
)

func pick[T any](rng *rand.Rand, s []T) T { return s[rng.IntN(len(s))] }

func evasionClasses() []recallClass {
	return []recallClass{
		{"baseline (the listed name)", func(_ *rand.Rand, n listedName) (string, bool) { return n.display, true }},
		{"invisible characters inserted", func(rng *rand.Rand, n listedName) (string, bool) {
			rs := []rune(n.display)
			for range 1 + rng.IntN(3) {
				at := 1 + rng.IntN(len(rs)-1)
				rs = slices.Insert(rs, at, pick(rng, invisibles))
			}
			return string(rs), true
		}},
		{"Cyrillic/Greek look-alike letters", func(rng *rand.Rand, n listedName) (string, bool) {
			rs := []rune(n.display)
			changed := 0
			for i, r := range rs {
				if alts, ok := lookalikes[r]; ok && (rng.IntN(2) == 0 || changed == 0 && i == len(rs)-1) {
					rs[i] = pick(rng, alts)
					changed++
				}
			}
			return string(rs), changed > 0
		}},
		{"Latin small capitals, hooked letters", func(rng *rand.Rand, n listedName) (string, bool) {
			rs := []rune(n.display)
			changed := 0
			for i, r := range rs {
				if alts, ok := latinLookalikes[unicode.ToLower(r)]; ok && (rng.IntN(2) == 0 || changed == 0 && i == len(rs)-1) {
					rs[i] = pick(rng, alts)
					changed++
				}
			}
			return string(rs), changed > 0
		}},
		{"case and diacritics", func(rng *rand.Rand, n listedName) (string, bool) {
			var b strings.Builder
			for _, r := range n.display {
				if rng.IntN(2) == 0 {
					r = unicode.ToUpper(r)
				} else {
					r = unicode.ToLower(r)
				}
				if alts, ok := accents[r]; ok && rng.IntN(3) == 0 {
					b.WriteString(pick(rng, alts))
					continue
				}
				b.WriteRune(r)
			}
			return b.String(), true
		}},
		{"token order", func(rng *rand.Rand, n listedName) (string, bool) {
			w := slices.Clone(n.tokens)
			if rng.IntN(2) == 0 {
				slices.Reverse(w)
				return strings.Join(w, " "), true
			}
			// "LAST, Given Names".
			return w[len(w)-1] + ", " + strings.Join(w[:len(w)-1], " "), true
		}},
		{"punctuation and spacing", func(rng *rand.Rand, n listedName) (string, bool) {
			var b strings.Builder
			for i, w := range n.tokens {
				if i > 0 {
					b.WriteString(pick(rng, separators))
				}
				b.WriteString(w)
			}
			if rng.IntN(2) == 0 {
				b.WriteString(".")
			}
			return "  " + b.String() + " ", true
		}},
		{"separators inside words (Gir-ma Wol.de)", func(rng *rand.Rand, n listedName) (string, bool) {
			w := slices.Clone(n.tokens)
			split := 0
			for i, tok := range w {
				if len(tok) >= 4 && (rng.IntN(3) > 0 || split == 0 && i == len(w)-1) {
					at := 2 + rng.IntN(len(tok)-3) // a piece of at least two letters each side
					w[i] = tok[:at] + pick(rng, inWord) + tok[at:]
					split++
				}
			}
			return strings.Join(w, " "), split > 0
		}},
		{"spaced-out letters (G i r m a)", func(rng *rand.Rand, n listedName) (string, bool) {
			sep, gap := pick(rng, []string{" ", ".", ". ", "-"}), pick(rng, []string{"  ", " / ", "   "})
			w := make([]string, len(n.tokens))
			for i, tok := range n.tokens {
				w[i] = strings.Join(strings.Split(tok, ""), sep)
			}
			return strings.Join(w, gap), true
		}},
		{"Ethiopic (Ge'ez) transliteration", func(_ *rand.Rand, n listedName) (string, bool) {
			return toGeez(n.display), true
		}},
		{"one letter dropped or doubled", func(rng *rand.Rand, n listedName) (string, bool) {
			w := slices.Clone(n.tokens)
			var long []int
			for i, tok := range w {
				if len(tok) >= 4 {
					long = append(long, i)
				}
			}
			if len(long) == 0 {
				return "", false
			}
			i := pick(rng, long)
			at := 1 + rng.IntN(len(w[i])-1)
			if rng.IntN(2) == 0 {
				w[i] = w[i][:at] + w[i][at+1:]
			} else {
				w[i] = w[i][:at] + w[i][at:at+1] + w[i][at:]
			}
			return strings.Join(w, " "), true
		}},
		{"ordinary names added (1 to 4)", func(rng *rand.Rand, n listedName) (string, bool) {
			extra := make([]string, 1+rng.IntN(4))
			for i := range extra {
				extra[i] = pick(rng, paddingNames)
			}
			if rng.IntN(2) == 0 {
				return n.display + " " + strings.Join(extra, " "), true
			}
			return strings.Join(extra, " ") + " " + n.display, true
		}},
		{"Arabic particles respelt (ibn, az-)", func(rng *rand.Rand, n listedName) (string, bool) {
			w := slices.Clone(n.tokens)
			changed := false
			for i, tok := range w {
				low := strings.ToLower(tok)
				switch {
				case low == "bin" || low == "ben":
					w[i], changed = pick(rng, []string{"ibn", "Ibn", "bn"}), true
				case strings.HasPrefix(low, "al-") && len(low) > 4:
					// The article assimilated to a sun letter, as Arabic pronounces it.
					if c := low[3]; strings.IndexByte("tdrzsn", c) >= 0 {
						w[i], changed = "a"+string(c)+"-"+tok[3:], true
					} else {
						w[i], changed = "el-"+tok[3:], true
					}
				}
			}
			return strings.Join(w, " "), changed
		}},
		{"honorific or title prefix", func(rng *rand.Rand, n listedName) (string, bool) {
			return pick(rng, honorifics) + " " + n.display, true
		}},
		{"combined (invisible+look-alike+case)", func(rng *rand.Rand, n listedName) (string, bool) {
			var b strings.Builder
			for i, r := range []rune(n.display) {
				if i > 0 && rng.IntN(6) == 0 {
					b.WriteRune(pick(rng, invisibles))
				}
				if rng.IntN(3) == 0 {
					r = unicode.ToLower(r)
				}
				if alts, ok := lookalikes[r]; ok && rng.IntN(3) == 0 {
					r = pick(rng, alts)
				}
				b.WriteRune(r)
			}
			return b.String(), true
		}},
	}
}

// Latin to Ge'ez, as an Amharic writer would spell a foreign name: consonant and vowel as one
// syllable, a consonant without vowel in the sixth order, a vowel on its own on the አ row,
// doubled consonants written once (Ge'ez does not mark gemination).
var geezRows = map[string]rune{
	"h": 0x1200, "l": 0x1208, "m": 0x1218, "r": 0x1228, "s": 0x1230, "sh": 0x1238, "q": 0x1240, "b": 0x1260,
	"v": 0x1268, "t": 0x1270, "ch": 0x1278, "n": 0x1290, "ny": 0x1298, "k": 0x12A8, "kh": 0x12A8, "c": 0x12A8,
	"w": 0x12C8, "z": 0x12D8, "zh": 0x12E0, "y": 0x12E8, "d": 0x12F0, "j": 0x1300, "g": 0x1308, "ts": 0x1338,
	"f": 0x1348, "ph": 0x1348, "p": 0x1350, "th": 0x1270, "gh": 0x1308, "dh": 0x12F0,
}

// geezOrder: the order of a row a vowel is written with.
var geezOrder = map[byte]rune{'e': 4, 'u': 1, 'i': 2, 'a': 3, 'o': 6}

func toGeez(name string) string {
	var words []string
	for _, w := range strings.Fields(strings.ToLower(name)) {
		var b strings.Builder
		for i := 0; i < len(w); {
			cons := ""
			for _, n := range []int{2, 1} {
				if i+n <= len(w) {
					if _, ok := geezRows[w[i:i+n]]; ok {
						cons = w[i : i+n]
						break
					}
				}
			}
			if w[i] == 'x' {
				b.WriteString("ክስ")
				i++
				continue
			}
			if _, vowel := geezOrder[w[i]]; cons == "" && !vowel {
				i++ // anything else: left out
				continue
			}
			row := rune(0x12A0) // a vowel on its own
			if cons != "" {
				row = geezRows[cons]
				i += len(cons)
				for i < len(w) && strings.HasPrefix(w[i:], cons) {
					i += len(cons) // gemination is not written
				}
			}
			order := rune(5)
			if i < len(w) {
				if o, ok := geezOrder[w[i]]; ok {
					order = o
					i++
				}
			}
			b.WriteRune(row + order)
		}
		words = append(words, b.String())
	}
	return strings.Join(words, " ")
}

// Ordinary Ethiopian names, Latin spelling and Ge'ez: given names (men's and women's, Christian
// and Muslim, as common in Ethiopia) and fathers' names, which are given names too.
var (
	ethiopianGiven = [][2]string{
		{"Abebe", "አበበ"}, {"Dawit", "ዳዊት"}, {"Yohannes", "ዮሐንስ"}, {"Tesfaye", "ተስፋዬ"}, {"Getachew", "ጌታቸው"},
		{"Solomon", "ሰለሞን"}, {"Mulugeta", "ሙሉጌታ"}, {"Haile", "ኃይሌ"}, {"Girma", "ግርማ"}, {"Alemayehu", "አለማየሁ"},
		{"Berhanu", "ብርሃኑ"}, {"Kebede", "ከበደ"}, {"Tadesse", "ታደሰ"}, {"Yonas", "ዮናስ"}, {"Biniam", "ቢኒያም"},
		{"Samuel", "ሳሙኤል"}, {"Elias", "ኤልያስ"}, {"Mesfin", "መስፍን"}, {"Fikru", "ፍቅሩ"}, {"Henok", "ሄኖክ"},
		{"Natnael", "ናትናኤል"}, {"Eyob", "እዮብ"}, {"Abel", "አቤል"}, {"Bereket", "በረከት"}, {"Daniel", "ዳንኤል"},
		{"Kidus", "ቅዱስ"}, {"Tewodros", "ቴዎድሮስ"}, {"Zelalem", "ዘላለም"}, {"Ermias", "ኤርሚያስ"}, {"Kaleb", "ካሌብ"},
		{"Nahom", "ናሆም"}, {"Robel", "ሮቤል"}, {"Tamirat", "ታምራት"}, {"Yared", "ያሬድ"}, {"Asfaw", "አስፋው"},
		{"Mohammed", "መሐመድ"}, {"Ahmed", "አህመድ"}, {"Kedir", "ከድር"}, {"Nuru", "ኑሩ"}, {"Jemal", "ጀማል"},
		{"Almaz", "አልማዝ"}, {"Tigist", "ትዕግስት"}, {"Selamawit", "ሰላማዊት"}, {"Hiwot", "ሕይወት"}, {"Meron", "ሜሮን"},
		{"Bethlehem", "ቤተልሔም"}, {"Mekdes", "መቅደስ"}, {"Saba", "ሳባ"}, {"Liya", "ሊያ"}, {"Hanna", "ሐና"},
		{"Marta", "ማርታ"}, {"Tsion", "ጽዮን"}, {"Eden", "ኤደን"}, {"Rahel", "ራሄል"}, {"Aster", "አስቴር"},
		{"Azeb", "አዜብ"}, {"Birtukan", "ብርቱካን"}, {"Genet", "ገነት"}, {"Kidist", "ቅድስት"}, {"Mahlet", "ማህሌት"},
		{"Senait", "ሰናይት"}, {"Tsehay", "ፀሐይ"}, {"Zewditu", "ዘውዲቱ"}, {"Fatuma", "ፋጡማ"}, {"Amina", "አሚና"},
		{"Feven", "ፌቨን"}, {"Lidya", "ሊዲያ"}, {"Meseret", "መሰረት"}, {"Yodit", "ዮዲት"}, {"Woinshet", "ወይንሸት"},
	}
	ethiopianFathers = [][2]string{
		{"Bekele", "በቀለ"}, {"Tesfaye", "ተስፋዬ"}, {"Haile", "ኃይሌ"}, {"Alemu", "አለሙ"}, {"Kebede", "ከበደ"},
		{"Tadesse", "ታደሰ"}, {"Girma", "ግርማ"}, {"Wolde", "ወልዴ"}, {"Gebremedhin", "ገብረመድህን"}, {"Mekonnen", "መኮንን"},
		{"Assefa", "አሰፋ"}, {"Demissie", "ደምሴ"}, {"Worku", "ወርቁ"}, {"Tefera", "ተፈራ"}, {"Abera", "አበራ"},
		{"Negash", "ነጋሽ"}, {"Ayele", "አየለ"}, {"Mengistu", "መንግስቱ"}, {"Desalegn", "ደሳለኝ"}, {"Lemma", "ለማ"},
		{"Teshome", "ተሾመ"}, {"Wondimu", "ወንድሙ"}, {"Shiferaw", "ሽፈራው"}, {"Zewdie", "ዘውዴ"}, {"Belay", "በላይ"},
		{"Kassa", "ካሳ"}, {"Mulatu", "ሙላቱ"}, {"Yilma", "ይልማ"}, {"Hailu", "ኃይሉ"}, {"Tilahun", "ጥላሁን"},
		{"Asfaw", "አስፋው"}, {"Getahun", "ጌታሁን"}, {"Amare", "አማረ"}, {"Derese", "ደረሰ"}, {"Legesse", "ለገሰ"},
		{"Mamo", "ማሞ"}, {"Taye", "ታዬ"}, {"Workneh", "ወርቅነህ"}, {"Endale", "እንዳለ"}, {"Gebre", "ገብሬ"},
		{"Mohammed", "መሐመድ"}, {"Ahmed", "አህመድ"}, {"Ali", "አሊ"}, {"Hussen", "ሁሴን"}, {"Kedir", "ከድር"},
		{"Yimer", "ይመር"}, {"Seid", "ሰይድ"}, {"Abdela", "አብደላ"},
	}
)

// ethiopianPopulation makes n distinct names (given name, father's name, and for every other one
// the grandfather's) deterministically, in Latin and in Ge'ez spelling.
func ethiopianPopulation(n int) (latin, geez []string) {
	seen := map[string]bool{}
	for i := 0; len(latin) < n; i++ {
		g := ethiopianGiven[i%len(ethiopianGiven)]
		f := ethiopianFathers[(i*7+i/len(ethiopianGiven))%len(ethiopianFathers)]
		gf := ethiopianFathers[(i*13+5)%len(ethiopianFathers)]
		if g[0] == f[0] || f[0] == gf[0] {
			continue
		}
		l, e := g[0]+" "+f[0], g[1]+" "+f[1]
		if i%2 == 1 {
			l, e = l+" "+gf[0], e+" "+gf[1]
		}
		if seen[l] {
			continue
		}
		seen[l] = true
		latin, geez = append(latin, l), append(geez, e)
	}
	return latin, geez
}

// The Ge'ez spelling the recall test makes reads back as the Latin it came from (vowels and all,
// gemination aside), so the Ge'ez class measures the screener, not this test's speller.
func TestToGeezRoundTrip(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Usama bin Ladin":  "usama bin ladin",
		"Mladen Naletilic": "mladen naletilik",
		"Saddam Hussein":   "sadam husein",
		"Kim Jong Un":      "kim jong un",
	} {
		require.Equal(t, want, personname.Normalize(toGeez(in)), "%s → %s", in, toGeez(in))
	}
}
