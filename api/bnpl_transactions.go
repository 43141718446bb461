package api

import (
	"context"
	"net/url"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/orgs"
)

// GET /api/bnpl/transactions: every BNPL money movement of the active organization, newest first,
// with the filter's totals by type and state — a business's (the payments to its merchants, its
// employees' repayments, its write-offs) or a merchant's (the payments it received for its
// orders, nothing of the customers'). One path for both kinds, dispatched on the organization's
// kind here. Rules: internal/bnpl/transactions.go.

// codeBnplTransactionTotalsOverflow refuses a feed whose totals pass int64 santim (422): the
// caller's filter is too wide for the figures to be carried.
const codeBnplTransactionTotalsOverflow = "BNPL_TRANSACTION_TOTALS_OVERFLOW"

var bnplTransactionFilters = map[string]bool{"type": true, "state": true, "agreementId": true, "from": true, "to": true,
	"limit": true, "cursor": true}

// bnplBusinessTransactionJSON is a movement as the business sees it.
type bnplBusinessTransactionJSON struct {
	Type         string    `json:"type"`
	Direction    string    `json:"direction"`
	State        string    `json:"state"`
	AmountSantim int64     `json:"amountSantim"`
	AgreementID  string    `json:"agreementId"`
	EmployeeID   string    `json:"employeeId"`
	MerchantID   string    `json:"merchantId"`
	Index        *int      `json:"index"`
	Source       *string   `json:"source"`
	MandateID    *string   `json:"mandateId"`
	LedgerTxID   *string   `json:"ledgerTxId"`
	TransferID   *string   `json:"transferId"`
	Failure      *string   `json:"failure"`
	WorkflowID   string    `json:"workflowId"`
	At           time.Time `json:"at"`
}

// bnplMerchantTransactionJSON is a payment as the merchant sees it: its order (the orders route's
// id, businessId and merchantReference), never the customer nor the business's books or sagas.
type bnplMerchantTransactionJSON struct {
	Type              string    `json:"type"`
	Direction         string    `json:"direction"`
	State             string    `json:"state"`
	AmountSantim      int64     `json:"amountSantim"`
	AgreementID       string    `json:"agreementId"`
	BusinessID        string    `json:"businessId"`
	MerchantReference string    `json:"merchantReference"`
	TransferID        *string   `json:"transferId"`
	Failure           *string   `json:"failure"`
	At                time.Time `json:"at"`
}

type bnplTransactionFiguresJSON struct {
	Count        int64 `json:"count"`
	AmountSantim int64 `json:"amountSantim"`
}

type bnplTransactionTotalJSON struct {
	Direction    string                                `json:"direction"`
	Count        int64                                 `json:"count"`
	AmountSantim int64                                 `json:"amountSantim"`
	States       map[string]bnplTransactionFiguresJSON `json:"states"`
}

func toBnplBusinessTransactionJSON(t bnpl.Transaction) any {
	out := bnplBusinessTransactionJSON{Type: t.Type, Direction: t.Direction, State: t.State, AmountSantim: t.AmountSantim,
		AgreementID: t.AgreementID, EmployeeID: t.EmployeeID, MerchantID: t.MerchantID, LedgerTxID: bnplOptional(t.LedgerTxID),
		TransferID: bnplOptional(t.TransferID), Failure: bnplOptional(t.Failure), WorkflowID: t.WorkflowID, At: t.At}
	if t.Type == bnpl.TxRepayment {
		idx := t.Index
		out.Index, out.Source, out.MandateID = &idx, bnplOptional(t.Source), bnplOptional(t.MandateID)
	}
	return out
}

func toBnplMerchantTransactionJSON(t bnpl.Transaction) any {
	return bnplMerchantTransactionJSON{Type: t.Type, Direction: t.Direction, State: t.State, AmountSantim: t.AmountSantim,
		AgreementID: t.AgreementID, BusinessID: t.BusinessID, MerchantReference: t.MerchantReference,
		TransferID: bnplOptional(t.TransferID), Failure: bnplOptional(t.Failure), At: t.At}
}

func toBnplTransactionTotalJSON(t bnpl.TransactionTotal) bnplTransactionTotalJSON {
	out := bnplTransactionTotalJSON{Direction: t.Direction, Count: t.Count, AmountSantim: t.AmountSantim,
		States: make(map[string]bnplTransactionFiguresJSON, len(t.States))}
	for k, v := range t.States {
		out.States[k] = bnplTransactionFiguresJSON(v)
	}
	return out
}

// bnplTransactionFilter reads the feed's query: each parameter once, none but known.
func bnplTransactionFilter(q url.Values) (f bnpl.TransactionFilter, limit int, after bnpl.TransactionCursor, e *Error) {
	if e = listQuery(q, bnplTransactionFilters); e != nil {
		return f, 0, after, e
	}
	if limit, _, e = pageParams(q.Get("limit"), ""); e != nil {
		return f, 0, after, e
	}
	var err error
	if after, err = bnpl.ParseTransactionCursor(q.Get("cursor")); err != nil {
		return f, 0, after, fieldError(err)
	}
	e = readFilter(q, &f.From, &f.To,
		enumParam("type", &f.Type, "must be MERCHANT_PAYMENT, REPAYMENT or WRITE_OFF", bnpl.TransactionTypes...),
		enumParam("state", &f.State, "must be PENDING, PAID, FAILED or POSTED", bnpl.TransactionStates...),
		idParam("agreementId", &f.AgreementID))
	return f, limit, after, e
}

// bnplTransactions answers the feed for the active organization's kind: a business reads its
// own movements (any member, as its other BNPL reads); a merchant the payments it received, with
// bnpl.view (as its orders and statement); any other kind is refused.
func (s *Server) bnplTransactions(c *gin.Context) {
	cl := callerOf(c)
	var view bnpl.TransactionView
	item := toBnplBusinessTransactionJSON
	switch cl.Access.OrgKind {
	case orgs.Business:
		view = bnpl.BusinessView
	case orgs.Merchant:
		if !cl.Platform && !cl.Access.Permissions.Allows(orgs.BnplView) {
			s.deny(c, cl.Tenant, "PERMISSION_DENIED", "your roles do not grant "+orgs.BnplView.String())
			return
		}
		view, item = bnpl.MerchantView, toBnplMerchantTransactionJSON
	default:
		s.deny(c, cl.Tenant, "ORGANIZATION_NOT_BUSINESS_OR_MERCHANT", "this route is for businesses and merchants")
		return
	}
	f, limit, after, e := bnplTransactionFilter(c.Request.URL.Query())
	if e != nil {
		writeError(c, e)
		return
	}
	type read struct {
		rows   []bnpl.Transaction
		totals map[string]bnpl.TransactionTotal
	}
	got, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (r read, err error) {
		if r.rows, err = bnpl.Transactions(ctx, tx, view, f, after, limit+1); err == nil {
			r.totals, err = bnpl.TransactionTotals(ctx, tx, view, f)
		}
		return r, err
	})
	if err != nil {
		writeError(c, bookTotalsRefusal(err, codeBnplTransactionTotalsOverflow))
		return
	}
	answerTotalsPage(c, limit, got.rows, got.totals, func(t bnpl.Transaction) string { return t.CursorOf().String() }, item,
		toBnplTransactionTotalJSON)
}
