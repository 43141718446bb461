package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// The reads of a loan's money (issue 24): its repayments, every state, and its remittances to
// the FI, paged in the loan's own order (instalment by instalment), for the business (GET
// /api/loans/<id>/repayments, /remittances) and the FI that funds the loan (GET
// /api/fi/loans/<id>/repayments, /remittances) — the access of the loan's servicing record —
// and the FI's settlement and repayment feeds across its loans (GET /api/fi/settlements,
// /api/fi/repayments, fi_settlements.go).
// Rules: internal/lending/money_reads.go.

// The FI's feeds' answers to totals past int64 santim (lending.SettlementTotals' and
// FIRepaymentTotals' money.ErrOverflow): a narrower filter answers.
const (
	codeFISettlementTotalsOverflow = "FI_SETTLEMENT_TOTALS_OVERFLOW"
	codeFIRepaymentTotalsOverflow  = "FI_REPAYMENT_TOTALS_OVERFLOW"
)

func (s *Server) loanMoneyReadRoutes() []Route {
	return []Route{
		s.bizRoute(http.MethodGet, "/api/loans/:id/repayments", "A loan's repayments, every state (paged)", orgs.PlainMember, s.loanRepayments, BodyByMethod),
		s.bizRoute(http.MethodGet, "/api/loans/:id/remittances", "A loan's remittances to the financial institution (paged)", orgs.PlainMember, s.loanRemittances, BodyByMethod),
		s.fiRoute(http.MethodGet, "/api/fi/loans/:id/repayments", "The repayments of a loan the financial institution funds (paged)", orgs.LoansView, s.fiLoanRepayments, BodyByMethod),
		s.fiRoute(http.MethodGet, "/api/fi/loans/:id/remittances", "The remittances of a loan the financial institution funds (paged)", orgs.LoansView, s.fiLoanRemittances, BodyByMethod),
		{Method: http.MethodGet, Path: "/api/fi/settlements", Auth: Org, Role: orgs.PlainMember, Permission: orgs.LoansView,
			Summary: "The financial institution's settlements: every remittance sent to it, newest change first, with the filter's totals (paged)",
			Handler: snapshot(s.forKind(orgs.FI, s.fiSettlements))},
		{Method: http.MethodGet, Path: "/api/fi/repayments", Auth: Org, Role: orgs.PlainMember, Permission: orgs.LoansView,
			Summary: "The financial institution's repayments: every repayment of the loans it funds, newest first, with the filter's totals (paged)",
			Handler: snapshot(s.forKind(orgs.FI, s.fiRepayments))},
	}
}

// loanRepaymentRecordJSON is one repayment as the list shows it.
type loanRepaymentRecordJSON struct {
	ID              string     `json:"id"`
	LoanID          string     `json:"loanId"`
	Index           int        `json:"index"`
	Seq             int        `json:"seq"`
	AmountSantim    int64      `json:"amountSantim"`
	InterestSantim  int64      `json:"interestSantim"`
	FeeSantim       int64      `json:"feeSantim"`
	PrincipalSantim int64      `json:"principalSantim"`
	Source          string     `json:"source"`
	Reference       *string    `json:"reference"`
	Status          string     `json:"status"`
	LedgerTxID      *string    `json:"ledgerTxId"`
	FailureReason   *string    `json:"failureReason"`
	WorkflowID      string     `json:"workflowId"`
	RequestedBy     string     `json:"requestedBy"`
	CreatedAt       time.Time  `json:"createdAt"`
	PostedAt        *time.Time `json:"postedAt"`
}

func toLoanRepaymentRecordJSON(p lending.LoanRepayment) loanRepaymentRecordJSON {
	out := loanRepaymentRecordJSON{ID: p.ID, LoanID: p.LoanID, Index: p.Index, Seq: p.Seq, AmountSantim: p.AmountSantim,
		InterestSantim: p.InterestSantim, FeeSantim: p.FeeSantim, PrincipalSantim: p.PrincipalSantim, Source: p.Source, Status: p.Status,
		WorkflowID: p.WorkflowID, RequestedBy: p.RequestedBy, CreatedAt: p.CreatedAt.UTC(), PostedAt: utcPtr(p.PostedAt)}
	for _, f := range []struct {
		dst **string
		v   string
	}{{&out.Reference, p.Reference}, {&out.LedgerTxID, p.LedgerTxID}, {&out.FailureReason, p.FailureReason}} {
		if f.v != "" {
			v := f.v
			*f.dst = &v
		}
	}
	return out
}

// loanRemittanceListJSON is a page of a loan's remittances.
type loanRemittanceListJSON = itemsPage[loanRemittanceJSON]

// answerLoanMoneyPage reads the path's loan's rows with list, one page of them (the cursor
// checked by checkCursor when given), and answers that page: each row as toJSON shows it, the
// next cursor the last row's key.
func answerLoanMoneyPage[T, J any](s *Server, c *gin.Context, checkCursor func(string) error,
	list func(ctx context.Context, tx db.BunTx, id string, page db.Page) ([]T, error), key func(T) string, toJSON func(T) J) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	limit, cursor, ok := ewaPage(c)
	if !ok {
		return
	}
	if cursor != "" && checkCursor != nil {
		if err := checkCursor(cursor); err != nil {
			writeError(c, fieldError(err))
			return
		}
	}
	rows, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) ([]T, error) {
		return list(ctx, tx, id, db.Page{After: cursor, Limit: limit + 1})
	})
	if ok {
		c.JSON(http.StatusOK, itemsPageOf(rows, limit, key, toJSON))
	}
}

func (s *Server) loanRepaymentsAs(c *gin.Context, p lending.Party) {
	answerLoanMoneyPage(s, c, nil, func(ctx context.Context, tx db.BunTx, id string, page db.Page) ([]lending.LoanRepayment, error) {
		return lending.ListRepayments(ctx, tx, p, id, page)
	}, func(r lending.LoanRepayment) string { return r.ID }, toLoanRepaymentRecordJSON)
}

func (s *Server) loanRemittancesAs(c *gin.Context, p lending.Party) {
	checkCursor := func(cursor string) error {
		_, err := lending.CheckRemittanceCursor(cursor)
		return err
	}
	answerLoanMoneyPage(s, c, checkCursor, func(ctx context.Context, tx db.BunTx, id string, page db.Page) ([]lending.Remittance, error) {
		return lending.ListRemittances(ctx, tx, p, id, page)
	}, func(r lending.Remittance) string { return strconv.Itoa(r.Index) }, toLoanRemittanceJSON)
}

func (s *Server) loanRepayments(c *gin.Context)    { s.loanRepaymentsAs(c, lending.Business) }
func (s *Server) loanRemittances(c *gin.Context)   { s.loanRemittancesAs(c, lending.Business) }
func (s *Server) fiLoanRepayments(c *gin.Context)  { s.loanRepaymentsAs(c, lending.Lender) }
func (s *Server) fiLoanRemittances(c *gin.Context) { s.loanRemittancesAs(c, lending.Lender) }
