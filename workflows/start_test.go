package workflows

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/reconcile"
)

// The attributes StartOptions sets are the ones the embedded server's namespace registers.
func TestSearchAttributesAreTheRegisteredOnes(t *testing.T) {
	t.Parallel()
	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	defer tc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	registered, err := tc.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ts.Namespace()})
	require.NoError(t, err)
	for _, k := range []string{TenantIDAttribute.GetName(), BusinessKeyAttribute.GetName()} {
		require.Equal(t, enumspb.INDEXED_VALUE_TYPE_KEYWORD, registered.GetCustomAttributes()[k], k)
	}
}

// A second start with the same id (the same Idempotency-Key) attaches to the workflow, running
// or closed, instead of failing or starting another; the workflow is found by a visibility query
// on its tenant and business key.
func TestStartOptionsAttachAndAreSearchable(t *testing.T) {
	t.Parallel()
	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	defer tc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	queue, id := testkit.Unique("start"), testkit.Unique("wf")
	tenant, key := testkit.Unique("tenant"), testkit.Unique("ewa:req")
	opts := StartOptions(id, queue, tenant, key)
	// No worker polls the queue yet, so the workflow stays running.
	first, err := tc.ExecuteWorkflow(ctx, opts, ReconcileWorkflowName, ReconcileInput{})
	require.NoError(t, err)
	second, err := tc.ExecuteWorkflow(ctx, opts, ReconcileWorkflowName, ReconcileInput{})
	require.NoError(t, err, "a second start while it runs attaches")
	require.Equal(t, first.GetRunID(), second.GetRunID())

	// A run without tenants finds them (none in a fresh database) and records itself.
	d := testkit.NewDB(t)
	w := worker.New(tc, queue, worker.Options{DeadlockDetectionTimeout: time.Minute})
	Register(w, Deps{Reconcile: &activities.Reconcile{Platform: d.Platform(t), Runner: &reconcile.Runner{Store: reconcile.NewStore(d.App)}}})
	require.NoError(t, w.Start())
	defer w.Stop()
	var rep ReconcileResult
	require.NoError(t, second.Get(ctx, &rep))
	require.Zero(t, rep.Aggregate.Pairs)

	third, err := tc.ExecuteWorkflow(ctx, opts, ReconcileWorkflowName, ReconcileInput{})
	require.NoError(t, err, "a start after it closed attaches to the closed run")
	require.Equal(t, first.GetRunID(), third.GetRunID(), "the id is never reused for a second run")
	require.NoError(t, third.Get(ctx, &rep))

	query := fmt.Sprintf("TenantId = '%s' AND BusinessKey = '%s'", tenant, key)
	var found []string
	deadline := time.Now().Add(time.Minute)
	for len(found) == 0 && time.Now().Before(deadline) {
		resp, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: ts.Namespace(), Query: query})
		require.NoError(t, err)
		for _, e := range resp.GetExecutions() {
			found = append(found, e.GetExecution().GetWorkflowId()+"/"+e.GetExecution().GetRunId())
		}
		if len(found) == 0 {
			time.Sleep(100 * time.Millisecond) // visibility is eventually consistent
		}
	}
	require.Equal(t, []string{id + "/" + first.GetRunID()}, found, "listed once, under %s", query)

	other, err := tc.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Namespace: ts.Namespace(),
		Query: fmt.Sprintf("TenantId = '%s' AND BusinessKey = '%s'", testkit.Unique("tenant"), key)})
	require.NoError(t, err)
	require.Empty(t, other.GetExecutions(), "another tenant's query does not list it")
}

func TestStartOptionsLeaveEmptyAttributesUnset(t *testing.T) {
	t.Parallel()
	o := StartOptions("id", "q", "", "reconcile-daily")
	_, ok := o.TypedSearchAttributes.GetKeyword(TenantIDAttribute)
	require.False(t, ok)
	v, ok := o.TypedSearchAttributes.GetKeyword(BusinessKeyAttribute)
	require.True(t, ok)
	require.Equal(t, "reconcile-daily", v)
	require.Equal(t, enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING, o.WorkflowIDConflictPolicy)
	require.Equal(t, enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE, o.WorkflowIDReusePolicy)
	require.False(t, o.WorkflowExecutionErrorWhenAlreadyStarted)
}
