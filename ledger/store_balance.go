package ledger

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/money"
)

// GetBalance derives an account's balance: the newest checkpoint (at or before asOf) plus the
// account's entries after it. A current read whose tail is longer than CheckpointEvery writes a
// new checkpoint, so reads stay fast on accounts with millions of entries. The read is one
// round trip: the tenant, then the account and its balance in one statement.
//
// Errors: ErrMissingTenant, ErrInvalidArgument, ErrAccountNotFound.
func (s *Store) GetBalance(ctx context.Context, tenant string, ref AccountRef, asOf *time.Time) (Balance, error) {
	ref, err := ref.normalize()
	if err != nil {
		return Balance{}, err
	}
	if err := validateTenant(tenant); err != nil {
		return Balance{}, err
	}
	var r balanceRow
	found := false
	err = s.inTx(ctx, tenant, func(b *pgx.Batch) {
		sql, arg := balanceSQL(ref)
		b.Queue(sql, arg, asOf).Query(func(rows pgx.Rows) error {
			defer rows.Close()
			if rows.Next() {
				found = true
				if err := r.scan(rows); err != nil {
					return err
				}
			}
			return rows.Err()
		})
	}, nil)
	if err != nil {
		return Balance{}, storeErr("ledger.get_balance", err)
	}
	if !found {
		return Balance{}, errorf(ReasonAccountNotFound, "account %s not found", ref)
	}
	bal, err := r.balance(asOf)
	if err != nil {
		return Balance{}, storeErr("ledger.get_balance", err)
	}
	if asOf == nil && r.tailN >= s.checkpointEvery() {
		// The database computes the checkpoint itself (ledger.write_checkpoint): the runtime
		// role cannot write one, so a checkpoint never says what the entries do not.
		err = s.inTx(ctx, tenant, func(b *pgx.Batch) { b.Queue(`SELECT ledger.write_checkpoint($1::uuid)`, r.acc.ID) }, nil)
		if err != nil {
			return Balance{}, storeErr("ledger.get_balance: checkpoint", err)
		}
	}
	return bal, nil
}

// balanceRow is what balanceSQL returns: the account, its newest usable checkpoint and the
// sums of the entries after it.
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

func (r *balanceRow) balance(asOf *time.Time) (Balance, error) {
	b := Balance{AccountID: r.acc.ID, AccountName: r.acc.Name, Currency: r.acc.Currency, NormalSide: r.acc.NormalSide}
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
	if asOf != nil {
		b.AsOf = *asOf
	} else {
		b.AsOf = time.Now()
	}
	return b, nil
}

// balanceSQL reads an account and its balance in one statement, so the checkpoint and the
// entries after it come from one snapshot; the entries are summed by ledger.entry_sums, the same
// definition ledger.write_checkpoint uses. Parameters: the account id or name, then as_of (or
// NULL). Every comparison on the entries index is a plain column-to-parameter comparison:
// row-level security lets only leakproof quals into an index condition.
func balanceSQL(ref AccountRef) (string, string) {
	pred, arg := `a.name = $1`, ref.Name
	if ref.ID != "" {
		pred, arg = `a.id = $1::uuid`, ref.ID
	}
	return `
		WITH acc AS (
			SELECT a.id, a.tenant_id, a.name, a.type, a.normal_side, a.currency, a.created_at
			FROM ledger.accounts a WHERE ` + pred + `
		), cp AS (
			SELECT c.seq, c.entry_count, c.last_entry_at, c.posted_debits, c.posted_credits,
				c.pending_debits, c.pending_credits
			FROM ledger.balance_checkpoints c
			WHERE c.account_id = (SELECT acc.id FROM acc)
				AND ($2::timestamptz IS NULL OR c.last_entry_at <= $2::timestamptz)
			ORDER BY c.seq DESC LIMIT 1
		), tail AS (
			SELECT s.* FROM acc, (SELECT coalesce(max(cp.seq), 0) AS seq FROM cp) done
				CROSS JOIN LATERAL ledger.entry_sums(acc.id, done.seq, $2::timestamptz) s
		)
		SELECT acc.id::text, acc.tenant_id, acc.name, acc.type, acc.normal_side, acc.currency, acc.created_at,
			coalesce(cp.seq, 0), coalesce(cp.entry_count, 0), cp.last_entry_at,
			coalesce(cp.posted_debits, 0)::bigint, coalesce(cp.posted_credits, 0)::bigint,
			coalesce(cp.pending_debits, 0)::bigint, coalesce(cp.pending_credits, 0)::bigint,
			tail.n, tail.max_seq, tail.last_at, tail.pd::bigint, tail.pc::bigint, tail.hd::bigint, tail.hc::bigint
		FROM acc CROSS JOIN tail LEFT JOIN cp ON true`, arg
}

// balanceIn reads a balance inside an open transaction (reconciliation).
func balanceIn(ctx context.Context, tx querier, ref AccountRef, asOf *time.Time) (Account, Balance, error) {
	var r balanceRow
	sql, arg := balanceSQL(ref)
	if err := r.scan(tx.QueryRow(ctx, sql, arg, asOf)); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return Account{}, Balance{}, errorf(ReasonAccountNotFound, "account %s not found", ref)
		}
		return Account{}, Balance{}, err
	}
	b, err := r.balance(asOf)
	return r.acc, b, err
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
