package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/orgs"
)

// The business portal's bills (the spec's /api/business/* bills): everything the platform pays
// out of the business's own accounts to a third party on its behalf, as one feed, newest change
// of state first, with the whole filter's totals by kind and state — the loan remittances to the
// FIs and the court-order remittances to the orders' payees (from its payroll account) and the
// settlements of its BNPL purchases to the merchants (from its funding account). It is the
// platform's remittance feed (GET /api/admin/remittances, admin_payrolls.go) stated over one
// business with the BNPL kind added, read in the business's own tenant transaction (row-level
// security scopes it; a platform admin who is not a member reads it on the audited cross-tenant
// path) and in one snapshot, page and totals alike. Rules and the BNPL states' mapping:
// internal/lending/remittance_feed.go.
//
// Access: an org admin of the path's business with payroll.view, as the payroll runs, their
// reports and the range reports (GET /api/business/<id>/reports/payroll): the court-order
// remittances are read nowhere else with less (a run's court-order report), and the loan and BNPL
// reads of a business need no more. Only a BUSINESS: any other kind is 403
// ORGANIZATION_NOT_BUSINESS (audited).

// codeBillTotalsOverflow is the 422 of a bills filter whose sums pass int64 santim.
const codeBillTotalsOverflow = "BILL_TOTALS_OVERFLOW"

func (s *Server) businessBillRoutes() []Route {
	return []Route{{Method: http.MethodGet, Path: "/api/business/:id/bills", Auth: Org, Role: orgs.Admin, Tenant: "id", Permission: payrollView,
		Summary: "A business's bills: every loan and court-order remittance and BNPL merchant settlement it pays (newest change of state first; by kind, status, window; paged, with totals)",
		Handler: snapshot(s.forKind(orgs.Business, s.businessBills)), Body: BodyNone}}
}

var businessBillParams = map[string]bool{"kind": true, "status": true, "from": true, "to": true, "limit": true, "cursor": true}

// remittanceFeedQuery reads a remittance feed's query, the platform's and a business's bills
// alike: each parameter once and none but known (listQuery), then the page (limit, and the cursor:
// a place in the feed's order), then kind (one of kinds), status, extra and the window.
func remittanceFeedQuery(q url.Values, known map[string]bool, kinds []string, extra ...filterParam) (f lending.RemittanceFeedFilter,
	limit int, after lending.RemittanceFeedCursor, e *Error) {
	if e = listQuery(q, known); e != nil {
		return f, 0, after, e
	}
	if limit, _, e = pageParams(q.Get("limit"), ""); e != nil {
		return f, 0, after, e
	}
	var err error
	if after, err = lending.ParseRemittanceFeedCursor(q.Get("cursor")); err != nil {
		return f, 0, after, fieldError(err)
	}
	params := append([]filterParam{enumParam("kind", &f.Kind, "must be "+oneOf(kinds), kinds...),
		enumParam("status", &f.Status, "must be "+oneOf(lending.RemitStatuses), lending.RemitStatuses...)}, extra...)
	e = readFilter(q, &f.From, &f.To, params...)
	return f, limit, after, e
}

// oneOf writes values as a choice: "A", "A or B", "A, B or C".
func oneOf(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// remitTotalsJSON shows a kind's totals by state.
func remitTotalsJSON(byStatus map[string]lending.SettlementTotal) map[string]settlementTotalJSON {
	out := make(map[string]settlementTotalJSON, len(byStatus))
	for st, t := range byStatus {
		out[st] = settlementTotalJSON(t)
	}
	return out
}

// businessBillPayeeJSON is whom a bill pays: the FI, the court order's payee account holder (no
// id) or the merchant.
type businessBillPayeeJSON struct {
	ID   *string `json:"id"`
	Name string  `json:"name"`
}

type businessBillBnplJSON struct {
	AgreementID       string `json:"agreementId"`
	MerchantID        string `json:"merchantId"`
	MerchantName      string `json:"merchantName"`
	MerchantReference string `json:"merchantReference"`
}

// businessBillJSON is one bill: the platform feed's remittance (adminRemittanceJSON) without the
// business, which the path names, with its payee and, for a BNPL settlement, its agreement. Its
// kind's own part (loan, courtOrder or bnpl) is set, the others null. from and to are null only
// for a BNPL settlement whose accounts were not recorded (an agreement made before app migration
// 0110).
type businessBillJSON struct {
	Kind             string                    `json:"kind"`
	Status           string                    `json:"status"`
	Attempt          int                       `json:"attempt"`
	AmountSantim     int64                     `json:"amountSantim"`
	Payee            businessBillPayeeJSON     `json:"payee"`
	From             *adminRemitAccountJSON    `json:"from"`
	To               *adminRemitAccountJSON    `json:"to"`
	PartnerReference string                    `json:"partnerReference"`
	WorkflowID       string                    `json:"workflowId"`
	TransferID       *string                   `json:"transferId"`
	FailureReason    *string                   `json:"failureReason"`
	CreatedAt        time.Time                 `json:"createdAt"`
	UpdatedAt        time.Time                 `json:"updatedAt"`
	RemittedAt       *time.Time                `json:"remittedAt"`
	Loan             *adminRemitLoanJSON       `json:"loan"`
	CourtOrder       *adminRemitCourtOrderJSON `json:"courtOrder"`
	Bnpl             *businessBillBnplJSON     `json:"bnpl"`
}

func toBusinessBillJSON(it lending.RemittanceFeedItem) businessBillJSON {
	a := toAdminRemittanceJSON(it) // the accounts masked, the loan's and the court order's parts: one home
	payeeID, payeeName := it.Payee()
	out := businessBillJSON{Kind: a.Kind, Status: a.Status, Attempt: a.Attempt, AmountSantim: a.AmountSantim,
		Payee: businessBillPayeeJSON{ID: optionalString(payeeID), Name: payeeName}, PartnerReference: a.PartnerReference,
		WorkflowID: a.WorkflowID, TransferID: a.TransferID, FailureReason: a.FailureReason, CreatedAt: a.CreatedAt,
		UpdatedAt: a.UpdatedAt, RemittedAt: a.RemittedAt, Loan: a.Loan, CourtOrder: a.CourtOrder}
	if it.AccountsRecorded() {
		out.From, out.To = &a.From, &a.To
	}
	if it.Kind == lending.RemittanceKindBnpl {
		out.Bnpl = &businessBillBnplJSON{AgreementID: it.AgreementID, MerchantID: it.MerchantID, MerchantName: it.MerchantName,
			MerchantReference: it.MerchantReference}
	}
	return out
}

// businessBills answers GET /api/business/<id>/bills: the query checked before anything is read.
func (s *Server) businessBills(c *gin.Context) {
	f, limit, after, e := remittanceFeedQuery(c.Request.URL.Query(), businessBillParams, lending.BillKinds)
	if e != nil {
		writeError(c, e)
		return
	}
	business := callerOf(c).Tenant
	var rows []lending.RemittanceFeedItem
	var totals map[string]map[string]lending.SettlementTotal
	err := s.inTenant(c, func(ctx context.Context, tx pgx.Tx) (err error) {
		if rows, err = lending.ListBusinessBills(ctx, tx, business, f, after, limit+1); err == nil {
			totals, err = lending.BusinessBillTotals(ctx, tx, business, f)
		}
		return err
	})
	if err != nil {
		writeError(c, bookTotalsRefusal(err, codeBillTotalsOverflow))
		return
	}
	answerTotalsPage(c, limit, rows, totals, func(r lending.RemittanceFeedItem) string { return r.Cursor().String() }, toBusinessBillJSON,
		remitTotalsJSON)
}
