package lending

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
)

// The reads of a loan's money: its repayments (repay.go) and its remittances to the FI
// (remit.go), for the party that sees the loan (the business, or the FI that funds it: the
// fi_reads_loan_money policies of migration 0035 let it read them). Another party's loan is
// ErrLoanNotFound. Both page in the loan's own order, instalment by instalment.

// ListRepayments lists the repayments of loan id party sees, every state (PENDING, POSTED,
// FAILED), by instalment index then seq, page.Limit rows after the repayment page.After (a
// repayment id; one that is not the loan's gives an empty page).
func ListRepayments(ctx context.Context, tx db.BunTx, p Party, id string, page db.Page) ([]LoanRepayment, error) {
	l, err := getLoan(ctx, tx, p, id, false)
	if err != nil {
		return nil, err
	}
	q := `SELECT ` + repaymentColumns + ` FROM app.loan_repayments r WHERE r.tenant_id = $1 AND r.loan_id = $2`
	args := []any{l.TenantID, l.ID}
	if page.After != "" {
		q += ` AND (r.idx, r.seq) > (SELECT a.idx, a.seq FROM app.loan_repayments a WHERE a.tenant_id = $1 AND a.loan_id = $2 AND a.id = $4)`
		args = append(args, page.Rows(), page.After)
	} else {
		args = append(args, page.Rows())
	}
	q += ` ORDER BY r.idx, r.seq LIMIT $3`
	return listRows(ctx, tx, "lending.list_repayments", q, args, scanRepayment)
}

// CheckRemittanceCursor validates a remittance page's cursor: an instalment index, written
// plainly.
func CheckRemittanceCursor(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || strconv.Itoa(n) != v || n < 0 || n > MaxInstalmentIndex {
		return 0, &field.Error{Field: "cursor", Problem: fmt.Sprintf("must be an instalment index from 0 to %d", MaxInstalmentIndex)}
	}
	return n, nil
}

// ListRemittances lists the remittances of loan id party sees (one per remitted instalment, in
// its current attempt), by instalment index, page.Limit rows after the index page.After
// (CheckRemittanceCursor; "" from the start).
func ListRemittances(ctx context.Context, tx db.BunTx, p Party, id string, page db.Page) ([]Remittance, error) {
	after := -1
	if page.After != "" {
		n, err := CheckRemittanceCursor(page.After)
		if err != nil {
			return nil, err
		}
		after = n
	}
	l, err := getLoan(ctx, tx, p, id, false)
	if err != nil {
		return nil, err
	}
	return listRows(ctx, tx, "lending.list_remittances", `SELECT `+remittanceColumns+` FROM app.loan_remittances
		WHERE tenant_id = $1 AND loan_id = $2 AND idx > $3 ORDER BY idx LIMIT $4`, []any{l.TenantID, l.ID, after, page.Rows()}, scanRemittance)
}

// listRows runs a query with Postgres's own placeholders on tx's connection and scans each row.
func listRows[T any](ctx context.Context, tx db.BunTx, op, q string, args []any, scan func(pgx.Row) (T, error)) ([]T, error) {
	rows, err := tx.Tx.Tx.QueryContext(ctx, q, args...) // *sql.Rows scans as a pgx.Row does
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer func() { _ = rows.Close() }()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}
