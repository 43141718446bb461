package ledger

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/money"
)

// GetBalance derives an account's balance: the newest checkpoint (at or before asOf) plus the
// account's entries after it. A current read whose tail is longer than CheckpointEvery writes a
// new checkpoint, so reads stay fast on accounts with millions of entries. The read is one
// round trip: the tenant, then the account and its balance in one statement. It is GetBalances
// of one account: one statement, one definition of a balance.
//
// Errors: ErrMissingTenant, ErrInvalidArgument, ErrInvalidAccountName, ErrAccountNotFound.
func (s *Store) GetBalance(ctx context.Context, tenant string, ref AccountRef, asOf *time.Time) (Balance, error) {
	ref, err := ref.normalize()
	if err != nil {
		return Balance{}, err
	}
	res, err := s.balances(ctx, tenant, []AccountRef{ref}, asOf, "ledger.get_balance")
	if err != nil {
		return Balance{}, err
	}
	return res[0].Balance, res[0].Err
}

// BalanceResult is one account's answer of GetBalances: its balance, or the error GetBalance
// gives for it (ErrAccountNotFound: the tenant has no such account).
type BalanceResult struct {
	Balance Balance
	Err     error
}

// GetBalances derives the balances of 1 to MaxGetBalances accounts of a tenant, each exactly as
// GetBalance derives it, in one round trip and one statement (so all from one snapshot); a
// current read then writes the checkpoints its long tails call for, as GetBalance does, in one
// more. The results are in the order of refs. An account the tenant does not have (unknown, or
// another tenant's) is answered in its own result, as GetBalance answers it, so one absent
// account (a goal nobody has saved into yet) does not cost the caller the others. Every
// refusal of the request itself refuses the whole call: no refs, more than MaxGetBalances, a
// malformed ref, or one account named twice (an id in two spellings included; an id and a name
// of one account are not told apart, and are answered twice).
//
// Errors: ErrMissingTenant, ErrInvalidArgument, ErrInvalidAccountName, ErrBatchTooLarge; per
// result, ErrAccountNotFound.
func (s *Store) GetBalances(ctx context.Context, tenant string, refs []AccountRef, asOf *time.Time) ([]BalanceResult, error) {
	switch {
	case len(refs) == 0:
		return nil, errorf(ReasonInvalidArgument, "accounts is required: 1 to %d accounts", MaxGetBalances)
	case len(refs) > MaxGetBalances:
		return nil, errorf(ReasonBatchTooLarge, "accounts has %d accounts, more than the maximum of %d", len(refs), MaxGetBalances)
	}
	norm := make([]AccountRef, len(refs))
	first := make(map[AccountRef]int, len(refs))
	for i, r := range refs {
		n, err := r.normalize()
		if le := (*Error)(nil); errors.As(err, &le) {
			return nil, errorf(le.Reason, "accounts[%d]: %s", i, le.Message)
		} else if err != nil {
			return nil, err
		}
		if j, ok := first[n]; ok {
			return nil, errorf(ReasonInvalidArgument, "accounts[%d] names the same account as accounts[%d]", i, j)
		}
		first[n] = i
		norm[i] = n
	}
	return s.balances(ctx, tenant, norm, asOf, "ledger.get_balances")
}

// balances reads the balances of refs (normalized, none repeated) with balancesSQL and writes
// the checkpoints a current read calls for. op names the caller's operation in its errors.
func (s *Store) balances(ctx context.Context, tenant string, refs []AccountRef, asOf *time.Time, op string) ([]BalanceResult, error) {
	if err := validateTenant(tenant); err != nil {
		return nil, err
	}
	var rows []balanceRow
	err := s.inTx(ctx, tenant, func(b *pgx.Batch) {
		ids, names := balanceArgs(refs)
		b.Queue(balancesSQL, ids, names, asOf).Query(func(r pgx.Rows) error {
			var err error
			rows, err = scanBalanceRows(r)
			return err
		})
	}, nil)
	if err != nil {
		return nil, storeErr(op, err)
	}
	byID := make(map[string]*balanceRow, len(rows))
	byName := make(map[string]*balanceRow, len(rows))
	for i := range rows {
		byID[rows[i].acc.ID], byName[rows[i].acc.Name] = &rows[i], &rows[i]
	}
	// One snapshot, one instant: a current read's balances all say the same as_of.
	at := time.Now()
	if asOf != nil {
		at = *asOf
	}
	out := make([]BalanceResult, len(refs))
	var stale []string
	for i, ref := range refs {
		r := byName[ref.Name]
		if ref.ID != "" {
			r = byID[ref.ID]
		}
		if r == nil {
			out[i].Err = errorf(ReasonAccountNotFound, "account %s not found", ref)
			continue
		}
		if out[i].Balance, err = r.balance(at); err != nil {
			return nil, storeErr(op, err)
		}
		if asOf == nil && r.tailN >= s.checkpointEvery() && !slices.Contains(stale, r.acc.ID) {
			stale = append(stale, r.acc.ID)
		}
	}
	if len(stale) > 0 {
		// The database computes the checkpoint itself (ledger.write_checkpoint): the runtime
		// role cannot write one, so a checkpoint never says what the entries do not.
		err = s.inTx(ctx, tenant, func(b *pgx.Batch) {
			b.Queue(`SELECT ledger.write_checkpoint(id) FROM unnest($1::uuid[]) AS id`, stale)
		}, nil)
		if err != nil {
			return nil, storeErr(op+": checkpoint", err)
		}
	}
	return out, nil
}

// balanceArgs are balancesSQL's first two parameters for refs: their ids and their names.
func balanceArgs(refs []AccountRef) (ids, names []string) {
	ids, names = []string{}, []string{}
	for _, r := range refs {
		if r.ID != "" {
			ids = append(ids, r.ID)
		} else {
			names = append(names, r.Name)
		}
	}
	return ids, names
}

// balanceRow is what balancesSQL returns per account: the account, its newest usable
// checkpoint and the sums of the entries after it.
type balanceRow struct {
	acc                                        Account
	cpSeq, cpCount, tailN, tailMax             int64
	cpPD, cpPC, cpHD, cpHC, tPD, tPC, tHD, tHC int64
	cpAt, tailAt                               *time.Time
}

func (r *balanceRow) scan(row pgx.Row) error {
	a := &r.acc
	return row.Scan(&a.ID, &a.TenantID, &a.Name, &a.Type, &a.NormalSide, &a.Currency, &a.CreatedAt,
		&r.cpSeq, &r.cpCount, &r.cpAt, &r.cpPD, &r.cpPC, &r.cpHD, &r.cpHC,
		&r.tailN, &r.tailMax, &r.tailAt, &r.tPD, &r.tPC, &r.tHD, &r.tHC)
}

func scanBalanceRows(rows pgx.Rows) ([]balanceRow, error) {
	defer rows.Close()
	var out []balanceRow
	for rows.Next() {
		var r balanceRow
		if err := r.scan(rows); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// balance is the row's balance, as of at (the read's as_of, or the instant of a current read).
func (r *balanceRow) balance(at time.Time) (Balance, error) {
	b := Balance{AccountID: r.acc.ID, AccountName: r.acc.Name, Currency: r.acc.Currency, NormalSide: r.acc.NormalSide, AsOf: at}
	var ok [4]bool
	b.PostedDebitsSantim, ok[0] = money.Add(r.cpPD, r.tPD)
	b.PostedCreditsSantim, ok[1] = money.Add(r.cpPC, r.tPC)
	b.PendingDebitsSantim, ok[2] = money.Add(r.cpHD, r.tHD)
	b.PendingCreditsSantim, ok[3] = money.Add(r.cpHC, r.tHC)
	if !ok[0] || !ok[1] || !ok[2] || !ok[3] {
		return b, fmt.Errorf("balance of %s overflows int64 santim", r.acc.ID)
	}
	b.EntryCount = r.cpCount + r.tailN
	b.LastSeq = max(r.cpSeq, r.tailMax)
	return b, nil
}

// balancesSQL reads accounts and their balances in one statement, so every checkpoint and the
// entries after it come from one snapshot; the entries are summed by ledger.entry_sums, the same
// definition ledger.write_checkpoint uses. Parameters: the accounts' ids (uuid[]), their names
// (text[]), then as_of (or NULL); one row per account found, in no particular order.
//
// Per account, a nested loop: the newest checkpoint from its index, then the entries after it.
// Every comparison on the entries index is a plain column-to-parameter comparison: row-level
// security lets only leakproof quals into an index condition, and the planner does not take
// coalesce(cp.seq, 0) for one (inlined, it lands in a filter: every entry of the account is
// read), so the checkpoint's sequence number (0 without one) comes out of its own subquery
// (done, kept apart by OFFSET 0) as a plain column. TestBalanceReadSumsThroughTheEntriesIndex
// holds the plan to it.
const balancesSQL = `
	SELECT acc.id::text, acc.tenant_id, acc.name, acc.type, acc.normal_side, acc.currency, acc.created_at,
		coalesce(cp.seq, 0), coalesce(cp.entry_count, 0), cp.last_entry_at,
		coalesce(cp.posted_debits, 0)::bigint, coalesce(cp.posted_credits, 0)::bigint,
		coalesce(cp.pending_debits, 0)::bigint, coalesce(cp.pending_credits, 0)::bigint,
		tail.n, tail.max_seq, tail.last_at, tail.pd::bigint, tail.pc::bigint, tail.hd::bigint, tail.hc::bigint
	FROM ledger.accounts acc
		LEFT JOIN LATERAL (
			SELECT c.seq, c.entry_count, c.last_entry_at, c.posted_debits, c.posted_credits,
				c.pending_debits, c.pending_credits
			FROM ledger.balance_checkpoints c
			WHERE c.account_id = acc.id
				AND ($3::timestamptz IS NULL OR c.last_entry_at <= $3::timestamptz)
			ORDER BY c.seq DESC LIMIT 1
		) cp ON true
		CROSS JOIN LATERAL (SELECT coalesce(cp.seq, 0) AS seq OFFSET 0) done
		CROSS JOIN LATERAL ledger.entry_sums(acc.id, done.seq, $3::timestamptz) tail
	WHERE acc.id = ANY($1::uuid[]) OR acc.name = ANY($2::text[])`

// balanceIn reads a balance inside an open transaction (reconciliation).
func balanceIn(ctx context.Context, tx querier, ref AccountRef, asOf *time.Time) (Account, Balance, error) {
	ids, names := balanceArgs([]AccountRef{ref})
	rows, err := tx.Query(ctx, balancesSQL, ids, names, asOf)
	if err != nil {
		return Account{}, Balance{}, err
	}
	found, err := scanBalanceRows(rows)
	if err != nil {
		return Account{}, Balance{}, err
	}
	if len(found) == 0 {
		return Account{}, Balance{}, errorf(ReasonAccountNotFound, "account %s not found", ref)
	}
	at := time.Now()
	if asOf != nil {
		at = *asOf
	}
	b, err := found[0].balance(at)
	return found[0].acc, b, err
}

// ListEntries lists an account's entries in sequence order within [from, to).
//
// Errors: ErrMissingTenant, ErrInvalidArgument, ErrAccountNotFound.
func (s *Store) ListEntries(ctx context.Context, tenant string, ref AccountRef, from, to *time.Time, size int32, token string) ([]Entry, string, error) {
	ref, err := ref.normalize()
	if err != nil {
		return nil, "", err
	}
	if err := validateTenant(tenant); err != nil {
		return nil, "", err
	}
	var after int64
	if token != "" {
		v, err := strconv.ParseInt(token, 36, 64)
		if len(token) > maxTokenBytes || err != nil || v < 0 {
			return nil, "", errorf(ReasonInvalidArgument, "bad page_token")
		}
		after = v
	}
	n := pageSize(size)
	var out []Entry
	err = s.inTx(ctx, tenant, nil, func(tx querier) error {
		acc, err := getAccount(ctx, tx, ref)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+entryCols+` FROM ledger.entries e JOIN ledger.accounts a ON a.id = e.account_id
			WHERE e.account_id = $1::uuid AND e.seq > $2
				AND ($3::timestamptz IS NULL OR e.created_at >= $3::timestamptz)
				AND ($4::timestamptz IS NULL OR e.created_at < $4::timestamptz)
			ORDER BY e.seq LIMIT $5`, acc.ID, after, from, to, n+1)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, scanEntry)
		return err
	})
	if err != nil {
		return nil, "", storeErr("ledger.list_entries", err)
	}
	next := ""
	if len(out) > n {
		out = out[:n]
		next = strconv.FormatInt(out[n-1].Seq, 36)
	}
	return out, next, nil
}
