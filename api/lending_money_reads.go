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
	fi := func(r Route) Route { r.Handler = s.forKind(orgs.FI, r.Handler); return r }
	biz := func(r Route) Route { r.Handler = s.forKind(orgs.Business, r.Handler); return r }
	return []Route{
		biz(Route{Method: http.MethodGet, Path: "/api/loans/:id/repayments", Auth: Org, Role: orgs.PlainMember,
			Summary: "A loan's repayments, every state (paged)", Handler: s.loanRepayments}),
		biz(Route{Method: http.MethodGet, Path: "/api/loans/:id/remittances", Auth: Org, Role: orgs.PlainMember,
			Summary: "A loan's remittances to the financial institution (paged)", Handler: s.loanRemittances}),
		fi(Route{Method: http.MethodGet, Path: "/api/fi/loans/:id/repayments", Auth: Org, Role: orgs.PlainMember, Permission: orgs.LoansView,
			Summary: "The repayments of a loan the financial institution funds (paged)", Handler: s.fiLoanRepayments}),
		fi(Route{Method: http.MethodGet, Path: "/api/fi/loans/:id/remittances", Auth: Org, Role: orgs.PlainMember, Permission: orgs.LoansView,
			Summary: "The remittances of a loan the financial institution funds (paged)", Handler: s.fiLoanRemittances}),
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

type loanRepaymentListJSON struct {
	Items      []loanRepaymentRecordJSON `json:"items"`
	NextCursor *string                   `json:"nextCursor"`
}

type loanRemittanceListJSON struct {
	Items      []loanRemittanceJSON `json:"items"`
	NextCursor *string              `json:"nextCursor"`
}

func (s *Server) loanRepaymentsAs(c *gin.Context, p lending.Party) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	limit, cursor, ok := ewaPage(c)
	if !ok {
		return
	}
	rows, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) ([]lending.LoanRepayment, error) {
		return lending.ListRepayments(ctx, tx, p, id, db.Page{After: cursor, Limit: limit + 1})
	})
	if !ok {
		return
	}
	out := loanRepaymentListJSON{Items: []loanRepaymentRecordJSON{}}
	rows, out.NextCursor = pageOf(rows, limit, func(r lending.LoanRepayment) string { return r.ID })
	for _, r := range rows {
		out.Items = append(out.Items, toLoanRepaymentRecordJSON(r))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) loanRemittancesAs(c *gin.Context, p lending.Party) {
	id, ok := pathID(c)
	if !ok {
		return
	}
	limit, cursor, ok := ewaPage(c)
	if !ok {
		return
	}
	if cursor != "" {
		if _, err := lending.CheckRemittanceCursor(cursor); err != nil {
			writeError(c, fieldError(err))
			return
		}
	}
	rows, ok := inTenantAudited(s, c, "", "", "", func(ctx context.Context, tx db.BunTx) ([]lending.Remittance, error) {
		return lending.ListRemittances(ctx, tx, p, id, db.Page{After: cursor, Limit: limit + 1})
	})
	if !ok {
		return
	}
	out := loanRemittanceListJSON{Items: []loanRemittanceJSON{}}
	rows, out.NextCursor = pageOf(rows, limit, func(r lending.Remittance) string { return strconv.Itoa(r.Index) })
	for _, r := range rows {
		out.Items = append(out.Items, toLoanRemittanceJSON(r))
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) loanRepayments(c *gin.Context)    { s.loanRepaymentsAs(c, lending.Business) }
func (s *Server) loanRemittances(c *gin.Context)   { s.loanRemittancesAs(c, lending.Business) }
func (s *Server) fiLoanRepayments(c *gin.Context)  { s.loanRepaymentsAs(c, lending.Lender) }
func (s *Server) fiLoanRemittances(c *gin.Context) { s.loanRemittancesAs(c, lending.Lender) }
