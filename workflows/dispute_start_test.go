package workflows

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestDisputeStartMissedAtOpen: a dispute committed without its workflow (the API's start after
// the commit failed) gets it from its own dispute.opened.v1 through the outbox relay: the
// workflow runs and starts the investigation. A redelivery, and a delivery for a dispute decided
// meanwhile, start nothing new and do not fail.
func TestDisputeStartMissedAtOpen(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := testkit.NewDB(t)
	tenant := orgs.NewOrganizationID()
	in := func(fn func(ctx context.Context, tx pgx.Tx) error) {
		t.Helper()
		ctx := tenancy.WithActor(tenancy.WithTenant(ctx, tenant), "user:test")
		require.NoError(t, tenancy.InTx(ctx, d.App, func(tx pgx.Tx) error { return fn(ctx, tx) }))
	}
	require.NoError(t, db.InTenantTx(ctx, d.App, tenant, func(tx pgx.Tx) error {
		owner, err := identity.CreateUser(ctx, tx, identity.NewUser{Email: "owner-" + strings.ToLower(tenant[len(tenant)-8:]) + "@dsp.test", Name: "Owner", PasswordHash: "x"})
		if err != nil {
			return err
		}
		_, _, err = orgs.Create(ctx, tx, orgs.NewOrganization{ID: tenant, Name: "Org " + tenant, Kind: orgs.Business}, owner.ID)
		return err
	}))
	open := func(txID string) disputes.Dispute {
		var out disputes.Dispute
		in(func(ctx context.Context, tx pgx.Tx) (err error) {
			out, err = disputes.Open(ctx, tx, disputes.Ethiopia(), disputes.OpenInput{TenantID: tenant, LedgerTransactionID: txID,
				LedgerAccountID: "acc-1", LedgerAccountName: "receivable-from-employee:emp_1", AmountSantim: 5_000,
				RaisedBy: disputes.RaisedByEmployee, RaisedBySubjectID: "emp_1", Reason: "not mine", ActorUserID: "usr_1"}, time.Now())
			return err
		})
		return out
	}
	status := func(id string) disputes.Status {
		var out disputes.Dispute
		in(func(ctx context.Context, tx pgx.Tx) (err error) { out, err = disputes.Get(ctx, tx, id); return err })
		return out.Status
	}

	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	queue := testkit.Unique("dispute-start")
	w := worker.New(tc, queue, WorkerOptions())
	Register(w, Deps{Disputes: &activities.Disputes{DB: d.App}})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	// Opened, its start missed: no workflow.
	missed := open("00000000-0000-7000-8000-000000000001")
	_, err = tc.DescribeWorkflowExecution(ctx, missed.WorkflowID, "")
	require.Error(t, err, "no workflow yet")
	require.Equal(t, disputes.Opened, status(missed.ID))

	starter := &DisputeStarter{DB: d.App, Temporal: tc, TaskQueue: queue}
	relay, err := outbox.NewRelay(outbox.Config{Platform: d.Platform(t)})
	require.NoError(t, err)
	require.NoError(t, relay.RegisterAll([]outbox.Subscription{starter.Subscription()}))
	res, err := relay.Poll(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, res.Published, 1, "%+v", res)
	require.Zero(t, res.Retried, "%+v", res)

	desc, err := tc.DescribeWorkflowExecution(ctx, missed.WorkflowID, "")
	require.NoError(t, err, "the workflow exists now")
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.GetWorkflowExecutionInfo().GetStatus())
	require.Eventually(t, func() bool { return status(missed.ID) == disputes.UnderInvestigation }, 30*time.Second, 50*time.Millisecond)

	// A redelivery of the same event: the running workflow is the answer.
	event := outbox.Event{ID: "evt-again", Type: disputes.EventTypeOpened, TenantID: tenant, Payload: []byte(`{"disputeId":"` + missed.ID + `"}`)}
	require.NoError(t, starter.Consume(ctx, event))
	again, err := tc.DescribeWorkflowExecution(ctx, missed.WorkflowID, "")
	require.NoError(t, err)
	require.Equal(t, desc.GetWorkflowExecutionInfo().GetExecution().GetRunId(), again.GetWorkflowExecutionInfo().GetExecution().GetRunId(), "the same run")

	// A dispute decided before its event is delivered: nothing started.
	decided := open("00000000-0000-7000-8000-000000000002")
	in(func(ctx context.Context, tx pgx.Tx) error {
		if _, err := disputes.Apply(ctx, tx, decided.ID, disputes.Move{Trigger: disputes.TriggerInvestigate}, time.Now()); err != nil {
			return err
		}
		_, err := disputes.Apply(ctx, tx, decided.ID, disputes.Move{Trigger: disputes.TriggerDecide, Actor: "usr_op",
			Decision: disputes.NoAction, Reason: "taken"}, time.Now())
		return err
	})
	res, err = relay.Poll(ctx)
	require.NoError(t, err)
	require.GreaterOrEqual(t, res.Published, 1, "%+v", res)
	_, err = tc.DescribeWorkflowExecution(ctx, decided.WorkflowID, "")
	require.Error(t, err, "a decided dispute gets no workflow")

	// An event naming no dispute is an error (retried, then dead-lettered), not a silent success.
	require.Error(t, starter.Consume(ctx, outbox.Event{ID: "evt-bad", Type: disputes.EventTypeOpened, TenantID: tenant, Payload: []byte(`{}`)}))
}
