package sanctions

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/personname"
)

// Published values (Winkler 1990; the usual worked examples).
func TestJaroWinklerKnownValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want float64
	}{
		{"MARTHA", "MARHTA", 0.9611},
		{"DWAYNE", "DUANE", 0.8400},
		{"DIXON", "DICKSONX", 0.8133},
		{"JELLYFISH", "SMELLYFISH", 0.8963},
		{"CRATE", "TRACE", 0.7333}, // Jaro 0.733 > 0.7 but no common prefix
		{"SHACKLEFORD", "SHACKELFORD", 0.9818},
		{"abc", "abc", 1},
		{"abc", "xyz", 0},
		{"", "", 1},
		{"", "a", 0},
		{"a", "a", 1},
		{"ab", "ba", 0}, // window 0: no match in reach
		{"usama", "osama", 0.8667},
		{"ladin", "laden", 0.9067},
	} {
		got := JaroWinkler(tc.a, tc.b)
		require.InDelta(t, tc.want, got, 0.00005, "%q %q", tc.a, tc.b)
		require.InDelta(t, got, JaroWinkler(tc.b, tc.a), 1e-12, "symmetric %q %q", tc.a, tc.b)
	}
	// Jaro itself: MARTHA/MARHTA is 0.944 before the prefix boost.
	require.InDelta(t, 0.9444, jaro([]rune("MARTHA"), []rune("MARHTA")), 0.00005)
}

func TestNameScorePairs(t *testing.T) {
	t.Parallel()
	type want int
	const (
		clear want = iota
		review
		block
	)
	for _, tc := range []struct {
		a, b string
		want want
	}{
		// Transliteration variants, reordering, diacritics, Ethiopic: the same name.
		{"Osama bin Laden", "Usama Bin Ladin", block},
		{"Bekele Abebe", "Abebe Bekele", block},
		{"BIN LADIN, Usama", "Usama bin Ladin", block},
		{"José Núñez", "Jose Nunez", block},
		{"አበበ በቀለ", "Abebe Bekele", block},
		{"ተስፋዬ ወርቁ", "Tesfaye Worku", block},
		{"Binladen Osama", "Osama bin Laden", block},
		{"Naletilich Mladen", "NALETILIC, Mladen", block},
		{"Muhammad Ali", "Mohammed Ali", block},
		// Partial names: a person decides.
		{"Abebe Bekele Tesfaye", "Abebe Bekele", review},
		{"Laden Osama", "BIN LADEN, Osama", review},
		{"Mohammed Ahmed", "Mohammad Ahmadi", review},
		{"Hamza Usama Muhammad bin Laden", "BIN LADEN, Hamza", review},
		// Words broken up (an audit's evasions, CLEAR before rejoin): reviewed.
		{"Gir-ma Wol-de Tes-faye", "Girma Wolde Tesfaye", review},
		{"Gir.ma Wol.de Tes.faye", "Girma Wolde Tesfaye", review},
		{"G i r m a  W o l d e  T e s f a y e", "Girma Wolde Tesfaye", review},
		{"U-s-a-m-a  B-i-n  L-a-d-i-n", "BIN LADIN, Usama", review},
		{"I.m.a.d K.h.a.l.i.l A.L A.L.A.M.I", "ALAMI, Imad Khalil al-", review},
		// Unrelated, or one shared given name.
		{"A B Tesfaye", "Abebe Bekele", clear},
		{"Ge Ta Chew", "Girma Wolde Tesfaye", clear},
		{"Ali", "Ali Hassan Mohammed", clear},
		{"John Smith", "John", clear},
		{"Saddam Hussein", "SALAMI, Hossein", clear},
		{"Tigist Haile Mariam", "Abebe Bekele", clear},
		{"Selamawit Getachew", "Salah Gatar", clear},
		{"Kim Jong Un", "KIM, Jung Jong", clear},
		{"", "Abebe", clear},
		{"!!!", "!!!", clear},
	} {
		s := NameScore(tc.a, tc.b)
		require.GreaterOrEqual(t, s, 0.0)
		require.LessOrEqual(t, s, 1.0)
		got := map[Outcome]want{Clear: clear, Review: review, Block: block}[Decide(s, false)]
		require.Equal(t, tc.want, got, "%q vs %q scored %.4f", tc.a, tc.b, s)
	}
	require.Equal(t, 1.0, NameScore("Osama bin Laden", "LADEN, Osama bin"))
}

func TestDecide(t *testing.T) {
	t.Parallel()
	require.Equal(t, Block, Decide(BlockThreshold, false))
	require.Equal(t, Review, Decide(BlockThreshold, true), "a weak alias never blocks")
	require.Equal(t, Review, Decide(1, true))
	require.Equal(t, Review, Decide(ReviewThreshold, false))
	require.Equal(t, Clear, Decide(math.Nextafter(ReviewThreshold, 0), false))
	require.Equal(t, Clear, Decide(0, false))
	// An exact name with a date of birth that disagrees is still reviewed, never cleared.
	require.Equal(t, Review, Decide(adjust(1, DOBDisagree), false))
	require.Equal(t, Block, Decide(adjust(0.93, DOBAgree), false))
	require.Equal(t, Review, Decide(adjust(0.93, DOBPartial), false))
	require.Equal(t, 1.0, adjust(0.99, DOBAgree))
	// A listed name broken up (rejoin) is reviewed; with the listed date of birth it blocks.
	require.Equal(t, Review, Decide(rejoinWeight, false))
	require.Equal(t, Block, Decide(adjust(rejoinWeight, DOBAgree), false))
	require.Equal(t, 0.0, adjust(0.05, DOBDisagree))
	// A disagreeing date of birth (the applicant's word) stops a BLOCK but never clears a REVIEW.
	for _, score := range []float64{ReviewThreshold, 0.86, 0.92, BlockThreshold, 1} {
		require.Equal(t, Review, Decide(adjust(score, DOBDisagree), false), "%v", score)
	}
	require.Equal(t, Clear, Decide(adjust(math.Nextafter(ReviewThreshold, 0), DOBDisagree), false))
}

// TestListedNameWithExtraNames: a whole listed name with ordinary names around it is never
// cleared, however many (the extra-token penalty stops at review), nor one whose Arabic particles
// are spelt another way; a listed name's tokens only partly present are scored as before.
func TestListedNameWithExtraNames(t *testing.T) {
	t.Parallel()
	extras := []string{"Abebe", "Kebede", "Tesfaye", "Worku", "Alemu", "Girma"}
	for _, listed := range []string{"BIN LADIN, Usama", "Abebe Bekele", "Ayman al-Zawahiri", "Kim Jong Un"} {
		for n := 1; n <= len(extras); n++ {
			for _, subject := range []string{strings.Join(extras[:n], " ") + " " + listed, listed + " " + strings.Join(extras[:n], " ")} {
				score := NameScore(subject, listed)
				require.GreaterOrEqual(t, score, ReviewThreshold, "%q vs %q", subject, listed)
				require.Equal(t, Review, Decide(adjust(score, DOBDisagree), false), "%q vs %q, another date of birth", subject, listed)
			}
		}
	}
	// The Arabic particles in another spelling are the same particle.
	screened := func(subject, listed string) float64 {
		return tokenScore(matchTokens(personname.Normalize(subject)), matchTokens(personname.Normalize(listed)))
	}
	for subject, listed := range map[string]string{"Usama ibn Ladin": "BIN LADIN, Usama", "Osama bn Laden": "Usama bin Ladin",
		"Aiman az-Zawahiri": "AL-ZAWAHIRI, Ayman", "Abd el-Rahman": "Abd al-Rahman"} {
		require.GreaterOrEqual(t, screened(subject, listed), ReviewThreshold, "%q vs %q", subject, listed)
	}
	// One listed token shared is still no hit, and two of three still only a partial match.
	require.Less(t, NameScore("Usama Abebe Kebede Tesfaye", "Usama bin Ladin"), ReviewThreshold)
	require.Less(t, NameScore("Abebe Kebede", "Abebe"), ReviewThreshold)
}

func TestDOB(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"14 Jun 1975":                "1975-06-14",
		"Jun 1975":                   "1975-06",
		"1975":                       "1975",
		"1975.":                      "1975",
		"circa 1955":                 "1954..1956",
		"circa Apr 1955":             "1954..1956",
		"1962 to 1964":               "1962..1964",
		"01 Jan 1989 to 31 Dec 1989": "1989",
		"01 Jan 1960 to 31 Dec 1962": "1960..1962",
		"circa 1955-1958":            "1954..1959",
	} {
		got, ok := ofacDOB(in)
		require.True(t, ok, in)
		require.Equal(t, want, got, in)
		_, ok = parseListDate(got)
		require.True(t, ok, got)
	}
	for _, bad := range []string{"", "sometime", "32 Jan 1970", "1964 to 1962", "Foo 1970", "14 Jun", "99999"} {
		_, ok := ofacDOB(bad)
		require.False(t, ok, bad)
	}

	d := time.Date(1957, 7, 30, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		listed []string
		want   DOBMatch
	}{
		{nil, DOBUnknown},
		{[]string{"garbage"}, DOBUnknown},
		{[]string{"1957-07-30"}, DOBAgree},
		{[]string{"1958", "1957-07-30"}, DOBAgree},
		{[]string{"1957"}, DOBPartial},
		{[]string{"1957-07"}, DOBPartial},
		{[]string{"1956..1958"}, DOBPartial},
		{[]string{"1957-07-31"}, DOBDisagree},
		{[]string{"1958", "1960..1962"}, DOBDisagree},
		{[]string{"1958", "1957"}, DOBPartial},
	} {
		require.Equal(t, tc.want, CompareDOB(d, tc.listed), "%v", tc.listed)
	}
	require.Equal(t, DOBUnknown, CompareDOB(time.Time{}, []string{"1957"}))

	now := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	got, err := ParseDOB("1957-07-30", now)
	require.NoError(t, err)
	require.Equal(t, d, got)
	got, err = ParseDOB("", now)
	require.NoError(t, err)
	require.True(t, got.IsZero())
	for _, bad := range []string{"1957-7-30", "30/07/1957", "1957-02-30", "2027-01-01", "1899-12-31", "1957-07-30T00:00:00Z"} {
		_, err := ParseDOB(bad, now)
		require.Error(t, err, bad)
	}
}

// FuzzNameScore: any two names score within [0, 1], a name with a token scores 1 against itself,
// and nothing panics.
func FuzzNameScore(f *testing.F) {
	f.Add("Osama bin Laden", "Usama Bin Ladin")
	f.Add("አበበ በቀለ", "Abebe Bekele")
	f.Add("a b c d e f g h i j k l m n", "n m l k j i h g f e d c b a")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		s := NameScore(a, b)
		require.False(t, math.IsNaN(s))
		require.GreaterOrEqual(t, s, 0.0)
		require.LessOrEqual(t, s, 1.0)
		if len(Tokens(a)) > 0 {
			require.Equal(t, 1.0, NameScore(a, a))
		}
	})
}
