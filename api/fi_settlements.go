package api

import (
	"context"
	"net/url"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// GET /api/fi/settlements: the FI's settlement feed — every remittance sent to it, across the
// businesses whose loans it funds, newest change of state first, with the filter's totals by
// state (what has settled, what is on its way, what failed). Rules: internal/lending/settlements.go.
//
// GET /api/fi/repayments: the FI's repayment feed — every repayment of the loans it funds, across
// the businesses, newest first, each split into interest, fee and principal, with the filter's
// totals by state. Rules: internal/lending/fi_repayments.go.

var fiSettlementFilters = map[string]bool{"status": true, "businessId": true, "from": true, "to": true, "limit": true, "cursor": true}

// fiSettlementJSON is one remittance of the feed: the business it is from and the loan's
// remittance as the loan's own list shows it.
type fiSettlementJSON struct {
	BusinessID string             `json:"businessId"`
	Remittance loanRemittanceJSON `json:"remittance"`
}

type settlementTotalJSON struct {
	Count        int64 `json:"count"`
	AmountSantim int64 `json:"amountSantim"`
}

// fiSettlementFilter reads the feed's query: each parameter once, none but known.
func fiSettlementFilter(q url.Values) (f lending.SettlementFilter, limit int, before int64, e *Error) {
	if limit, before, e = seqListQuery(q, fiSettlementFilters); e == nil {
		e = readFilter(q, &f.From, &f.To, enumParam("status", &f.Status, "must be REMITTING, REMITTED or FAILED", lending.RemitStatuses...),
			idParam("businessId", &f.BusinessID))
	}
	return f, limit, before, e
}

func (s *Server) fiSettlements(c *gin.Context) {
	f, limit, before, e := fiSettlementFilter(c.Request.URL.Query())
	if e != nil {
		writeError(c, e)
		return
	}
	type read struct {
		rows   []lending.Settlement
		totals map[string]lending.SettlementTotal
	}
	got, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) (r read, err error) {
		if r.rows, err = lending.ListSettlements(ctx, tx, f, before, limit+1); err == nil {
			r.totals, err = lending.SettlementTotals(ctx, tx, f)
		}
		return r, bookTotalsRefusal(err, codeFISettlementTotalsOverflow)
	})
	if !ok {
		return
	}
	answerTotalsPage(c, limit, got.rows, got.totals, func(r lending.Settlement) string { return strconv.FormatInt(r.Seq, 10) },
		func(r lending.Settlement) fiSettlementJSON {
			return fiSettlementJSON{BusinessID: r.TenantID, Remittance: toLoanRemittanceJSON(r.Remittance)}
		},
		func(t lending.SettlementTotal) settlementTotalJSON { return settlementTotalJSON(t) })
}

var fiRepaymentFilters = map[string]bool{"status": true, "source": true, "businessId": true, "loanId": true,
	"from": true, "to": true, "limit": true, "cursor": true}

type repaymentTotalJSON struct {
	Count           int64 `json:"count"`
	AmountSantim    int64 `json:"amountSantim"`
	InterestSantim  int64 `json:"interestSantim"`
	FeeSantim       int64 `json:"feeSantim"`
	PrincipalSantim int64 `json:"principalSantim"`
}

// fiRepaymentJSON is one repayment of the feed: the business it is from and the repayment as the
// loan's own list shows it.
type fiRepaymentJSON struct {
	BusinessID string                  `json:"businessId"`
	Repayment  loanRepaymentRecordJSON `json:"repayment"`
}

// fiRepaymentFilter reads the feed's query: each parameter once, none but known.
func fiRepaymentFilter(q url.Values) (f lending.FIRepaymentFilter, limit int, before string, e *Error) {
	if limit, before, e = idListQuery(q, fiRepaymentFilters); e == nil {
		e = readFilter(q, &f.From, &f.To,
			enumParam("status", &f.Status, "must be PENDING, POSTED or FAILED", lending.RepaymentStatuses...),
			enumParam("source", &f.Source, "must be MANUAL or PAYROLL", lending.RepaymentSources...),
			idParam("businessId", &f.BusinessID), idParam("loanId", &f.LoanID))
	}
	return f, limit, before, e
}

func (s *Server) fiRepayments(c *gin.Context) {
	f, limit, before, e := fiRepaymentFilter(c.Request.URL.Query())
	if e != nil {
		writeError(c, e)
		return
	}
	type read struct {
		rows   []lending.LoanRepayment
		totals map[string]lending.RepaymentTotal
	}
	got, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) (r read, err error) {
		if r.rows, err = lending.ListFIRepayments(ctx, tx, f, before, limit+1); err == nil {
			r.totals, err = lending.FIRepaymentTotals(ctx, tx, f)
		}
		return r, bookTotalsRefusal(err, codeFIRepaymentTotalsOverflow)
	})
	if !ok {
		return
	}
	answerTotalsPage(c, limit, got.rows, got.totals, func(r lending.LoanRepayment) string { return r.ID },
		func(r lending.LoanRepayment) fiRepaymentJSON {
			return fiRepaymentJSON{BusinessID: r.TenantID, Repayment: toLoanRepaymentRecordJSON(r)}
		},
		func(t lending.RepaymentTotal) repaymentTotalJSON { return repaymentTotalJSON(t) })
}
