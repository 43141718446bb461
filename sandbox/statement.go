package sandbox

import (
	"context"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// StatementLine is one booking as a statement shows it.
type StatementLine struct {
	ID                 int64
	EntryRef           string
	BookingDate        time.Time
	ValueDate          time.Time
	Reference          string
	Direction          string
	AmountSantim       int64
	Currency           string
	Counterparty       string
	BalanceAfterSantim int64
	Kind               string
	BookedAt           time.Time
}

// Statement is an account's bookings over a period of UTC days.
type Statement struct {
	Account       OperatorAccount
	From, To      time.Time // inclusive UTC days
	OpeningSantim int64     // balance at the start of From
	ClosingSantim int64     // balance at the end of To
	Lines         []StatementLine
	CreatedAt     time.Time
}

// entryRef is the bank's unique id of a statement line.
func entryRef(id int64) string { return fmt.Sprintf("SBX%012d", id) }

// MaxStatementDays bounds one statement request: to is at most this many days after from (the
// gateway's own bound, gateway.MaxStatementPeriod, so it never asks for more).
const MaxStatementDays = 92

// dateLayout is how statements write days.
const dateLayout = "2006-01-02"

func (s *store) statement(ctx context.Context, account string, from, to time.Time) (Statement, error) {
	st := Statement{From: from, To: to, CreatedAt: time.Now().UTC()}
	acct, err := s.getAccount(ctx, account)
	if err != nil {
		return st, err
	}
	st.Account = acct
	// One repeatable-read snapshot, so the opening balance and the lines agree even while the
	// account is booking.
	err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT balance_after_santim FROM sandbox.statement_lines
			WHERE account_number = $1 AND booking_date < $2 ORDER BY booking_date DESC, id DESC LIMIT 1`, account, from).
			Scan(&st.OpeningSantim)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id, booking_date, value_date, reference, direction, amount_santim, currency,
			counterparty, balance_after_santim, kind, booked_at
			FROM sandbox.statement_lines WHERE account_number = $1 AND booking_date BETWEEN $2 AND $3
			ORDER BY booking_date, id`, account, from, to)
		if err != nil {
			return err
		}
		st.Lines, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (StatementLine, error) {
			var l StatementLine
			err := r.Scan(&l.ID, &l.BookingDate, &l.ValueDate, &l.Reference, &l.Direction, &l.AmountSantim, &l.Currency,
				&l.Counterparty, &l.BalanceAfterSantim, &l.Kind, &l.BookedAt)
			l.EntryRef = entryRef(l.ID)
			l.BookedAt = l.BookedAt.UTC()
			return l, err
		})
		return err
	})
	if err != nil {
		return st, fmt.Errorf("sandbox.statement: %w", err)
	}
	st.ClosingSantim = st.OpeningSantim
	if n := len(st.Lines); n > 0 {
		st.ClosingSantim = st.Lines[n-1].BalanceAfterSantim
	}
	return st, nil
}

// CSVHeader is the first row of a CSV statement.
var CSVHeader = []string{"bookingDate", "valueDate", "entryRef", "reference", "direction", "amountSantim",
	"currency", "counterparty", "balanceAfterSantim"}

// WriteCSV writes the statement in the contract's CSV layout (RFC 4180 quoting).
func (st Statement) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	for _, l := range st.Lines {
		if err := cw.Write([]string{l.BookingDate.Format(dateLayout), l.ValueDate.Format(dateLayout), l.EntryRef,
			l.Reference, l.Direction, strconv.FormatInt(l.AmountSantim, 10), l.Currency, l.Counterparty,
			strconv.FormatInt(l.BalanceAfterSantim, 10)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// Camt053Namespace is the ISO 20022 bank-to-customer statement version the sandbox writes.
const Camt053Namespace = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"

// The camt.053 subset the sandbox writes: enough for a statement reader to rebuild every booking
// (amount, direction, dates, the bank's entry reference, our end-to-end reference, counterparty)
// and to check it against the opening and closing balances.
type (
	camtDocument struct {
		XMLName xml.Name      `xml:"Document"`
		Xmlns   string        `xml:"xmlns,attr"`
		Stmt    camtBkToCstmr `xml:"BkToCstmrStmt"`
	}
	camtBkToCstmr struct {
		GrpHdr camtGrpHdr `xml:"GrpHdr"`
		Stmt   camtStmt   `xml:"Stmt"`
	}
	camtGrpHdr struct {
		MsgID   string     `xml:"MsgId"`
		CreDtTm string     `xml:"CreDtTm"`
		MsgRcpt *camtParty `xml:"MsgRcpt,omitempty"`
	}
	camtParty struct {
		Nm string `xml:"Nm"`
	}
	camtStmt struct {
		ID         string      `xml:"Id"`
		ElctrncSeq int64       `xml:"ElctrncSeqNb"`
		CreDtTm    string      `xml:"CreDtTm"`
		FrToDt     camtFrToDt  `xml:"FrToDt"`
		Acct       camtAcct    `xml:"Acct"`
		Bal        []camtBal   `xml:"Bal"`
		TxsSummry  camtSummary `xml:"TxsSummry"`
		Ntry       []camtNtry  `xml:"Ntry"`
	}
	camtFrToDt struct {
		FrDtTm string `xml:"FrDtTm"`
		ToDtTm string `xml:"ToDtTm"`
	}
	camtAcct struct {
		ID   camtAcctID `xml:"Id"`
		Ccy  string     `xml:"Ccy"`
		Nm   string     `xml:"Nm,omitempty"`
		Ownr *camtParty `xml:"Ownr,omitempty"`
	}
	camtAcctID struct {
		Othr camtOthr `xml:"Othr"`
	}
	camtOthr struct {
		ID string `xml:"Id"`
	}
	camtAmt struct {
		Ccy   string `xml:"Ccy,attr"`
		Value string `xml:",chardata"`
	}
	camtDate struct {
		Dt string `xml:"Dt"`
	}
	camtBal struct {
		Tp        camtBalTp `xml:"Tp"`
		Amt       camtAmt   `xml:"Amt"`
		CdtDbtInd string    `xml:"CdtDbtInd"`
		Dt        camtDate  `xml:"Dt"`
	}
	camtBalTp struct {
		CdOrPrtry struct {
			Cd string `xml:"Cd"`
		} `xml:"CdOrPrtry"`
	}
	camtSummary struct {
		TtlNtries struct {
			NbOfNtries string `xml:"NbOfNtries"`
		} `xml:"TtlNtries"`
		TtlCdtNtries camtSum `xml:"TtlCdtNtries"`
		TtlDbtNtries camtSum `xml:"TtlDbtNtries"`
	}
	camtSum struct {
		NbOfNtries string `xml:"NbOfNtries"`
		Sum        string `xml:"Sum"`
	}
	camtNtry struct {
		NtryRef     string       `xml:"NtryRef"`
		Amt         camtAmt      `xml:"Amt"`
		CdtDbtInd   string       `xml:"CdtDbtInd"`
		Sts         string       `xml:"Sts"`
		BookgDt     camtDate     `xml:"BookgDt"`
		ValDt       camtDate     `xml:"ValDt"`
		AcctSvcrRef string       `xml:"AcctSvcrRef"`
		BkTxCd      camtBkTxCd   `xml:"BkTxCd"`
		NtryDtls    camtNtryDtls `xml:"NtryDtls"`
	}
	camtBkTxCd struct {
		Prtry struct {
			Cd string `xml:"Cd"`
		} `xml:"Prtry"`
	}
	camtNtryDtls struct {
		TxDtls camtTxDtls `xml:"TxDtls"`
	}
	camtTxDtls struct {
		Refs      camtRefs       `xml:"Refs"`
		AmtDtls   *camtAmtDtls   `xml:"AmtDtls,omitempty"`
		RltdPties *camtRltdPties `xml:"RltdPties,omitempty"`
	}
	camtRefs struct {
		AcctSvcrRef string `xml:"AcctSvcrRef"`
		EndToEndID  string `xml:"EndToEndId"`
	}
	camtAmtDtls struct {
		TxAmt struct {
			Amt camtAmt `xml:"Amt"`
		} `xml:"TxAmt"`
	}
	camtRltdPties struct {
		DbtrAcct *camtAcctRef `xml:"DbtrAcct,omitempty"`
		CdtrAcct *camtAcctRef `xml:"CdtrAcct,omitempty"`
	}
	camtAcctRef struct {
		ID camtAcctID `xml:"Id"`
	}
)

func indicator(santim int64) string {
	if santim < 0 {
		return "DBIT"
	}
	return "CRDT"
}

func absSantim(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// xmlChar reports whether r is a character XML 1.0 can hold.
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// camtText checks that a value goes into the document as it is: encoding/xml silently writes
// invalid UTF-8 and what XML cannot hold (C0 controls, U+FFFE, U+FFFF) as U+FFFD, and a statement
// whose reference was changed on the way out matches nothing (and its reader refuses U+FFFD).
// The edges refuse such values, so this only guards rows written before they did.
func camtText(what string, line int64, v string) error {
	ok := utf8.ValidString(v)
	for _, r := range v {
		ok = ok && xmlChar(r)
	}
	if ok {
		return nil
	}
	if line > 0 {
		return fmt.Errorf("sandbox.camt053: the %s of statement line %d cannot be written in XML unchanged", what, line)
	}
	return fmt.Errorf("sandbox.camt053: the %s cannot be written in XML unchanged", what)
}

// WriteCamt053 writes the statement as an ISO 20022 camt.053.001.02 BkToCstmrStmt document.
// Amounts are major units with two decimals, formatted from the integer santim. A value XML
// cannot hold unchanged is an error (nothing is written), never a silently mangled document.
func (st Statement) WriteCamt053(w io.Writer) error {
	for _, c := range []struct{ what, v string }{{"account number", st.Account.AccountNumber},
		{"holder name", st.Account.HolderName}, {"currency", st.Account.Currency}} {
		if err := camtText(c.what, 0, c.v); err != nil {
			return err
		}
	}
	for _, l := range st.Lines {
		for _, c := range []struct{ what, v string }{{"reference", l.Reference}, {"counterparty", l.Counterparty},
			{"kind", l.Kind}, {"direction", l.Direction}, {"entry reference", l.EntryRef}} {
			if err := camtText(c.what, l.ID, c.v); err != nil {
				return err
			}
		}
	}
	ccy := st.Account.Currency
	amt := func(santim int64) camtAmt { return camtAmt{Ccy: ccy, Value: formatMajor(santim)} }
	stmtID := fmt.Sprintf("%s-%s-%s", st.Account.AccountNumber, st.From.Format("20060102"), st.To.Format("20060102"))
	var seq int64
	if len(st.Lines) > 0 {
		seq = st.Lines[len(st.Lines)-1].ID
	}
	doc := camtDocument{Xmlns: Camt053Namespace}
	doc.Stmt.GrpHdr = camtGrpHdr{MsgID: "SBX-STMT-" + stmtID, CreDtTm: st.CreatedAt.Format(time.RFC3339),
		MsgRcpt: &camtParty{Nm: st.Account.HolderName}}
	s := &doc.Stmt.Stmt
	s.ID = stmtID
	s.ElctrncSeq = seq
	s.CreDtTm = st.CreatedAt.Format(time.RFC3339)
	s.FrToDt = camtFrToDt{FrDtTm: st.From.Format(dateLayout) + "T00:00:00Z", ToDtTm: st.To.Format(dateLayout) + "T23:59:59Z"}
	s.Acct = camtAcct{ID: camtAcctID{Othr: camtOthr{ID: st.Account.AccountNumber}}, Ccy: ccy,
		Ownr: &camtParty{Nm: st.Account.HolderName}}
	bal := func(code string, santim int64, day time.Time) camtBal {
		b := camtBal{Amt: amt(absSantim(santim)), CdtDbtInd: indicator(santim), Dt: camtDate{Dt: day.Format(dateLayout)}}
		b.Tp.CdOrPrtry.Cd = code
		return b
	}
	s.Bal = []camtBal{bal("OPBD", st.OpeningSantim, st.From), bal("CLBD", st.ClosingSantim, st.To)}
	var nCdt, nDbt int
	var sumCdt, sumDbt int64
	for _, l := range st.Lines {
		if l.Direction == "CRDT" {
			nCdt++
			sumCdt += l.AmountSantim
		} else {
			nDbt++
			sumDbt += l.AmountSantim
		}
		e := camtNtry{NtryRef: l.EntryRef, Amt: amt(l.AmountSantim), CdtDbtInd: l.Direction, Sts: "BOOK",
			BookgDt: camtDate{Dt: l.BookingDate.Format(dateLayout)}, ValDt: camtDate{Dt: l.ValueDate.Format(dateLayout)},
			AcctSvcrRef: l.EntryRef}
		e.BkTxCd.Prtry.Cd = l.Kind
		e.NtryDtls.TxDtls.Refs = camtRefs{AcctSvcrRef: l.EntryRef, EndToEndID: l.Reference}
		if l.Counterparty != "" {
			ref := &camtAcctRef{ID: camtAcctID{Othr: camtOthr{ID: l.Counterparty}}}
			if l.Direction == "CRDT" {
				e.NtryDtls.TxDtls.RltdPties = &camtRltdPties{DbtrAcct: ref}
			} else {
				e.NtryDtls.TxDtls.RltdPties = &camtRltdPties{CdtrAcct: ref}
			}
		}
		s.Ntry = append(s.Ntry, e)
	}
	s.TxsSummry.TtlNtries.NbOfNtries = strconv.Itoa(len(st.Lines))
	s.TxsSummry.TtlCdtNtries = camtSum{NbOfNtries: strconv.Itoa(nCdt), Sum: formatMajor(sumCdt)}
	s.TxsSummry.TtlDbtNtries = camtSum{NbOfNtries: strconv.Itoa(nDbt), Sum: formatMajor(sumDbt)}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
