package ledger

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
	"github.com/wagerail/wagerail/ledger/chart"
)

// StatementLine is a line of a bank statement from the account holder's view: a positive amount
// is money into the account at the bank, a negative one money out.
type StatementLine struct {
	Reference    string
	AmountSantim int64
	BookedAt     time.Time
}

// StatementAccount is what the bank reports for one of its accounts over the period.
type StatementAccount struct {
	Account              string // the partner's account id
	HasClosingBalance    bool
	ClosingBalanceSantim int64
	Lines                []StatementLine
}

// ReconcileRequest asks to compare a partner's statement with the ledger's mirror accounts.
// Without accounts, every mirror account of the partner is reported with its ledger balance.
type ReconcileRequest struct {
	TenantID    string
	Partner     string
	PeriodStart *time.Time // lines are compared within [PeriodStart, PeriodEnd)
	PeriodEnd   *time.Time // default now; closing balances are as of it
	Accounts    []StatementAccount
}

// LineMismatch is a statement line and a ledger movement that did not pair up.
type LineMismatch struct {
	Reference          string
	BankAmountSantim   int64
	LedgerAmountSantim int64
	TransactionID      string
}

// AccountDrift is the comparison of one partner account.
type AccountDrift struct {
	Account             string
	LedgerAccountName   string
	LedgerAccountExists bool
	LedgerBalanceSantim int64
	HasBankBalance      bool
	BankBalanceSantim   int64
	DriftSantim         int64 // bank − ledger
	LinesMatched        int
	MissingInLedger     []LineMismatch
	MissingAtBank       []LineMismatch
	AmountMismatch      []LineMismatch
}

// ReconcileReport is the result of ReconcileWithBank.
type ReconcileReport struct {
	Partner             string
	PeriodEnd           time.Time // the end compared: the request's, or when it was made
	Accounts            []AccountDrift
	TotalAbsDriftSantim int64
	InBalance           bool
}

// movement is the net effect of one ledger transaction on a mirror account (debit = money in).
type movement struct {
	txID, key, bankRef string
	amount             int64
	used               bool
}

// Reconcile compares the tenant's mirror accounts of a partner bank with the bank's statement.
// It only reads: the bank is right, so drift is reported, never corrected.
//
// Errors: ErrMissingTenant, ErrInvalidArgument, ErrAmountOverflow.
func (s *Store) Reconcile(ctx context.Context, req ReconcileRequest) (ReconcileReport, error) {
	rep := ReconcileReport{Partner: req.Partner, InBalance: true}
	if err := validateTenant(req.TenantID); err != nil {
		return rep, err
	}
	if !chart.ValidSegment(req.Partner) {
		return rep, errorf(ReasonInvalidArgument, "partner must be 1-128 of A-Z a-z 0-9 . _ @ -")
	}
	if len(req.Accounts) > 10000 {
		return rep, errorf(ReasonInvalidArgument, "at most 10000 accounts per reconciliation")
	}
	end := time.Now()
	if req.PeriodEnd != nil {
		end = *req.PeriodEnd
	}
	rep.PeriodEnd = end
	if req.PeriodStart != nil && !req.PeriodStart.Before(end) {
		return rep, errorf(ReasonInvalidArgument, "period_start must be before period_end")
	}
	for i, a := range req.Accounts {
		if !chart.ValidSegment(a.Account) {
			return rep, errorf(ReasonInvalidArgument, "account %d: partner account must be 1-128 of A-Z a-z 0-9 . _ @ -", i)
		}
		// A balance, unlike an entry, may be negative; it is bounded as an account total is.
		if a.ClosingBalanceSantim > money.MaxAccountTotalSantim || a.ClosingBalanceSantim < -money.MaxAccountTotalSantim {
			return rep, errorf(ReasonAmountOutOfRange, "closing balance of %s is out of range", a.Account)
		}
		for _, l := range a.Lines {
			if l.AmountSantim == 0 {
				return rep, errorf(ReasonInvalidAmount, "a statement line of %s has a zero amount", a.Account)
			}
			if l.AmountSantim > money.MaxAmountSantim || l.AmountSantim < -money.MaxAmountSantim {
				return rep, errorf(ReasonAmountOutOfRange, "a statement line of %s is beyond %d santim either way", a.Account, money.MaxAmountSantim)
			}
			// The bank's own text, matched verbatim: printable, spaces allowed, may be empty.
			if err := field.Text("statement line reference", l.Reference, field.MaxReference); err != nil {
				return rep, fieldErr(err)
			}
		}
	}
	err := s.inTx(ctx, req.TenantID, nil, func(tx querier) error {
		accounts := req.Accounts
		if len(accounts) == 0 {
			prefix := chart.PartnerBankPrefix(req.Partner)
			rows, err := tx.Query(ctx, `SELECT name FROM ledger.accounts WHERE starts_with(name, $1) ORDER BY name`, prefix)
			if err != nil {
				return err
			}
			names, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			for _, n := range names {
				if acct := strings.TrimPrefix(n, prefix); !strings.Contains(acct, ":") {
					accounts = append(accounts, StatementAccount{Account: acct})
				}
			}
		}
		for _, sa := range accounts {
			d, err := s.reconcileAccount(ctx, tx, req, sa, end)
			if err != nil {
				return err
			}
			var ok bool
			abs := d.DriftSantim
			if abs < 0 {
				abs = -abs
			}
			if rep.TotalAbsDriftSantim, ok = money.Add(rep.TotalAbsDriftSantim, abs); !ok {
				return errorf(ReasonAmountOverflow, "total drift overflows int64 santim")
			}
			if d.DriftSantim != 0 || len(d.MissingInLedger)+len(d.MissingAtBank)+len(d.AmountMismatch) > 0 {
				rep.InBalance = false
			}
			rep.Accounts = append(rep.Accounts, d)
		}
		return recordDrift(ctx, tx, req.TenantID, req.Partner, end, rep.Accounts)
	})
	return rep, storeErr("ledger.reconcile", err)
}

// recordDrift keeps, for the gauge (DriftTotals), the tenant's latest drift of each account the
// report compared; the partner's other accounts keep theirs (a reconciliation that could compare
// only some of them must not clear the drift of the others). An older period reconciled again
// leaves an account's latest figure. The partner's row with the empty account (a figure from
// before drift was kept per account) is superseded by the accounts' own; a report without
// accounts leaves it, or a 0, so the partner's series exists.
func recordDrift(ctx context.Context, tx querier, tenantID, partner string, end time.Time, accounts []AccountDrift) error {
	if len(accounts) == 0 {
		_, err := tx.Exec(ctx, `INSERT INTO ledger.reconcile_drift (tenant_id, partner, account, period_end, abs_drift_santim)
			VALUES ($1, $2, '', $3, 0) ON CONFLICT (tenant_id, partner, account) DO NOTHING`, tenantID, partner, end)
		return err
	}
	// One row per account: an account named twice in a statement counts once, with both drifts.
	byAccount := map[string]int64{}
	var names []string
	for _, d := range accounts {
		abs := d.DriftSantim
		if abs < 0 {
			abs = -abs
		}
		prev, seen := byAccount[d.Account]
		if !seen {
			names = append(names, d.Account)
		}
		sum, ok := money.Add(prev, abs)
		if !ok {
			return errorf(ReasonAmountOverflow, "drift of %s overflows int64 santim", d.Account)
		}
		byAccount[d.Account] = sum
	}
	drifts := make([]int64, len(names))
	for i, n := range names {
		drifts[i] = byAccount[n]
	}
	if _, err := tx.Exec(ctx, `INSERT INTO ledger.reconcile_drift (tenant_id, partner, account, period_end, abs_drift_santim)
			SELECT $1, $2, a.account, $3, a.drift FROM unnest($4::text[], $5::bigint[]) AS a(account, drift)
			ON CONFLICT (tenant_id, partner, account) DO UPDATE
				SET period_end = EXCLUDED.period_end, abs_drift_santim = EXCLUDED.abs_drift_santim, updated_at = now()
				WHERE ledger.reconcile_drift.period_end <= EXCLUDED.period_end`,
		tenantID, partner, end, names, drifts); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `UPDATE ledger.reconcile_drift SET period_end = $3, abs_drift_santim = 0, updated_at = now()
		WHERE tenant_id = $1 AND partner = $2 AND account = '' AND abs_drift_santim <> 0 AND period_end <= $3`,
		tenantID, partner, end)
	return err
}

// DriftTotals is, per partner, the absolute drift of every tenant's latest reconciliation with
// it, summed over tenants (ledger.reconcile_drift_totals, kept by the database from each tenant's
// latest figure): the drift gauge's figures, with no tenant in them.
func (s *Store) DriftTotals(ctx context.Context) (map[string]float64, error) {
	rows, err := s.pool.Query(ctx, `SELECT partner, abs_drift_santim::float8 FROM ledger.reconcile_drift_totals`)
	if err != nil {
		return nil, storeErr("ledger.drift_totals", err)
	}
	out := map[string]float64{}
	var partner string
	var total float64
	_, err = pgx.ForEachRow(rows, []any{&partner, &total}, func() error {
		out[partner] = total
		return nil
	})
	return out, storeErr("ledger.drift_totals", err)
}

func (s *Store) reconcileAccount(ctx context.Context, tx querier, req ReconcileRequest, sa StatementAccount, end time.Time) (AccountDrift, error) {
	d := AccountDrift{
		Account: sa.Account, LedgerAccountName: chart.PartnerBankAccount(req.Partner, sa.Account),
		HasBankBalance: sa.HasClosingBalance, BankBalanceSantim: sa.ClosingBalanceSantim,
	}
	acc, b, err := balanceIn(ctx, tx, AccountRef{Name: d.LedgerAccountName}, &end)
	var movements []*movement
	switch {
	case err == nil:
		d.LedgerAccountExists = true
		d.LedgerBalanceSantim = b.PostedSantim()
		compare := len(sa.Lines) > 0 || req.PeriodStart != nil
		if compare {
			rows, err := tx.Query(ctx, `
				SELECT t.id::text, t.idempotency_key, coalesce(t.metadata->>'bank_reference', ''),
					sum(CASE WHEN e.direction = 'DEBIT' THEN e.amount ELSE -e.amount END)::bigint
				FROM ledger.entries e JOIN ledger.transactions t ON t.id = e.transaction_id
				WHERE e.account_id = $1::uuid AND e.phase = 'POSTED'
					AND ($2::timestamptz IS NULL OR e.created_at >= $2::timestamptz) AND e.created_at < $3
				GROUP BY t.id, t.idempotency_key, t.metadata
				HAVING sum(CASE WHEN e.direction = 'DEBIT' THEN e.amount ELSE -e.amount END) <> 0
				ORDER BY min(e.seq)`, acc.ID, req.PeriodStart, end)
			if err != nil {
				return d, err
			}
			for rows.Next() {
				m := &movement{}
				if err := rows.Scan(&m.txID, &m.key, &m.bankRef, &m.amount); err != nil {
					rows.Close()
					return d, err
				}
				movements = append(movements, m)
			}
			if err := rows.Err(); err != nil {
				return d, err
			}
		}
	case IsReason(err, ReasonAccountNotFound):
		// No mirror account: the ledger believes nothing is there.
	default:
		return d, err
	}
	matchLines(&d, sa.Lines, movements)
	// A transfer in flight at the end: the bank debited the account when it accepted it, the
	// ledger holds the amount until the transfer settles. Its line explains the open hold.
	var held int64
	if len(d.MissingInLedger) > 0 && d.LedgerAccountExists {
		holds, err := openHolds(ctx, tx, acc.ID, end)
		if err != nil {
			return d, err
		}
		held = explainByHolds(&d, holds)
	}
	var ok bool
	switch {
	case sa.HasClosingBalance:
		// Both bounded by MaxAccountTotalSantim (the held amounts are entries of the account).
		d.DriftSantim = sa.ClosingBalanceSantim - d.LedgerBalanceSantim - held
	case len(sa.Lines) > 0 || req.PeriodStart != nil:
		bank, ledger := int64(0), held
		for _, l := range sa.Lines {
			if bank, ok = money.Add(bank, l.AmountSantim); !ok {
				return d, errorf(ReasonAmountOverflow, "statement lines of %s overflow int64 santim", sa.Account)
			}
		}
		for _, m := range movements {
			if ledger, ok = money.Add(ledger, m.amount); !ok {
				return d, errorf(ReasonAmountOverflow, "ledger movements of %s overflow int64 santim", sa.Account)
			}
		}
		d.DriftSantim = bank - ledger
	}
	return d, nil
}

// openHolds are the account's holds still open at end: HOLD entries made before it, of
// transactions with no other entry on the account by then (neither committed nor voided).
func openHolds(ctx context.Context, tx querier, accountID string, end time.Time) ([]*movement, error) {
	rows, err := tx.Query(ctx, `
		SELECT t.id::text, t.idempotency_key, coalesce(t.metadata->>'bank_reference', ''),
			sum(CASE WHEN e.direction = 'DEBIT' THEN e.amount ELSE -e.amount END)::bigint
		FROM ledger.entries e JOIN ledger.transactions t ON t.id = e.transaction_id
		WHERE e.account_id = $1::uuid AND e.phase = 'HOLD' AND e.created_at < $2
			AND NOT EXISTS (SELECT 1 FROM ledger.entries x WHERE x.transaction_id = e.transaction_id
				AND x.account_id = e.account_id AND x.phase <> 'HOLD' AND x.created_at < $2)
		GROUP BY t.id, t.idempotency_key, t.metadata
		HAVING sum(CASE WHEN e.direction = 'DEBIT' THEN e.amount ELSE -e.amount END) <> 0
		ORDER BY min(e.seq)`, accountID, end)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*movement, error) {
		m := &movement{}
		return m, r.Scan(&m.txID, &m.key, &m.bankRef, &m.amount)
	})
}

// explainByHolds pairs the lines no movement explained with open holds of the same reference and
// amount: those lines are matched, and the held amounts (returned, summed) count as moved.
func explainByHolds(d *AccountDrift, holds []*movement) int64 {
	var held int64
	left := d.MissingInLedger[:0]
	for _, l := range d.MissingInLedger {
		var h *movement
		for _, m := range holds {
			if !m.used && m.amount == l.BankAmountSantim && l.Reference != "" &&
				(l.Reference == m.bankRef || l.Reference == m.txID || l.Reference == m.key) {
				h = m
				break
			}
		}
		if h == nil {
			left = append(left, l)
			continue
		}
		h.used = true
		d.LinesMatched++
		held += h.amount // bounded: entries of one account (MaxAccountTotalSantim)
	}
	d.MissingInLedger = left
	if len(left) == 0 {
		d.MissingInLedger = nil
	}
	return held
}

// matchLines pairs statement lines with ledger movements by reference (the transaction's
// metadata "bank_reference", its id or its idempotency key), preferring an equal amount.
func matchLines(d *AccountDrift, lines []StatementLine, movements []*movement) {
	byRef := map[string][]*movement{}
	for _, m := range movements {
		for _, r := range []string{m.bankRef, m.txID, m.key} {
			if r != "" {
				byRef[r] = append(byRef[r], m)
			}
		}
	}
	for _, l := range lines {
		var same, other *movement
		for _, m := range byRef[l.Reference] {
			if m.used {
				continue
			}
			if m.amount == l.AmountSantim && same == nil {
				same = m
			} else if other == nil {
				other = m
			}
		}
		switch {
		case same != nil:
			same.used = true
			d.LinesMatched++
		case other != nil:
			other.used = true
			d.AmountMismatch = append(d.AmountMismatch, LineMismatch{Reference: l.Reference, BankAmountSantim: l.AmountSantim, LedgerAmountSantim: other.amount, TransactionID: other.txID})
		default:
			d.MissingInLedger = append(d.MissingInLedger, LineMismatch{Reference: l.Reference, BankAmountSantim: l.AmountSantim})
		}
	}
	for _, m := range movements {
		if !m.used {
			ref := m.bankRef
			if ref == "" {
				ref = m.key
			}
			d.MissingAtBank = append(d.MissingAtBank, LineMismatch{Reference: ref, LedgerAmountSantim: m.amount, TransactionID: m.txID})
		}
	}
}

// IsReason reports whether err is a ledger error with reason r.
func IsReason(err error, r Reason) bool {
	return err != nil && errors.Is(err, &Error{Reason: r})
}
