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
