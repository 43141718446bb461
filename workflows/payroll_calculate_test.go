package workflows

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/payroll"
)

// The calculation's one step gets the run, the user who asked and the request's instant; its
// answer (the run, or the refusal) is the result; a failing step is retried.
func TestPayrollCalculateWorkflow(t *testing.T) {
	at := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	in := PayrollCalculateInput{TenantID: "t1", RunID: "prun_1", ActorID: "u-maker", At: at, CorrelationID: "req-1"}
	wfID := PayrollCalculateWorkflowID("t1", "prun_1")
	step := activities.PayrollCalculateStep{Run: activities.Run{TenantID: "t1", WorkflowID: wfID, CorrelationID: "req-1"},
		RunID: "prun_1", ActorID: "u-maker", At: at}
	env := func() *testsuite.TestWorkflowEnvironment {
		var s testsuite.WorkflowTestSuite
		e := s.NewTestWorkflowEnvironment()
		e.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: time.Minute}) // a loaded machine
		e.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: wfID})
		Register(e, Deps{})
		return e
	}

	e := env()
	calls := 0
	e.OnActivity(activities.PayrollCalculateActivity, mock.Anything, step).Return(
		func(context.Context, activities.PayrollCalculateStep) (activities.PayrollCalculation, error) {
			if calls++; calls == 1 {
				return activities.PayrollCalculation{}, temporal.NewApplicationError("database down", "UNAVAILABLE")
			}
			return activities.PayrollCalculation{Run: payroll.Run{ID: "prun_1", Status: payroll.RunCalculated, EmployeeCount: 3}}, nil
		})
	e.ExecuteWorkflow(PayrollCalculateWorkflowName, in)
	require.NoError(t, e.GetWorkflowError())
	var res PayrollCalculateResult
	require.NoError(t, e.GetWorkflowResult(&res))
	require.Equal(t, 2, calls, "the failed step retried")
	require.Nil(t, res.Refusal)
	require.Equal(t, payroll.RunCalculated, res.Run.Status)
	require.Equal(t, 3, res.Run.EmployeeCount)

	e = env()
	refused := &payroll.Refusal{Code: payroll.CodeCalculationRefused, Status: http.StatusUnprocessableEntity, Message: "refused",
		Details: map[string]any{"employeeId": "emp_1", "field": "salary"}}
	e.OnActivity(activities.PayrollCalculateActivity, mock.Anything, step).Return(activities.PayrollCalculation{Refusal: refused}, nil)
	e.ExecuteWorkflow(PayrollCalculateWorkflowName, in)
	require.NoError(t, e.GetWorkflowError())
	res = PayrollCalculateResult{}
	require.NoError(t, e.GetWorkflowResult(&res))
	require.NotNil(t, res.Refusal)
	require.Equal(t, *refused, *res.Refusal, "the refusal with its status, message and details")
}
