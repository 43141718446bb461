package ledger

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// CheckpointMismatch is a checkpoint that disagrees with the entries it summarises.
type CheckpointMismatch struct {
	AccountID   string `json:"accountId"`
	AccountName string `json:"accountName"`
	Seq         int64  `json:"seq"`
	Detail      string `json:"detail"`
}

// VerifyCheckpoints recomputes every checkpoint of a tenant from the entries, in one pass of
// running sums per account, and returns the ones that disagree.
//
// Errors: ErrMissingTenant.
func (s *Store) VerifyCheckpoints(ctx context.Context, tenant string) (int64, []CheckpointMismatch, error) {
	var checked int64
	var bad []CheckpointMismatch
	err := s.inTx(ctx, tenant, nil, func(tx querier) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM ledger.balance_checkpoints`).Scan(&checked); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `
			WITH running AS (
				SELECT e.account_id, e.seq,
					count(*) OVER w AS n,
					sum(CASE WHEN e.phase = 'POSTED' AND e.direction = 'DEBIT' THEN e.amount ELSE 0 END) OVER w AS pd,
					sum(CASE WHEN e.phase = 'POSTED' AND e.direction = 'CREDIT' THEN e.amount ELSE 0 END) OVER w AS pc,
					sum(CASE WHEN e.phase = 'POSTED' OR e.direction <> 'DEBIT' THEN 0
						WHEN e.phase = 'HOLD' THEN e.amount ELSE -e.amount END) OVER w AS hd,
					sum(CASE WHEN e.phase = 'POSTED' OR e.direction <> 'CREDIT' THEN 0
						WHEN e.phase = 'HOLD' THEN e.amount ELSE -e.amount END) OVER w AS hc,
					e.created_at
				FROM ledger.entries e
				WHERE e.account_id IN (SELECT DISTINCT account_id FROM ledger.balance_checkpoints)
				WINDOW w AS (PARTITION BY e.account_id ORDER BY e.seq)
			)
			SELECT c.account_id::text, a.name, c.seq,
				CASE WHEN r.seq IS NULL THEN 'no entry with this sequence number on the account'
				ELSE format('checkpoint count=%s posted=%s/%s pending=%s/%s at=%s; entries count=%s posted=%s/%s pending=%s/%s at=%s',
					c.entry_count, c.posted_debits, c.posted_credits, c.pending_debits, c.pending_credits, c.last_entry_at,
					r.n, r.pd, r.pc, r.hd, r.hc, r.created_at) END
			FROM ledger.balance_checkpoints c
			JOIN ledger.accounts a ON a.id = c.account_id
			LEFT JOIN running r ON r.account_id = c.account_id AND r.seq = c.seq
			WHERE r.seq IS NULL OR (c.entry_count, c.posted_debits, c.posted_credits, c.pending_debits,
				c.pending_credits, c.last_entry_at) IS DISTINCT FROM (r.n, r.pd, r.pc, r.hd, r.hc, r.created_at)
			ORDER BY a.name, c.seq`)
		if err != nil {
			return err
		}
		bad, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (CheckpointMismatch, error) {
			var m CheckpointMismatch
			err := r.Scan(&m.AccountID, &m.AccountName, &m.Seq, &m.Detail)
			return m, err
		})
		return err
	})
	return checked, bad, storeErr("ledger.verify_checkpoints", err)
}
