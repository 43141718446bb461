package sandbox

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/xml"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFormatMajor(t *testing.T) {
	t.Parallel()
	for in, want := range map[int64]string{
		0: "0.00", 5: "0.05", 10: "0.10", 100: "1.00", 123456: "1234.56", -5: "-0.05", -123456: "-1234.56",
		math.MaxInt64: "92233720368547758.07", math.MinInt64: "-92233720368547758.08",
	} {
		require.Equal(t, want, formatMajor(in), "%d", in)
	}
}

// camt053 is what the test reads back of a camt.053 document.
type camt053 struct {
	XMLName xml.Name `xml:"urn:iso:std:iso:20022:tech:xsd:camt.053.001.02 Document"`
	Stmt    struct {
		Acct struct {
			ID  string `xml:"Id>Othr>Id"`
			Ccy string `xml:"Ccy"`
		} `xml:"Acct"`
		Bal []struct {
			Code string `xml:"Tp>CdOrPrtry>Cd"`
			Amt  struct {
				Ccy   string `xml:"Ccy,attr"`
				Value string `xml:",chardata"`
			} `xml:"Amt"`
			Ind string `xml:"CdtDbtInd"`
			Dt  string `xml:"Dt>Dt"`
		} `xml:"Bal"`
		Ntry []struct {
			NtryRef string `xml:"NtryRef"`
			Amt     struct {
				Ccy   string `xml:"Ccy,attr"`
				Value string `xml:",chardata"`
			} `xml:"Amt"`
			Ind       string `xml:"CdtDbtInd"`
			Sts       string `xml:"Sts"`
			BookgDt   string `xml:"BookgDt>Dt"`
			ValDt     string `xml:"ValDt>Dt"`
			EndToEnd  string `xml:"NtryDtls>TxDtls>Refs>EndToEndId"`
			DbtrAcct  string `xml:"NtryDtls>TxDtls>RltdPties>DbtrAcct>Id>Othr>Id"`
			CdtrAcct  string `xml:"NtryDtls>TxDtls>RltdPties>CdtrAcct>Id>Othr>Id"`
			TxnCdPrty string `xml:"BkTxCd>Prtry>Cd"`
		} `xml:"Ntry"`
	} `xml:"BkToCstmrStmt>Stmt"`
}

type booking struct {
	reference, direction, counterparty string
	amount, balanceAfter               int64
}

func TestStatementsCSVAndCamt053(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("ST-SRC", "Abay Textiles, \"Payroll\"", 100_000)
	e.openAccount("ST-DST", "Worker", 0)
	e.openAccount("ST-X", "Rejecting worker", 0)
	e.setFaults("ST-X", Faults{SettleFailureCode: "BENEFICIARY_BANK_REJECTED"})

	refA, refB := ref("st-a"), ref("st,b") // a comma, to check CSV quoting
	t1 := e.create(e.transfer(refA, "ST-SRC", "ST-DST", 5_000))
	t2 := e.create(e.transfer(refB, "ST-SRC", "ST-X", 2_505))
	e.makeDue()
	e.waitStatus(t1.ID, StatusSettled)
	e.waitStatus(t2.ID, StatusFailed)
	require.Equal(t, 200, e.do("POST", "/api/v1/sandbox/accounts/ST-SRC/fund", FundRequest{AmountSantim: 1_234, Reference: "CASH-DEPOSIT-1"}).Status)

	today := time.Now().UTC().Format(dateLayout)
	src := []booking{
		{"OPENING-BALANCE", "CRDT", "", 100_000, 100_000},
		{refA, "DBIT", "ST-DST", 5_000, 95_000},
		{refB, "DBIT", "ST-X", 2_505, 92_495},
		{refB, "CRDT", "ST-X", 2_505, 95_000},
		{"CASH-DEPOSIT-1", "CRDT", "", 1_234, 96_234},
	}
	if e.getTransfer(t1.ID).SettledAt.UTC().Format(dateLayout) != today {
		t.Skip("the day changed during the test")
	}

	// CSV
	r := e.do("GET", "/api/v1/statements?account=ST-SRC&from="+today+"&to="+today, nil)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	require.Equal(t, "text/csv; charset=utf-8", r.Header.Get("Content-Type"))
	recs, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
	require.NoError(t, err)
	require.Equal(t, CSVHeader, recs[0])
	require.Len(t, recs, 1+len(src))
	entryRefs := map[string]bool{}
	for i, want := range src {
		rec := recs[i+1]
		require.Equal(t, today, rec[0], "bookingDate")
		require.Equal(t, today, rec[1], "valueDate")
		require.Regexp(t, `^SBX\d{12}$`, rec[2])
		require.False(t, entryRefs[rec[2]], "entryRef unique")
		entryRefs[rec[2]] = true
		require.Equal(t, want.reference, rec[3])
		require.Equal(t, want.direction, rec[4])
		require.Equal(t, strconv.FormatInt(want.amount, 10), rec[5])
		require.Equal(t, "ETB", rec[6])
		require.Equal(t, want.counterparty, rec[7])
		require.Equal(t, strconv.FormatInt(want.balanceAfter, 10), rec[8])
	}
	// The entry references are the bank's line ids.
	for i := range src {
		var id int64
		require.NoError(t, e.db.App.QueryRow(context.Background(), `SELECT id FROM sandbox.statement_lines
			WHERE account_number = 'ST-SRC' ORDER BY id OFFSET $1 LIMIT 1`, i).Scan(&id))
		require.Equal(t, entryRef(id), recs[i+1][2])
	}

	// camt.053 of the same period: the same bookings.
	r = e.do("GET", "/api/v1/statements?account=ST-SRC&from="+today+"&to="+today+"&format=camt053", nil)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	require.Contains(t, r.Header.Get("Content-Type"), "application/xml")
	var doc camt053
	require.NoError(t, xml.Unmarshal(r.Body, &doc), "%s", r.Body)
	require.Equal(t, "ST-SRC", doc.Stmt.Acct.ID)
	require.Equal(t, "ETB", doc.Stmt.Acct.Ccy)
	require.Len(t, doc.Stmt.Bal, 2)
	require.Equal(t, "OPBD", doc.Stmt.Bal[0].Code)
	require.Equal(t, "0.00", doc.Stmt.Bal[0].Amt.Value)
	require.Equal(t, "CLBD", doc.Stmt.Bal[1].Code)
	require.Equal(t, "962.34", doc.Stmt.Bal[1].Amt.Value)
	require.Equal(t, "CRDT", doc.Stmt.Bal[1].Ind)
	require.Len(t, doc.Stmt.Ntry, len(src))
	wantAmt := []string{"1000.00", "50.00", "25.05", "25.05", "12.34"}
	for i, want := range src {
		n := doc.Stmt.Ntry[i]
		require.Equal(t, recs[i+1][2], n.NtryRef, "NtryRef = CSV entryRef")
		require.Equal(t, wantAmt[i], n.Amt.Value)
		require.Equal(t, "ETB", n.Amt.Ccy)
		require.Equal(t, want.direction, n.Ind)
		require.Equal(t, "BOOK", n.Sts)
		require.Equal(t, today, n.BookgDt)
		require.Equal(t, today, n.ValDt)
		require.Equal(t, want.reference, n.EndToEnd)
		if want.direction == "CRDT" {
			require.Equal(t, want.counterparty, n.DbtrAcct)
		} else {
			require.Equal(t, want.counterparty, n.CdtrAcct)
		}
	}
	require.Equal(t, []string{"OPENING", "HOLD", "HOLD", "REFUND", "FUNDING"}, []string{doc.Stmt.Ntry[0].TxnCdPrty,
		doc.Stmt.Ntry[1].TxnCdPrty, doc.Stmt.Ntry[2].TxnCdPrty, doc.Stmt.Ntry[3].TxnCdPrty, doc.Stmt.Ntry[4].TxnCdPrty})

	// The destination's statement has the credit.
	r = e.do("GET", "/api/v1/statements?account=ST-DST", nil)
	require.Equal(t, 200, r.Status)
	recs, err = csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, 2)
	require.Equal(t, []string{today, today, recs[1][2], refA, "CRDT", "5000", "ETB", "ST-SRC", "5000"}, recs[1])

	// Periods: move the opening line to yesterday; today's statement then opens at 1000.00 and
	// yesterday's holds the opening line alone.
	yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(dateLayout)
	_, err = e.db.App.Exec(context.Background(), `UPDATE sandbox.statement_lines SET booking_date = booking_date - 1,
		value_date = value_date - 1 WHERE account_number = 'ST-SRC' AND kind = 'OPENING'`)
	require.NoError(t, err)
	r = e.do("GET", "/api/v1/statements?account=ST-SRC&from="+today+"&to="+today+"&format=camt053", nil)
	doc = camt053{}
	require.NoError(t, xml.Unmarshal(r.Body, &doc))
	require.Len(t, doc.Stmt.Ntry, 4)
	require.Equal(t, "1000.00", doc.Stmt.Bal[0].Amt.Value)
	require.Equal(t, today, doc.Stmt.Bal[0].Dt)
	require.Equal(t, "962.34", doc.Stmt.Bal[1].Amt.Value)
	r = e.do("GET", "/api/v1/statements?account=ST-SRC&from="+yesterday+"&to="+yesterday, nil)
	recs, err = csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
	require.NoError(t, err)
	require.Len(t, recs, 2)
	require.Equal(t, "OPENING-BALANCE", recs[1][3])
	require.Equal(t, yesterday, recs[1][0])
	tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format(dateLayout)
	r = e.do("GET", "/api/v1/statements?account=ST-SRC&from="+tomorrow, nil)
	require.Equal(t, 400, r.Status, "from after the default to (today)")

	for _, q := range []string{"account=ST-SRC&from=2024-13-01", "account=ST-SRC&to=yesterday", "account=ST-SRC&format=pdf",
		"account=ST-SRC&from=" + today + "&to=" + yesterday, "account=", "account=a%20b"} {
		r := e.do("GET", "/api/v1/statements?"+q, nil)
		require.Equal(t, 400, r.Status, q)
		require.Equal(t, CodeInvalidRequest, r.errCode(), q)
	}
	r = e.do("GET", "/api/v1/statements?account=NOPE", nil)
	require.Equal(t, 404, r.Status)
	require.Equal(t, CodeAccountNotFound, r.errCode())
}

// TestCamt053RefusesWhatXMLCannotHold: encoding/xml writes U+FFFE, U+FFFF, C0 controls and
// invalid UTF-8 as U+FFFD, so a reference changed on the way out would match nothing and the
// gateway's reader refuses the statement whole. The writer answers an error instead (the edges
// refuse such values, so only rows older than that rule could carry one).
func TestCamt053RefusesWhatXMLCannotHold(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	st := func(ref, holder string) Statement {
		return Statement{Account: OperatorAccount{Account: Account{AccountNumber: "CM-A", HolderName: holder, Currency: "ETB"}},
			From: day, To: day, CreatedAt: day, Lines: []StatementLine{{ID: 7, EntryRef: entryRef(7), BookingDate: day, ValueDate: day,
				Reference: ref, Direction: "CRDT", AmountSantim: 100, Currency: "ETB", Kind: "FUNDING", BalanceAfterSantim: 100}}}
	}
	var buf bytes.Buffer
	require.NoError(t, st("ref-ሰላም-1", "Abebe").WriteCamt053(&buf))
	require.Contains(t, buf.String(), "ref-ሰላም-1")
	for _, bad := range []Statement{st("R\uFFFF1", "Abebe"), st("R\uFFFE1", "Abebe"), st("R\x01", "Abebe"), st("R\xff", "Abebe"),
		st("r", "Ab\uFFFFebe")} {
		buf.Reset()
		err := bad.WriteCamt053(&buf)
		require.Error(t, err)
		require.NotContains(t, err.Error(), "\uFFFF")
		require.Zero(t, buf.Len(), "nothing written")
	}
}

// TestStatementPeriodIsBounded: one statement covers at most MaxStatementDays days after from (the
// gateway's bound), so no request makes the bank read an account's whole history; without from,
// the period is the longest one ending at to.
func TestStatementPeriodIsBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.openAccount("SP-A", "A", 1_000)
	e.openAccount("SP-B", "B", 0)
	e.create(e.transfer(ref("sp"), "SP-A", "SP-B", 100))
	// The opening line moves back a full period and a day: outside the default period.
	_, err := e.db.App.Exec(context.Background(), `UPDATE sandbox.statement_lines SET booking_date = booking_date - 93,
		value_date = value_date - 93 WHERE account_number = 'SP-A' AND kind = 'OPENING'`)
	require.NoError(t, err)
	now := time.Now().UTC()
	day := func(d int) string { return now.AddDate(0, 0, d).Format(dateLayout) }

	lines := func(q string) [][]string {
		t.Helper()
		r := e.do("GET", "/api/v1/statements?account=SP-A&"+q, nil)
		require.Equal(t, 200, r.Status, "%s: %s", q, r.Body)
		recs, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
		require.NoError(t, err)
		return recs[1:]
	}
	require.Len(t, lines("to="+day(0)), 1, "default period: the hold alone")
	require.Len(t, lines(""), 1)
	require.Len(t, lines("from="+day(-92)+"&to="+day(0)), 1, "the longest period")
	require.Len(t, lines("from="+day(-93)+"&to="+day(-1)), 1, "the longest period, a day back: the opening line")
	for _, q := range []string{"from=" + day(-93), "from=" + day(-93) + "&to=" + day(0), "from=1970-01-01",
		"from=0000-01-01", "from=2000-01-01&to=2030-01-01&format=camt053"} {
		r := e.do("GET", "/api/v1/statements?account=SP-A&"+q, nil)
		require.Equal(t, 400, r.Status, q)
		require.Equal(t, CodeInvalidRequest, r.errCode(), q)
		require.Contains(t, string(r.Body), "at most 92 days", q)
	}
}
