package devtemporal

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/freeport"
)

// A file-backed server keeps its namespace, search attributes and workflows across a restart, and
// serves the Web UI.
func TestFileBackedServerSurvivesRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dbFile := filepath.Join(t.TempDir(), "temporal.db")
	uiPort, err := freeport.One()
	require.NoError(t, err)

	s, err := Start(ctx, Config{DatabaseFile: dbFile, UIPort: uiPort})
	require.NoError(t, err)
	c, err := client.Dial(client.Options{HostPort: s.HostPort(), Namespace: "default", Logger: quietLogger{}})
	require.NoError(t, err)

	sas, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: "default"})
	require.NoError(t, err)
	for name := range SearchAttributes {
		require.Equal(t, enumspb.INDEXED_VALUE_TYPE_KEYWORD, sas.GetCustomAttributes()[name], name)
	}

	// The UI answers with its page.
	resp, err := http.Get(s.UIURL() + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// A workflow started now (no worker needed: it just waits in its task queue) …
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "survives-restart", TaskQueue: "nobody-polls"}, "SomeWorkflow")
	require.NoError(t, err)
	c.Close()
	require.NoError(t, s.Stop())

	// … is still there after a restart on the same file.
	s, err = Start(ctx, Config{DatabaseFile: dbFile})
	require.NoError(t, err)
	defer s.Stop()
	c, err = client.Dial(client.Options{HostPort: s.HostPort(), Namespace: "default", Logger: quietLogger{}})
	require.NoError(t, err)
	defer c.Close()
	desc, err := c.DescribeWorkflowExecution(ctx, "survives-restart", run.GetRunID())
	require.NoError(t, err)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.GetWorkflowExecutionInfo().GetStatus())
}

func TestPortInUseIsAClearError(t *testing.T) {
	s, err := Start(context.Background(), Config{})
	require.NoError(t, err)
	defer s.Stop()
	_, port, _ := splitHostPort(s.HostPort())
	_, err = Start(context.Background(), Config{FrontendPort: port})
	require.ErrorContains(t, err, "in use")
}

// A workflow started without a workflow task timeout of its own (Wagerail's are) gets the
// server's: Config.WorkflowTaskTimeout when set, Temporal's 10 s otherwise.
func TestWorkflowTaskTimeoutIsTheServersDefault(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range []struct {
		set, want time.Duration
	}{{0, 10 * time.Second}, {3 * time.Second, 3 * time.Second}} {
		s, err := Start(ctx, Config{WorkflowTaskTimeout: c.set})
		require.NoError(t, err)
		tc, err := client.Dial(client.Options{HostPort: s.HostPort(), Namespace: "default", Logger: quietLogger{}})
		require.NoError(t, err)
		run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "task-timeout", TaskQueue: "nobody-polls"}, "SomeWorkflow")
		require.NoError(t, err)
		desc, err := tc.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
		require.NoError(t, err)
		require.Equal(t, c.want, desc.GetExecutionConfig().GetDefaultWorkflowTaskTimeout().AsDuration(), "set %v", c.set)
		tc.Close()
		require.NoError(t, s.Stop())
	}
}
