package reconcile

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/ledger"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// Equb escrow reconciliation: each equb escrow account's statement at the partner against the
// ledger's pool mirror, the equb:pool:<tenant>:<cycle> accounts of the cycles bound to it
// (app.equb_escrow_bindings). The daily reconciliation matches partner-bank: mirrors line by line;
// this checks the other side of the same money: that what the escrow account received and paid
// out since its first binding is exactly what the pools hold. Money only reaches a pool's posted
// balance when the partner settled the transfer (the equb sagas), so once the transfers have
// settled the two are equal, and any difference is drift: money at the escrow account that no
// pool accounts for (someone else's transfer into it, a fee), or a pool posting the bank never
// booked. The statement wins: drift is reported and metered, never corrected.

// Escrow statuses of one account's check.
const (
	EscrowClean = "CLEAN"
	EscrowDrift = "DRIFT"
)

// EscrowAccount is one of a tenant's equb escrow accounts at a partner: the pool accounts of the
// cycles bound to it, and the day of its first binding, from which its statement counts.
type EscrowAccount struct {
	Partner, Account string
	Since            time.Time // UTC day
	PoolAccounts     []string  // equb:pool:<tenant>:<cycle>, in cycle binding order
}

// EscrowCheck is one escrow account's check, as stored in app.equb_escrow_recons and answered.
type EscrowCheck struct {
	TenantID, Partner, EscrowAccount string
	PeriodFrom, PeriodTo             string // YYYY-MM-DD, inclusive
	Cycles, StatementLines           int
	// StatementNetSantim is credits less debits booked on the escrow account within the period.
	StatementNetSantim int64
	// PoolPostedSantim is the pool accounts' posted balance (credits less debits: they are
	// liabilities); PoolPendingIn/OutSantim their open holds (transfers not settled yet).
	PoolPostedSantim, PoolPendingInSantim, PoolPendingOutSantim int64
	// DriftSantim is StatementNetSantim - PoolPostedSantim: positive, the bank holds more.
	DriftSantim int64
	Status      string
}

// CheckEscrow is the pure comparison of one account: lines are the statement's signed lines
// (credits positive) booked within the period.
func CheckEscrow(c EscrowCheck, signedLines []int64) EscrowCheck {
	c.StatementLines = len(signedLines)
	c.StatementNetSantim = 0
	for _, v := range signedLines {
		// Each line is bounded by the gateway's parser (a santim amount the ledger can hold):
		// a statement of a million of them stays far within int64.
		c.StatementNetSantim += v
	}
	c.DriftSantim = c.StatementNetSantim - c.PoolPostedSantim
	c.Status = EscrowClean
	if c.DriftSantim != 0 {
		c.Status = EscrowDrift
	}
	return c
}

// EscrowPartnerTotal sums one partner's checks of a run.
type EscrowPartnerTotal struct {
	Partner        string
	Accounts       int
	Drifted        int
	AbsDriftSantim int64
}

// EscrowFailure is a tenant whose check did not finish (its retries spent).
type EscrowFailure struct {
	TenantID, Error string
}

// EscrowReport is a whole run: every account checked, per-partner totals, and the tenants that
// failed.
type EscrowReport struct {
	Checks                    []EscrowCheck
	Partners                  []EscrowPartnerTotal
	Failures                  []EscrowFailure
	Accounts, Drifted, Errors int
}

// SummariseEscrow builds the report's totals from its checks and failures, partners in name order.
func SummariseEscrow(checks []EscrowCheck, failures []EscrowFailure) EscrowReport {
	rep := EscrowReport{Checks: checks, Failures: failures, Accounts: len(checks), Errors: len(failures)}
	by := map[string]*EscrowPartnerTotal{}
	var names []string
	for _, c := range checks {
		p, ok := by[c.Partner]
		if !ok {
			p = &EscrowPartnerTotal{Partner: c.Partner}
			by[c.Partner] = p
			names = append(names, c.Partner)
		}
		p.Accounts++
		if c.Status == EscrowDrift {
			p.Drifted++
			rep.Drifted++
			d := c.DriftSantim
			if d < 0 {
				d = -d
			}
			p.AbsDriftSantim += d
		}
	}
	sort.Strings(names)
	for _, n := range names {
		rep.Partners = append(rep.Partners, *by[n])
	}
	return rep
}

// BalanceReader is what the escrow check reads of the ledger; *ledger.Client satisfies it.
type BalanceReader interface {
	GetBalance(context.Context, *ledgerv1.GetBalanceRequest) (*ledgerv1.GetBalanceResponse, error)
}

// EscrowRunner checks a tenant's escrow accounts and records runs. Its methods return an error
// when a dependency did not answer (retrying may help) or the input is not valid (*field.Error).
type EscrowRunner struct {
	DB      *pgxpool.Pool // the runtime role's pool
	Ledger  BalanceReader
	Gateway StatementFetcher
}

// EscrowTenantRequest asks for one tenant's check, up to the day To (YYYY-MM-DD, inclusive),
// recorded under the calling run's Temporal ids.
type EscrowTenantRequest struct {
	TenantID          string
	Partners          []string // none: every partner
	To                string
	WorkflowID, RunID string
}

// CheckTenant fetches, through the gateway, the statement of each of the tenant's escrow accounts
// from the day of its first binding to To, reads its pool accounts' balances, and records every
// check in one transaction (a retried attempt records nothing twice: the row's key is the run's
// ids and the account). It reads everything before it writes anything.
func (r *EscrowRunner) CheckTenant(ctx context.Context, in EscrowTenantRequest) ([]EscrowCheck, error) {
	if err := field.Identifier("tenantId", in.TenantID, field.MaxIdentifier); err != nil {
		return nil, err
	}
	if in.WorkflowID == "" || in.RunID == "" {
		return nil, &field.Error{Field: "workflowId", Problem: "and runId are required"}
	}
	to, err := time.Parse(time.DateOnly, in.To)
	if err != nil {
		return nil, &field.Error{Field: "to", Problem: "must be a date (YYYY-MM-DD)"}
	}
	if r.DB == nil || r.Ledger == nil || r.Gateway == nil {
		return nil, errors.New("reconcile.check_escrow: runner without database, ledger or gateway")
	}
	ctx = scoped(ctx, in.TenantID)
	accounts, err := r.EscrowAccounts(ctx, in.Partners)
	if err != nil {
		return nil, err
	}
	var checks []EscrowCheck
	for _, a := range accounts {
		from := a.Since
		if from.After(to) {
			from = to
		}
		c := EscrowCheck{TenantID: in.TenantID, Partner: a.Partner, EscrowAccount: a.Account,
			PeriodFrom: from.Format(time.DateOnly), PeriodTo: in.To, Cycles: len(a.PoolAccounts)}
		for _, pool := range a.PoolAccounts {
			posted, pendingIn, pendingOut, err := r.poolBalance(ctx, in.TenantID, pool)
			if err != nil {
				return nil, err
			}
			c.PoolPostedSantim += posted
			c.PoolPendingInSantim += pendingIn
			c.PoolPendingOutSantim += pendingOut
		}
		signed, err := r.statementLines(ctx, in.TenantID, a, from, to)
		if err != nil {
			return nil, err
		}
		checks = append(checks, CheckEscrow(c, signed))
	}
	if err := r.record(ctx, in, checks); err != nil {
		return nil, err
	}
	return checks, nil
}

// statementLines fetches, through the gateway, the escrow account's statement of [from, to]
// (UTC days) and returns its signed lines (credits positive). The gateway refuses a period longer
// than gateway.MaxStatementPeriod, and an account's first binding grows older every day, so the
// period is fetched in consecutive pieces of at most that length, whose lines (each booked on a
// day of its own piece) together are the period's.
func (r *EscrowRunner) statementLines(ctx context.Context, tenantID string, a EscrowAccount, from, to time.Time) ([]int64, error) {
	maxDays := int(gateway.MaxStatementPeriod / (24 * time.Hour))
	var signed []int64
	for start := from; !start.After(to); {
		end := start.AddDate(0, 0, maxDays)
		if end.After(to) {
			end = to
		}
		resp, err := r.Gateway.FetchStatement(ctx, &gatewayv1.FetchStatementRequest{
			Partner: a.Partner, TenantId: tenantID, Account: a.Account,
			FromDate: start.Format(time.DateOnly), ToDate: end.Format(time.DateOnly),
		})
		if err != nil {
			return nil, fmt.Errorf("gateway fetch statement %s %s %s..%s: %w", a.Partner, a.Account,
				start.Format(time.DateOnly), end.Format(time.DateOnly), err)
		}
		for _, l := range resp.GetLines() {
			switch l.GetDirection() {
			case gatewayv1.Direction_DIRECTION_CREDIT:
				signed = append(signed, l.GetAmountSantim())
			case gatewayv1.Direction_DIRECTION_DEBIT:
				signed = append(signed, -l.GetAmountSantim())
			default:
				return nil, fmt.Errorf("gateway fetch statement %s %s: line %s without a direction", a.Partner, a.Account, l.GetEntryRef())
			}
		}
		start = end.AddDate(0, 0, 1)
	}
	return signed, nil
}

// poolBalance is one pool account's posted balance and open holds; a pool account the ledger does
// not have yet (a cycle nobody contributed to) holds nothing.
func (r *EscrowRunner) poolBalance(ctx context.Context, tenantID, name string) (posted, pendingIn, pendingOut int64, err error) {
	resp, err := r.Ledger.GetBalance(ctx, &ledgerv1.GetBalanceRequest{TenantId: tenantID, AccountName: name})
	if errors.Is(err, ledger.ErrAccountNotFound) {
		return 0, 0, 0, nil
	}
	if err != nil {
		return 0, 0, 0, fmt.Errorf("ledger get balance %s: %w", name, err)
	}
	b := resp.GetBalance()
	// A pool is a liability (credit-normal): posted_santim is credits less debits.
	return b.GetPostedSantim(), b.GetPendingCreditsSantim(), b.GetPendingDebitsSantim(), nil
}

// EscrowAccounts lists the context tenant's escrow accounts (restricted to partners when given)
// with their bound pool accounts, from the equb escrow bindings (read only).
func (r *EscrowRunner) EscrowAccounts(ctx context.Context, partners []string) ([]EscrowAccount, error) {
	var out []EscrowAccount
	err := tenancy.InTx(ctx, r.DB, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT partner, partner_account_id, min(verified_at), array_agg(ledger_pool_account_id ORDER BY verified_at, id)
			FROM app.equb_escrow_bindings
			WHERE coalesce(cardinality($1::text[]), 0) = 0 OR partner = ANY($1)
			GROUP BY partner, partner_account_id ORDER BY partner, partner_account_id`, partners)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var a EscrowAccount
			if err := rows.Scan(&a.Partner, &a.Account, &a.Since, &a.PoolAccounts); err != nil {
				return err
			}
			a.Since = day(a.Since)
			out = append(out, a)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("reconcile.escrow_accounts: %w", err)
	}
	return out, nil
}

func (r *EscrowRunner) record(ctx context.Context, in EscrowTenantRequest, checks []EscrowCheck) error {
	if len(checks) == 0 {
		return nil
	}
	err := tenancy.InTx(ctx, r.DB, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		for _, c := range checks {
			b.Queue(`
				INSERT INTO app.equb_escrow_recons (tenant_id, workflow_id, run_id, partner, escrow_account, period_from,
				    period_to, cycles, statement_lines, statement_net_santim, pool_posted_santim, pool_pending_in_santim,
				    pool_pending_out_santim, drift_santim, status)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
				ON CONFLICT (tenant_id, workflow_id, run_id, partner, escrow_account) DO NOTHING`,
				in.TenantID, in.WorkflowID, in.RunID, c.Partner, c.EscrowAccount, c.PeriodFrom, c.PeriodTo, c.Cycles,
				c.StatementLines, c.StatementNetSantim, c.PoolPostedSantim, c.PoolPendingInSantim, c.PoolPendingOutSantim,
				c.DriftSantim, c.Status)
		}
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return fmt.Errorf("reconcile.record_escrow: %w", err)
	}
	return nil
}

// FindEscrowTenants returns every tenant with equb escrow bindings (at partners, when given), in
// order, on the audited cross-tenant path. platform must log in as wagerail_platform.
func FindEscrowTenants(ctx context.Context, platform db.Beginner, partners []string) ([]string, error) {
	if tenancy.Actor(ctx) == "" {
		ctx = tenancy.WithActor(ctx, tenancy.System("reconcile"))
	}
	var out []string
	err := crosstenant.Tx(ctx, platform, "reconcile: find every tenant with equb escrow accounts", func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT DISTINCT tenant_id FROM app.equb_escrow_bindings
			WHERE coalesce(cardinality($1::text[]), 0) = 0 OR partner = ANY($1) ORDER BY tenant_id`, partners)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reconcile.find_escrow_tenants: %w", err)
	}
	return out, nil
}

// EscrowRun is a finished run's totals, as RecordEscrowRun stores them.
type EscrowRun struct {
	WorkflowID, RunID         string
	Everyone                  bool
	Accounts, Drifted, Errors int
	Partners                  []EscrowPartnerTotal
}

// RecordEscrowRun stores a finished run and its per-partner totals (app.equb_escrow_recon_runs
// and _partners: counts and sums only, not tenant-scoped). A run already recorded is left as it
// is, so a retried activity records it once.
func (r *EscrowRunner) RecordEscrowRun(ctx context.Context, run EscrowRun) error {
	if run.WorkflowID == "" || run.RunID == "" {
		return errors.New("reconcile.record_escrow_run: the run's workflow and run ids are required")
	}
	tx, err := r.DB.Begin(ctx)
	if err != nil {
		return fmt.Errorf("reconcile.record_escrow_run: %w", err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	tag, err := tx.Exec(ctx, `
		INSERT INTO app.equb_escrow_recon_runs (workflow_id, run_id, everyone, accounts, drifted, errors)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (workflow_id, run_id) DO NOTHING`,
		run.WorkflowID, run.RunID, run.Everyone, run.Accounts, run.Drifted, run.Errors)
	if err != nil {
		return fmt.Errorf("reconcile.record_escrow_run: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return nil
	}
	for _, p := range run.Partners {
		if _, err := tx.Exec(ctx, `
			INSERT INTO app.equb_escrow_recon_partners (workflow_id, run_id, partner, accounts, drifted, abs_drift_santim)
			VALUES ($1, $2, $3, $4, $5, $6)`, run.WorkflowID, run.RunID, p.Partner, p.Accounts, p.Drifted, p.AbsDriftSantim); err != nil {
			return fmt.Errorf("reconcile.record_escrow_run: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("reconcile.record_escrow_run: %w", err)
	}
	return nil
}

// StoredEscrowChecks returns the context tenant's checks recorded by one run.
func (r *EscrowRunner) StoredEscrowChecks(ctx context.Context, workflowID string) ([]EscrowCheck, error) {
	var out []EscrowCheck
	err := tenancy.InTx(ctx, r.DB, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			SELECT tenant_id, partner, escrow_account, to_char(period_from, 'YYYY-MM-DD'), to_char(period_to, 'YYYY-MM-DD'),
			    cycles, statement_lines, statement_net_santim::bigint, pool_posted_santim::bigint, pool_pending_in_santim::bigint,
			    pool_pending_out_santim::bigint, drift_santim::bigint, status
			FROM app.equb_escrow_recons WHERE workflow_id = $1 ORDER BY partner, escrow_account, id`, workflowID)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowToStructByPos[EscrowCheck])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("reconcile.stored_escrow_checks: %w", err)
	}
	return out, nil
}

// The metrics EscrowMetrics exports.
const (
	EscrowDriftMetric       = "svc_equb_escrow_drift_santim"
	EscrowLastSuccessMetric = "svc_equb_escrow_recon_last_success_timestamp_seconds"
)

var (
	escrowDriftDesc = prometheus.NewDesc(EscrowDriftMetric,
		"Summed absolute drift between the partner's equb escrow statements and the ledger's pool mirror, by partner, at the last escrow reconciliation covering every tenant and partner that finished without errors (0: clean).",
		[]string{"partner"}, nil)
	escrowLastSuccessDesc = prometheus.NewDesc(EscrowLastSuccessMetric,
		"Unix time at which the last equb escrow reconciliation covering every tenant and partner finished without errors (0: none yet).", nil, nil)
)

// EscrowMetrics exports svc_equb_escrow_drift_santim{partner} (0 when clean) and
// svc_equb_escrow_recon_last_success_timestamp_seconds, read from the run tables at scrape time:
// every worker replica reports the same, a restart loses nothing. When the database does not
// answer, the scrape has no sample (svc_dependency_up says why).
type EscrowMetrics struct {
	pool *pgxpool.Pool
}

// NewEscrowMetrics returns the collector; register it on the worker's registry.
func NewEscrowMetrics(pool *pgxpool.Pool) *EscrowMetrics { return &EscrowMetrics{pool: pool} }

// Describe implements prometheus.Collector.
func (m *EscrowMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- escrowDriftDesc
	ch <- escrowLastSuccessDesc
}

// Collect implements prometheus.Collector.
func (m *EscrowMetrics) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var last *time.Time
	if err := m.pool.QueryRow(ctx, `SELECT max(finished_at) FROM app.equb_escrow_recon_runs WHERE everyone AND errors = 0`).Scan(&last); err != nil {
		return
	}
	v := 0.0
	if last != nil {
		v = float64(last.UnixNano()) / 1e9
	}
	ch <- prometheus.MustNewConstMetric(escrowLastSuccessDesc, prometheus.GaugeValue, v)
	rows, err := m.pool.Query(ctx, `
		SELECT DISTINCT ON (p.partner) p.partner, p.abs_drift_santim::bigint
		FROM app.equb_escrow_recon_partners p
		JOIN app.equb_escrow_recon_runs r USING (workflow_id, run_id)
		WHERE r.everyone AND r.errors = 0 ORDER BY p.partner, p.finished_at DESC`)
	if err != nil {
		return
	}
	defer rows.Close()
	for rows.Next() {
		var partner string
		var drift int64
		if err := rows.Scan(&partner, &drift); err != nil {
			return
		}
		ch <- prometheus.MustNewConstMetric(escrowDriftDesc, prometheus.GaugeValue, float64(drift), partner)
	}
}
