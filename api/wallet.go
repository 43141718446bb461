package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/wallet"
	"github.com/wagerail/wagerail/ledger"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// The wallet (issue 29): an employee's wallet is the ledger account payable-to-employee:<employee>
// (internal/wallet), read from the ledger on every call (GetBalance, ListEntries) — never a stored
// balance. The business sees an employee's wallet (GET /api/wallet/balance and /transactions with
// employeeId); the employee their own (GET /api/me/wallet/...). Another organization's employee is
// 404 like one that does not exist. The transfer saga's route is in wallet_transfer.go.

func (s *Server) walletRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/wallet/balance", Auth: Org, Role: orgs.Admin, Summary: "An employee's wallet balance (derived from the ledger)", Handler: s.walletBalance},
		{Method: http.MethodGet, Path: "/api/wallet/transactions", Auth: Org, Role: orgs.Admin, Summary: "An employee's wallet transactions (from the ledger, paged)", Handler: s.walletTransactions},
		{Method: http.MethodGet, Path: "/api/me/wallet/balance", Auth: Session, Summary: "The caller's wallet balance (derived from the ledger)", Handler: s.myWalletBalance},
		{Method: http.MethodGet, Path: "/api/me/wallet/transactions", Auth: Session, Summary: "The caller's wallet transactions (from the ledger, paged)", Handler: s.myWalletTransactions},
	}
}

type walletBalanceJSON struct {
	EmployeeID       string    `json:"employeeId"`
	Account          string    `json:"account"`
	Currency         string    `json:"currency"`
	PostedSantim     int64     `json:"postedSantim"`
	AvailableSantim  int64     `json:"availableSantim"`
	PendingInSantim  int64     `json:"pendingInSantim"`
	PendingOutSantim int64     `json:"pendingOutSantim"`
	AsOf             time.Time `json:"asOf"`
}

type walletTransactionJSON struct {
	Seq           int64     `json:"seq"`
	TransactionID string    `json:"transactionId"`
	Direction     string    `json:"direction"`
	AmountSantim  int64     `json:"amountSantim"`
	Currency      string    `json:"currency"`
	CreatedAt     time.Time `json:"createdAt"`
}

type walletTransactionListJSON struct {
	EmployeeID string                  `json:"employeeId"`
	Items      []walletTransactionJSON `json:"items"`
	NextCursor *string                 `json:"nextCursor"`
}

// walletEmployee is the Org routes' employee: the employeeId query value, an employee of the
// active organization (404 EMPLOYEE_NOT_FOUND otherwise).
func (s *Server) walletEmployee(c *gin.Context) (tenant, employeeID string, ok bool) {
	emp, ok := singleQuery(c, "employeeId", true, identifierCheck("employeeId"))
	if !ok {
		return "", "", false
	}
	tenant = callerOf(c).Tenant
	_, err := inTenantValue(s, c, func(ctx context.Context, tx pgx.Tx) (employees.Employee, error) {
		return employees.ByID(ctx, tx, tenant, emp)
	})
	if err != nil {
		if errors.Is(err, employees.ErrNotFound) {
			err = errWalletEmployeeNotFound
		}
		writeError(c, err)
		return "", "", false
	}
	return tenant, emp, true
}

func (s *Server) walletBalance(c *gin.Context) {
	if tenant, emp, ok := s.walletEmployee(c); ok {
		s.answerWalletBalance(c, tenant, emp)
	}
}

func (s *Server) myWalletBalance(c *gin.Context) {
	if tenant, emp, ok := s.myEmployee(c); ok {
		s.answerWalletBalance(c, tenant, emp)
	}
}

func (s *Server) walletTransactions(c *gin.Context) {
	q, ok := walletQuery(c)
	if !ok {
		return
	}
	if tenant, emp, ok := s.walletEmployee(c); ok {
		s.answerWalletTransactions(c, tenant, emp, q)
	}
}

func (s *Server) myWalletTransactions(c *gin.Context) {
	q, ok := walletQuery(c)
	if !ok {
		return
	}
	if tenant, emp, ok := s.myEmployee(c); ok {
		s.answerWalletTransactions(c, tenant, emp, q)
	}
}

// errWalletEmployeeNotFound answers an employeeId the active organization does not have.
var errWalletEmployeeNotFound = NewError(http.StatusNotFound, "EMPLOYEE_NOT_FOUND", "no such employee in this organization")

// errLedgerUnavailable answers a read the ledger could not serve.
var errLedgerUnavailable = NewError(http.StatusServiceUnavailable, "LEDGER_UNAVAILABLE", "the ledger could not be read; retry later")

// ledgerReady answers 503 NOT_CONFIGURED when the API has no ledger client.
func (s *Server) ledgerReady(c *gin.Context) bool {
	if s.deps.Ledger == nil {
		writeError(c, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "the ledger is not configured"))
		return false
	}
	return true
}

// answerWalletBalance reads the wallet account's balance; an account the ledger does not have yet
// (no money ever moved) is a zero balance.
func (s *Server) answerWalletBalance(c *gin.Context, tenant, emp string) {
	if !s.ledgerReady(c) {
		return
	}
	acct := wallet.Account(emp)
	out := walletBalanceJSON{EmployeeID: emp, Account: acct, Currency: "ETB", AsOf: s.now().UTC()}
	resp, err := s.deps.Ledger.GetBalance(c.Request.Context(), &ledgerv1.GetBalanceRequest{TenantId: tenant, AccountName: acct})
	switch {
	case errors.Is(err, ledger.ErrAccountNotFound):
	case err != nil:
		s.deps.Log.Warn("wallet balance: ledger read failed", "request_id", requestID(c), "error", err)
		writeError(c, errLedgerUnavailable)
		return
	default:
		b := resp.GetBalance()
		out.Currency, out.PostedSantim, out.AvailableSantim = b.GetCurrency(), b.GetPostedSantim(), b.GetAvailableSantim()
		out.PendingInSantim, out.PendingOutSantim = b.GetPendingCreditsSantim(), b.GetPendingDebitsSantim()
		if b.GetAsOf() != nil {
			out.AsOf = b.GetAsOf().AsTime().UTC()
		}
	}
	c.JSON(http.StatusOK, out)
}

// walletQueryParams is a transactions page's query.
type walletQueryParams struct {
	from, to  *time.Time
	direction wallet.Direction
	after     int64
	limit     int
}

// walletQuery reads from, to, direction, limit and cursor (each at most once).
func walletQuery(c *gin.Context) (walletQueryParams, bool) {
	var q walletQueryParams
	vals := map[string]string{}
	for _, k := range []string{"from", "to", "direction", "limit", "cursor"} {
		v, ok := singleQuery(c, k, false, func(string) error { return nil })
		if !ok {
			return q, false
		}
		vals[k] = v
	}
	var err error
	if q.from, q.to, err = wallet.ParseRange(vals["from"], vals["to"]); err != nil {
		writeError(c, fieldError(err))
		return q, false
	}
	if q.direction, err = wallet.ParseDirection(vals["direction"]); err != nil {
		writeError(c, fieldError(err))
		return q, false
	}
	if q.after, err = wallet.ParseCursor(vals["cursor"]); err != nil {
		writeError(c, fieldError(err))
		return q, false
	}
	q.limit = defaultPage
	if vals["limit"] != "" {
		if q.limit, err = parseLimit(vals["limit"]); err != nil {
			writeError(c, fieldError(err))
			return q, false
		}
	}
	return q, true
}

// walletScanPages bounds the ledger pages one answer reads while a direction filter skips entries.
const walletScanPages = 20

// answerWalletTransactions pages the wallet account's POSTED entries in sequence order (holds and
// their releases are transfers in flight: the balance's pending figures), filtered by direction;
// the cursor is the last entry's sequence number.
func (s *Server) answerWalletTransactions(c *gin.Context, tenant, emp string, q walletQueryParams) {
	if !s.ledgerReady(c) {
		return
	}
	out := walletTransactionListJSON{EmployeeID: emp, Items: []walletTransactionJSON{}}
	req := &ledgerv1.ListEntriesRequest{TenantId: tenant, AccountName: wallet.Account(emp), PageSize: int32(q.limit + 1),
		PageToken: wallet.LedgerToken(q.after)}
	if q.from != nil {
		req.From = timestamppb.New(*q.from)
	}
	if q.to != nil {
		req.To = timestamppb.New(*q.to)
	}
	more, scanned := false, int64(0)
	for page := 0; page < walletScanPages; page++ {
		resp, err := s.deps.Ledger.ListEntries(c.Request.Context(), req)
		if errors.Is(err, ledger.ErrAccountNotFound) {
			break
		}
		if err != nil {
			s.deps.Log.Warn("wallet transactions: ledger read failed", "request_id", requestID(c), "error", err)
			writeError(c, errLedgerUnavailable)
			return
		}
		for _, e := range resp.GetEntries() {
			if len(out.Items) == q.limit {
				more = true
				break
			}
			scanned = e.GetSeq()
			credit := e.GetDirection() == ledgerv1.Direction_DIRECTION_CREDIT
			if e.GetPhase() != ledgerv1.EntryPhase_ENTRY_PHASE_POSTED || !q.direction.Keeps(credit) {
				continue
			}
			out.Items = append(out.Items, walletTransactionJSON{Seq: e.GetSeq(), TransactionID: e.GetTransactionId(),
				Direction: string(wallet.Of(credit)), AmountSantim: e.GetAmountSantim(), Currency: e.GetCurrency(),
				CreatedAt: e.GetCreatedAt().AsTime().UTC()})
		}
		if more || resp.GetNextPageToken() == "" {
			break
		}
		req.PageToken = resp.GetNextPageToken()
		if page == walletScanPages-1 {
			// The scan stops here; the page ends with what was found and the next one goes on.
			more = true
		}
	}
	if more && scanned > 0 {
		// The next page starts after the last entry looked at (returned or left out by the filter).
		next := wallet.Cursor(scanned)
		out.NextCursor = &next
	}
	c.JSON(http.StatusOK, out)
}
