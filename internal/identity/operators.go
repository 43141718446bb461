package identity

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
)

// Operator is a platform operator: the spec's platform support role (dispute decisions, BNPL
// restructure), beside the platform admin. Only the platform role writes app.platform_operators;
// the runtime role reads it when it authenticates a session.
type Operator struct {
	UserID    string
	Email     string
	Name      string
	GrantedBy string
	GrantedAt time.Time
}

// ErrNotOperator: the user holds no operator grant.
var ErrNotOperator = errors.New("identity: not a platform operator")

// GrantOperator makes the user a platform operator, granted by by at now; created is false when
// the user already was one (the grant is left as it was). ErrNotFound when no such user exists.
func GrantOperator(ctx context.Context, q db.Querier, userID, by string, now time.Time) (op Operator, created bool, err error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM app.users WHERE id = $1)`, userID).Scan(&exists); err != nil {
		return Operator{}, false, wrap("grant operator", err)
	}
	if !exists {
		return Operator{}, false, ErrNotFound
	}
	tag, err := q.Exec(ctx, `INSERT INTO app.platform_operators (user_id, granted_by, granted_at) VALUES ($1, $2, $3)
		ON CONFLICT (user_id) DO NOTHING`, userID, by, now)
	if err != nil {
		return Operator{}, false, wrap("grant operator", err)
	}
	op, err = operatorOf(ctx, q, userID)
	return op, tag.RowsAffected() == 1, err
}

// RevokeOperator takes the grant away. ErrNotOperator when the user holds none.
func RevokeOperator(ctx context.Context, q db.Querier, userID string) error {
	tag, err := q.Exec(ctx, `DELETE FROM app.platform_operators WHERE user_id = $1`, userID)
	if err != nil {
		return wrap("revoke operator", err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotOperator
	}
	return nil
}

const operatorColumns = `o.user_id, u.email, u.name, o.granted_by, o.granted_at
	FROM app.platform_operators o JOIN app.users u ON u.id = o.user_id`

// Operators lists every platform operator, oldest grant first.
func Operators(ctx context.Context, q db.Querier) ([]Operator, error) {
	rows, err := q.Query(ctx, `SELECT `+operatorColumns+` ORDER BY o.granted_at, o.user_id`)
	if err != nil {
		return nil, wrap("operators", err)
	}
	out, err := pgx.CollectRows(rows, scanOperator)
	return out, wrap("operators", err)
}

func operatorOf(ctx context.Context, q db.Querier, userID string) (Operator, error) {
	rows, err := q.Query(ctx, `SELECT `+operatorColumns+` WHERE o.user_id = $1`, userID)
	if err != nil {
		return Operator{}, wrap("operator", err)
	}
	op, err := pgx.CollectExactlyOneRow(rows, scanOperator)
	if errors.Is(err, pgx.ErrNoRows) {
		return Operator{}, ErrNotOperator
	}
	return op, wrap("operator", err)
}

func scanOperator(row pgx.CollectableRow) (Operator, error) {
	var o Operator
	err := row.Scan(&o.UserID, &o.Email, &o.Name, &o.GrantedBy, &o.GrantedAt)
	return o, err
}
