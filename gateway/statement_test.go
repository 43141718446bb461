package gateway

import (
	"bytes"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func date(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func ptr[T any](v T) *T { return &v }

func TestParseStatementCSV(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/statement.csv")
	require.NoError(t, err)
	lines, err := ParseStatementCSV(raw)
	require.NoError(t, err)
	require.Equal(t, []StatementLine{
		{EntryRef: "E0001", BookingDate: date("2026-03-02"), ValueDate: date("2026-03-02"), Reference: "ewa-1001", Direction: Debit, AmountSantim: 125050, Currency: "ETB", Counterparty: "1000200030", BalanceAfterSantim: ptr(int64(9874950))},
		{EntryRef: "E0002", BookingDate: date("2026-03-02"), ValueDate: date("2026-03-03"), Reference: "", Direction: Credit, AmountSantim: 1, Currency: "ETB", Counterparty: `Bank, fees "adj"`, BalanceAfterSantim: ptr(int64(9874951))},
		{EntryRef: "E0003", BookingDate: date("2026-03-03"), ValueDate: date("2026-03-03"), Reference: "loan-77", Direction: Credit, AmountSantim: 10000000000, Currency: "ETB", Counterparty: "2000300040", BalanceAfterSantim: ptr(int64(10009874951))},
	}, lines)

	// Columns in another order, a BOM and CRLF line ends are the same statement.
	reordered := "\xef\xbb\xbfentryRef,bookingDate,valueDate,reference,direction,amountSantim,currency,counterparty,balanceAfterSantim\r\n" +
		"E9,2026-03-02,2026-03-02,r,CRDT,5,ETB,x,-5\r\n"
	lines, err = ParseStatementCSV([]byte(reordered))
	require.NoError(t, err)
	require.Len(t, lines, 1)
	require.Equal(t, "E9", lines[0].EntryRef)
	require.Equal(t, int64(-5), *lines[0].BalanceAfterSantim)

	// Header only: an empty statement is valid.
	lines, err = ParseStatementCSV([]byte(strings.Join(csvColumns, ",") + "\n"))
	require.NoError(t, err)
	require.Empty(t, lines)
}

func TestParseStatementCSVRejects(t *testing.T) {
	t.Parallel()
	header := strings.Join(csvColumns, ",") + "\n"
	good := "2026-03-02,2026-03-02,E1,r1,CRDT,100,ETB,cp,100\n"
	for name, tc := range map[string]struct{ body, want string }{
		"empty":             {"", "empty file"},
		"missing column":    {"bookingDate,valueDate,entryRef\n", `missing column "reference"`},
		"duplicate column":  {"bookingDate,bookingDate,entryRef,reference,direction,amountSantim,currency,counterparty,balanceAfterSantim\n", "appears twice"},
		"float amount":      {header + "2026-03-02,2026-03-02,E1,r1,CRDT,100.5,ETB,cp,100\n", "line 2 amountSantim"},
		"exponent amount":   {header + "2026-03-02,2026-03-02,E1,r1,CRDT,1e3,ETB,cp,100\n", "amountSantim"},
		"negative amount":   {header + "2026-03-02,2026-03-02,E1,r1,CRDT,-100,ETB,cp,100\n", "amountSantim"},
		"plus amount":       {header + "2026-03-02,2026-03-02,E1,r1,CRDT,+100,ETB,cp,100\n", "amountSantim"},
		"zero amount":       {header + "2026-03-02,2026-03-02,E1,r1,CRDT,0,ETB,cp,100\n", "zero amount"},
		"overflow":          {header + "2026-03-02,2026-03-02,E1,r1,CRDT,9223372036854775808,ETB,cp,100\n", "out of range"},
		"bad direction":     {header + "2026-03-02,2026-03-02,E1,r1,CREDIT,100,ETB,cp,100\n", "direction"},
		"bad date":          {header + "2026-02-30,2026-03-02,E1,r1,CRDT,100,ETB,cp,100\n", "bookingDate"},
		"datetime":          {header + "2026-03-02T00:00:00Z,2026-03-02,E1,r1,CRDT,100,ETB,cp,100\n", "bookingDate"},
		"empty entryRef":    {header + "2026-03-02,2026-03-02,,r1,CRDT,100,ETB,cp,100\n", "entryRef: empty"},
		"duplicate entry":   {header + good + good, "already on line 2"},
		"bad currency":      {header + "2026-03-02,2026-03-02,E1,r1,CRDT,100,etb,cp,100\n", "currency"},
		"short record":      {header + "2026-03-02,2026-03-02,E1\n", "line 2"},
		"bad balance":       {header + "2026-03-02,2026-03-02,E1,r1,CRDT,100,ETB,cp,1.5\n", "balanceAfterSantim"},
		"control character": {header + "2026-03-02,2026-03-02,E1,\"r\x001\",CRDT,100,ETB,cp,100\n", "control"},
		"bad quoting":       {header + "2026-03-02,2026-03-02,E1,\"r1,CRDT,100,ETB,cp,100\n", "line"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseStatementCSV([]byte(tc.body))
			require.ErrorIs(t, err, ErrStatement)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestParseCamt053(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/statement.camt053.xml")
	require.NoError(t, err)
	lines, err := ParseCamt053(raw)
	require.NoError(t, err)
	require.Equal(t, []StatementLine{
		{EntryRef: "E0001", BookingDate: date("2026-03-02"), ValueDate: date("2026-03-02"), Reference: "ewa-1001", Direction: Debit, AmountSantim: 125050, Currency: "ETB", Counterparty: "1000200030"},
		// ValDt as a date-time is taken as its UTC date; a line without details has no reference.
		{EntryRef: "E0002", BookingDate: date("2026-03-02"), ValueDate: date("2026-03-02"), Direction: Credit, AmountSantim: 1, Currency: "ETB"},
		{EntryRef: "E0003", BookingDate: date("2026-03-03"), ValueDate: date("2026-03-03"), Reference: "loan-77", Direction: Credit, AmountSantim: 10000000000, Currency: "ETB", Counterparty: "2000300040"},
		// E0004 is pending (Sts PDNG): not a booked line.
	}, lines)
}

func TestParseCamt053Rejects(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/statement.camt053.xml")
	require.NoError(t, err)
	doc := string(raw)
	mutate := func(old, new string) []byte {
		require.Contains(t, doc, old)
		return []byte(strings.Replace(doc, old, new, 1))
	}
	for name, tc := range map[string]struct {
		body []byte
		want string
	}{
		"not xml":          {[]byte("bookingDate,valueDate"), "well-formed"},
		"truncated":        {raw[:len(raw)/2], "well-formed"},
		"other namespace":  {mutate("camt.053.001.02", "camt.052.001.02"), "namespace"},
		"no namespace":     {mutate(` xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"`, ""), "namespace"},
		"three decimals":   {mutate("1250.50", "1250.505"), "more than two decimals"},
		"comma decimal":    {mutate("1250.50", "1250,50"), "not a decimal"},
		"negative":         {mutate("1250.50", "-1250.50"), "not a decimal"},
		"exponent":         {mutate("1250.50", "1.2505E3"), "Amt"},
		"trailing dot":     {mutate("1250.50", "1250."), "not a decimal"},
		"leading dot":      {mutate("1250.50", ".50"), "not a decimal"},
		"empty amount":     {mutate("1250.50", ""), "Amt"},
		"zero":             {mutate("1250.50", "0.00"), "zero amount"},
		"huge":             {mutate("1250.50", "92233720368547758.08"), "out of range"},
		"missing currency": {mutate(`<Amt Ccy="ETB">1250.50`, `<Amt>1250.50`), "Ccy"},
		"bad indicator":    {mutate("<CdtDbtInd>DBIT", "<CdtDbtInd>DEBIT"), "CdtDbtInd"},
		"bad date":         {mutate("<BookgDt><Dt>2026-03-02", "<BookgDt><Dt>02/03/2026"), "BookgDt"},
		"missing date":     {mutate("<BookgDt><Dt>2026-03-02</Dt></BookgDt>", ""), "BookgDt"},
		"empty ref":        {mutate("<NtryRef>E0001</NtryRef>", "<NtryRef></NtryRef>"), "NtryRef"},
		"duplicate ref":    {mutate("<NtryRef>E0003</NtryRef>", "<NtryRef>E0001</NtryRef>"), "already in Ntry 1"},
		"unknown status":   {mutate("<Sts>BOOK</Sts>", "<Sts>WHAT</Sts>"), "unknown status"},
		"entity":           {[]byte(`<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x "y">]><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02">&x;</Document>`), "well-formed"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseCamt053(tc.body)
			require.ErrorIs(t, err, ErrStatement)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestMajorAmount(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"0.01": 1, "1": 100, "1.5": 150, "1.05": 105, "1234.56": 123456, "0012.30": 1230,
		"92233720368547758.07": math.MaxInt64,
	} {
		got, err := ParseMajorAmount(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", ".", "1.", ".1", "1.234", "1,5", "-1", "+1", "1e2", " 1", "92233720368547758.08", "１"} {
		_, err := ParseMajorAmount(in)
		require.Error(t, err, in)
	}
	for v, want := range map[int64]string{0: "0.00", 1: "0.01", 105: "1.05", 123456: "1234.56", -150: "-1.50", math.MaxInt64: "92233720368547758.07", math.MinInt64: "-92233720368547758.08"} {
		require.Equal(t, want, FormatMajorAmount(v))
	}
}

// FuzzParseStatementCSV: no input panics; whatever parses is valid by the gateway's rules.
func FuzzParseStatementCSV(f *testing.F) {
	raw, err := os.ReadFile("testdata/statement.csv")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(strings.Join(csvColumns, ",") + "\n"))
	f.Add([]byte("bookingDate,valueDate,entryRef,reference,direction,amountSantim,currency,counterparty,balanceAfterSantim\n2026-03-02,2026-03-02,E1,r1,CRDT,1e3,ETB,cp,100\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		lines, err := ParseStatementCSV(raw)
		if err != nil {
			require.ErrorIs(t, err, ErrStatement)
			return
		}
		checkLines(t, lines)
	})
}

// FuzzParseCamt053: no input panics; whatever parses is valid, and amounts survive a round trip
// through their major-unit rendering.
func FuzzParseCamt053(f *testing.F) {
	raw, err := os.ReadFile("testdata/statement.camt053.xml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(`<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><Stmt></Stmt></BkToCstmrStmt></Document>`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		lines, err := ParseCamt053(raw)
		if err != nil {
			require.ErrorIs(t, err, ErrStatement)
			return
		}
		checkLines(t, lines)
		for _, l := range lines {
			back, err := ParseMajorAmount(FormatMajorAmount(l.AmountSantim))
			require.NoError(t, err)
			require.Equal(t, l.AmountSantim, back)
		}
	})
}

// FuzzMajorAmount: parsing never panics, and anything accepted renders back to the same value.
func FuzzMajorAmount(f *testing.F) {
	for _, s := range []string{"0.01", "1234.56", "1.5", "92233720368547758.07", "1e3", "-1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseMajorAmount(s)
		if err != nil {
			return
		}
		require.GreaterOrEqual(t, v, int64(0))
		back, err := ParseMajorAmount(FormatMajorAmount(v))
		require.NoError(t, err)
		require.Equal(t, v, back)
	})
}

func checkLines(t *testing.T, lines []StatementLine) {
	seen := map[string]bool{}
	for _, l := range lines {
		require.NotEmpty(t, l.EntryRef)
		require.False(t, seen[l.EntryRef], "duplicate entry ref %q", l.EntryRef)
		seen[l.EntryRef] = true
		require.Positive(t, l.AmountSantim)
		require.Contains(t, []Direction{Credit, Debit}, l.Direction)
		require.Len(t, l.Currency, 3)
		require.False(t, l.BookingDate.IsZero())
		require.False(t, bytes.ContainsAny([]byte(l.Reference+l.Counterparty+l.EntryRef), "\x00\r\n"))
	}
}
