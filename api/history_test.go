package api

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"
)

// recordHistory writes the history of workflow id's latest run, once it has ended, to
// workflows/testdata/file when WAGERAIL_RECORD_HISTORY is set: the replay tests of package
// workflows replay these real runs against the current code. A run that ended in an error is
// recorded too (its history replays all the same).
func recordHistory(t *testing.T, tc client.Client, id, file string) {
	t.Helper()
	if os.Getenv("WAGERAIL_RECORD_HISTORY") == "" {
		return
	}
	ctx := context.Background()
	_ = tc.GetWorkflow(ctx, id, "").Get(ctx, nil)
	iter := tc.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for iter.HasNext() {
		ev, err := iter.Next()
		require.NoError(t, err)
		hist.Events = append(hist.Events, ev)
	}
	b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(hist)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join("..", "workflows", "testdata", file), b, 0o644))
}
