package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/temporal"

	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/wallet"
	"github.com/wagerail/wagerail/ledger"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

// Wallet transfers (issue 29; rules and the journal in internal/wallet/transfer.go): the business
// names the partner-bank account that holds its employees' wallet money, the wallet pool (GET/PUT
// /api/wallet/settings, checked by the partner's account lookup before it is stored); a wallet
// holder — the employee linked to the caller in the active organization — pays money out of their
// wallet to an account at the pool's partner (POST /api/wallet/transfer, Idem: the WalletTransfer
// saga, workflows/wallet_transfer.go, through runSaga). The spec lists no /api/me form of the
// transfer: the route always acts on the caller's own wallet.

func (s *Server) walletTransferRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/wallet/settings", Auth: Org, Role: orgs.Admin, Summary: "The organization's wallet pool account", Handler: s.getWalletSettings},
		{Method: http.MethodPut, Path: "/api/wallet/settings", Auth: Org, Role: orgs.Admin, Summary: "Set the organization's wallet pool account", Handler: s.putWalletSettings},
		{Method: http.MethodPost, Path: "/api/wallet/transfer", Auth: Session, Resolve: s.resolveSaver, Idem: true,
			Summary: "Transfer from the caller's wallet to a bank account (saga: wallet pool → destination)", Handler: s.walletTransfer},
	}
}

type walletSettingsJSON struct {
	PoolAccount   *partnerAccountJSON `json:"poolAccount"`
	LedgerAccount *string             `json:"ledgerAccount"`
	UpdatedAt     *time.Time          `json:"updatedAt"`
}

// walletPoolSetting is the wallet's one-account setting (account_setting.go): the pool account,
// audited SetWalletSettings, wallet.settings_updated.v1; another account than the one set asks
// the ledger what the set one's mirror holds (walletPoolHeld).
func (s *Server) walletPoolSetting() accountSetting[wallet.Settings, walletSettingsJSON] {
	return accountSetting[wallet.Settings, walletSettingsJSON]{
		Check: accountCheck{Field: "poolAccount", What: "the wallet pool account",
			PartnerUnknown: "WALLET_POOL_PARTNER_UNKNOWN", NotFound: "WALLET_POOL_ACCOUNT_NOT_FOUND"},
		Valid: func(partner, number string) error {
			return wallet.ValidAccount("poolAccount", wallet.BankAccount{Partner: partner, AccountNumber: number}, false)
		},
		Get: wallet.GetSettings,
		Put: func(ctx context.Context, tx pgx.Tx, partner, number, actor string) (wallet.Settings, error) {
			return wallet.PutSettings(ctx, tx, wallet.BankAccount{Partner: partner, AccountNumber: number}, actor, s.walletPoolHeld)
		},
		JSON: toWalletSettingsJSON,
	}
}

func toWalletSettingsJSON(st wallet.Settings, ok bool) walletSettingsJSON {
	if !ok {
		return walletSettingsJSON{}
	}
	mirror := st.Pool.Mirror()
	at := st.UpdatedAt.UTC()
	return walletSettingsJSON{PoolAccount: &partnerAccountJSON{Partner: st.Pool.Partner, AccountNumber: st.Pool.AccountNumber},
		LedgerAccount: &mirror, UpdatedAt: &at}
}

func (s *Server) getWalletSettings(c *gin.Context) { getAccountSetting(s, c, s.walletPoolSetting()) }

type walletSettingsRequest struct {
	PoolAccount *partnerAccountJSON `json:"poolAccount"`
}

// putWalletSettings sets the pool account once the partner has confirmed it exists and is active
// (the account lookup); audited SetWalletSettings, wallet.settings_updated.v1. Another account
// than the one set is refused while the set one's ledger mirror holds anything, posted or
// pending (409 WALLET_POOL_IN_USE; wallet.PutSettings decides under the settings' lock, so a
// transfer being placed meanwhile is either seen or refused WALLET_POOL_CHANGED). Wallet money
// is known to the ledger only, so the ledger is asked (503 LEDGER_UNAVAILABLE when it cannot
// answer).
func (s *Server) putWalletSettings(c *gin.Context) {
	var req walletSettingsRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	putAccountSetting(s, c, s.walletPoolSetting(), req.PoolAccount)
}

// walletPoolHeld is wallet.Held over the ledger: nil when the mirror holds nothing posted or
// pending (or the ledger has no such account), else the figures; errLedgerUnavailable when the
// ledger cannot answer.
func (s *Server) walletPoolHeld(ctx context.Context, mirror string) (map[string]any, error) {
	if s.deps.Ledger == nil {
		return nil, NewError(http.StatusServiceUnavailable, "NOT_CONFIGURED", "the ledger is not configured")
	}
	resp, err := s.deps.Ledger.GetBalance(ctx, &ledgerv1.GetBalanceRequest{TenantId: tenancy.TenantID(ctx), AccountName: mirror})
	switch {
	case errors.Is(err, ledger.ErrAccountNotFound):
		return nil, nil
	case err != nil:
		s.deps.Log.Warn("wallet settings: ledger read failed", "error", err)
		return nil, errLedgerUnavailable
	}
	b := resp.GetBalance()
	if b.GetPostedSantim() == 0 && b.GetPendingCreditsSantim() == 0 && b.GetPendingDebitsSantim() == 0 {
		return nil, nil
	}
	return map[string]any{"postedSantim": b.GetPostedSantim(), "pendingCreditsSantim": b.GetPendingCreditsSantim(),
		"pendingDebitsSantim": b.GetPendingDebitsSantim()}, nil
}

type walletDestinationJSON struct {
	Partner       string `json:"partner"`
	AccountNumber string `json:"accountNumber"`
	HolderName    string `json:"holderName"`
}

type walletTransferRequest struct {
	AmountSantim int64                  `json:"amountSantim"`
	Destination  *walletDestinationJSON `json:"destination"`
}

type walletTransferJSON struct {
	EmployeeID   string `json:"employeeId"`
	AmountSantim int64  `json:"amountSantim"`
	Status       string `json:"status"`
	WorkflowID   string `json:"workflowId"`
}

// walletTransfer starts the WalletTransfer saga and answers once its gates have passed, the
// wallet's hold is placed under its lock and the transfer is initiated (202 DISBURSING, or
// SETTLED / FAILED when the partner answered at once), or with the refusal from internal/wallet's
// table of codes. The pre-check answers an organization without a pool (409
// WALLET_SETTINGS_NOT_SET), a destination at another partner or the pool itself from the
// database; the balance check is the saga's (it holds the wallet's lock while it checks and
// reserves), and the call waits for it (NoPendingAnswer: 503 DECISION_PENDING, not stored, when
// the wait runs out; the retry with the same key gets the saga's answer). A key whose saga
// recorded another transfer (another amount or destination: its idempotency record expired) is
// 422 IDEMPOTENCY_KEY_REUSED.
func (s *Server) walletTransfer(c *gin.Context) {
	var req walletTransferRequest
	if e := bindJSON(c, &req); e != nil {
		writeError(c, e)
		return
	}
	if err := wallet.ValidAmount(req.AmountSantim); err != nil {
		writeError(c, fieldError(err))
		return
	}
	if req.Destination == nil {
		writeError(c, fieldError(&field.Error{Field: "destination", Problem: "is required"}))
		return
	}
	dest := wallet.BankAccount{Partner: req.Destination.Partner, AccountNumber: req.Destination.AccountNumber,
		HolderName: strings.TrimSpace(req.Destination.HolderName)}
	if err := wallet.ValidAccount("destination", dest, true); err != nil {
		writeError(c, fieldError(err))
		return
	}
	caller := callerOf(c)
	emp := c.GetString(saverKey)
	body := func(wfID, status string) walletTransferJSON {
		return walletTransferJSON{EmployeeID: emp, AmountSantim: req.AmountSantim, Status: status, WorkflowID: wfID}
	}
	runSaga(s, c, sagaCall[workflows.WalletAccepted, workflows.WalletTransferResult]{
		Workflow: workflows.WalletTransferWorkflowName,
		Input: workflows.WalletTransferInput{TenantID: caller.Tenant, EmployeeID: emp, AmountSantim: req.AmountSantim, Destination: dest,
			ActorID: caller.User.ID, CorrelationID: requestID(c)},
		BusinessKey: emp,
		Update:      workflows.WalletAcceptedUpdate, UpdateID: workflows.WalletAcceptedUpdateID,
		Refused: func(app *temporal.ApplicationError) (*Error, bool) { return walletRefusal(app.Type()) },
		Precheck: func(ctx context.Context, tx pgx.Tx, wfID string) (sagaPrecheck, error) {
			if t, ok, err := wallet.TransferOf(ctx, tx, wfID); err != nil || ok {
				if ok && !t.Answers(emp, req.AmountSantim, dest) {
					// The key's saga made another transfer (its idempotency record has expired
					// since): that transfer is no answer to this request.
					return sagaPrecheck{}, errIdemKeyOtherWalletTransfer
				}
				return sagaPrecheck{Owner: t.WorkflowID}, err
			}
			st, ok, err := wallet.GetSettings(ctx, tx)
			if err != nil {
				return sagaPrecheck{}, err
			}
			return sagaPrecheck{}, payrollError(wallet.CheckDestination(st, ok, dest))
		},
		Accepted: func(wfID string, a workflows.WalletAccepted) (int, any) {
			return http.StatusAccepted, body(wfID, a.Status)
		},
		// Answered 202 only once the saga has reserved the amount under the wallet's lock: never
		// "pending" before the balance check, which may still refuse it (so no Pending body).
		NoPendingAnswer: true,
		Closed: func(wfID string, r workflows.WalletTransferResult) (int, any, error) {
			if r.Status != workflows.WalletRefused {
				return http.StatusAccepted, body(wfID, r.Status), nil
			}
			if e, ok := walletRefusal(r.Code); ok {
				return 0, nil, e
			}
			return 0, nil, errors.New("wallet: the saga was refused with an unknown code " + r.Code)
		},
		LogAttrs: []any{"employee_id", emp},
	})
}

var errIdemKeyOtherWalletTransfer = keyReused("made another transfer")

// walletRefusal is the answer to a wallet code, from internal/wallet's table; ok is false for a
// code that is not the wallet's.
func walletRefusal(code string) (*Error, bool) {
	r, ok := wallet.RefusalOf(code)
	if !ok {
		return nil, false
	}
	return NewError(r.Status, r.Code, r.Message), true
}
