package bankwebhook_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/platform/partnerref"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

const batchRecorderName = "bankwebhook-test-batch-recorder"

type batchSeen struct {
	Signals int
	Events  []string
}

// batchRecorder is a fan-out batch reduced to its callback handling.
func batchRecorder(ctx workflow.Context) error {
	var st batchSeen
	if err := workflow.SetQueryHandler(ctx, "seen", func() (batchSeen, error) { return st, nil }); err != nil {
		return err
	}
	ch := workflow.GetSignalChannel(ctx, bankwebhook.SettlementsSignalName)
	for {
		var ss []bankwebhook.Settlement
		ch.Receive(ctx, &ss)
		st.Signals++
		for _, s := range ss {
			st.Events = append(st.Events, s.EventID)
		}
	}
}

// bulkBatch records n bulk items of one batch for tenant-a and starts the batch's workflow; it
// returns the items' references.
func (f *fixture) bulkBatch(n int) []string {
	f.t.Helper()
	wf := testkit.Unique("fan") + "-b1"
	refs := make([]string, n)
	recs := make([]gateway.TransferRecord, n)
	for i := range refs {
		refs[i] = partnerref.Leg(partnerref.BulkItem, wf, i+1)
		recs[i] = gateway.TransferRecord{Partner: "sandbox", Reference: refs[i], TenantID: "tenant-a", Domain: "EWA", AmountSantim: 100,
			Currency: "ETB", FromAccount: "a", ToAccount: fmt.Sprintf("b%d", i), BatchReference: wf}
	}
	require.NoError(f.t, gateway.NewStore(f.d.App).RecordTransfers(context.Background(), "tenant-a", recs))
	_, err := f.tc.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: wf, TaskQueue: f.queue}, batchRecorderName)
	require.NoError(f.t, err)
	return refs
}

func (f *fixture) batchSeen(wf string) batchSeen {
	v, err := f.tc.QueryWorkflow(context.Background(), wf, "", "seen")
	require.NoError(f.t, err)
	var st batchSeen
	require.NoError(f.t, v.Get(&st))
	return st
}

// Callbacks about bulk items are stored and acknowledged as GATHERED without a signal each; one
// flush signals each batch once with all of them, records every event APPLIED with a BATCH
// attempt and audits each once. A partner retry before the flush is gathered again and delivered
// once; the flush after it finds nothing.
func TestGatheredCallbacksReachEachBatchInOneSignal(t *testing.T) {
	f := newFixture(t)
	a := bankwebhook.NewApplier(f.store, f.tc)
	a.GatherWindow = time.Hour // flushed by hand below
	one, two := f.bulkBatch(30), f.bulkBatch(20)
	ctx := context.Background()
	for _, refs := range [][]string{one, two} {
		for _, ref := range refs {
			d, err := a.Receive(ctx, f.callback(ref, "ev-"+ref))
			require.NoError(t, err)
			require.Equal(t, bankwebhook.Gathered, d.Outcome)
			require.Equal(t, bankwebhook.Pending, d.EventOutcome)
		}
	}
	d, err := a.Receive(ctx, f.callback(one[0], "ev-"+one[0])) // the partner's retry, still pending
	require.NoError(t, err)
	require.Equal(t, bankwebhook.Gathered, d.Outcome)

	n, err := a.Flush(ctx)
	require.NoError(t, err)
	require.Equal(t, 50, n)
	for _, refs := range [][]string{one, two} {
		st := f.batchSeen(bankwebhook.WorkflowIDOf(refs[0]))
		require.Equal(t, 1, st.Signals, "one signal per batch")
		require.Len(t, st.Events, len(refs))
	}
	var applied, batchAttempts, audits int
	f.inPlatform(func(ctx context.Context, tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE outcome = 'APPLIED') FROM app.bank_webhook_events WHERE reference LIKE '%.bulk.%'`).Scan(&applied); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM app.bank_webhook_deliveries WHERE trigger = 'BATCH' AND outcome = 'APPLIED'`).Scan(&batchAttempts); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE action = 'BankWebhookApplied' AND tenant_id = 'tenant-a'
			AND details->>'trigger' = 'BATCH'`).Scan(&audits)
	})
	require.Equal(t, 50, applied)
	require.Equal(t, 50, batchAttempts)
	require.Equal(t, 50, audits, "audited once per event")

	n, err = a.Flush(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "nothing left to deliver")
	d, err = a.Receive(ctx, f.callback(two[0], "ev-"+two[0]))
	require.NoError(t, err)
	require.Equal(t, bankwebhook.Duplicate, d.Outcome, "a retry after the flush is a duplicate")
}

// Without a hand on it the flush runs by itself after the gather window.
func TestGatheredCallbacksFlushOnTheirOwn(t *testing.T) {
	f := newFixture(t)
	a := bankwebhook.NewApplier(f.store, f.tc)
	a.GatherWindow = 50 * time.Millisecond
	refs := f.bulkBatch(10)
	for _, ref := range refs {
		_, err := a.Receive(context.Background(), f.callback(ref, "ev-"+ref))
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		return len(f.batchSeen(bankwebhook.WorkflowIDOf(refs[0])).Events) == len(refs)
	}, 20*time.Second, 50*time.Millisecond)
	require.LessOrEqual(t, f.batchSeen(bankwebhook.WorkflowIDOf(refs[0])).Signals, 3, "gathered, not one signal each")
}

// Callbacks a process gathered and never flushed (it stopped) are delivered by the sweep of the
// next one.
func TestSweepDeliversWhatAStoppedProcessLeftPending(t *testing.T) {
	f := newFixture(t)
	stopped := bankwebhook.NewApplier(f.store, f.tc)
	stopped.GatherWindow = time.Hour // never flushes
	refs := f.bulkBatch(5)
	for _, ref := range refs {
		d, err := stopped.Receive(context.Background(), f.callback(ref, "ev-"+ref))
		require.NoError(t, err)
		require.Equal(t, bankwebhook.Gathered, d.Outcome)
	}
	next := bankwebhook.NewApplier(f.store, f.tc)
	next.GatherWindow = 10 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go next.SweepGathered(ctx, 50*time.Millisecond)
	require.Eventually(t, func() bool {
		return len(f.batchSeen(bankwebhook.WorkflowIDOf(refs[0])).Events) == len(refs)
	}, 20*time.Second, 50*time.Millisecond)
}
