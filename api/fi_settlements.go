package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
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

type fiSettlementListJSON struct {
	Items      []fiSettlementJSON             `json:"items"`
	NextCursor *string                        `json:"nextCursor"`
	Totals     map[string]settlementTotalJSON `json:"totals"`
}

// fiSettlementFilter reads the feed's query: each parameter once, none but known.
func fiSettlementFilter(c *gin.Context) (f lending.SettlementFilter, limit int, before int64, e *Error) {
	q := c.Request.URL.Query()
	if limit, before, e = seqListQuery(q, fiSettlementFilters); e != nil {
		return f, 0, 0, e
	}
	if q.Has("status") {
		f.Status = q.Get("status")
		if err := enumCheck("status", "must be REMITTING, REMITTED or FAILED", lending.RemitStatuses...)(f.Status); err != nil {
			return f, 0, 0, fieldError(err)
		}
	}
	if q.Has("businessId") {
		f.BusinessID = q.Get("businessId")
		if err := field.Identifier("businessId", f.BusinessID, 0); err != nil {
			return f, 0, 0, fieldError(err)
		}
	}
	f.From, f.To, e = timeWindow(q)
	return f, limit, before, e
}

func (s *Server) fiSettlements(c *gin.Context) {
	f, limit, before, e := fiSettlementFilter(c)
	if e != nil {
		writeError(c, e)
		return
	}
	type read struct {
		rows   []lending.Settlement
		totals map[string]lending.SettlementTotal
	}
	got, ok := lendingValue(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) (read, error) {
		var r read
		var err error
		if r.rows, err = lending.ListSettlements(ctx, tx, f, before, limit+1); err != nil {
			return r, err
		}
		r.totals, err = lending.SettlementTotals(ctx, tx, f)
		return r, err
	})
	if !ok {
		return
	}
	out := fiSettlementListJSON{Items: []fiSettlementJSON{}, Totals: map[string]settlementTotalJSON{}}
	var rows []lending.Settlement
	rows, out.NextCursor = pageOf(got.rows, limit, func(r lending.Settlement) string { return strconv.FormatInt(r.Seq, 10) })
	for _, r := range rows {
		out.Items = append(out.Items, fiSettlementJSON{BusinessID: r.TenantID, Remittance: toLoanRemittanceJSON(r.Remittance)})
	}
	for k, t := range got.totals {
		out.Totals[k] = settlementTotalJSON(t)
	}
	c.JSON(http.StatusOK, out)
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

type fiRepaymentListJSON struct {
	Items      []fiRepaymentJSON             `json:"items"`
	NextCursor *string                       `json:"nextCursor"`
	Totals     map[string]repaymentTotalJSON `json:"totals"`
}

// fiRepaymentFilter reads the feed's query: each parameter once, none but known.
func fiRepaymentFilter(c *gin.Context) (f lending.FIRepaymentFilter, limit int, before string, e *Error) {
	q := c.Request.URL.Query()
	if limit, before, e = idListQuery(q, fiRepaymentFilters); e != nil {
		return f, 0, "", e
	}
	for _, p := range []struct {
		name string
		dst  *string
		ok   func(string) error
	}{
		{"status", &f.Status, enumCheck("status", "must be PENDING, POSTED or FAILED", lending.RepaymentStatuses...)},
		{"source", &f.Source, enumCheck("source", "must be MANUAL or PAYROLL", lending.RepaymentSources...)},
		{"businessId", &f.BusinessID, func(v string) error { return field.Identifier("businessId", v, 0) }},
		{"loanId", &f.LoanID, func(v string) error { return field.Identifier("loanId", v, 0) }},
	} {
		if q.Has(p.name) {
			*p.dst = q.Get(p.name)
			if err := p.ok(*p.dst); err != nil {
				return f, 0, "", fieldError(err)
			}
		}
	}
	f.From, f.To, e = timeWindow(q)
	return f, limit, before, e
}

func (s *Server) fiRepayments(c *gin.Context) {
	f, limit, before, e := fiRepaymentFilter(c)
	if e != nil {
		writeError(c, e)
		return
	}
	type read struct {
		rows   []lending.LoanRepayment
		totals map[string]lending.RepaymentTotal
	}
	got, ok := lendingValue(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) (read, error) {
		var r read
		var err error
		if r.rows, err = lending.ListFIRepayments(ctx, tx, f, before, limit+1); err != nil {
			return r, err
		}
		r.totals, err = lending.FIRepaymentTotals(ctx, tx, f)
		return r, err
	})
	if !ok {
		return
	}
	out := fiRepaymentListJSON{Items: []fiRepaymentJSON{}, Totals: map[string]repaymentTotalJSON{}}
	var rows []lending.LoanRepayment
	rows, out.NextCursor = pageOf(got.rows, limit, func(r lending.LoanRepayment) string { return r.ID })
	for _, r := range rows {
		out.Items = append(out.Items, fiRepaymentJSON{BusinessID: r.TenantID, Repayment: toLoanRepaymentRecordJSON(r)})
	}
	for k, t := range got.totals {
		out.Totals[k] = repaymentTotalJSON(t)
	}
	c.JSON(http.StatusOK, out)
}
