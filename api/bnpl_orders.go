package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
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

type bnplReportRequest struct {
	Kind       *string `json:"kind"`
	OccurredAt *string `json:"occurredAt"`
}

type bnplReportJSON struct {
	ID         int64      `json:"id"`
	OrderID    string     `json:"orderId"`
	Kind       string     `json:"kind"`
	OccurredAt *time.Time `json:"occurredAt"`
	Status     string     `json:"status"`
	Signalled  bool       `json:"signalled"`
}

// reportBnplOrder is a merchant member's word on an order (bnpl.MerchantCallbacks.Report): what
// the partner's signed callback says, said by the merchant itself. DELIVERED needs the route's
// bnpl.approve; REFUNDED and CANCELLED stop the customer's collection and need bnpl.cancel too.
func (s *Server) reportBnplOrder(c *gin.Context) {
	id, ok := bnplID(c)
	if !ok {
		return
	}
	var req bnplReportRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if e := missingField(required{"kind", req.Kind != nil}); e != nil {
		writeError(c, e)
		return
	}
	cl := callerOf(c)
	r := bnpl.MemberReport{MerchantID: cl.Tenant, AgreementID: id, Kind: *req.Kind, ReportedBy: cl.User.ID}
	if req.OccurredAt != nil {
		t, err := time.Parse(time.RFC3339Nano, *req.OccurredAt)
		if err != nil || len(*req.OccurredAt) > maxOccurredAt {
			writeError(c, fieldError(&field.Error{Field: "occurredAt", Problem: "must be an RFC 3339 time"}))
			return
		}
		t = t.UTC().Truncate(time.Microsecond) // as stored
		r.OccurredAt = &t
	}
	if err := r.Check(s.now()); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if r.Kind != bnpl.CallbackDelivered && !cl.Platform && !cl.Access.Permissions.Allows(orgs.BnplCancel) {
		s.deny(c, cl.Tenant, "PERMISSION_DENIED", "your roles do not grant "+orgs.BnplCancel.String()+" (a "+r.Kind+" report stops the customer's collection)")
		return
	}
	if s.webhooks.merchant == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "merchant reports need the platform database role (DATABASE_PLATFORM_URL)"))
		return
	}
	ctx := c.Request.Context()
	r.EventID, _ = idempotency.WorkflowIDFrom(ctx)
	rcpt, err := s.webhooks.merchant.Report(ctx, r)
	switch {
	case errors.Is(err, bnpl.ErrCallbackConflict):
		// The key's idempotency record has expired and the key came back with another report.
		writeError(c, keyReused("named another report of this merchant"))
		return
	case errors.Is(err, bnpl.ErrSignal):
		s.deps.Log.Warn("merchant report recorded but its saga not signalled", "tenant_id", cl.Tenant, "merchant_callback_id", rcpt.ID,
			"error", err, "request_id", requestID(c))
		writeError(c, NewError(http.StatusServiceUnavailable, "TEMPORAL_UNAVAILABLE", "the report is recorded, but the agreement's saga could not be reached; retry with the same Idempotency-Key"))
		return
	case err != nil:
		writeError(c, payrollError(fmt.Errorf("bnpl order report: %w", err)))
		return
	}
	c.JSON(http.StatusOK, bnplReportJSON{ID: rcpt.ID, OrderID: id, Kind: r.Kind, OccurredAt: r.OccurredAt, Status: rcpt.Outcome, Signalled: rcpt.Signalled})
}
