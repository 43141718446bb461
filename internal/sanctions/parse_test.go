package sanctions

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/personname"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// requireLine asserts err is a *ParseError of file at line, mentioning want.
func requireLine(t *testing.T, err error, file string, line int, want string) {
	t.Helper()
	var pe *ParseError
	require.True(t, errors.As(err, &pe), "want a *ParseError, got %v", err)
	require.Equal(t, file, pe.File, err.Error())
	require.Equal(t, line, pe.Line, err.Error())
	require.Contains(t, err.Error(), want)
	if line > 0 {
		require.Contains(t, err.Error(), file+" line ")
	}
}

func entryByRef(l List, ref string) (Entry, bool) {
	for _, e := range l.Entries {
		if e.SourceRef == ref {
			return e, true
		}
	}
	return Entry{}, false
}

func TestParseOFACSample(t *testing.T) {
	t.Parallel()
	l, err := ParseOFAC("sdn.csv", fixture(t, "ofac-sdn-sample.csv"), "alt.csv", fixture(t, "ofac-alt-sample.csv"))
	require.NoError(t, err)
	require.Equal(t, OFAC, l.Source)
	require.Len(t, l.Entries, 33)
	require.Equal(t, 2, l.SkippedAliases, "the cut keeps two aliases of entries it does not hold")
	ubl, ok := entryByRef(l, "6365")
	require.True(t, ok)
	require.Equal(t, Individual, ubl.Type)
	require.Equal(t, "BIN LADIN, Usama bin Muhammad bin Awad", ubl.Names[0].Name)
	require.Equal(t, PrimaryName, ubl.Names[0].Kind)
	require.Equal(t, []string{"1957-07-30", "1958"}, ubl.DOBs)
	require.Equal(t, []string{"SDGT", "SDT"}, ubl.Programs)
	var aliases []string
	for _, n := range ubl.Names[1:] {
		require.Equal(t, AliasName, n.Kind)
		aliases = append(aliases, n.Name)
	}
	require.Contains(t, aliases, "BIN LADEN, Osama")
	require.Contains(t, aliases, "BIN LADIN, Usama")
	aero, ok := entryByRef(l, "36")
	require.True(t, ok)
	require.Equal(t, Entity, aero.Type)
	require.Equal(t, "AEROCARIBBEAN AIRLINES", aero.Names[0].Name)
	require.Equal(t, "AERO-CARIBBEAN", aero.Names[1].Name)
	bnc, ok := entryByRef(l, "306")
	require.True(t, ok)
	require.Contains(t, bnc.Names, Name{Kind: WeakAlias, Name: "BNC", Normalized: "bnc"}, "a.k.a. in remarks is a weak alias")
	require.Greater(t, l.Names(), len(l.Entries))
}

func TestParseOFACRefusals(t *testing.T) {
	t.Parallel()
	sdn := fixture(t, "ofac-sdn-sample.csv")
	alt := fixture(t, "ofac-alt-sample.csv")
	lines := strings.SplitAfter(string(sdn), "\n")
	cut := func(n int, extra string) []byte { return []byte(strings.Join(lines[:n], "") + extra) }

	// An alias file with no aliases is a damaged one, not a list without aliases.
	_, err := ParseOFAC("sdn.csv", sdn, "alt.csv", nil)
	requireLine(t, err, "alt.csv", 0, "no aliases")

	// Truncated inside a quoted field, inside the field list, inside a "-0-" marker.
	mid := lines[10]
	_, err = ParseOFAC("sdn.csv", cut(10, mid[:len(mid)/2]), "alt.csv", alt)
	requireLine(t, err, "sdn.csv", 11, "")
	_, err = ParseOFAC("sdn.csv", cut(10, `511,"Some Name",-0- ,"CUBA",-0- ,-0`), "alt.csv", alt)
	requireLine(t, err, "sdn.csv", 11, "fields, want 12")
	_, err = ParseOFAC("sdn.csv", cut(10, `511,"Some Name",-0- ,"CUBA",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0`), "alt.csv", alt)
	requireLine(t, err, "sdn.csv", 11, "broken \"-0-\" marker")
	_, err = ParseOFAC("sdn.csv", cut(10, `511,"Some "Name",-0- ,"CUBA",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- `+"\n"), "alt.csv", alt)
	requireLine(t, err, "sdn.csv", 11, "quote")
	// Bad values.
	for extra, want := range map[string]string{
		`x1,"N",-0- ,"P",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ` + "\n":                   "ent_num",
		`36,"Again",-0- ,"P",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ` + "\n":               "appears twice",
		`999999,-0- ,-0- ,"P",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ` + "\n":              "no name",
		`999999,"N","submarine","P",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ` + "\n":        "SDN_Type",
		`999999,"N` + "\x00" + `",-0- ,"P",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ` + "\n": "control character",
		`999999,"N` + "\xff" + `",-0- ,"P",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ` + "\n": "UTF-8",
		`999999,"...",-0- ,"P",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ` + "\n":             "without letters",
	} {
		_, err = ParseOFAC("sdn.csv", cut(20, extra), "alt.csv", alt)
		requireLine(t, err, "sdn.csv", 21, want)
	}
	// The alternate names file, truncated or damaged.
	altLines := strings.SplitAfter(string(alt), "\n")
	_, err = ParseOFAC("sdn.csv", sdn, "alt.csv", []byte(strings.Join(altLines[:5], "")+`306,220,"aka","NATIONAL BANK`))
	requireLine(t, err, "alt.csv", 6, "")
	_, err = ParseOFAC("sdn.csv", sdn, "alt.csv", []byte(strings.Join(altLines[:5], "")+`306,220,"aka"`+"\n"))
	requireLine(t, err, "alt.csv", 6, "fields, want 5")
	_, err = ParseOFAC("sdn.csv", sdn, "alt.csv", []byte(strings.Join(altLines[:5], "")+`306,220,"xyz","N",-0- `+"\n"))
	requireLine(t, err, "alt.csv", 6, "alt_type")
	_, err = ParseOFAC("sdn.csv", sdn, "alt.csv", append(bytes.Clone(alt), []byte("\n306,221,\"aka\",\"LATE\",-0- \n")...))
	requireLine(t, err, "alt.csv", len(altLines)+1, "after the end-of-file mark")
	// Nothing at all.
	_, err = ParseOFAC("sdn.csv", nil, "alt.csv", nil)
	requireLine(t, err, "sdn.csv", 0, "no entries")
}

func TestParseUNSample(t *testing.T) {
	t.Parallel()
	l, err := ParseUN("un.xml", fixture(t, "un-sample.xml"))
	require.NoError(t, err)
	require.Equal(t, UN, l.Source)
	require.Len(t, l.Entries, 9)
	hamza, ok := entryByRef(l, "QDi.421")
	require.True(t, ok)
	require.Equal(t, "HAMZA USAMA MUHAMMAD BIN LADEN", hamza.Names[0].Name)
	require.Equal(t, Individual, hamza.Type)
	kak, ok := entryByRef(l, "CDi.002")
	require.True(t, ok)
	require.Equal(t, []Name{
		{PrimaryName, "FRANK KAKOLELE BWAMBALE", "frank kakolele bwambale"},
		{AliasName, "FRANK KAKORERE", "frank kakorere"},
		{AliasName, "FRANK KAKORERE BWAMBALE", "frank kakorere bwambale"},
		{AliasName, "AIGLE BLANC", "aigle blanc"},
	}, kak.Names)
	badege, ok := entryByRef(l, "CDi.001")
	require.True(t, ok)
	require.Equal(t, []string{"1971"}, badege.DOBs)
	require.Equal(t, []string{"DRC"}, badege.Programs)
	saddam, ok := entryByRef(l, "IQi.001")
	require.True(t, ok)
	require.Contains(t, saddam.Names, Name{AliasName, "صدام حسين التكريتي", "sadam hasin altakriti"}, "original script is an alias, transliterated")
	network, ok := entryByRef(l, "QDe.004")
	require.True(t, ok)
	require.Equal(t, Entity, network.Type)
	found := false
	for _, n := range network.Names {
		found = found || n.Name == "Usama Bin Laden Network"
	}
	require.True(t, found)
	require.Equal(t, 4, l.Entries[0].Line, "the first <INDIVIDUAL> is on line 4")
}

func TestParseUNRefusals(t *testing.T) {
	t.Parallel()
	x := string(fixture(t, "un-sample.xml"))
	lineOf := func(s string, off int) int { return strings.Count(s[:off], "\n") + 1 }
	// Truncated anywhere before the end: refused, naming the line where the file stops.
	for _, frac := range []float64{0.1, 0.5, 0.9, 0.999} {
		n := int(float64(len(x)) * frac)
		_, err := ParseUN("un.xml", []byte(x[:n]))
		var pe *ParseError
		require.True(t, errors.As(err, &pe), "%v: %v", frac, err)
		require.InDelta(t, lineOf(x, n), pe.Line, 1, "%v: %v", frac, err)
	}
	// The closing tag alone missing.
	end := strings.LastIndex(x, "</CONSOLIDATED_LIST>")
	_, err := ParseUN("un.xml", []byte(x[:end]))
	var pe *ParseError
	require.True(t, errors.As(err, &pe))
	require.Greater(t, pe.Line, 300)
	// A malformed element, an entry without a name, a duplicate, the wrong root, data after it.
	first := strings.Index(x, "<FIRST_NAME>ERIC</FIRST_NAME>")
	_, err = ParseUN("un.xml", []byte(x[:first]+"<FIRST_NAME>ERIC</FIRST>"+x[first+len("<FIRST_NAME>ERIC</FIRST_NAME>"):]))
	requireLine(t, err, "un.xml", lineOf(x, first), "")
	noName := strings.Replace(x, "<FIRST_NAME>ERIC</FIRST_NAME>", "<FIRST_NAME/>", 1)
	noName = strings.Replace(noName, "<SECOND_NAME>BADEGE</SECOND_NAME>", "<SECOND_NAME/>", 1)
	_, err = ParseUN("un.xml", []byte(noName))
	requireLine(t, err, "un.xml", 4, "has no name")
	dup := strings.Replace(x, "<REFERENCE_NUMBER>CDi.002</REFERENCE_NUMBER>", "<REFERENCE_NUMBER>CDi.001</REFERENCE_NUMBER>", 1)
	_, err = ParseUN("un.xml", []byte(dup))
	requireLine(t, err, "un.xml", lineOf(x, strings.Index(x, "<DATAID>6907994"))-1, "already listed on line 4")
	_, err = ParseUN("un.xml", []byte(strings.Replace(x, "CONSOLIDATED_LIST", "OTHER_LIST", 2)))
	requireLine(t, err, "un.xml", 2, "root element")
	_, err = ParseUN("un.xml", []byte(x+"<CONSOLIDATED_LIST/>"))
	require.Error(t, err)
	_, err = ParseUN("un.xml", []byte(`<CONSOLIDATED_LIST><INDIVIDUALS/><ENTITIES/></CONSOLIDATED_LIST>`))
	requireLine(t, err, "un.xml", 0, "no entries")
	_, err = ParseUN("un.xml", []byte("<CONSOLIDATED_LIST>\n<INDIVIDUALS>\n<INDIVIDUAL><DATAID>1</DATAID><FIRST_NAME>A\xffB</FIRST_NAME></INDIVIDUAL></INDIVIDUALS></CONSOLIDATED_LIST>"))
	requireLine(t, err, "un.xml", 3, "UTF-8")
}

func TestParseNational(t *testing.T) {
	t.Parallel()
	l, err := ParseNational("national.csv", fixture(t, "national-sample.csv"))
	require.NoError(t, err)
	require.Equal(t, National, l.Source)
	require.Len(t, l.Entries, 4)
	e := l.Entries[0]
	require.Equal(t, "NAT-0001", e.SourceRef)
	require.Equal(t, 2, e.Line)
	require.Equal(t, []Name{
		{PrimaryName, "Tesfaye Worku Demissie", "tesfaye worku demissie"},
		{AliasName, "ተስፋዬ ወርቁ ደምሴ", "tesfaye werku demse"},
		{AliasName, "Tesfaye Worku", "tesfaye worku"},
	}, e.Names)
	require.Equal(t, []string{"1975-03-14"}, e.DOBs)
	require.Equal(t, Entity, l.Entries[1].Type)
	require.Equal(t, "Red Sea Trading, PLC", l.Entries[1].Names[0].Name)
	require.Equal(t, Individual, l.Entries[2].Type, "type defaults to INDIVIDUAL")
	require.Equal(t, []string{"1968..1970"}, l.Entries[2].DOBs)
	require.Equal(t, []string{"1980", "1981-06"}, l.Entries[3].DOBs)

	// A byte-order mark, columns in another order, a quoted line break, no type column.
	l, err = ParseNational("n.csv", []byte("\ufeffReference,NAME,dob,aliases\r\nR1,\"Two\nLines\",,\"A;B\"\r\nR2,Solo,1970-01-02,\r\n"))
	require.NoError(t, err)
	require.Len(t, l.Entries, 2)
	require.Equal(t, "Two Lines", l.Entries[0].Names[0].Name)
	require.Len(t, l.Entries[0].Names, 3)
	require.Equal(t, 4, l.Entries[1].Line, "lines count the quoted line break")

	for name, tc := range map[string]struct {
		csv  string
		line int
		want string
	}{
		"empty":           {"", 1, "header"},
		"unknown column":  {"name,aliases,dob,reference,extra\n", 1, "unknown column"},
		"missing column":  {"name,aliases,reference\n", 1, `missing column "dob"`},
		"duplicate col":   {"name,name,aliases,dob,reference\n", 1, "twice"},
		"no rows":         {"name,aliases,dob,reference\n", 0, "no entries"},
		"no name":         {"name,aliases,dob,reference\nA,,,R1\n,,,R2\n", 3, "name is required"},
		"no reference":    {"name,aliases,dob,reference\nA,,,\n", 2, "reference is required"},
		"dup reference":   {"name,aliases,dob,reference\nA,,,R1\nB,,,R1\n", 3, "already used on line 2"},
		"bad dob":         {"name,aliases,dob,reference\nA,,1970-13-01,R1\n", 2, "dob"},
		"bad type":        {"name,aliases,dob,reference,type\nA,,,R1,ship\n", 2, "unknown type"},
		"short row":       {"name,aliases,dob,reference\nA,,,R1\nB,,\n", 3, "fields, want 4"},
		"open quote":      {"name,aliases,dob,reference\nA,,,R1\n\"B,,,R2\n", 3, ""},
		"invalid utf8":    {"name,aliases,dob,reference\nA\xff,,,R1\n", 2, "UTF-8"},
		"control char":    {"name,aliases,dob,reference\nA\x01,,,R1\n", 2, "control"},
		"multi-line ref":  {"name,aliases,dob,reference\nA,,,\"R\n1\"\n", 2, "one line"},
		"formula is text": {"name,aliases,dob,reference\n=cmd(),,,R1\n", -1, ""},
	} {
		l, err := ParseNational("n.csv", []byte(tc.csv))
		if tc.line < 0 {
			require.NoError(t, err, name)
			require.Equal(t, "=cmd()", l.Entries[0].Names[0].Name, "a name is data, never evaluated")
			continue
		}
		requireLine(t, err, "n.csv", tc.line, tc.want)
	}
}

func TestParseDispatch(t *testing.T) {
	t.Parallel()
	_, err := Parse(OFAC, File{Name: "a"})
	require.ErrorContains(t, err, "takes 2 file(s)")
	_, err = Parse("EU", File{Name: "a"})
	require.ErrorContains(t, err, "unknown list source")
	for in, want := range map[string]Source{"ofac": OFAC, " UN ": UN, "National": National} {
		got, err := ParseSource(in)
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	_, err = ParseSource("eu")
	require.Error(t, err)
	a := ContentHash(OFAC, File{"x", []byte("1")}, File{"y", []byte("2")})
	require.Equal(t, a, ContentHash(OFAC, File{"other", []byte("1")}, File{"names", []byte("2")}), "names do not count")
	require.NotEqual(t, a, ContentHash(OFAC, File{"x", []byte("2")}, File{"y", []byte("1")}))
	require.NotEqual(t, a, ContentHash(UN, File{"x", []byte("1")}, File{"y", []byte("2")}))
	require.NotEqual(t, ContentHash(OFAC, File{"x", []byte("12")}, File{"y", nil}), ContentHash(OFAC, File{"x", []byte("1")}, File{"y", []byte("2")}))
	_, err = ReadFile("big", bytes.NewReader(make([]byte, MaxFileBytes+1)))
	require.ErrorContains(t, err, "larger than")
}

// checkList is what every successful parse guarantees: entries with a reference, a type and at
// least one name, every name normalised to something, dates in a stored form.
func checkList(t *testing.T, l List) {
	require.NotEmpty(t, l.Entries)
	for _, e := range l.Entries {
		require.NotEmpty(t, e.SourceRef)
		require.Contains(t, []EntryType{Individual, Entity, Vessel, Aircraft}, e.Type)
		require.NotEmpty(t, e.Names)
		require.Equal(t, PrimaryName, e.Names[0].Kind)
		for _, n := range e.Names {
			require.NotEmpty(t, n.Normalized)
			require.Equal(t, personname.Normalize(n.Name), n.Normalized)
			require.LessOrEqual(t, len(n.Name), MaxNameBytes)
		}
		for _, d := range e.DOBs {
			_, ok := parseListDate(d)
			require.True(t, ok, d)
		}
		require.Positive(t, e.Line)
	}
}

// requireParseError: a refusal is always a *ParseError (never a panic or another error).
func requireParsed(t *testing.T, l List, err error) {
	if err != nil {
		var pe *ParseError
		require.True(t, errors.As(err, &pe), "%T %v", err, err)
		require.GreaterOrEqual(t, pe.Line, 0)
		return
	}
	checkList(t, l)
}

// The fuzz seeds are small (a few lines of each format): the engine minimises every input that
// finds new code, and minimising a whole fixture takes it minutes per input.

func FuzzParseOFAC(f *testing.F) {
	sdn := strings.SplitAfter(string(fixture(f, "ofac-sdn-sample.csv")), "\n")
	alt := strings.SplitAfter(string(fixture(f, "ofac-alt-sample.csv")), "\n")
	f.Add([]byte(strings.Join(sdn[:3], "")+sdn[25]), []byte(strings.Join(alt[:3], "")+"\x1a"))
	f.Add([]byte(sdn[0][:40]), []byte(alt[0][:10]))
	f.Add([]byte(`1,"A",individual,"P",-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,-0- ,"DOB circa 1955; a.k.a. 'X'"`), []byte(`1,2,"aka","B",-0- `))
	f.Fuzz(func(t *testing.T, sdn, alt []byte) {
		l, err := ParseOFAC("sdn.csv", sdn, "alt.csv", alt)
		requireParsed(t, l, err)
	})
}

func FuzzParseUN(f *testing.F) {
	f.Add([]byte(`<?xml version="1.0" encoding="UTF-8"?>
<CONSOLIDATED_LIST><INDIVIDUALS><INDIVIDUAL><DATAID>1</DATAID><FIRST_NAME>ERIC</FIRST_NAME><SECOND_NAME>BADEGE</SECOND_NAME>
<REFERENCE_NUMBER>CDi.001</REFERENCE_NUMBER><INDIVIDUAL_ALIAS><QUALITY>Low</QUALITY><ALIAS_NAME>E B</ALIAS_NAME></INDIVIDUAL_ALIAS>
<INDIVIDUAL_DATE_OF_BIRTH><TYPE_OF_DATE>APPROXIMATELY</TYPE_OF_DATE><YEAR>1971</YEAR></INDIVIDUAL_DATE_OF_BIRTH></INDIVIDUAL></INDIVIDUALS>
<ENTITIES><ENTITY><DATAID>2</DATAID><FIRST_NAME>AL &amp; CO</FIRST_NAME><ENTITY_ALIAS><ALIAS_NAME>ALCO</ALIAS_NAME></ENTITY_ALIAS></ENTITY></ENTITIES></CONSOLIDATED_LIST>`))
	f.Add([]byte(`<CONSOLIDATED_LIST><INDIVIDUALS><INDIVIDUAL><DATAID>1</DATAID><FIRST_NAME>A</FIRST_NAME><INDIVIDUAL_DATE_OF_BIRTH><TYPE_OF_DATE>BETWEEN</TYPE_OF_DATE><FROM_YEAR>1950</FROM_YEAR><TO_YEAR>1952</TO_YEAR></INDIVIDUAL_DATE_OF_BIRTH></INDIVIDUAL></INDIVIDUALS></CONSOLIDATED_LIST>`))
	f.Add([]byte(`<CONSOLIDATED_LIST><INDIVIDUALS><INDIVIDUAL><DATAID>1`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseUN("un.xml", data)
		requireParsed(t, l, err)
	})
}

func FuzzParseNational(f *testing.F) {
	f.Add([]byte("name,aliases,dob,reference,type\nTesfaye Worku,ተስፋዬ ወርቁ;T. Worku,1975-03-14,NAT-1,INDIVIDUAL\n\"Red Sea, PLC\",,,NAT-2,ENTITY\n"))
	f.Add([]byte("\ufeffname,aliases,dob,reference\n\"A\nB\",\"C;D\",1970..1971,R\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseNational("n.csv", data)
		requireParsed(t, l, err)
	})
}
