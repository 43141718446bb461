package gateway

import (
	"bytes"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
)

// Direction is a statement line's direction from the statement account's point of view.
type Direction string

const (
	Credit Direction = "CRDT" // money into the account
	Debit  Direction = "DBIT" // money out of it
)

// StatementLine is one booked entry of a partner statement. Amounts are santim and positive;
// Direction carries the sign.
type StatementLine struct {
	EntryRef     string // the bank's unique id of the line
	BookingDate  time.Time
	ValueDate    time.Time
	Reference    string // our reference (EndToEndId); empty for the bank's own lines (fees, …)
	Direction    Direction
	AmountSantim int64
	Currency     string
	Counterparty string
	// BalanceAfterSantim is the running balance when the format carries one (CSV does).
	BalanceAfterSantim *int64
}

// ErrStatement is wrapped by every statement parsing error.
var ErrStatement = errors.New("malformed statement")

func stmtErr(format string, line int, field, msg string, args ...any) error {
	where := format
	if line > 0 {
		where += fmt.Sprintf(" line %d", line)
	}
	if field != "" {
		where += " " + field
	}
	return fmt.Errorf("%w: %s: %s", ErrStatement, where, fmt.Sprintf(msg, args...))
}

// maxStatementLines bounds what one statement may hold, so a hostile file cannot exhaust memory.
const maxStatementLines = 1_000_000

// ParseStatement parses raw in the given format.
func ParseStatement(format StatementFormat, raw []byte) ([]StatementLine, error) {
	switch format {
	case FormatCSV:
		return ParseStatementCSV(raw)
	case FormatCamt053:
		return ParseCamt053(raw)
	}
	return nil, fmt.Errorf("%w: unknown format %q", ErrStatement, format)
}

// csvColumns is the sandbox contract's header, in order.
var csvColumns = []string{"bookingDate", "valueDate", "entryRef", "reference", "direction", "amountSantim", "currency", "counterparty", "balanceAfterSantim"}

// ParseStatementCSV parses the CSV statement format. The header must name exactly the
// contract's columns (in any order); every line must be complete and valid, or the whole file is
// rejected: a statement with a bad line is not a statement to reconcile against.
func ParseStatementCSV(raw []byte) ([]StatementLine, error) {
	raw = bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf")) // a UTF-8 BOM some banks prepend
	r := csv.NewReader(bytes.NewReader(raw))
	r.FieldsPerRecord = -1 // checked below, so a short header gets a message naming the column
	r.ReuseRecord = true
	header, err := r.Read()
	if err == io.EOF {
		return nil, stmtErr("csv", 0, "", "empty file (no header)")
	}
	if err != nil {
		return nil, stmtErr("csv", 1, "", "%v", csvCause(err))
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if _, dup := col[h]; dup {
			return nil, stmtErr("csv", 1, "", "column %q appears twice", h)
		}
		col[h] = i
	}
	for _, c := range csvColumns {
		if _, ok := col[c]; !ok {
			return nil, stmtErr("csv", 1, "", "missing column %q (header must be %s)", c, strings.Join(csvColumns, ","))
		}
	}
	if len(header) != len(csvColumns) {
		return nil, stmtErr("csv", 1, "", "%d columns, want exactly %s", len(header), strings.Join(csvColumns, ","))
	}
	var lines []StatementLine
	seen := map[string]int{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			line := 0
			if errors.As(err, &pe) {
				line = pe.Line
			}
			return nil, stmtErr("csv", line, "", "%v", csvCause(err))
		}
		n, _ := r.FieldPos(0) // the file's line number, right even after quoted newlines
		if len(rec) != len(header) {
			return nil, stmtErr("csv", n, "", "%d fields, want %d", len(rec), len(header))
		}
		if len(lines) >= maxStatementLines {
			return nil, stmtErr("csv", n, "", "more than %d lines", maxStatementLines)
		}
		get := func(c string) string { return strings.TrimSpace(rec[col[c]]) }
		var l StatementLine
		if l.BookingDate, err = parseDate(get("bookingDate")); err != nil {
			return nil, stmtErr("csv", n, "bookingDate", "%v", err)
		}
		if l.ValueDate, err = parseDate(get("valueDate")); err != nil {
			return nil, stmtErr("csv", n, "valueDate", "%v", err)
		}
		if l.EntryRef = get("entryRef"); l.EntryRef == "" {
			return nil, stmtErr("csv", n, "entryRef", "empty")
		}
		if err := field.Reference("entryRef", l.EntryRef, 0); err != nil {
			return nil, stmtErr("csv", n, "", "%v", err)
		}
		if prev, dup := seen[l.EntryRef]; dup {
			return nil, stmtErr("csv", n, "entryRef", "%q already on line %d", l.EntryRef, prev)
		}
		seen[l.EntryRef] = n
		l.Reference = get("reference")
		switch d := Direction(get("direction")); d {
		case Credit, Debit:
			l.Direction = d
		default:
			return nil, stmtErr("csv", n, "direction", "is not CRDT or DBIT")
		}
		if l.AmountSantim, err = parseSantim(get("amountSantim"), false); err != nil {
			return nil, stmtErr("csv", n, "amountSantim", "%v", err)
		}
		if err := checkLineAmount(l.AmountSantim); err != nil {
			return nil, stmtErr("csv", n, "amountSantim", "%v", err)
		}
		if l.Currency, err = parseCurrency(get("currency")); err != nil {
			return nil, stmtErr("csv", n, "currency", "%v", err)
		}
		l.Counterparty = get("counterparty")
		if b := get("balanceAfterSantim"); b != "" {
			v, err := parseSantim(b, true)
			if err != nil {
				return nil, stmtErr("csv", n, "balanceAfterSantim", "%v", err)
			}
			if v > money.MaxAccountTotalSantim || v < -money.MaxAccountTotalSantim {
				return nil, stmtErr("csv", n, "balanceAfterSantim", "beyond %d santim either way", money.MaxAccountTotalSantim)
			}
			l.BalanceAfterSantim = &v
		}
		if err := checkLineText(l); err != nil {
			return nil, stmtErr("csv", n, "", "%v", err)
		}
		lines = append(lines, l)
	}
	return lines, nil
}

func csvCause(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Parse errors name the field and never echo the value: a statement comes from outside, and a
// hostile value must not travel on into error messages and logs.

// parseDate accepts exactly YYYY-MM-DD (UTC).
func parseDate(s string) (time.Time, error) {
	errDate := errors.New("is not a YYYY-MM-DD date")
	if len(s) != len("2006-01-02") {
		return time.Time{}, errDate
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, errDate
	}
	return t, nil
}

func parseCurrency(s string) (string, error) {
	errCcy := errors.New("is not a three-letter currency code")
	if len(s) != 3 {
		return "", errCcy
	}
	for _, c := range s {
		if c < 'A' || c > 'Z' {
			return "", errCcy
		}
	}
	return s, nil
}

// checkLineAmount bounds a line's amount like any amount the gateway moves, so the sums the
// reconciliation makes of them stay inside int64.
func checkLineAmount(v int64) error {
	if v == 0 {
		return errors.New("zero amount")
	}
	if v > money.MaxAmountSantim {
		return fmt.Errorf("amount above %d santim", money.MaxAmountSantim)
	}
	return nil
}

// checkLineText holds a line's text fields to the edge's rules (internal/platform/field) before they reach
// the database and operators' screens: the bank's line id and our reference are references, the
// counterparty is a name or an account.
func checkLineText(l StatementLine) error {
	if err := field.Reference("entryRef", l.EntryRef, 0); err != nil {
		return err
	}
	if l.Reference != "" {
		if err := field.Reference("reference", l.Reference, 0); err != nil {
			return err
		}
	}
	if l.Counterparty != "" {
		if err := field.Name("counterparty", l.Counterparty); err != nil {
			return err
		}
	}
	return nil
}

// parseSantim parses a decimal integer of santim: digits only, an optional leading '-' when
// signed, no '+', spaces, exponents or separators, within int64.
func parseSantim(s string, signed bool) (int64, error) {
	neg := false
	if signed && strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	}
	if s == "" {
		return 0, errors.New("empty amount")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("amount is not an integer of santim")
		}
	}
	if len(s) > 19 {
		return 0, errors.New("amount out of range")
	}
	var v int64
	for _, c := range s {
		d := int64(c - '0')
		if v > (math.MaxInt64-d)/10 {
			return 0, errors.New("amount out of range")
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, nil
}

// ParseMajorAmount parses an ISO 20022 amount in major units ("1234.56", "10", "0.5") to santim
// without floating point: at most two fraction digits (the birr's minor unit), no sign, no
// exponent. Decimal points with no digit on one side are rejected.
func ParseMajorAmount(s string) (int64, error) {
	whole, frac, hasDot := strings.Cut(s, ".")
	notDecimal := errors.New("amount is not a decimal amount")
	if whole == "" || (hasDot && frac == "") {
		return 0, notDecimal
	}
	for _, c := range whole + frac {
		if c < '0' || c > '9' {
			return 0, notDecimal
		}
	}
	if len(frac) > 2 {
		return 0, errors.New("amount has more than two decimals")
	}
	for len(frac) < 2 {
		frac += "0"
	}
	v, err := parseSantim(whole+frac, false)
	if err != nil {
		return 0, errors.New("amount out of range")
	}
	return v, nil
}

// FormatMajorAmount renders santim as major units with two decimals ("1234.56"), from the
// integer: the inverse of ParseMajorAmount for non-negative amounts.
func FormatMajorAmount(santim int64) string {
	sign := ""
	u := uint64(santim)
	if santim < 0 {
		sign, u = "-", uint64(-(santim+1))+1
	}
	return fmt.Sprintf("%s%d.%02d", sign, u/100, u%100)
}

// camt053 is the subset of ISO 20022 camt.053 (BkToCstmrStmt) the gateway reads.
type camt053 struct {
	XMLName xml.Name `xml:"Document"`
	Stmts   []struct {
		Bals []struct {
			Code      string `xml:"Tp>CdOrPrtry>Cd"`
			Amt       string `xml:"Amt"`
			CdtDbtInd string `xml:"CdtDbtInd"`
		} `xml:"Bal"`
		Ntries []camtEntry `xml:"Ntry"`
	} `xml:"BkToCstmrStmt>Stmt"`
}

type camtEntry struct {
	NtryRef string `xml:"NtryRef"`
	Amt     struct {
		Ccy   string `xml:"Ccy,attr"`
		Value string `xml:",chardata"`
	} `xml:"Amt"`
	CdtDbtInd string `xml:"CdtDbtInd"`
	Sts       string `xml:"Sts"`
	BookgDt   struct {
		Dt   string `xml:"Dt"`
		DtTm string `xml:"DtTm"`
	} `xml:"BookgDt"`
	ValDt struct {
		Dt   string `xml:"Dt"`
		DtTm string `xml:"DtTm"`
	} `xml:"ValDt"`
	TxDtls []struct {
		EndToEndID string `xml:"Refs>EndToEndId"`
		Dbtr       string `xml:"RltdPties>Dbtr>Nm"`
		DbtrAcct   string `xml:"RltdPties>DbtrAcct>Id>Othr>Id"`
		Cdtr       string `xml:"RltdPties>Cdtr>Nm"`
		CdtrAcct   string `xml:"RltdPties>CdtrAcct>Id>Othr>Id"`
	} `xml:"NtryDtls>TxDtls"`
}

// camtNamespacePrefix is the namespace family accepted; the sandbox sends camt.053.001.02.
const camtNamespacePrefix = "urn:iso:std:iso:20022:tech:xsd:camt.053.001."

// ParseCamt053 parses an ISO 20022 camt.053 bank-to-customer statement. Only booked entries
// (Sts BOOK, or no status) are statement lines; pending and information-only entries are not
// money that moved and are skipped.
func ParseCamt053(raw []byte) ([]StatementLine, error) {
	lines, _, err := parseCamt053(raw)
	return lines, err
}

// ParseCamt053Closing parses a camt.053 statement and its closing booked balance (CLBD, signed:
// negative when DBIT) of its last statement. ok is false when the statement has none.
func ParseCamt053Closing(raw []byte) (lines []StatementLine, closingSantim int64, ok bool, err error) {
	lines, doc, err := parseCamt053(raw)
	if err != nil || len(doc.Stmts) == 0 {
		return lines, 0, false, err
	}
	for _, b := range doc.Stmts[len(doc.Stmts)-1].Bals {
		if strings.TrimSpace(b.Code) != "CLBD" {
			continue
		}
		v, err := ParseMajorAmount(strings.TrimSpace(b.Amt))
		if err != nil {
			return nil, 0, false, stmtErr("camt053", 0, "Bal CLBD Amt", "%v", err)
		}
		switch strings.TrimSpace(b.CdtDbtInd) {
		case "CRDT":
		case "DBIT":
			v = -v
		default:
			return nil, 0, false, stmtErr("camt053", 0, "Bal CLBD CdtDbtInd", "must be CRDT or DBIT")
		}
		return lines, v, true, nil
	}
	return lines, 0, false, nil
}

func parseCamt053(raw []byte) ([]StatementLine, camt053, error) {
	var doc camt053
	dec := xml.NewDecoder(bytes.NewReader(raw))
	// Refuse DTDs and entities: statements come from outside and need none of that.
	dec.Strict = true
	dec.Entity = map[string]string{}
	if err := dec.Decode(&doc); err != nil {
		return nil, doc, stmtErr("camt053", 0, "", "not a well-formed XML document: %v", err)
	}
	if !strings.HasPrefix(doc.XMLName.Space, camtNamespacePrefix) {
		return nil, doc, stmtErr("camt053", 0, "", "the document's namespace is not camt.053")
	}
	var lines []StatementLine
	seen := map[string]int{}
	n := 0
	for _, st := range doc.Stmts {
		for _, e := range st.Ntries {
			n++
			if n > maxStatementLines {
				return nil, doc, stmtErr("camt053", 0, "", "more than %d entries", maxStatementLines)
			}
			switch strings.TrimSpace(e.Sts) {
			case "", "BOOK":
			case "PDNG", "INFO":
				continue
			default:
				return nil, doc, stmtErr("camt053", 0, fmt.Sprintf("Ntry %d Sts", n), "unknown status")
			}
			l, err := e.line(n)
			if err != nil {
				return nil, doc, err
			}
			if prev, dup := seen[l.EntryRef]; dup {
				return nil, doc, stmtErr("camt053", 0, fmt.Sprintf("Ntry %d NtryRef", n), "%q already in Ntry %d", l.EntryRef, prev)
			}
			seen[l.EntryRef] = n
			lines = append(lines, l)
		}
	}
	return lines, doc, nil
}

func (e camtEntry) line(n int) (StatementLine, error) {
	where := func(f string) string { return fmt.Sprintf("Ntry %d %s", n, f) }
	var l StatementLine
	var err error
	if l.EntryRef = strings.TrimSpace(e.NtryRef); l.EntryRef == "" {
		return l, stmtErr("camt053", 0, where("NtryRef"), "empty")
	}
	if err := field.Reference("NtryRef", l.EntryRef, 0); err != nil {
		return l, stmtErr("camt053", 0, fmt.Sprintf("Ntry %d", n), "%v", err)
	}
	if l.AmountSantim, err = ParseMajorAmount(strings.TrimSpace(e.Amt.Value)); err != nil {
		return l, stmtErr("camt053", 0, where("Amt"), "%v", err)
	}
	if err := checkLineAmount(l.AmountSantim); err != nil {
		return l, stmtErr("camt053", 0, where("Amt"), "%v", err)
	}
	if l.Currency, err = parseCurrency(e.Amt.Ccy); err != nil {
		return l, stmtErr("camt053", 0, where("Amt@Ccy"), "%v", err)
	}
	switch d := Direction(strings.TrimSpace(e.CdtDbtInd)); d {
	case Credit, Debit:
		l.Direction = d
	default:
		return l, stmtErr("camt053", 0, where("CdtDbtInd"), "is not CRDT or DBIT")
	}
	if l.BookingDate, err = camtDate(e.BookgDt.Dt, e.BookgDt.DtTm); err != nil {
		return l, stmtErr("camt053", 0, where("BookgDt"), "%v", err)
	}
	if l.ValueDate, err = camtDate(e.ValDt.Dt, e.ValDt.DtTm); err != nil {
		return l, stmtErr("camt053", 0, where("ValDt"), "%v", err)
	}
	if len(e.TxDtls) > 1 {
		// A batched entry would need splitting per transaction to match our references; the
		// sandbox books one transaction per entry and we refuse to guess otherwise.
		return l, stmtErr("camt053", 0, where("NtryDtls"), "%d transactions in one entry are not supported", len(e.TxDtls))
	}
	if len(e.TxDtls) == 1 {
		tx := e.TxDtls[0]
		l.Reference = strings.TrimSpace(tx.EndToEndID)
		if l.Reference == "NOTPROVIDED" {
			l.Reference = ""
		}
		// The counterparty is the other side: the debtor of a credit, the creditor of a debit.
		if l.Direction == Credit {
			l.Counterparty = firstNonEmpty(tx.DbtrAcct, tx.Dbtr)
		} else {
			l.Counterparty = firstNonEmpty(tx.CdtrAcct, tx.Cdtr)
		}
	}
	if err := checkLineText(l); err != nil {
		return l, stmtErr("camt053", 0, fmt.Sprintf("Ntry %d", n), "%v", err)
	}
	return l, nil
}

func camtDate(dt, dtTm string) (time.Time, error) {
	dt, dtTm = strings.TrimSpace(dt), strings.TrimSpace(dtTm)
	if dt != "" {
		return parseDate(dt)
	}
	if dtTm != "" {
		t, err := time.Parse(time.RFC3339, dtTm)
		if err != nil {
			return time.Time{}, errors.New("is not an ISO date-time with offset")
		}
		u := t.UTC()
		return time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC), nil
	}
	return time.Time{}, errors.New("missing Dt")
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return ""
}
