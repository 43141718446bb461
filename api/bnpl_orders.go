package api

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/bnpl"
)

// The merchant's orders (internal/bnpl/orders.go): the agreements bought from it, with whether
// and when it was paid and what it has reported, never the customer or the instalments.

type bnplOrderJSON struct {
	ID                     string     `json:"id"`
	BusinessID             string     `json:"businessId"`
	MerchantReference      string     `json:"merchantReference"`
	PurchaseSantim         int64      `json:"purchaseSantim"`
	DiscountSantim         int64      `json:"discountSantim"`
	MerchantReceivesSantim int64      `json:"merchantReceivesSantim"`
	SettlementStatus       string     `json:"settlementStatus"`
	SettlementFailure      *string    `json:"settlementFailure"`
	TransferID             *string    `json:"transferId"`
	PaidAt                 *time.Time `json:"paidAt"`
	CreatedAt              time.Time  `json:"createdAt"`
	MerchantStatus         *string    `json:"merchantStatus"`
	MerchantStatusAt       *time.Time `json:"merchantStatusAt"`
}

type bnplOrderPageJSON struct {
	Items      []bnplOrderJSON `json:"items"`
	NextCursor *string         `json:"nextCursor"`
}

func toBnplOrderJSON(a bnpl.Agreement) bnplOrderJSON {
	out := bnplOrderJSON{ID: a.ID, BusinessID: a.TenantID, MerchantReference: a.MerchantReference, PurchaseSantim: a.PurchaseSantim,
		DiscountSantim: a.DiscountSantim, MerchantReceivesSantim: a.PurchaseSantim - a.DiscountSantim, SettlementStatus: a.SettlementStatus(),
		TransferID: bnplOptional(a.TransferID), PaidAt: a.ActivatedAt, CreatedAt: a.CreatedAt,
		MerchantStatus: bnplOptional(a.MerchantStatus), MerchantStatusAt: a.MerchantStatusAt}
	if out.SettlementStatus == bnpl.SettlementFailed {
		out.SettlementFailure = bnplOptional(a.Failure)
	}
	return out
}

// orderMerchantStatuses are the merchantStatus filter's values.
var orderMerchantStatuses = append(slices.Clone(bnpl.CallbackKinds), bnpl.MerchantStatusNone)

func (s *Server) listBnplOrders(c *gin.Context) {
	q := c.Request.URL.Query()
	limit, cursor, e := pageParams(q.Get("limit"), q.Get("cursor"))
	if e != nil {
		writeError(c, e)
		return
	}
	var f bnpl.OrderFilter
	var ok bool
	if f.Settlement, ok = singleQuery(c, "settlementStatus", false, oneOfCheck("settlementStatus", bnpl.SettlementStates)); !ok {
		return
	}
	if f.MerchantStatus, ok = singleQuery(c, "merchantStatus", false, oneOfCheck("merchantStatus", orderMerchantStatuses)); !ok {
		return
	}
	if f.MerchantReference, ok = singleQuery(c, "merchantReference", false, bnpl.CheckMerchantReference); !ok {
		return
	}
	rows, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) ([]bnpl.Agreement, error) {
		return bnpl.Orders(ctx, tx, f, limit+1, cursor)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	rows, next := pageOf(rows, limit, func(a bnpl.Agreement) string { return a.ID })
	out := bnplOrderPageJSON{Items: []bnplOrderJSON{}, NextCursor: next}
	for _, a := range rows {
		out.Items = append(out.Items, toBnplOrderJSON(a))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) getBnplOrder(c *gin.Context) {
	id, ok := bnplID(c)
	if !ok {
		return
	}
	out, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (bnpl.Agreement, error) {
		return bnpl.Order(ctx, tx, id)
	})
	if err != nil {
		writeError(c, payrollError(err))
		return
	}
	c.JSON(http.StatusOK, toBnplOrderJSON(out))
}
