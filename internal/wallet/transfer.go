package wallet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/refusal"
	"github.com/wagerail/wagerail/internal/platform/settle"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/ledger/chart"
)

// Wallet transfers (POST /api/wallet/transfer; the WalletTransfer saga, workflows/wallet_transfer.go).
//
// Where wallet money is: each organization names one account at its partner bank that holds its
// employees' wallet money, the wallet pool (app.wallet_settings, set by PUT /api/wallet/settings
// once the partner has confirmed the account). Its ledger mirror is
// partner-bank:<partner>:<pool account>; every wallet of the organization is a share of it
// (payable-to-employee:<employee>).
//
// A transfer pays amount from the pool to a destination account at the same partner that the
// employee names (its holder name is screened against the sanctions lists and must match the
// partner's record of the account). Its journal is one PENDING ledger transaction
//
//	Dr payable-to-employee:<employee>     amount   (the wallet goes down)
//	Cr partner-bank:<partner>:<pool>      amount   (the money leaves the pool)
//
// carrying the transfer's partner reference as bank_reference; it is placed only while the
// wallet's lock is held and the ledger's available balance covers it (racing transfers never
// overdraw), committed when the partner settles the transfer, voided when it fails (the amount
// available again). States of a transfer (app.wallet_transfers): PENDING → SETTLED | FAILED; a
// transfer refused before money moved (gates, balance, settings) has no row, only its audit row.

// Bounds of a transfer.
const (
	// MaxTransferSantim is the most one transfer may move: 1 billion ETB (the API's schema says it too).
	MaxTransferSantim = int64(100_000_000_000)
	maxAccountLength  = 64
)

// Transfer states.
type Status string

const (
	Pending Status = "PENDING"
	Settled Status = "SETTLED"
	Failed  Status = "FAILED"
)

// The stable codes of the wallet transfer's refusals, defined once: the store returns them as
// *refusal.Refusal, the saga answers its update with them and the API answers each with its
// status and message (RefusalOf).
const (
	CodeSettingsNotSet         = "WALLET_SETTINGS_NOT_SET"
	CodeEmployeeNotActive      = "WALLET_EMPLOYEE_NOT_ACTIVE"
	CodeInsufficientBalance    = "WALLET_INSUFFICIENT_BALANCE"
	CodeDestinationIsPool      = "WALLET_DESTINATION_IS_POOL"
	CodePartnerNotSupported    = "WALLET_DESTINATION_PARTNER_UNSUPPORTED"
	CodeTransferNotFound       = "WALLET_TRANSFER_NOT_FOUND"
	CodeKycNotApproved         = "WALLET_KYC_NOT_APPROVED"
	CodeSanctionsBlocked       = "WALLET_SANCTIONS_BLOCKED"
	CodeCounterpartySanctioned = "WALLET_COUNTERPARTY_SANCTIONS_BLOCKED"
	CodeDestinationInvalid     = "WALLET_DESTINATION_ACCOUNT_INVALID"
	CodeAccountMismatch        = "ACCOUNT_MISMATCH"
	CodePartnerUnavailable     = "WALLET_PARTNER_UNAVAILABLE"
	CodeSanctionsUnavailable   = "WALLET_SANCTIONS_UNAVAILABLE"
	// The pool account is not changed while its ledger mirror holds wallet money or a movement.
	CodePoolInUse = "WALLET_POOL_IN_USE"
	// A transfer planned at the pool set before is not placed at it once it has changed.
	CodePoolChanged = "WALLET_POOL_CHANGED"
)

var refusals = refusal.Table{
	CodeSettingsNotSet:         {Status: http.StatusConflict, Message: "the organization has not set its wallet pool account (PUT /api/wallet/settings)"},
	CodeEmployeeNotActive:      {Status: http.StatusConflict, Message: "only an ACTIVE employee may transfer from their wallet"},
	CodeInsufficientBalance:    {Status: http.StatusConflict, Message: "the wallet's available balance is less than the amount"},
	CodeDestinationIsPool:      {Status: http.StatusConflict, Message: "the destination is the organization's wallet pool account itself"},
	CodePartnerNotSupported:    {Status: http.StatusConflict, Message: "transfers go to accounts at the wallet pool's partner bank only"},
	CodeTransferNotFound:       {Status: http.StatusNotFound, Message: "no such wallet transfer"},
	CodeKycNotApproved:         {Status: http.StatusUnprocessableEntity, Message: "the wallet holder's KYC is not approved (or its approval has expired)"},
	CodeSanctionsBlocked:       {Status: http.StatusUnprocessableEntity, Message: "the wallet holder did not pass sanctions screening"},
	CodeCounterpartySanctioned: {Status: http.StatusUnprocessableEntity, Message: "the destination account holder's name did not pass sanctions screening"},
	CodeDestinationInvalid:     {Status: http.StatusConflict, Message: "the partner bank did not confirm the destination account (missing or not active)"},
	CodeAccountMismatch:        {Status: http.StatusConflict, Message: "the destination account's holder name at the partner bank does not match the one given"},
	CodePartnerUnavailable:     {Status: http.StatusServiceUnavailable, Message: "the partner bank could not be asked; nothing moved, try again later with a new key"},
	CodeSanctionsUnavailable:   {Status: http.StatusServiceUnavailable, Message: "sanctions screening could not decide; nothing moved, try again later with a new key"},
	CodePoolInUse: {Status: http.StatusConflict,
		Message: "the wallet pool account holds wallet money or a movement is under way: it cannot be changed until it is empty"},
	CodePoolChanged: {Status: http.StatusConflict,
		Message: "the organization's wallet pool account changed while the transfer was being checked; nothing moved, send it again with a new key"},
}

// RefusalOf is code's answer; ok is false for a code that is not the wallet's.
func RefusalOf(code string) (refusal.Refusal, bool) { return refusals.Of(code) }

func refuse(code string) *refusal.Refusal { return refusals.Error(code) }

// Events (outbox types) and audit of the wallet's state changes.
const (
	EventSettingsUpdated   = "wallet.settings_updated.v1"
	EventTransferInitiated = "wallet.transfer_initiated.v1"
	EventTransferSettled   = "wallet.transfer_settled.v1"
	EventTransferFailed    = "wallet.transfer_failed.v1"
	// EventBankTransferSettled is the spec's <domain>.bank_transfer_settled.v1 of a transfer out
	// of the wallet (outbox.TransferSettled, kind transfer), written with
	// wallet.transfer_settled.v1, which stays as it is for its consumers.
	EventBankTransferSettled = "wallet.bank_transfer_settled.v1"

	TargetWallet   = "Wallet" // the audit rows' target type; the target id is the employee id
	TargetSettings = "WalletSettings"
)

// BankAccount is an account at a partner bank.
type BankAccount struct {
	Partner, AccountNumber, HolderName string
}

// Mirror is the ledger account mirroring a: partner-bank:<partner>:<account>.
func (a BankAccount) Mirror() string { return chart.PartnerBankAccount(a.Partner, a.AccountNumber) }

// ValidAccount checks a partner bank account's fields (name is the request's field); holder says
// whether a holder name is required.
func ValidAccount(name string, a BankAccount, holder bool) error {
	errs := []error{field.Identifier(name+".partner", a.Partner, maxAccountLength), field.Identifier(name+".accountNumber", a.AccountNumber, maxAccountLength)}
	if holder {
		errs = append(errs, field.Name(name+".holderName", a.HolderName))
	}
	return errors.Join(errs...)
}

// ValidAmount checks a transfer's amount: 1 to MaxTransferSantim.
func ValidAmount(amount int64) error {
	if amount < 1 || amount > MaxTransferSantim {
		return &field.Error{Field: "amountSantim", Problem: fmt.Sprintf("must be 1 to %d", MaxTransferSantim)}
	}
	return nil
}

// Settings is the organization's wallet pool account.
type Settings struct {
	Pool      BankAccount
	UpdatedBy string
	UpdatedAt time.Time
}

// GetSettings reads the wallet pool; ok is false when none is set.
func GetSettings(ctx context.Context, tx pgx.Tx) (s Settings, ok bool, err error) {
	err = tx.QueryRow(ctx, `SELECT pool_partner, pool_account, updated_by, updated_at FROM app.wallet_settings WHERE tenant_id = $1`,
		tenancy.TenantID(ctx)).Scan(&s.Pool.Partner, &s.Pool.AccountNumber, &s.UpdatedBy, &s.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Settings{}, false, nil
	}
	return s, err == nil, err
}

// Held reports what the ledger mirror account holds: nil when it holds nothing, posted or
// pending (or the ledger has no such account); else the figures, as a refusal's details.
type Held func(ctx context.Context, mirror string) (map[string]any, error)

// PutSettings sets the wallet pool (audit SetWalletSettings, wallet.settings_updated.v1). The
// caller has had the partner confirm the account. Another account than the one set is refused
// (WALLET_POOL_IN_USE, held's details) while the set one's ledger mirror holds anything, posted or
// pending: every transfer pays from the account set, so the wallets' money would stay at the old
// account and transfers draw on the new one. Wallet money is known to the ledger only, so held
// asks it — under the settings row's lock, which a transfer's reservation (CheckPool) takes
// before it posts its hold at the pool: a reservation either finished before (its hold is seen)
// or finds the new pool and is refused (WALLET_POOL_CHANGED), never a hold at an old pool.
func PutSettings(ctx context.Context, tx pgx.Tx, pool BankAccount, actor string, held Held) (Settings, error) {
	if err := ValidAccount("poolAccount", pool, false); err != nil {
		return Settings{}, err
	}
	var current BankAccount
	err := tx.QueryRow(ctx, `SELECT pool_partner, pool_account FROM app.wallet_settings WHERE tenant_id = $1 FOR UPDATE`,
		tenancy.TenantID(ctx)).Scan(&current.Partner, &current.AccountNumber)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return Settings{}, err
	case current.Partner != pool.Partner || current.AccountNumber != pool.AccountNumber:
		details, err := held(ctx, current.Mirror())
		if err != nil {
			return Settings{}, err
		}
		if details != nil {
			r := refuse(CodePoolInUse)
			r.Details = details
			return Settings{}, r
		}
	}
	tenant := tenancy.TenantID(ctx)
	var s Settings
	err = tx.QueryRow(ctx, `INSERT INTO app.wallet_settings (tenant_id, pool_partner, pool_account, updated_by)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (tenant_id) DO UPDATE SET pool_partner = EXCLUDED.pool_partner, pool_account = EXCLUDED.pool_account,
			updated_by = EXCLUDED.updated_by, updated_at = now()
		RETURNING pool_partner, pool_account, updated_by, updated_at`, tenant, pool.Partner, pool.AccountNumber, actor).
		Scan(&s.Pool.Partner, &s.Pool.AccountNumber, &s.UpdatedBy, &s.UpdatedAt)
	if err != nil {
		return Settings{}, err
	}
	payload := map[string]any{"poolPartner": s.Pool.Partner, "poolAccount": s.Pool.AccountNumber}
	return s, record(ctx, tx, "SetWalletSettings", audit.Success, TargetSettings, tenant, EventSettingsUpdated, payload)
}

// CheckPool takes the settings row's share lock for the rest of the transaction (PutSettings
// waits for it) and refuses a transfer planned at another pool than the one set now
// (WALLET_POOL_CHANGED; WALLET_SETTINGS_NOT_SET when none is).
func CheckPool(ctx context.Context, tx pgx.Tx, pool BankAccount) error {
	var current BankAccount
	err := tx.QueryRow(ctx, `SELECT pool_partner, pool_account FROM app.wallet_settings WHERE tenant_id = $1 FOR SHARE`,
		tenancy.TenantID(ctx)).Scan(&current.Partner, &current.AccountNumber)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return refuse(CodeSettingsNotSet)
	case err != nil:
		return err
	case current.Partner != pool.Partner || current.AccountNumber != pool.AccountNumber:
		return refuse(CodePoolChanged)
	}
	return nil
}

// Plan is what a transfer saga needs: the holder, the pool it pays from, the destination, the amount.
type Plan struct {
	EmployeeID   string
	AmountSantim int64
	Pool         BankAccount
	Destination  BankAccount
}

// WalletAccount is the plan's wallet: payable-to-employee:<employee>.
func (p Plan) WalletAccount() string { return Account(p.EmployeeID) }

// LoadPlan reads what the transfer needs: an ACTIVE employee of the tenant, the wallet pool, a
// destination at the pool's partner that is not the pool itself.
func LoadPlan(ctx context.Context, tx pgx.Tx, employeeID string, amount int64, dest BankAccount) (Plan, error) {
	dest.HolderName = strings.TrimSpace(dest.HolderName)
	if err := errors.Join(field.Identifier("employeeId", employeeID, 0), ValidAmount(amount), ValidAccount("destination", dest, true)); err != nil {
		return Plan{}, err
	}
	e, err := employees.ByID(ctx, tx, tenancy.TenantID(ctx), employeeID)
	if err != nil {
		return Plan{}, err
	}
	if e.Status != employees.Active {
		return Plan{}, refuse(CodeEmployeeNotActive)
	}
	s, ok, err := GetSettings(ctx, tx)
	if err != nil {
		return Plan{}, err
	}
	if err := CheckDestination(s, ok, dest); err != nil {
		return Plan{}, err
	}
	return Plan{EmployeeID: employeeID, AmountSantim: amount, Pool: s.Pool, Destination: dest}, nil
}

// CheckDestination refuses a transfer the settings cannot pay: no pool, a destination at another
// partner, or the pool itself.
func CheckDestination(s Settings, ok bool, dest BankAccount) error {
	switch {
	case !ok:
		return refuse(CodeSettingsNotSet)
	case dest.Partner != s.Pool.Partner:
		return refuse(CodePartnerNotSupported)
	case dest.AccountNumber == s.Pool.AccountNumber:
		return refuse(CodeDestinationIsPool)
	}
	return nil
}

// ErrWalletBusy: another transfer of the wallet holds its lock; try again shortly.
var ErrWalletBusy = errors.New("wallet: the wallet is locked by another transfer")

// LockWallet takes the wallet's transaction-scoped advisory lock, so transfers of one wallet
// check the ledger's available balance and place their hold one at a time. It does not wait: a
// wallet locked by another transfer is ErrWalletBusy at once (the caller retries), so waiters
// never sit on database connections while the holder talks to the ledger.
func LockWallet(ctx context.Context, tx pgx.Tx, employeeID string) error {
	var got bool
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0))`,
		"wallet|"+tenancy.TenantID(ctx)+"|"+employeeID).Scan(&got); err != nil {
		return err
	}
	if !got {
		return ErrWalletBusy
	}
	return nil
}

// Transfer is one wallet transfer: one saga run.
type Transfer struct {
	ID, TenantID, EmployeeID string
	AmountSantim             int64
	From                     BankAccount
	To                       BankAccount
	Status                   Status
	WorkflowID               string
	LedgerTxID               string
	TransferID               string
	FailureReason            string
	RequestedBy              string
	CreatedAt                time.Time
	SettledAt                *time.Time
}

// Answers reports whether transfer t is what an employee's request asks for: the same employee,
// amount and destination. A transfer is keyed by its saga's workflow id forever, but that id
// derives from the Idempotency-Key alone and the key's idempotency record is deleted after
// idempotency.Retention: a key sent again after that with another request names this transfer,
// which must not answer it (the API refuses IDEMPOTENCY_KEY_REUSED). dest is as the saga gets it
// (its holder name trimmed).
func (t Transfer) Answers(employeeID string, amountSantim int64, dest BankAccount) bool {
	return t.EmployeeID == employeeID && t.AmountSantim == amountSantim && t.To == dest
}

const transferCols = `id, tenant_id, employee_id, amount_santim, from_partner, from_account, to_account, to_holder_name, status,
	workflow_id, ledger_tx_id, coalesce(transfer_id, ''), coalesce(failure_reason, ''), requested_by, created_at, settled_at`

func scanTransfer(row pgx.Row) (Transfer, error) {
	var t Transfer
	err := row.Scan(&t.ID, &t.TenantID, &t.EmployeeID, &t.AmountSantim, &t.From.Partner, &t.From.AccountNumber, &t.To.AccountNumber,
		&t.To.HolderName, &t.Status, &t.WorkflowID, &t.LedgerTxID, &t.TransferID, &t.FailureReason, &t.RequestedBy, &t.CreatedAt, &t.SettledAt)
	t.To.Partner = t.From.Partner
	return t, err
}

// TransferOf is the transfer a saga run recorded; ok is false before it recorded one.
func TransferOf(ctx context.Context, tx pgx.Tx, workflowID string) (t Transfer, ok bool, err error) {
	t, err = scanTransfer(tx.QueryRow(ctx, `SELECT `+transferCols+` FROM app.wallet_transfers WHERE tenant_id = $1 AND workflow_id = $2`,
		tenancy.TenantID(ctx), workflowID))
	if errors.Is(err, pgx.ErrNoRows) {
		return Transfer{}, false, nil
	}
	return t, err == nil, err
}

// RecordPending records the run's transfer PENDING with its ledger hold (audit WalletTransfer,
// wallet.transfer_initiated.v1); the same run recording again gets its transfer back.
func RecordPending(ctx context.Context, tx pgx.Tx, p Plan, workflowID, ledgerTxID, requestedBy string) (Transfer, error) {
	if t, ok, err := TransferOf(ctx, tx, workflowID); err != nil || ok {
		return t, err
	}
	t, err := scanTransfer(tx.QueryRow(ctx, `INSERT INTO app.wallet_transfers
		(id, tenant_id, employee_id, amount_santim, from_partner, from_account, to_account, to_holder_name, status, workflow_id,
		 ledger_tx_id, requested_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'PENDING', $9, $10, $11) RETURNING `+transferCols,
		"wtr_"+identity.NewID(), tenancy.TenantID(ctx), p.EmployeeID, p.AmountSantim, p.Pool.Partner, p.Pool.AccountNumber,
		p.Destination.AccountNumber, p.Destination.HolderName, workflowID, ledgerTxID, requestedBy))
	if err != nil {
		return Transfer{}, err
	}
	return t, record(ctx, tx, "WalletTransfer", audit.Success, TargetWallet, t.EmployeeID, EventTransferInitiated, transferPayload(t))
}

// MarkSettled moves the run's transfer PENDING → SETTLED (audit WalletTransferSettled,
// wallet.transfer_settled.v1 and wallet.bank_transfer_settled.v1, naming reference, the transfer's
// partner reference, when given); again is a no-op.
func MarkSettled(ctx context.Context, tx pgx.Tx, workflowID, transferID, reference string, now time.Time) (Transfer, error) {
	return conclude(ctx, tx, workflowID, Settled, transferID, reference, "", now)
}

// MarkFailed moves the run's transfer PENDING → FAILED with the failure's code (audit
// WalletTransferFailed, wallet.transfer_failed.v1); again is a no-op.
func MarkFailed(ctx context.Context, tx pgx.Tx, workflowID, reason string, now time.Time) (Transfer, error) {
	return conclude(ctx, tx, workflowID, Failed, "", "", settle.FailureReason(reason), now)
}

func conclude(ctx context.Context, tx pgx.Tx, workflowID string, to Status, transferID, reference, reason string, now time.Time) (Transfer, error) {
	t, changed, err := settle.Conclude(ctx, tx, settle.Table[Transfer]{Name: "app.wallet_transfers", Columns: transferCols, Scan: scanTransfer,
		Pending: func(t Transfer) bool { return t.Status == Pending }, NotFound: refuse(CodeTransferNotFound)},
		workflowID, string(to), transferID, reason, now)
	if err != nil || !changed {
		return t, err
	}
	action, event, outcome := "WalletTransferSettled", EventTransferSettled, audit.Success
	if to == Failed {
		action, event, outcome = "WalletTransferFailed", EventTransferFailed, audit.Failed
	}
	if err := record(ctx, tx, action, outcome, TargetWallet, t.EmployeeID, event, transferPayload(t)); err != nil || to != Settled {
		return t, err
	}
	// Only here, where the transfer changed: a step run again found it no longer PENDING.
	return t, outbox.WriteTransferSettled(ctx, tx, outbox.TransferSettled{Domain: money.DomainWallet, Kind: "transfer", SubjectID: t.ID,
		AmountSantim: t.AmountSantim, TransferID: t.TransferID, PartnerReference: reference, Keys: map[string]any{"transferRecordId": t.ID, "employeeId": t.EmployeeID}})
}

func transferPayload(t Transfer) map[string]any {
	p := map[string]any{"transferRecordId": t.ID, "employeeId": t.EmployeeID, "amountSantim": t.AmountSantim, "status": string(t.Status),
		"partner": t.From.Partner, "workflowId": t.WorkflowID, "ledgerTxId": t.LedgerTxID}
	if t.TransferID != "" {
		p["transferId"] = t.TransferID
	}
	if t.FailureReason != "" {
		p["reason"] = t.FailureReason
	}
	return p
}

// record writes a state change's audit row and outbox event in tx.
func record(ctx context.Context, tx pgx.Tx, action string, outcome audit.Outcome, targetType, targetID, event string, payload map[string]any) error {
	if err := audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: outcome, TargetType: targetType, TargetID: targetID, Details: payload}); err != nil {
		return err
	}
	_, err := outbox.Write(ctx, tx, event, payload)
	return err
}
