package api

import (
	"context"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/bnpl"
)

// GET /api/bnpl/repayments: the business's BNPL repayments — every instalment its employees
// repaid, across its agreements, newest first, with the filter's totals by source. Rules:
// internal/bnpl/repayments.go.

// codeBnplRepaymentTotalsOverflow refuses a filter whose totals pass int64 santim (422).
const codeBnplRepaymentTotalsOverflow = "BNPL_REPAYMENT_TOTALS_OVERFLOW"

var bnplRepaymentFilters = map[string]bool{"employeeId": true, "merchantId": true, "agreementId": true, "source": true,
	"from": true, "to": true, "limit": true, "cursor": true}

type bnplRepaymentJSON struct {
	AgreementID  string    `json:"agreementId"`
	Index        int       `json:"index"`
	EmployeeID   string    `json:"employeeId"`
	MerchantID   string    `json:"merchantId"`
	DueDate      string    `json:"dueDate"`
	AmountSantim int64     `json:"amountSantim"`
	Source       string    `json:"source"`
	MandateID    *string   `json:"mandateId"`
	LedgerTxID   string    `json:"ledgerTxId"`
	WorkflowID   string    `json:"workflowId"`
	CollectedAt  time.Time `json:"collectedAt"`
}

type bnplRepaymentTotalJSON struct {
	Count        int64 `json:"count"`
	AmountSantim int64 `json:"amountSantim"`
}

type bnplRepaymentListJSON = totalsPage[bnplRepaymentJSON, bnplRepaymentTotalJSON]

func toBnplRepaymentJSON(r bnpl.Repayment) bnplRepaymentJSON {
	out := bnplRepaymentJSON{AgreementID: r.AgreementID, Index: r.Index, EmployeeID: r.EmployeeID, MerchantID: r.MerchantID,
		DueDate: r.DueDate.Format(time.DateOnly), AmountSantim: r.AmountSantim, Source: r.Source, LedgerTxID: r.LedgerTxID,
		WorkflowID: r.WorkflowID, CollectedAt: r.CollectedAt.UTC()}
	if r.MandateID != "" {
		m := r.MandateID
		out.MandateID = &m
	}
	return out
}

// bnplRepaymentFilter reads the feed's query: each parameter once, none but known.
func bnplRepaymentFilter(q url.Values) (f bnpl.RepaymentFilter, limit int, after bnpl.RepaymentCursor, e *Error) {
	if e = listQuery(q, bnplRepaymentFilters); e != nil {
		return f, 0, after, e
	}
	if limit, _, e = pageParams(q.Get("limit"), ""); e != nil {
		return f, 0, after, e
	}
	var err error
	if after, err = bnpl.ParseRepaymentCursor(q.Get("cursor")); err != nil {
		return f, 0, after, fieldError(err)
	}
	e = readFilter(q, &f.From, &f.To, idParam("employeeId", &f.EmployeeID), idParam("merchantId", &f.MerchantID),
		idParam("agreementId", &f.AgreementID), enumParam("source", &f.Source, "must be MANUAL or PAYROLL", bnpl.RepaymentSources...))
	return f, limit, after, e
}

func (s *Server) bnplRepayments(c *gin.Context) {
	f, limit, after, e := bnplRepaymentFilter(c.Request.URL.Query())
	if e != nil {
		writeError(c, e)
		return
	}
	type read struct {
		rows   []bnpl.Repayment
		totals map[string]bnpl.RepaymentTotal
	}
	got, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (r read, err error) {
		if r.rows, err = bnpl.Repayments(ctx, tx, f, after, limit+1); err == nil {
			r.totals, err = bnpl.RepaymentTotals(ctx, tx, f)
		}
		return r, err
	})
	if err != nil {
		writeError(c, bookTotalsRefusal(err, codeBnplRepaymentTotalsOverflow))
		return
	}
	answerTotalsPage(c, limit, got.rows, got.totals, func(r bnpl.Repayment) string { return r.CursorOf().String() }, toBnplRepaymentJSON,
		func(t bnpl.RepaymentTotal) bnplRepaymentTotalJSON { return bnplRepaymentTotalJSON(t) })
}
