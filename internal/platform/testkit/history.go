package testkit

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"
)

// RecordHistory writes the history of a workflow run, once it has ended, as JSON to path when
// WAGERAIL_RECORD_HISTORY is set: the replay tests of package workflows replay these real runs
// against the current code. An empty runID names the latest run. A run that ended in an error is
// recorded too (its history replays all the same).
func RecordHistory(t testing.TB, tc client.Client, id, runID, path string) {
	t.Helper()
	if os.Getenv("WAGERAIL_RECORD_HISTORY") == "" {
		return
	}
	ctx := context.Background()
	_ = tc.GetWorkflow(ctx, id, runID).Get(ctx, nil)
	iter := tc.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatalf("testkit: history of %s: %v", id, err)
		}
		hist.Events = append(hist.Events, ev)
	}
	b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(hist)
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatalf("testkit: %v", err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatalf("testkit: %v", err)
	}
}
