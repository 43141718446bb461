package activities

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/payroll"
)

// What the savings and wallet sagas' record steps share (Savings, Wallet): each step is one of
// the domain store's functions in the group's recordStep transaction (its inTx), and each domain
// reserves a balance under its owner's lock (lockedReservation), a lock another run may hold.

// stepTx is a group's inTx: fn in one recordStep transaction for the step's input, with the
// group's checks, actor, logging and error mapping.
type stepTx[In any] func(ctx context.Context, in In, fn func(context.Context, pgx.Tx) error) error

// recordValue runs fn as a record step through inTx and returns what fn returned (the record
// the step wrote or read) with inTx's error.
func recordValue[In, Out any](ctx context.Context, inTx stepTx[In], in In, fn func(context.Context, pgx.Tx) (Out, error)) (Out, error) {
	var out Out
	err := inTx(ctx, in, func(ctx context.Context, tx pgx.Tx) (err error) {
		out, err = fn(ctx, tx)
		return err
	})
	return out, err
}

// lockedOwnerError types a record step's failure in a domain whose reservation locks its owner:
// the store's refusal as non-retryable by its code; busy (another run holds the owner's lock) as
// retryable busyType, so the reservation tries again (workflows' reserveOptions) once the lock is
// free; anything else as rest types it.
func lockedOwnerError(err, busy error, busyType string, rest func(error) error) error {
	var r *payroll.Refusal
	if errors.As(err, &r) {
		return nonRetryable(r.Message, r.Code)
	}
	if errors.Is(err, busy) {
		return retryable(err.Error(), busyType)
	}
	return rest(err)
}
