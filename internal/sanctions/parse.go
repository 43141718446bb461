package sanctions

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wagerail/wagerail/internal/platform/personname"
)

// Source is a sanctions list publisher.
type Source string

const (
	OFAC     Source = "OFAC"     // US Treasury OFAC SDN list: sdn.csv + alt.csv
	UN       Source = "UN"       // UN Security Council consolidated list XML
	National Source = "NATIONAL" // a national list in our own CSV (ParseNational)
)

// ParseSource reads a source name as the CLI spells it (ofac, un, national; any case).
func ParseSource(s string) (Source, error) {
	switch Source(strings.ToUpper(strings.TrimSpace(s))) {
	case OFAC:
		return OFAC, nil
	case UN:
		return UN, nil
	case National:
		return National, nil
	}
	return "", fmt.Errorf("unknown list source %q (ofac, un, national)", s)
}

// EntryType is what a listed entry is.
type EntryType string

const (
	Individual EntryType = "INDIVIDUAL"
	Entity     EntryType = "ENTITY"
	Vessel     EntryType = "VESSEL"
	Aircraft   EntryType = "AIRCRAFT"
)

// NameKind is how strongly a list ties a name to its entry.
type NameKind string

const (
	PrimaryName NameKind = "PRIMARY"
	AliasName   NameKind = "ALIAS"
	// WeakAlias: OFAC's "a.k.a." in remarks, a UN alias of quality Low. A match on one alone is
	// at most a REVIEW.
	WeakAlias NameKind = "WEAK_ALIAS"
)

// Name is one name of an entry.
type Name struct {
	Kind       NameKind
	Name       string
	Normalized string // personname.Normalize(Name)
}

// Entry is one listed person, organization, vessel or aircraft as a parser read it.
type Entry struct {
	// SourceRef is the publisher's id: OFAC's ent_num, the UN reference number, the national
	// list's reference.
	SourceRef string
	Type      EntryType
	// Names holds the primary name first, then the aliases (no two with the same normalised form).
	Names []Name
	// DOBs are dates of birth in the stored forms (YYYY, YYYY-MM, YYYY-MM-DD, YYYY..YYYY).
	DOBs     []string
	Programs []string
	// Line is where the entry starts in its file.
	Line int
}

// List is a parsed list file (or pair of files).
type List struct {
	Source  Source
	Entries []Entry
	// SkippedAliases counts OFAC alias rows (alt.csv) of an ent_num the SDN file does not list:
	// there is no entry to attach them to, and an extract of the list can hold them.
	SkippedAliases int
}

// Names counts the names of every entry.
func (l List) Names() int {
	n := 0
	for _, e := range l.Entries {
		n += len(e.Names)
	}
	return n
}

// Bounds of what a parser accepts; beyond them a file is refused, never truncated.
const (
	MaxFileBytes  = 64 << 20
	MaxEntries    = 500_000
	MaxNameBytes  = 2048
	maxNamesEntry = 2000
)

// ParseError is a refused list file: which file, the line (1-based) and what is wrong. Nothing of
// a file with one is ingested.
type ParseError struct {
	File    string
	Line    int
	Problem string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s line %d: %s", e.File, e.Line, e.Problem)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Problem)
}

func perr(file string, line int, format string, args ...any) *ParseError {
	return &ParseError{File: file, Line: line, Problem: fmt.Sprintf(format, args...)}
}

// csvError turns encoding/csv's error into a ParseError at its line.
func csvError(file string, err error) error {
	var ce *csv.ParseError
	if errors.As(err, &ce) {
		return perr(file, ce.Line, "%v", ce.Err)
	}
	return perr(file, 0, "%v", err)
}

// checkText refuses a value Postgres or a reader could not take: invalid UTF-8, NUL and other
// control characters, and over-long names.
func checkText(file string, line int, what, v string) error {
	if !utf8.ValidString(v) {
		return perr(file, line, "%s is not valid UTF-8", what)
	}
	if len(v) > MaxNameBytes {
		return perr(file, line, "%s is longer than %d bytes", what, MaxNameBytes)
	}
	for _, r := range v {
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' {
			return perr(file, line, "%s contains a control character", what)
		}
	}
	return nil
}

// addName appends a name unless it is empty or its normalised form is already there; a name with
// nothing to normalise (no letter or digit) is skipped.
func (e *Entry) addName(kind NameKind, name string) {
	name = strings.Join(strings.Fields(name), " ")
	n := personname.Normalize(name)
	if n == "" || len(e.Names) >= maxNamesEntry {
		return
	}
	for _, have := range e.Names {
		if have.Normalized == n {
			return
		}
	}
	e.Names = append(e.Names, Name{Kind: kind, Name: name, Normalized: n})
}

func (e *Entry) addDOB(d string) {
	for _, have := range e.DOBs {
		if have == d {
			return
		}
	}
	e.DOBs = append(e.DOBs, d)
}

// ofacField trims an OFAC field and turns the "-0-" marker into "".
func ofacField(s string) string {
	s = strings.TrimSpace(s)
	if s == "-0-" {
		return ""
	}
	return s
}

var (
	ofacDOBPattern  = regexp.MustCompile(`(?:^|;\s*)(?:alt\.\s+)?DOB\s+([^;]+)`)
	ofacWeakPattern = regexp.MustCompile(`[afn]\.k\.a\.\s+'([^']+)'`)
)

// ParseOFAC reads OFAC's SDN list: sdn.csv (ent_num, SDN_Name, SDN_Type, Program, Title,
// Call_Sign, Vess_type, Tonnage, GRT, Vess_flag, Vess_owner, Remarks; no header; "-0-" means
// empty) and alt.csv (ent_num, alt_num, alt_type, alt_name, alt_remarks). Dates of birth and weak
// a.k.a.s are read from the remarks. A trailing DOS end-of-file mark (0x1A) is accepted. Any
// malformed line — wrong field count, broken quoting, a broken "-0-" marker (a truncated file), a
// bad or duplicate ent_num — is a *ParseError at its line. An alias of an ent_num the SDN file does
// not list is counted in SkippedAliases.
func ParseOFAC(sdnName string, sdn []byte, altName string, alt []byte) (List, error) {
	list := List{Source: OFAC}
	var entries []Entry
	index := map[string]int{}
	err := readCSV(sdnName, sdn, 12, func(line int, rec []string) error {
		id := ofacField(rec[0])
		if n, err := strconv.Atoi(id); err != nil || n <= 0 || strconv.Itoa(n) != id {
			return perr(sdnName, line, "ent_num %q is not a positive whole number", rec[0])
		}
		if _, dup := index[id]; dup {
			return perr(sdnName, line, "ent_num %s appears twice", id)
		}
		name := ofacField(rec[1])
		if name == "" {
			return perr(sdnName, line, "ent_num %s has no name", id)
		}
		var typ EntryType
		switch strings.ToLower(ofacField(rec[2])) {
		case "":
			typ = Entity
		case "individual":
			typ = Individual
		case "vessel":
			typ = Vessel
		case "aircraft":
			typ = Aircraft
		default:
			return perr(sdnName, line, "ent_num %s has unknown SDN_Type %q", id, ofacField(rec[2]))
		}
		e := Entry{SourceRef: id, Type: typ, Line: line}
		e.addName(PrimaryName, name)
		if len(e.Names) == 0 {
			return perr(sdnName, line, "ent_num %s has a name without letters or digits", id)
		}
		for _, p := range strings.Split(ofacField(rec[3]), "] [") {
			if p = strings.Trim(p, "[] "); p != "" {
				e.Programs = append(e.Programs, p)
			}
		}
		remarks := ofacField(rec[11])
		for _, m := range ofacDOBPattern.FindAllStringSubmatch(remarks, -1) {
			if d, ok := ofacDOB(m[1]); ok {
				e.addDOB(d)
			}
		}
		for _, m := range ofacWeakPattern.FindAllStringSubmatch(remarks, -1) {
			e.addName(WeakAlias, m[1])
		}
		index[id] = len(entries)
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return List{}, err
	}
	aliases := 0
	err = readCSV(altName, alt, 5, func(line int, rec []string) error {
		aliases++
		id := ofacField(rec[0])
		if n, err := strconv.Atoi(id); err != nil || n <= 0 || strconv.Itoa(n) != id {
			return perr(altName, line, "ent_num %q is not a positive whole number", rec[0])
		}
		if n, err := strconv.Atoi(ofacField(rec[1])); err != nil || n <= 0 {
			return perr(altName, line, "alt_num %q is not a positive whole number", rec[1])
		}
		switch strings.ToLower(ofacField(rec[2])) {
		case "aka", "fka", "nka":
		default:
			return perr(altName, line, "unknown alt_type %q", ofacField(rec[2]))
		}
		name := ofacField(rec[3])
		if name == "" {
			return perr(altName, line, "alias without a name")
		}
		i, ok := index[id]
		if !ok {
			list.SkippedAliases++
			return nil
		}
		entries[i].addName(AliasName, name)
		return nil
	})
	if err != nil {
		return List{}, err
	}
	if len(entries) == 0 {
		return List{}, perr(sdnName, 0, "no entries")
	}
	if aliases == 0 {
		// OFAC publishes thousands; an empty file is a failed download.
		return List{}, perr(altName, 0, "no aliases")
	}
	list.Entries = entries
	return list, nil
}

// readCSV reads a headerless CSV of exactly fields fields per record, strictly (RFC 4180
// quoting), calling fn with each record's first line. Every value is checked with checkText; a
// value that is a broken "-0-" marker ("-" or "-0": a file cut short) is refused.
func readCSV(file string, data []byte, fields int, fn func(line int, rec []string) error) error {
	if len(data) > MaxFileBytes {
		return perr(file, 0, "larger than %d bytes", MaxFileBytes)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1 // checked below, so the message says what was expected
	r.ReuseRecord = true
	n := 0
	eof := false
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return csvError(file, err)
		}
		line, _ := r.FieldPos(0)
		if eof {
			return perr(file, line, "data after the end-of-file mark")
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "\x1a" {
			eof = true
			continue
		}
		if len(rec) != fields {
			return perr(file, line, "%d fields, want %d (a truncated or damaged file?)", len(rec), fields)
		}
		for i, v := range rec {
			if err := checkText(file, line, fmt.Sprintf("field %d", i+1), v); err != nil {
				return err
			}
			if t := strings.TrimSpace(v); t == "-" || t == "-0" {
				l, _ := r.FieldPos(i)
				return perr(file, l, "field %d is a broken \"-0-\" marker (a truncated file?)", i+1)
			}
		}
		if n++; n > MaxEntries*4 {
			return perr(file, line, "more than %d records", MaxEntries*4)
		}
		if err := fn(line, rec); err != nil {
			return err
		}
	}
}

// National list CSV columns (a header row names them, in any order and case; type is optional).
const (
	NationalName      = "name"
	NationalAliases   = "aliases"   // semicolon-separated
	NationalDOB       = "dob"       // semicolon-separated YYYY, YYYY-MM, YYYY-MM-DD or YYYY..YYYY
	NationalReference = "reference" // the list's id of the entry; unique
	NationalType      = "type"      // INDIVIDUAL (default), ENTITY, VESSEL or AIRCRAFT
)

// ParseNational reads a national list in Wagerail's CSV: a header row naming the columns name,
// aliases, dob, reference and optionally type, then one entry per row. Quoting is RFC 4180 (a
// quoted field may hold commas, semicolons and line breaks). A byte-order mark is skipped. Any bad
// row — missing name or reference, a duplicate reference, an unreadable date, a wrong field
// count — is a *ParseError at its line.
func ParseNational(file string, data []byte) (List, error) {
	entries, err := parseNational(file, data)
	if err != nil {
		return List{}, err
	}
	return List{Source: National, Entries: entries}, nil
}

func parseNational(file string, data []byte) ([]Entry, error) {
	if len(data) > MaxFileBytes {
		return nil, perr(file, 0, "larger than %d bytes", MaxFileBytes)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err == io.EOF {
		return nil, perr(file, 1, "empty file: want a header row name,aliases,dob,reference[,type]")
	}
	if err != nil {
		return nil, csvError(file, err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		switch h {
		case NationalName, NationalAliases, NationalDOB, NationalReference, NationalType:
		default:
			return nil, perr(file, 1, "unknown column %q (want name, aliases, dob, reference and optionally type)", header[i])
		}
		if _, dup := col[h]; dup {
			return nil, perr(file, 1, "column %q appears twice", h)
		}
		col[h] = i
	}
	for _, need := range []string{NationalName, NationalAliases, NationalDOB, NationalReference} {
		if _, ok := col[need]; !ok {
			return nil, perr(file, 1, "missing column %q", need)
		}
	}
	var entries []Entry
	seen := map[string]int{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(file, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(header) {
			return nil, perr(file, line, "%d fields, want %d", len(rec), len(header))
		}
		for i, v := range rec {
			if err := checkText(file, line, strings.TrimSpace(header[i]), v); err != nil {
				return nil, err
			}
		}
		get := func(c string) string {
			if i, ok := col[c]; ok {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		ref := get(NationalReference)
		if ref == "" {
			return nil, perr(file, line, "reference is required")
		}
		if strings.ContainsAny(ref, "\r\n\t") {
			return nil, perr(file, line, "reference must be on one line")
		}
		if first, dup := seen[ref]; dup {
			return nil, perr(file, line, "reference %q already used on line %d", ref, first)
		}
		seen[ref] = line
		e := Entry{SourceRef: ref, Type: Individual, Line: line}
		if t := strings.ToUpper(get(NationalType)); t != "" {
			switch EntryType(t) {
			case Individual, Entity, Vessel, Aircraft:
				e.Type = EntryType(t)
			default:
				return nil, perr(file, line, "unknown type %q (INDIVIDUAL, ENTITY, VESSEL, AIRCRAFT)", t)
			}
		}
		e.addName(PrimaryName, get(NationalName))
		if len(e.Names) == 0 {
			return nil, perr(file, line, "name is required (and must contain a letter or digit)")
		}
		for _, a := range strings.Split(get(NationalAliases), ";") {
			e.addName(AliasName, a)
		}
		for _, d := range strings.Split(get(NationalDOB), ";") {
			if d = strings.TrimSpace(d); d == "" {
				continue
			}
			if _, ok := parseListDate(d); !ok {
				return nil, perr(file, line, "dob %q is not YYYY, YYYY-MM, YYYY-MM-DD or YYYY..YYYY", d)
			}
			e.addDOB(d)
		}
		if len(entries) >= MaxEntries {
			return nil, perr(file, line, "more than %d entries", MaxEntries)
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, perr(file, 0, "no entries")
	}
	return entries, nil
}

// The UN consolidated list's XML (the parts screening uses).
type unAlias struct {
	Quality string `xml:"QUALITY"`
	Name    string `xml:"ALIAS_NAME"`
	DOB     string `xml:"DATE_OF_BIRTH"`
}

type unDOB struct {
	Type     string `xml:"TYPE_OF_DATE"`
	Date     string `xml:"DATE"`
	Year     string `xml:"YEAR"`
	FromYear string `xml:"FROM_YEAR"`
	ToYear   string `xml:"TO_YEAR"`
}

type unEntry struct {
	DataID         string    `xml:"DATAID"`
	First          string    `xml:"FIRST_NAME"`
	Second         string    `xml:"SECOND_NAME"`
	Third          string    `xml:"THIRD_NAME"`
	Fourth         string    `xml:"FOURTH_NAME"`
	ListType       string    `xml:"UN_LIST_TYPE"`
	Reference      string    `xml:"REFERENCE_NUMBER"`
	OriginalScript []string  `xml:"NAME_ORIGINAL_SCRIPT"`
	IndividualAKA  []unAlias `xml:"INDIVIDUAL_ALIAS"`
	EntityAKA      []unAlias `xml:"ENTITY_ALIAS"`
	DOBs           []unDOB   `xml:"INDIVIDUAL_DATE_OF_BIRTH"`
}

// ParseUN reads the UN Security Council Consolidated List XML (CONSOLIDATED_LIST with INDIVIDUALS
// and ENTITIES), streaming: names are FIRST_NAME … FOURTH_NAME, aliases of quality Low are weak,
// names in original script are aliases, dates of birth come from INDIVIDUAL_DATE_OF_BIRTH (EXACT,
// APPROXIMATELY — widened a year either side —, BETWEEN) and aliases' DATE_OF_BIRTH. The source
// reference is REFERENCE_NUMBER (DATAID when there is none). A syntax error, a file that ends
// before </CONSOLIDATED_LIST>, an entry without id or name, or a duplicate reference is a
// *ParseError at its line.
func ParseUN(file string, data []byte) (List, error) {
	entries, err := parseUN(file, data)
	if err != nil {
		return List{}, err
	}
	return List{Source: UN, Entries: entries}, nil
}

func parseUN(file string, data []byte) ([]Entry, error) {
	if len(data) > MaxFileBytes {
		return nil, perr(file, 0, "larger than %d bytes", MaxFileBytes)
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	line := func() int { l, _ := d.InputPos(); return l }
	xmlErr := func(err error) error {
		var se *xml.SyntaxError
		if errors.As(err, &se) {
			return perr(file, se.Line, "%s", se.Msg)
		}
		if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
			return perr(file, line(), "the file ends before </CONSOLIDATED_LIST> (truncated?)")
		}
		return perr(file, line(), "%v", err)
	}
	var entries []Entry
	seen := map[string]int{}
	depth := 0
	closed := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, xmlErr(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if closed {
				return nil, perr(file, line(), "data after </CONSOLIDATED_LIST>")
			}
			depth++
			switch {
			case depth == 1 && t.Name.Local != "CONSOLIDATED_LIST":
				return nil, perr(file, line(), "root element is <%s>, want <CONSOLIDATED_LIST>", t.Name.Local)
			case depth == 2 && t.Name.Local != "INDIVIDUALS" && t.Name.Local != "ENTITIES":
				if err := d.Skip(); err != nil {
					return nil, xmlErr(err)
				}
				depth--
			case depth == 3:
				start := line()
				var typ EntryType
				switch t.Name.Local {
				case "INDIVIDUAL":
					typ = Individual
				case "ENTITY":
					typ = Entity
				default:
					return nil, perr(file, start, "unexpected <%s> in the list", t.Name.Local)
				}
				var u unEntry
				if err := d.DecodeElement(&u, &t); err != nil {
					return nil, xmlErr(err)
				}
				depth--
				e, err := unToEntry(file, start, typ, u)
				if err != nil {
					return nil, err
				}
				if first, dup := seen[e.SourceRef]; dup {
					return nil, perr(file, start, "reference %s already listed on line %d", e.SourceRef, first)
				}
				seen[e.SourceRef] = start
				if len(entries) >= MaxEntries {
					return nil, perr(file, start, "more than %d entries", MaxEntries)
				}
				entries = append(entries, e)
			}
		case xml.EndElement:
			depth--
			if depth == 0 {
				closed = true
			}
		case xml.CharData:
			if depth <= 2 && len(bytes.TrimSpace(t)) > 0 {
				return nil, perr(file, line(), "unexpected text in the list structure")
			}
		}
	}
	if !closed {
		return nil, perr(file, line(), "the file ends before </CONSOLIDATED_LIST> (truncated?)")
	}
	if len(entries) == 0 {
		return nil, perr(file, 0, "no entries")
	}
	return entries, nil
}

func unToEntry(file string, line int, typ EntryType, u unEntry) (Entry, error) {
	ref := strings.TrimSpace(u.Reference)
	if ref == "" {
		ref = strings.TrimSpace(u.DataID)
	}
	if ref == "" {
		return Entry{}, perr(file, line, "an entry without REFERENCE_NUMBER or DATAID")
	}
	e := Entry{SourceRef: ref, Type: typ, Line: line}
	parts := []string{}
	for _, p := range []string{u.First, u.Second, u.Third, u.Fourth} {
		if p = strings.TrimSpace(p); p != "" {
			parts = append(parts, p)
		}
	}
	for _, v := range append(append([]string{ref}, parts...), u.OriginalScript...) {
		if err := checkText(file, line, "a name", v); err != nil {
			return Entry{}, err
		}
	}
	e.addName(PrimaryName, strings.Join(parts, " "))
	if len(e.Names) == 0 {
		return Entry{}, perr(file, line, "entry %s has no name", ref)
	}
	for _, a := range append(u.IndividualAKA, u.EntityAKA...) {
		if err := checkText(file, line, "an alias", a.Name); err != nil {
			return Entry{}, err
		}
		kind := AliasName
		if strings.EqualFold(strings.TrimSpace(a.Quality), "low") {
			kind = WeakAlias
		}
		e.addName(kind, a.Name)
		if dob := strings.TrimSpace(a.DOB); dob != "" {
			if _, ok := parseListDate(dob); ok {
				e.addDOB(dob)
			}
		}
	}
	for _, s := range u.OriginalScript {
		e.addName(AliasName, s)
	}
	for _, d := range u.DOBs {
		if s, ok := unDate(d); ok {
			e.addDOB(s)
		}
	}
	if lt := strings.TrimSpace(u.ListType); lt != "" {
		e.Programs = []string{lt}
	}
	return e, nil
}

// unDate reads one INDIVIDUAL_DATE_OF_BIRTH; ok is false when it holds nothing usable (a NOTE
// alone, an empty element).
func unDate(d unDOB) (string, bool) {
	var l listDate
	switch {
	case strings.TrimSpace(d.FromYear) != "" || strings.TrimSpace(d.ToYear) != "":
		f, err1 := strconv.Atoi(strings.TrimSpace(d.FromYear))
		t, err2 := strconv.Atoi(strings.TrimSpace(d.ToYear))
		if err1 != nil || err2 != nil || f < 1000 || t < f || t > 9999 {
			return "", false
		}
		l = listDate{fromYear: f, toYear: t}
	case strings.TrimSpace(d.Date) != "":
		var ok bool
		if l, ok = parseListDate(strings.TrimSpace(d.Date)); !ok || l.fromYear != l.toYear {
			return "", false
		}
	case strings.TrimSpace(d.Year) != "":
		y, err := strconv.Atoi(strings.TrimSpace(d.Year))
		if err != nil || y < 1000 || y > 9999 {
			return "", false
		}
		l = listDate{fromYear: y, toYear: y}
	default:
		return "", false
	}
	if strings.EqualFold(strings.TrimSpace(d.Type), "APPROXIMATELY") {
		l = listDate{fromYear: l.fromYear - 1, toYear: l.toYear + 1}
	}
	return l.format(), true
}
