package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
)

// The caller's answer of every saga started by Update-with-Start (the payout sagas, the
// repayments, the collections and write-offs): the update handler, the one answer, and the
// handlers finished before the run closes.

// answer is the update a saga's caller waits on (Update-with-Start): answered once, with a value
// (accepted) or an error (refused); every later accept or refuse is ignored.
type answer[T any] struct {
	done  bool
	value T
	err   error
}

// handle installs the update handler: it waits for the answer.
func (a *answer[T]) handle(ctx workflow.Context, name string) error {
	return workflow.SetUpdateHandler(ctx, name, func(ctx workflow.Context) (T, error) {
		if err := workflow.Await(ctx, func() bool { return a.done }); err != nil {
			var zero T
			return zero, err
		}
		return a.value, a.err
	})
}

func (a *answer[T]) accept(v T) {
	if !a.done {
		a.done, a.value = true, v
	}
}

func (a *answer[T]) refuse(err error) {
	if !a.done {
		a.done, a.err = true, err
	}
}

// finish lets the update's handler return before the run closes.
func finishHandlers(ctx workflow.Context) {
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
}

// answeredRun is the run of a saga that answers its caller through a, the update called update:
// the handler installed, then run, then the net under a workflow error (every path of run answers
// before it returns; one that did not is refused with run's error type, saga naming the saga in
// the message), then the handlers finished before the run closes.
func answeredRun[T, R any](ctx workflow.Context, a *answer[T], update, saga string, run func() (R, error)) (R, error) {
	if err := a.handle(ctx, update); err != nil {
		var zero R
		return zero, err
	}
	res, err := run()
	a.refuse(temporal.NewApplicationError(saga+" ended without an answer", activities.ErrorType(err)))
	finishHandlers(ctx)
	return res, err
}
