package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/bnpl"
)

// The merchant's settlement statement (internal/bnpl/settlements.go): by Addis Ababa calendar
// day, what it was paid for the orders bought from it, with the window's totals and the
// settlements still in flight or failed in it. The figures are the activation journal's.

type bnplSettlementFiguresJSON struct {
	Orders                 int64 `json:"orders"`
	PurchaseSantim         int64 `json:"purchaseSantim"`
	DiscountSantim         int64 `json:"discountSantim"`
	MerchantReceivesSantim int64 `json:"merchantReceivesSantim"`
}

type bnplSettlementDayJSON struct {
	Date string `json:"date"`
	bnplSettlementFiguresJSON
}

type bnplSettlementStatementJSON struct {
	From     string                    `json:"from"`
	To       string                    `json:"to"`
	TimeZone string                    `json:"timeZone"`
	Days     []bnplSettlementDayJSON   `json:"days"`
	Totals   bnplSettlementFiguresJSON `json:"totals"`
	Pending  bnplSettlementFiguresJSON `json:"pending"`
	Failed   bnplSettlementFiguresJSON `json:"failed"`
}

func toBnplSettlementFiguresJSON(f bnpl.SettlementFigures) bnplSettlementFiguresJSON {
	return bnplSettlementFiguresJSON{Orders: f.Orders, PurchaseSantim: f.PurchaseSantim, DiscountSantim: f.DiscountSantim,
		MerchantReceivesSantim: f.MerchantReceivesSantim}
}

// bnplSettlementParams are the statement's query parameters.
var bnplSettlementParams = map[string]bool{"from": true, "to": true}

// codeBnplSettlementTotalsOverflow refuses a statement whose sums pass int64 santim
// (bnpl.SettlementStatement's money.ErrOverflow): a narrower window answers.
const codeBnplSettlementTotalsOverflow = "BNPL_SETTLEMENT_TOTALS_OVERFLOW"

func (s *Server) getBnplSettlements(c *gin.Context) {
	q := c.Request.URL.Query()
	if e := listQuery(q, bnplSettlementParams); e != nil {
		writeError(c, e)
		return
	}
	w, err := bnpl.ParseStatementWindow(q.Get("from"), q.Get("to"))
	if err != nil {
		writeError(c, fieldError(err))
		return
	}
	st, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (bnpl.Statement, error) {
		return bnpl.SettlementStatement(ctx, tx, w)
	})
	if err != nil {
		writeError(c, bookTotalsRefusal(payrollError(err), codeBnplSettlementTotalsOverflow))
		return
	}
	out := bnplSettlementStatementJSON{From: w.From.Format(time.DateOnly), To: w.To.Format(time.DateOnly), TimeZone: bnpl.StatementTimeZone,
		Days: make([]bnplSettlementDayJSON, 0, len(st.Days)), Totals: toBnplSettlementFiguresJSON(st.Paid),
		Pending: toBnplSettlementFiguresJSON(st.Pending), Failed: toBnplSettlementFiguresJSON(st.Failed)}
	for _, d := range st.Days {
		out.Days = append(out.Days, bnplSettlementDayJSON{Date: d.Date, bnplSettlementFiguresJSON: toBnplSettlementFiguresJSON(d.SettlementFigures)})
	}
	c.JSON(http.StatusOK, out)
}
