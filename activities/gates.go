package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/sanctions"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
)

// Registered names of the gate activities every money saga reuses (stable across Go renames).
const (
	KycGateActivity       = "gates.Kyc"
	SanctionsGateActivity = "gates.Sanctions"
	// CounterpartyGateActivity screens a transfer's counterparty (the destination account's holder
	// name, who is no subject of ours) against the active sanctions lists.
	CounterpartyGateActivity = "gates.Counterparty"
	AccountGateActivity      = "gates.Account"
	// GateFailedActivity records a gate that could not decide (its retries ran out): the one
	// audit row of that refusal, outcome FAILED.
	GateFailedActivity = "gates.Failed"
)

// Gate refusal codes: the Type of the non-retryable ApplicationError a gate activity returns
// when it says no, and the "code" of its audit row. A saga maps them to its own API codes.
const (
	GateKycNotApproved   = "KYC_NOT_APPROVED"  // no submission, not APPROVED, or the approval expired
	GateSanctionsBlocked = "SANCTIONS_BLOCKED" // any sanctions refusal; the audit row and details carry sanctions' own code
	GateAccountNotFound  = "ACCOUNT_NOT_FOUND" // the partner has no such account, or it is closed
	GateAccountMismatch  = "ACCOUNT_MISMATCH"  // the name rule is on and the holder name does not match
	// GateCounterpartyBlocked: the counterparty's name screens REVIEW or BLOCK (no reviewer can
	// clear a name that is no subject of ours: the gate fails closed).
	GateCounterpartyBlocked = "COUNTERPARTY_SANCTIONS_BLOCKED"
)

// Codes of a gate that could not decide (GateFailed's audit rows); the saga refuses anyway.
const (
	GateKycUnavailable       = "KYC_GATE_UNAVAILABLE"
	GateSanctionsUnavailable = sanctions.CodeUnavailable
	GateAccountUnavailable   = "ACCOUNT_LOOKUP_UNAVAILABLE"
	// GateCounterpartyUnavailable: the counterparty could not be screened (no active list, the
	// database down).
	GateCounterpartyUnavailable = "COUNTERPARTY_SCREEN_UNAVAILABLE"
)

// GateKind names a gate (GateFailedInput.Gate).
type GateKind string

const (
	GateKYC       GateKind = "KYC"
	GateSanctions GateKind = "SANCTIONS"
	GateAccount   GateKind = "ACCOUNT"
	// GateCounterparty screens GateInput.CounterpartyName (after the subject's own sanctions gate).
	GateCounterparty GateKind = "COUNTERPARTY"
)

// Audit actions of the gates' refusals (one row per refusal, outcome DENIED, or FAILED when the
// gate could not decide).
const (
	ActionKycGateBlocked       = "KycGateBlocked"
	ActionSanctionsGateBlocked = "SanctionsGateBlocked"
	ActionAccountGateBlocked   = "AccountLookupGateBlocked"
	// ActionCounterpartyGateBlocked is the counterparty screen's refusal.
	ActionCounterpartyGateBlocked = "CounterpartySanctionsGateBlocked"
)

// Gates holds the safety gates of the money sagas: KYC, sanctions and account lookup. Each
// fails closed: it passes (nil) only on a positive answer. A refusal writes exactly one audit
// row in the tenant's transaction and returns a non-retryable ApplicationError whose Type is a
// Gate… code; anything that kept it from deciding is a retryable error, and once the retries
// under the saga's gate options run out the saga calls Failed, which writes the refusal's one
// audit row with outcome FAILED.
type Gates struct {
	DB      *pgxpool.Pool   // the runtime role (wagerail_app); tenant-scoped transactions
	Gateway *gateway.Client // AccountGate only
	// Now is the KYC gate's clock (an approval past its validity refuses); nil is time.Now.
	Now func() time.Time
}

// GateInput names the saga run, the subject checked and the audit row's target.
type GateInput struct {
	// Saga is the audit actor's name: rows are written as tenancy.System(Saga), e.g.
	// "ewa-disburse".
	Saga string
	// Run: the saga's workflow id is the audit row's details.workflowId and its dedupe key; the
	// correlation id the audit row's request_id.
	Run
	// SubjectType and SubjectID: whose KYC and sanctions screening are checked (EMPLOYEE or
	// USER and its id).
	SubjectType string
	SubjectID   string
	// TargetType and TargetID: the audit row's target (EwaRequest <id>, …).
	TargetType string
	TargetID   string
	// The account gate's account at Partner, and the holder name the employer gave. With
	// RequireNameMatch (the tenant's name rule) a holder name that does not match the partner's
	// is ACCOUNT_MISMATCH.
	Partner            string
	AccountNumber      string
	ExpectedHolderName string
	RequireNameMatch   bool
	// TransferPartner is the partner the saga's transfer goes through (the funding, escrow or pool
	// account's): a partner reads an account number as one of its own accounts, so an account
	// at another partner is ACCOUNT_NOT_FOUND (reason OTHER_PARTNER) before any lookup. "" when
	// the account is the transfer's source itself.
	TransferPartner string `json:",omitempty"`
	// CounterpartyName is the name the counterparty gate screens (a transfer's destination
	// account holder); only that gate reads it.
	CounterpartyName string `json:",omitempty"`
}

// The gates, typed (what workflows call).
var (
	KycGate       = Action[GateInput]{KycGateActivity}
	SanctionsGate = Action[GateInput]{SanctionsGateActivity}
	AccountGate   = Action[GateInput]{AccountGateActivity}
	// CounterpartyGate is the counterparty's sanctions screen.
	CounterpartyGate = Action[GateInput]{CounterpartyGateActivity}
	GateFailed       = Action[GateFailedInput]{GateFailedActivity}
)

// Register registers the gates.
func (g *Gates) Register(r worker.ActivityRegistry) {
	KycGate.Register(r, g.KycGate)
	SanctionsGate.Register(r, g.SanctionsGate)
	AccountGate.Register(r, g.AccountGate)
	CounterpartyGate.Register(r, g.CounterpartyGate)
	GateFailed.Register(r, g.Failed)
}

// GateFailedInput records a gate that could not decide.
type GateFailedInput struct {
	Gate  GateKind
	Input GateInput
	// Cause is the last error's type (PARTNER_UNAVAILABLE, DEPENDENCY_FAILED, …); it goes into
	// the audit row's details, never a message (it could name an internal address).
	Cause string
}

// GateRefusal reports whether err (from a gate activity, as the workflow sees it) is a gate's
// refusal, and its Gate… code. Any other error means the gate could not decide.
func GateRefusal(err error) (code string, ok bool) {
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || !ae.NonRetryable() {
		return "", false
	}
	switch ae.Type() {
	case GateKycNotApproved, GateSanctionsBlocked, GateAccountNotFound, GateAccountMismatch, GateCounterpartyBlocked:
		return ae.Type(), true
	}
	return "", false
}

// ErrorType is the Type of the ApplicationError inside err ("" when there is none): what a
// workflow branches on and records as a cause.
func ErrorType(err error) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ae.Type()
	}
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		return "TIMEOUT"
	}
	if errors.Is(err, context.Canceled) {
		return "CANCELED"
	}
	return ""
}

// KycGate passes when the subject's newest KYC submission is APPROVED and still valid.
func (g *Gates) KycGate(ctx context.Context, in GateInput) error {
	if g.DB == nil {
		return misconfigured("kyc gate: no database pool configured")
	}
	if err := in.validate(false); err != nil {
		return temporalError(err)
	}
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	ctx = in.scope(ctx)
	var refused error
	err := tenancy.InTx(ctx, g.DB, func(tx pgx.Tx) (err error) {
		refused, err = kycGateTx(ctx, tx, in, now())
		return err
	})
	if err != nil {
		in.logger(ctx).Warn("kyc gate could not decide", "error", err)
		return temporalError(err)
	}
	if refused != nil {
		in.logger(ctx).Info("kyc gate refused", "code", GateKycNotApproved)
	}
	return refused
}

// SanctionsGate passes when the subject's latest screening passes against the active lists.
// Every refusal (BLOCK, a review pending, never screened, stale) is SANCTIONS_BLOCKED, with
// sanctions' own code in the audit row and the error's details.
func (g *Gates) SanctionsGate(ctx context.Context, in GateInput) error {
	if g.DB == nil {
		return misconfigured("sanctions gate: no database pool configured")
	}
	if err := in.validate(false); err != nil {
		return temporalError(err)
	}
	ctx = in.scope(ctx)
	var refused error
	err := tenancy.InTx(ctx, g.DB, func(tx pgx.Tx) (err error) {
		refused, err = sanctionsGateTx(ctx, tx, in, nil)
		return err
	})
	if err != nil {
		in.logger(ctx).Warn("sanctions gate could not decide", "error", err)
		return temporalError(err)
	}
	if refused != nil {
		in.logger(ctx).Info("sanctions gate refused", "code", GateSanctionsBlocked)
	}
	return refused
}

// kycGateTx is the KYC gate in the caller's transaction: refused is the gate's no (its audit
// row written in tx); err means it could not decide.
func kycGateTx(ctx context.Context, tx pgx.Tx, in GateInput, now time.Time) (refused, err error) {
	err = kyc.Gate(ctx, tx, in.TenantID, kyc.SubjectType(in.SubjectType), in.SubjectID, now)
	if err == nil {
		return nil, nil
	}
	status := "NOT_APPROVED"
	switch {
	case errors.Is(err, kyc.ErrExpired):
		status = "EXPIRED"
	case !errors.Is(err, kyc.ErrNotApproved):
		return nil, err // could not decide: retried
	}
	if err := writeGateAuditOnce(ctx, tx, in, ActionKycGateBlocked, audit.Denied,
		map[string]any{"code": GateKycNotApproved, "kyc": status}); err != nil {
		return nil, err
	}
	return refusal(GateKycNotApproved, "KYC not approved ("+status+")", status), nil
}

// sanctionsGateTx is the sanctions gate in the caller's transaction, as kycGateTx. An employee
// is paid under their name on record: when the latest check screened another name, that one is
// screened too (sanctions.GateAs). employee is the subject's record when the caller has read it
// in tx (nil: read here).
func sanctionsGateTx(ctx context.Context, tx pgx.Tx, in GateInput, employee *employees.Employee) (refused, err error) {
	typ := sanctions.SubjectType(in.SubjectType)
	if typ == sanctions.SubjectEmployee && employee == nil {
		var e employees.Employee
		switch e, err = employees.ByID(ctx, tx, in.TenantID, in.SubjectID); {
		case errors.Is(err, employees.ErrNotFound):
			err = nil // no record, no name to pay under: the saga's own steps refuse
		case err == nil:
			employee = &e
		}
	}
	if err == nil {
		if typ == sanctions.SubjectEmployee && employee != nil {
			err = sanctions.GateAs(ctx, tx, in.TenantID, typ, in.SubjectID, employee.FullName)
		} else {
			err = sanctions.Gate(ctx, tx, in.TenantID, typ, in.SubjectID)
		}
	}
	code := sanctions.GateCode(err)
	switch code {
	case "":
		return nil, nil
	case sanctions.CodeUnavailable:
		return nil, err // could not decide: retried (or refused as bad input)
	}
	if err := writeGateAuditOnce(ctx, tx, in, ActionSanctionsGateBlocked, audit.Denied,
		map[string]any{"code": GateSanctionsBlocked, "sanctionsCode": code}); err != nil {
		return nil, err
	}
	return refusal(GateSanctionsBlocked, "sanctions gate refused ("+code+")", code), nil
}

// CounterpartyGate screens the counterparty's name (in.CounterpartyName) against the active
// sanctions lists (sanctions.Screen, which writes nothing): it passes only on CLEAR. A REVIEW or a
// BLOCK is COUNTERPARTY_SANCTIONS_BLOCKED with one audit row (the outcome and score, not the
// name); no active list, or lists awaiting renormalisation, mean it cannot decide (retryable,
// then refused by the saga as unavailable).
func (g *Gates) CounterpartyGate(ctx context.Context, in GateInput) error {
	if g.DB == nil {
		return misconfigured("counterparty gate: no database pool configured")
	}
	if err := errors.Join(in.validate(false), field.Name("counterpartyName", in.CounterpartyName)); err != nil {
		return temporalError(err)
	}
	ctx = in.scope(ctx)
	var refused error
	err := tenancy.InTx(ctx, g.DB, func(tx pgx.Tx) error {
		res, err := sanctions.Screen(ctx, tx, in.CounterpartyName, time.Time{})
		var fe *field.Error
		switch {
		case errors.As(err, &fe):
			// A name the screener cannot read (no letter or digit) is never passed: fail closed.
			res = sanctions.Result{Outcome: "UNSCREENABLE", ListVersions: []int64{}}
		case err != nil:
			return err
		case res.Outcome == sanctions.Clear:
			return nil
		}
		if err := writeGateAuditOnce(ctx, tx, in, ActionCounterpartyGateBlocked, audit.Denied,
			map[string]any{"code": GateCounterpartyBlocked, "outcome": string(res.Outcome), "score": res.Score, "listVersions": res.ListVersions}); err != nil {
			return err
		}
		refused = refusal(GateCounterpartyBlocked, "counterparty screening refused ("+string(res.Outcome)+")", string(res.Outcome))
		return nil
	})
	if err != nil {
		in.logger(ctx).Warn("counterparty gate could not decide", "error", err)
		return temporalError(err)
	}
	if refused != nil {
		in.logger(ctx).Info("counterparty gate refused", "code", GateCounterpartyBlocked)
	}
	return refused
}

// AccountGate asks the partner (through the gateway) about the payout account: a missing or
// closed account is ACCOUNT_NOT_FOUND; with RequireNameMatch, a holder name that does not match
// ExpectedHolderName (or no name to compare) is ACCOUNT_MISMATCH. The gateway or the partner
// being down, slow, or behind an open breaker is retryable: the gate never passes by default.
func (g *Gates) AccountGate(ctx context.Context, in GateInput) error {
	if g.DB == nil || g.Gateway == nil {
		return misconfigured("account gate: no database pool or gateway client configured")
	}
	if err := in.validate(true); err != nil {
		return temporalError(err)
	}
	ctx = in.scope(ctx)
	req := &gatewayv1.LookupAccountRequest{Partner: in.Partner, AccountId: in.AccountNumber}
	if in.RequireNameMatch {
		req.ExpectedHolderName = in.ExpectedHolderName
	}
	code, why := "", ""
	var resp *gatewayv1.LookupAccountResponse
	var err error
	if in.TransferPartner == "" || in.TransferPartner == in.Partner {
		resp, err = g.Gateway.LookupAccount(ctx, req)
	}
	switch {
	case resp == nil && err == nil:
		// Sent through another partner, the transfer would credit whatever account that bank
		// has under this number.
		code, why = GateAccountNotFound, "OTHER_PARTNER"
	case err != nil:
		// An account number or partner the gateway refuses outright names no account.
		var ge *gateway.Error
		if errors.As(err, &ge) && (ge.Reason == gateway.ReasonUnknownPartner ||
			ge.Reason == gateway.ReasonInvalidArgument && (ge.Field == "account_id" || ge.Field == "partner")) {
			code, why = GateAccountNotFound, string(ge.Reason)
			break
		}
		in.logger(ctx).Warn("account gate could not decide", "error", err)
		return temporalError(err)
	case !resp.GetExists():
		code, why = GateAccountNotFound, "NOT_FOUND"
	case resp.GetAccountStatus() != gatewayv1.AccountStatus_ACCOUNT_STATUS_ACTIVE:
		code, why = GateAccountNotFound, resp.GetAccountStatus().String()
	case in.RequireNameMatch && resp.GetNameMatch() != gatewayv1.NameMatch_NAME_MATCH_MATCH:
		code, why = GateAccountMismatch, resp.GetNameMatch().String()
	default:
		return nil
	}
	err = tenancy.InTx(ctx, g.DB, func(tx pgx.Tx) error {
		return writeGateAuditOnce(ctx, tx, in, ActionAccountGateBlocked, audit.Denied,
			map[string]any{"code": code, "partner": in.Partner, "reason": why, "nameRule": in.RequireNameMatch})
	})
	if err != nil {
		return temporalError(err)
	}
	in.logger(ctx).Info("account gate refused", "code", code, "reason", why)
	return refusal(code, "account gate refused ("+why+")", why)
}

// Failed writes the one audit row of a gate that could not decide (outcome FAILED, code
// Gate…Unavailable). Idempotent: a retried call, or a gate that had already written its row,
// writes nothing more.
func (g *Gates) Failed(ctx context.Context, in GateFailedInput) error {
	if g.DB == nil {
		return misconfigured("gate failed: no database pool configured")
	}
	action, code := "", ""
	switch in.Gate {
	case GateKYC:
		action, code = ActionKycGateBlocked, GateKycUnavailable
	case GateSanctions:
		action, code = ActionSanctionsGateBlocked, GateSanctionsUnavailable
	case GateAccount:
		action, code = ActionAccountGateBlocked, GateAccountUnavailable
	case GateCounterparty:
		action, code = ActionCounterpartyGateBlocked, GateCounterpartyUnavailable
	default:
		return temporalError(&field.Error{Field: "gate", Problem: "must be KYC, SANCTIONS, ACCOUNT or COUNTERPARTY"})
	}
	if err := in.Input.validate(false); err != nil {
		return temporalError(err)
	}
	if err := field.Text("cause", in.Cause, 128); err != nil {
		return temporalError(err)
	}
	ctx = in.Input.scope(ctx)
	err := tenancy.InTx(ctx, g.DB, func(tx pgx.Tx) error {
		return writeGateAuditOnce(ctx, tx, in.Input, action, audit.Failed, map[string]any{"code": code, "cause": in.Cause})
	})
	if err != nil {
		return temporalError(err)
	}
	in.Input.logger(ctx).Warn("gate could not decide; refused", "gate", string(in.Gate), "code", code, "cause", in.Cause)
	return nil
}

// refusal is a gate's no: non-retryable, typed by its code, the detail as the error's details.
func refusal(code, msg, detail string) error {
	return temporal.NewApplicationErrorWithOptions(msg, code, temporal.ApplicationErrorOptions{NonRetryable: true, Details: []any{detail}})
}

// writeGateAuditOnce writes the gate's audit row unless this run of the saga already has one
// for this gate (a retried activity whose first attempt wrote it and then lost its answer): the
// row is keyed by tenant, target, action and details.workflowId, under a transaction-scoped
// advisory lock, so two attempts never both write.
func writeGateAuditOnce(ctx context.Context, tx pgx.Tx, in GateInput, action string, outcome audit.Outcome, details map[string]any) error {
	key := "gate-audit|" + in.TenantID + "|" + in.WorkflowID + "|" + action
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key); err != nil {
		return fmt.Errorf("gate audit: lock: %w", err)
	}
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM app.audit_log
		WHERE tenant_id = $1 AND target_type = $2 AND target_id = $3 AND action = $4 AND details->>'workflowId' = $5)`,
		in.TenantID, in.TargetType, in.TargetID, action, in.WorkflowID).Scan(&exists); err != nil {
		return fmt.Errorf("gate audit: %w", err)
	}
	if exists {
		return nil
	}
	details["workflowId"] = in.WorkflowID
	return audit.Write(ctx, tx, audit.Entry{Action: action, Outcome: outcome, TargetType: in.TargetType, TargetID: in.TargetID, Details: details})
}

// validate checks the input's values (they come from the saga's own records, but a gate trusts
// nothing); account adds the account gate's fields.
func (in GateInput) validate(account bool) error {
	checks := []error{
		field.Identifier("saga", in.Saga, 64),
		in.check(),
		field.Identifier("subjectType", in.SubjectType, 32),
		field.Identifier("subjectId", in.SubjectID, field.MaxIdentifier),
		field.Identifier("targetType", in.TargetType, 64),
		field.Identifier("targetId", in.TargetID, field.MaxIdentifier),
	}
	if account {
		checks = append(checks,
			field.Identifier("partner", in.Partner, 64),
			field.Identifier("accountNumber", in.AccountNumber, 64))
		if in.TransferPartner != "" {
			checks = append(checks, field.Identifier("transferPartner", in.TransferPartner, 64))
		}
		if in.ExpectedHolderName != "" {
			checks = append(checks, field.Name("expectedHolderName", in.ExpectedHolderName))
		}
	}
	return errors.Join(checks...)
}

// scope is the activity's tenancy: the tenant, the saga as system actor, the request id.
func (in GateInput) scope(ctx context.Context) context.Context { return in.Run.scope(ctx, in.Saga) }

// logger is the activity logger with the run's correlation ids.
func (in GateInput) logger(ctx context.Context) log.Logger {
	return in.Run.logger(ctx, "target_type", in.TargetType, "target_id", in.TargetID)
}

// activityLogger is the activity's logger with keyvals; outside an activity (a test calling a
// method directly) it discards.
func activityLogger(ctx context.Context, keyvals ...any) log.Logger {
	if !activity.IsActivity(ctx) {
		return nopLogger{}
	}
	return log.With(activity.GetLogger(ctx), keyvals...)
}

type nopLogger struct{}

func (nopLogger) Debug(string, ...any) {}
func (nopLogger) Info(string, ...any)  {}
func (nopLogger) Warn(string, ...any)  {}
func (nopLogger) Error(string, ...any) {}
