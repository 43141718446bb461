package api

import (
	"net/http"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/bnpl"
)

// GET /api/admin/bnpl: the platform's BNPL oversight (the spec's /api/admin/bnpl among the portal
// families) — every agreement of every business, whichever merchant it was bought from, newest
// first, narrowed by state, business, merchant and a window on createdAt, with the filter's totals
// by state; on the audited cross-tenant path (a CrossTenantAccess row names the admin and the
// route). List and totals are read on one snapshot. Rules: internal/bnpl/admin_list.go. An
// agreement's own routes (GET /api/bnpl/agreements/<id>, its business's) take it from there.

func (s *Server) adminBnplRoutes() []Route {
	return []Route{{Method: http.MethodGet, Path: "/api/admin/bnpl", Auth: Platform,
		Summary: "The platform's BNPL agreements across every business and merchant (newest first; by state, business, merchant, window; paged, with totals)",
		Handler: snapshot(s.listAdminBnpl)}}
}

var adminBnplParams = map[string]bool{"status": true, "businessId": true, "merchantId": true, "from": true, "to": true,
	"limit": true, "cursor": true}

// adminBnplCursorPrefix starts every agreement's id (the table's CHECK), so a cursor that does not
// is no nextCursor of this list.
const adminBnplCursorPrefix = "bnpl_"

type adminBnplJSON struct {
	ID                     string `json:"id"`
	BusinessID             string `json:"businessId"`
	BusinessName           string `json:"businessName"`
	MerchantID             string `json:"merchantId"`
	MerchantName           string `json:"merchantName"`
	MerchantReference      string `json:"merchantReference"`
	EmployeeID             string `json:"employeeId"`
	PurchaseSantim         int64  `json:"purchaseSantim"`
	DiscountSantim         int64  `json:"discountSantim"`
	MerchantReceivesSantim int64  `json:"merchantReceivesSantim"`
	InstalmentsPaid        int    `json:"instalmentsPaid"`
	InstalmentsTotal       int    `json:"instalmentsTotal"`
	OutstandingSantim      int64  `json:"outstandingSantim"`
	Status                 string `json:"status"`
	// MerchantStatus is the merchant's latest word on the order, nil before any.
	MerchantStatus   *string    `json:"merchantStatus"`
	Failure          *string    `json:"failure"`
	CreatedAt        time.Time  `json:"createdAt"`
	ActivatedAt      *time.Time `json:"activatedAt"`
	FailedAt         *time.Time `json:"failedAt"`
	WrittenOffAt     *time.Time `json:"writtenOffAt"`
	MerchantStatusAt *time.Time `json:"merchantStatusAt"`
	UpdatedAt        time.Time  `json:"updatedAt"`
}

func toAdminBnplJSON(a bnpl.AdminAgreement) adminBnplJSON {
	return adminBnplJSON{ID: a.ID, BusinessID: a.TenantID, BusinessName: a.BusinessName, MerchantID: a.MerchantID,
		MerchantName: a.MerchantName, MerchantReference: a.MerchantReference, EmployeeID: a.EmployeeID,
		PurchaseSantim: a.PurchaseSantim, DiscountSantim: a.DiscountSantim, MerchantReceivesSantim: a.PurchaseSantim - a.DiscountSantim,
		InstalmentsPaid: a.InstalmentsCollected(), InstalmentsTotal: a.InstalmentsScheduled(), OutstandingSantim: a.OutstandingSantim(),
		Status: a.Status, MerchantStatus: bnplOptional(a.MerchantStatus), Failure: bnplOptional(a.Failure),
		CreatedAt: a.CreatedAt.UTC(), ActivatedAt: utcPtr(a.ActivatedAt), FailedAt: utcPtr(a.FailedAt), WrittenOffAt: utcPtr(a.WrittenOffAt),
		MerchantStatusAt: utcPtr(a.MerchantStatusAt), UpdatedAt: a.UpdatedAt.UTC()}
}

type adminBnplTotalJSON struct {
	Count             int64 `json:"count"`
	PurchaseSantim    int64 `json:"purchaseSantim"`
	OutstandingSantim int64 `json:"outstandingSantim"`
}

// adminBnplListJSON is the BNPL oversight list's answer.
type adminBnplListJSON = totalsPage[adminBnplJSON, adminBnplTotalJSON]

// adminBnplFilter reads the list's query: each parameter once, none but known; a cursor is an
// agreement's id.
func adminBnplFilter(q url.Values) (f bnpl.AdminFilter, limit int, cursor string, e *Error) {
	if limit, cursor, e = idListQuery(q, adminBnplParams); e != nil {
		return f, 0, "", e
	}
	if e = prefixedCursor(cursor, adminBnplCursorPrefix); e == nil {
		e = readFilter(q, &f.From, &f.To, enumParam("status", &f.Status,
			"must be ACCEPTED, ACTIVE, SETTLED, FAILED, DEFAULTED or WRITTEN_OFF", bnpl.AgreementStatuses...),
			idParam("businessId", &f.BusinessID), idParam("merchantId", &f.MerchantID))
	}
	return f, limit, cursor, e
}

func (s *Server) listAdminBnpl(c *gin.Context) {
	f, limit, cursor, e := adminBnplFilter(c.Request.URL.Query())
	if e != nil {
		writeError(c, e)
		return
	}
	var rows []bnpl.AdminAgreement
	var totals map[string]bnpl.AdminTotal
	err := s.asPlatform(c, func(tx pgx.Tx) (err error) {
		ctx := c.Request.Context()
		if rows, err = bnpl.AdminList(ctx, tx, f, cursor, limit+1); err == nil {
			totals, err = bnpl.AdminTotals(ctx, tx, f)
		}
		return err
	})
	if err != nil {
		// Totals past int64 (money.ErrOverflow) and a listed amount past it (bnpl's refusal) are
		// both BNPL_TOTALS_OVERFLOW (422).
		writeError(c, bookTotalsRefusal(payrollError(err), bnpl.CodeAdminTotalsOverflow))
		return
	}
	answerTotalsPage(c, limit, rows, totals, func(a bnpl.AdminAgreement) string { return a.ID }, toAdminBnplJSON,
		func(t bnpl.AdminTotal) adminBnplTotalJSON { return adminBnplTotalJSON(t) })
}
