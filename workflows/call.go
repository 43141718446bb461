package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
)

// The typed calls of activities: workflow code names an activities.Activity or Action (never a
// string), and the compiler checks the argument it passes and the result it reads. Each takes
// the options of what the activity talks to (options.go).

// call runs a as an activity under opts.
func call[In, Out any](ctx workflow.Context, opts workflow.ActivityOptions, a activities.Activity[In, Out], in In) (Out, error) {
	var out Out
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), a.Name, in).Get(ctx, &out)
	return out, err
}

// callLocal runs a as a local activity under opts.
func callLocal[In, Out any](ctx workflow.Context, opts workflow.LocalActivityOptions, a activities.Activity[In, Out], in In) (Out, error) {
	var out Out
	err := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, opts), a.Name, in).Get(ctx, &out)
	return out, err
}

// do runs the action a as an activity under opts.
func do[In any](ctx workflow.Context, opts workflow.ActivityOptions, a activities.Action[In], in In) error {
	return workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), a.Name, in).Get(ctx, nil)
}

// doLocal runs the action a as a local activity under opts.
func doLocal[In any](ctx workflow.Context, opts workflow.LocalActivityOptions, a activities.Action[In], in In) error {
	return workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(ctx, opts), a.Name, in).Get(ctx, nil)
}
