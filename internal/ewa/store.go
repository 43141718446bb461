package ewa

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/audit"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// More errors of the store (besides those in types.go); each maps to one API code.
var (
	// ErrEmployeeNotActive: only an ACTIVE employee may request an advance (EWA_EMPLOYEE_NOT_ACTIVE, 409).
	ErrEmployeeNotActive = errors.New("ewa: employee is not active")
	// ErrInvalidState: the move is not allowed from the request's state (EWA_INVALID_STATE, 409).
	ErrInvalidState = errors.New("ewa: request is not in a state that allows this")
	// ErrNotDisbursed: a repayment for a request that is not DISBURSED (EWA_NOT_DISBURSED, 409).
	ErrNotDisbursed = errors.New("ewa: request is not disbursed")
	// ErrRecoveryInOpenRun: a repayment by hand while a payroll run that has not completed withheld
	// (or, calculating, may withhold) the advance's recovery (EWA_RECOVERY_IN_OPEN_RUN, 409).
	ErrRecoveryInOpenRun = errors.New("ewa: a payroll run that has not completed holds the advance's recovery")
	// ErrInvalid: a value breaks a rule (the error wraps the *field.Error too).
	ErrInvalid = errors.New("ewa: invalid value")
)

// LimitError is ErrLimitExceeded with the figures the caller needs to ask again and the limit
// that binds.
type LimitError struct {
	AvailableSantim    int64
	MaxPrincipalSantim int64
	LimitingFactor     Factor
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("%v: available %d santim (%s), largest principal %d santim", ErrLimitExceeded, e.AvailableSantim,
		e.LimitingFactor, e.MaxPrincipalSantim)
}

// Is makes errors.Is(err, ErrLimitExceeded) hold.
func (e *LimitError) Is(target error) bool { return target == ErrLimitExceeded }

// Audit actions, target type and repayment sources.
const (
	ActionUpdateSettings     = "UpdateEwaSettings"
	ActionRequest            = "RequestEwa"
	ActionCancel             = "CancelEwa"
	ActionRecordRepayment    = "RecordEwaRepayment"
	ActionDisburse           = "DisburseEwa"
	ActionDisbursed          = "EwaDisbursed"
	ActionDisbursementFailed = "EwaDisbursementFailed"
	TargetRequest            = "EwaRequest"
	SourcePayroll            = "PAYROLL"
	SourceEmployer           = "EMPLOYER"
	SourceEmployee           = "EMPLOYEE"
	maxFundingAccountNumber  = 64
	maxFundingPartner        = 64
	maxFailureReasonBytes    = field.MaxText
	outstandingStatusesSQL   = `('REQUESTED', 'DISBURSING', 'DISBURSED')`
	drawnStatusesSQL         = `('REQUESTED', 'DISBURSING', 'DISBURSED', 'REPAID')`
	settingsColumns          = `tenant_id, coalesce(funding_partner, ''), coalesce(funding_account_number, ''), access_cap_percent, fee_flat_santim, fee_basis_points, account_name_match, max_per_day_santim, max_per_period_santim, max_requests_per_day, max_requests_per_period, updated_at`
	requestColumns           = `id, tenant_id, employee_id, principal_santim, fee_santim, status, coalesce(workflow_id, ''), coalesce(ledger_tx_id, ''), coalesce(transfer_id, ''), coalesce(failure_reason, ''), coalesce(repaid_amount_santim, 0), coalesce(repayment_source, ''), coalesce(repayment_ledger_tx_id, ''), requested_at, coalesce(disbursed_at, 'epoch'), coalesce(repaid_at, 'epoch'), updated_at`
)

// ValidSource reports whether s is a repayment source.
func ValidSource(s string) bool {
	return s == SourcePayroll || s == SourceEmployer || s == SourceEmployee
}

// DefaultSettings are a tenant's settings before it sets any.
func DefaultSettings(tenant string) Settings {
	return Settings{TenantID: tenant, AccessCapPercent: DefaultAccessCapPercent}
}

// Validate checks settings and returns the first broken rule as a *field.Error (names as the
// API spells them). The funding account is optional (zero: not set); when set, the partner is a
// lower-case identifier and the account number a payout account number without ':' (it is a
// segment of the ledger's partner-bank:<partner>:<account> name).
func (s Settings) Validate() error {
	if s.Funding != (Account{}) {
		p := s.Funding.Partner
		if err := field.Identifier("fundingAccount.partner", p, maxFundingPartner); err != nil {
			return err
		}
		for i := 0; i < len(p); i++ {
			if c := p[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
				return &field.Error{Field: "fundingAccount.partner", Problem: "must be a partner name: lower-case letters, digits, '_' and '-'"}
			}
		}
		n := s.Funding.AccountNumber
		if err := field.Identifier("fundingAccount.accountNumber", n, maxFundingAccountNumber); err != nil {
			return err
		}
		if strings.Contains(n, ":") {
			return &field.Error{Field: "fundingAccount.accountNumber", Problem: "must not contain ':'"}
		}
	}
	switch {
	case s.AccessCapPercent < 1 || s.AccessCapPercent > 100:
		return &field.Error{Field: "accessCapPercent", Problem: "must be a whole number from 1 to 100"}
	case s.FeeFlatSantim < 0 || s.FeeFlatSantim > MaxFeeFlatSantim:
		return &field.Error{Field: "feeFlatSantim", Problem: fmt.Sprintf("must be a whole number of santim from 0 to %d", MaxFeeFlatSantim)}
	case s.FeeBasisPoints < 0 || s.FeeBasisPoints > MaxFeeBasisPoints:
		return &field.Error{Field: "feeBasisPoints", Problem: fmt.Sprintf("must be a whole number from 0 to %d", MaxFeeBasisPoints)}
	}
	for _, c := range []struct {
		name    string
		v       *int64
		max     int64
		problem string
	}{
		{"maxPerDaySantim", s.MaxPerDaySantim, money.MaxAmountSantim, "must be null or a whole number of santim from 1 to %d"},
		{"maxPerPeriodSantim", s.MaxPerPeriodSantim, money.MaxAmountSantim, "must be null or a whole number of santim from 1 to %d"},
		{"maxRequestsPerDay", s.MaxRequestsPerDay, MaxRequestsCap, "must be null or a whole number from 1 to %d"},
		{"maxRequestsPerPeriod", s.MaxRequestsPerPeriod, MaxRequestsCap, "must be null or a whole number from 1 to %d"},
	} {
		if c.v != nil && (*c.v < 1 || *c.v > c.max) {
			return &field.Error{Field: c.name, Problem: fmt.Sprintf(c.problem, c.max)}
		}
	}
	return nil
}

func scanSettings(row pgx.Row) (Settings, error) {
	var s Settings
	err := row.Scan(&s.TenantID, &s.Funding.Partner, &s.Funding.AccountNumber, &s.AccessCapPercent, &s.FeeFlatSantim,
		&s.FeeBasisPoints, &s.AccountNameMatch, &s.MaxPerDaySantim, &s.MaxPerPeriodSantim, &s.MaxRequestsPerDay,
		&s.MaxRequestsPerPeriod, &s.UpdatedAt)
	return s, err
}

// GetSettings returns tenant's settings, or DefaultSettings when it has set none.
func GetSettings(ctx context.Context, q db.Writer, tenant string) (Settings, error) {
	s, err := scanSettings(q.QueryRow(ctx, `SELECT `+settingsColumns+` FROM app.ewa_settings WHERE tenant_id = $1`, tenant))
	if errors.Is(err, pgx.ErrNoRows) {
		return DefaultSettings(tenant), nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("ewa: settings: %w", err)
	}
	return s, nil
}

// PutSettings replaces tenant's settings with s (validated; ErrInvalid wraps the *field.Error)
// and writes the UpdateEwaSettings audit row, in tx (scoped to tenant, actor in ctx).
func PutSettings(ctx context.Context, tx pgx.Tx, tenant string, s Settings) (Settings, error) {
	if err := s.Validate(); err != nil {
		return Settings{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	actor := tenancy.Actor(ctx)
	var partner, account *string
	if s.Funding != (Account{}) {
		partner, account = &s.Funding.Partner, &s.Funding.AccountNumber
	}
	out, err := scanSettings(tx.QueryRow(ctx, `INSERT INTO app.ewa_settings (tenant_id, funding_partner, funding_account_number,
			access_cap_percent, fee_flat_santim, fee_basis_points, account_name_match, max_per_day_santim,
			max_per_period_santim, max_requests_per_day, max_requests_per_period, updated_by, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, now())
		ON CONFLICT (tenant_id) DO UPDATE SET funding_partner = EXCLUDED.funding_partner,
			funding_account_number = EXCLUDED.funding_account_number, access_cap_percent = EXCLUDED.access_cap_percent,
			fee_flat_santim = EXCLUDED.fee_flat_santim, fee_basis_points = EXCLUDED.fee_basis_points,
			account_name_match = EXCLUDED.account_name_match, max_per_day_santim = EXCLUDED.max_per_day_santim,
			max_per_period_santim = EXCLUDED.max_per_period_santim, max_requests_per_day = EXCLUDED.max_requests_per_day,
			max_requests_per_period = EXCLUDED.max_requests_per_period, updated_by = EXCLUDED.updated_by, updated_at = now()
		RETURNING `+settingsColumns,
		tenant, partner, account, s.AccessCapPercent, s.FeeFlatSantim, s.FeeBasisPoints, s.AccountNameMatch, s.MaxPerDaySantim,
		s.MaxPerPeriodSantim, s.MaxRequestsPerDay, s.MaxRequestsPerPeriod, actor))
	if err != nil {
		return Settings{}, fmt.Errorf("ewa: put settings: %w", err)
	}
	if err := audit.Write(ctx, tx, audit.Entry{Action: ActionUpdateSettings, Outcome: audit.Success, TargetType: "EwaSettings",
		TargetID: tenant, Details: map[string]any{"fundingPartner": out.Funding.Partner, "accessCapPercent": out.AccessCapPercent,
			"feeFlatSantim": out.FeeFlatSantim, "feeBasisPoints": out.FeeBasisPoints, "accountNameMatch": out.AccountNameMatch,
			"maxPerDaySantim": out.MaxPerDaySantim, "maxPerPeriodSantim": out.MaxPerPeriodSantim,
			"maxRequestsPerDay": out.MaxRequestsPerDay, "maxRequestsPerPeriod": out.MaxRequestsPerPeriod}}); err != nil {
		return Settings{}, err
	}
	return out, nil
}

// usage reads, in one query over the employee's requests of the period starting at start, what
// the limits count: the outstanding principal + fee (less what is repaid) of the REQUESTED,
// DISBURSING and DISBURSED requests (the access cap), and principal + fee and the number of the
// requests that are not CANCELLED or FAILED, in the period and in the UTC day of now (the caps).
func usage(ctx context.Context, q db.Querier, tenant, employee string, start, now time.Time) (int64, Usage, error) {
	var out int64
	var u Usage
	dayStart := now.UTC().Truncate(24 * time.Hour)
	err := q.QueryRow(ctx, `SELECT
			coalesce(sum(principal_santim + fee_santim - coalesce(repaid_amount_santim, 0)) FILTER (WHERE status IN `+outstandingStatusesSQL+`), 0),
			coalesce(sum(principal_santim + fee_santim), 0), count(*),
			coalesce(sum(principal_santim + fee_santim) FILTER (WHERE requested_at >= $4 AND requested_at < $5), 0),
			count(*) FILTER (WHERE requested_at >= $4 AND requested_at < $5)
		FROM app.ewa_requests WHERE tenant_id = $1 AND employee_id = $2 AND period_start = $3 AND status IN `+drawnStatusesSQL,
		tenant, employee, start, dayStart, dayStart.Add(24*time.Hour)).Scan(&out, &u.DrawnInPeriodSantim, &u.RequestsInPeriod,
		&u.DrawnTodaySantim, &u.RequestsToday)
	if err != nil {
		return 0, Usage{}, fmt.Errorf("ewa: usage: %w", err)
	}
	return out, u, nil
}

// employeeFor reads what the rules need of tenant's employee, under a row lock when lock is set.
func employeeFor(ctx context.Context, q db.Querier, tenant, id string, lock bool) (salary int64, active bool, err error) {
	sql := `SELECT gross_monthly_salary_santim, status FROM app.employees
		WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`
	if lock {
		sql += ` FOR UPDATE`
	}
	var status string
	err = q.QueryRow(ctx, sql, tenant, id).Scan(&salary, &status)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, ErrEmployeeNotFound
	}
	if err != nil {
		return 0, false, fmt.Errorf("ewa: employee: %w", err)
	}
	return salary, status == string(employees.Active), nil
}

// RecoverableFunc answers how much more the next payroll can recover from tenant's employee
// within the protection policy, after every deduction already due for it (statutory, court
// orders, instalments and the employee's outstanding advances): the calculator's
// projection (paycalc.Projection.RecoverableSantim). An advance (principal + fee) is limited to
// it (Factor PROJECTED_NET_PAY). ok false: no projection for this employee, the other limits
// alone apply. It is called in the eligibility's transaction q, after the employee's row is
// locked when an advance is being created, so what it reads of the employee's advances includes
// every request committed before (concurrent requests for one employee take turns). q is a
// db.Writer too, so a loader written with db.Select reads in it. An employee it cannot project
// (no payroll inputs) is ok false rather than an error: an error fails the eligibility and the
// request (nothing is created; the API answers 500).
type RecoverableFunc func(ctx context.Context, q db.Querier, tenant, employeeID string, now time.Time) (recoverable int64, ok bool, err error)

// Advances checks eligibility and creates requests with the limits beyond a tenant's settings
// that the wiring supplies. The zero value applies the settings' limits only (CheckEligibility
// and Create).
type Advances struct {
	// Recoverable, when set, limits an advance to what the next payroll can recover.
	Recoverable RecoverableFunc
}

// CheckEligibility is how much tenant's employee may draw at now, by the settings' limits only.
// Errors: ErrEmployeeNotFound.
func CheckEligibility(ctx context.Context, q db.Querier, tenant, employeeID string, now time.Time) (Eligibility, error) {
	return Advances{}.Eligibility(ctx, q, tenant, employeeID, now)
}

// Eligibility is how much tenant's employee may draw at now. Errors: ErrEmployeeNotFound, the
// Recoverable func's error.
func (a Advances) Eligibility(ctx context.Context, q db.Querier, tenant, employeeID string, now time.Time) (Eligibility, error) {
	return a.eligibility(ctx, q, tenant, employeeID, now, false)
}

// eligibility reads the employee (under a row lock when lock is set) before anything else, so
// under the lock every figure after it sees the requests committed before the lock was granted.
func (a Advances) eligibility(ctx context.Context, q db.Querier, tenant, employeeID string, now time.Time, lock bool) (Eligibility, error) {
	salary, active, err := employeeFor(ctx, q, tenant, employeeID, lock)
	if err != nil {
		return Eligibility{}, err
	}
	s, err := GetSettings(ctx, q, tenant)
	if err != nil {
		return Eligibility{}, err
	}
	start, _ := Period(now)
	out, u, err := usage(ctx, q, tenant, employeeID, start, now)
	if err != nil {
		return Eligibility{}, err
	}
	in := Inputs{SalarySantim: salary, Active: active, OutstandingSantim: out, Usage: u}
	if a.Recoverable != nil {
		r, ok, err := a.Recoverable(ctx, q, tenant, employeeID, now)
		if err != nil {
			return Eligibility{}, fmt.Errorf("ewa: recoverable by the next payroll: %w", err)
		}
		if ok {
			in.RecoverableSantim = &r
		}
	}
	e, err := Evaluate(in, s, now)
	e.EmployeeID = employeeID
	return e, err
}

func scanRequest(row pgx.Row) (Request, error) {
	var r Request
	err := row.Scan(&r.ID, &r.TenantID, &r.EmployeeID, &r.PrincipalSantim, &r.FeeSantim, &r.Status, &r.WorkflowID, &r.LedgerTxID,
		&r.TransferID, &r.FailureReason, &r.RepaidAmountSantim, &r.RepaymentSource, &r.RepaymentLedgerTxID, &r.RequestedAt,
		&r.DisbursedAt, &r.RepaidAt, &r.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Request{}, ErrNotFound
	}
	if err != nil {
		return Request{}, fmt.Errorf("ewa: request: %w", err)
	}
	if r.DisbursedAt.Unix() == 0 {
		r.DisbursedAt = time.Time{}
	}
	if r.RepaidAt.Unix() == 0 {
		r.RepaidAt = time.Time{}
	}
	return r, nil
}

// event is a request's outbox payload: ids, amounts and state, no personal data.
func event(r Request) map[string]any {
	p := map[string]any{"requestId": r.ID, "employeeId": r.EmployeeID, "principalSantim": r.PrincipalSantim,
		"feeSantim": r.FeeSantim, "status": r.Status}
	if r.WorkflowID != "" {
		p["workflowId"] = r.WorkflowID
	}
	return p
}

// record writes a change's audit row and (when typ is set) its outbox event under the request's
// tenant, in tx, with the bank_transfer_settled.v1 of each transfer in settled (the change
// records its settlement).
func record(ctx context.Context, tx pgx.Tx, r Request, action string, outcome audit.Outcome, details map[string]any, typ string,
	payload map[string]any, settled ...outbox.TransferSettled) error {
	ctx = tenancy.WithTenant(ctx, r.TenantID)
	entry := audit.Entry{Action: action, Outcome: outcome, TargetType: TargetRequest, TargetID: r.ID, Details: details}
	if typ == "" {
		return audit.Write(ctx, tx, entry)
	}
	// The audit row and the events in one round trip.
	b := &pgx.Batch{}
	if err := audit.Queue(ctx, b, entry); err != nil {
		return err
	}
	if err := outbox.Queue(ctx, b, typ, payload, nil); err != nil {
		return err
	}
	for _, s := range settled {
		if err := outbox.QueueTransferSettled(ctx, b, s); err != nil {
			return err
		}
	}
	return tx.SendBatch(ctx, b).Close()
}

// writeEvent writes one outbox event of r under its tenant, in tx.
func writeEvent(ctx context.Context, tx pgx.Tx, r Request, typ string, payload map[string]any) error {
	_, err := outbox.Write(tenancy.WithTenant(ctx, r.TenantID), tx, typ, payload)
	return err
}

// Create is Advances{}.Create: the settings' limits only.
func Create(ctx context.Context, tx pgx.Tx, tenant, employeeID string, principal int64, now time.Time) (Request, error) {
	return Advances{}.Create(ctx, tx, tenant, employeeID, principal, now)
}

// Create requests an advance of principal santim for tenant's employee at now, in tx (scoped to
// tenant, actor in ctx). The employee's row is locked first, so concurrent requests for one
// employee are checked against every limit (the access cap, the per-day and per-period amount
// and count caps, the projected net pay) one after the other: neither their sum nor their
// number ever passes a limit. Writes RequestEwa and ewa.requested.v1. Errors: ErrInvalid,
// ErrEmployeeNotFound, ErrEmployeeNotActive, *LimitError (ErrLimitExceeded), the Recoverable
// func's error.
func (a Advances) Create(ctx context.Context, tx pgx.Tx, tenant, employeeID string, principal int64, now time.Time) (Request, error) {
	if !money.ValidAmount(principal) {
		return Request{}, fmt.Errorf("%w: %w", ErrInvalid, &field.Error{Field: "amountSantim",
			Problem: fmt.Sprintf("must be a whole number of santim from 1 to %d", money.MaxAmountSantim)})
	}
	e, err := a.eligibility(ctx, tx, tenant, employeeID, now, true)
	if err != nil {
		return Request{}, err
	}
	if !e.EmployeeActive {
		return Request{}, ErrEmployeeNotActive
	}
	fee, ok, err := Allowed(principal, e.AvailableSantim, e.Settings)
	if err != nil {
		return Request{}, err
	}
	if !ok {
		return Request{}, &LimitError{AvailableSantim: e.AvailableSantim, MaxPrincipalSantim: e.MaxPrincipalSantim,
			LimitingFactor: e.LimitingFactor}
	}
	id := "ewa_" + identity.NewID()
	r, err := scanRequest(tx.QueryRow(ctx, `INSERT INTO app.ewa_requests (id, tenant_id, employee_id, principal_santim, fee_santim,
			period_start, requested_by, requested_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING `+requestColumns,
		id, tenant, employeeID, principal, fee, e.PeriodStart, tenancy.Actor(ctx), now))
	if err != nil {
		return Request{}, fmt.Errorf("ewa: create: %w", err)
	}
	return r, record(ctx, tx, r, ActionRequest, audit.Success,
		map[string]any{"employeeId": employeeID, "principalSantim": principal, "feeSantim": fee}, EventRequested, event(r))
}

// Get returns tenant's request id. Errors: ErrNotFound.
func Get(ctx context.Context, q db.Querier, tenant, id string) (Request, error) {
	return scanRequest(q.QueryRow(ctx, `SELECT `+requestColumns+` FROM app.ewa_requests WHERE tenant_id = $1 AND id = $2`, tenant, id))
}

// ByWorkflow is the request the disburse saga workflowID claimed (the tenant is q's); ok is false
// when it claimed none. A request is claimed by its saga's workflow id for good, and that id
// derives from the Idempotency-Key alone: the key's idempotency record is deleted after
// idempotency.Retention, and the key sent again after that names this request, whichever request
// the call is for (Request.Answers).
func ByWorkflow(ctx context.Context, q db.Querier, workflowID string) (r Request, ok bool, err error) {
	r, err = scanRequest(q.QueryRow(ctx, `SELECT `+requestColumns+` FROM app.ewa_requests WHERE workflow_id = $1`, workflowID))
	if errors.Is(err, ErrNotFound) {
		return Request{}, false, nil
	}
	return r, err == nil, err
}

// Answers reports whether request r is what a disburse call for request id asks for: the call
// names the request, whose principal and fee are its own. A call for another request under the
// key whose saga claimed r must not be answered by r (the API refuses IDEMPOTENCY_KEY_REUSED).
func (r Request) Answers(id string) bool { return r.ID == id }

// lockRequest reads request id under a row lock (the tenant is the transaction's).
func lockRequest(ctx context.Context, tx pgx.Tx, id string) (Request, error) {
	return scanRequest(tx.QueryRow(ctx, `SELECT `+requestColumns+` FROM app.ewa_requests WHERE id = $1 FOR UPDATE`, id))
}

// Page bounds of List.
const (
	DefaultPage = 50
	MaxPage     = 100
)

// Filter selects and pages the requests List returns; zero values select everything.
type Filter struct {
	Status     Status
	EmployeeID string
	After      string // the last id of the previous page
	Limit      int    // 1 to MaxPage (else DefaultPage)
}

// List returns a page of tenant's requests matching f, ordered by id (oldest first).
func List(ctx context.Context, q db.Querier, tenant string, f Filter) ([]Request, error) {
	if f.Limit < 1 || f.Limit > MaxPage {
		f.Limit = DefaultPage
	}
	where := []string{"tenant_id = $1", "id > $2"}
	args := []any{tenant, f.After}
	if f.Status != "" {
		args = append(args, string(f.Status))
		where = append(where, fmt.Sprintf("status = $%d", len(args)))
	}
	if f.EmployeeID != "" {
		args = append(args, f.EmployeeID)
		where = append(where, fmt.Sprintf("employee_id = $%d", len(args)))
	}
	args = append(args, f.Limit)
	rows, err := q.Query(ctx, `SELECT `+requestColumns+` FROM app.ewa_requests WHERE `+strings.Join(where, " AND ")+
		fmt.Sprintf(` ORDER BY id LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("ewa: list: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Request, error) { return scanRequest(r) })
	if err != nil {
		return nil, fmt.Errorf("ewa: list: %w", err)
	}
	return out, nil
}

// ListForEmployee is List of one employee's requests (the self-service view).
func ListForEmployee(ctx context.Context, q db.Querier, tenant, employeeID, after string, limit int) ([]Request, error) {
	return List(ctx, q, tenant, Filter{EmployeeID: employeeID, After: after, Limit: limit})
}

// Valid reports whether s is one of the six states.
func (s Status) Valid() bool {
	switch s {
	case Requested, Disbursing, Disbursed, Failed, Cancelled, Repaid:
		return true
	}
	return false
}

// Cancel moves tenant's request id REQUESTED → CANCELLED at now, with CancelEwa and
// ewa.cancelled.v1, in tx. Errors: ErrNotFound, ErrInvalidState (any other state).
func Cancel(ctx context.Context, tx pgx.Tx, tenant, id string, now time.Time) (Request, error) {
	cur, err := scanRequest(tx.QueryRow(ctx, `SELECT `+requestColumns+` FROM app.ewa_requests
		WHERE tenant_id = $1 AND id = $2 FOR UPDATE`, tenant, id))
	if err != nil {
		return Request{}, err
	}
	if cur.Status != Requested {
		return cur, fmt.Errorf("%w: cancel from %s", ErrInvalidState, cur.Status)
	}
	r, err := scanRequest(tx.QueryRow(ctx, `UPDATE app.ewa_requests SET status = 'CANCELLED', cancelled_at = $2, updated_at = $2
		WHERE id = $1 RETURNING `+requestColumns, id, now))
	if err != nil {
		return Request{}, fmt.Errorf("ewa: cancel: %w", err)
	}
	return r, record(ctx, tx, r, ActionCancel, audit.Success, map[string]any{"from": string(cur.Status)}, EventCancelled, event(r))
}
