package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/wagerail/wagerail/internal/platform/devtemporal"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest/launch"
)

// The process serves a namespace with Wagerail's search attributes from its ready line until its
// standard input ends, then stops its server and returns.
func TestServesUntilItsInputEnds(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(inR, outW) }()
	_, err := io.WriteString(inW, `{"WorkflowTaskTimeout":2000000000}`+"\n")
	require.NoError(t, err)
	line, err := bufio.NewReader(outR).ReadString('\n')
	require.NoError(t, err)
	hostPort, namespace, err := launch.ParseReady(line)
	require.NoError(t, err)

	tc, err := client.Dial(client.Options{HostPort: hostPort, Namespace: namespace})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	attrs, err := tc.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	require.NoError(t, err)
	for name, typ := range devtemporal.SearchAttributes {
		require.Equal(t, typ, attrs.GetCustomAttributes()[name], name)
	}
	tc.Close()

	require.NoError(t, inW.Close())
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the process went on serving after its input ended")
	}
	_, err = net.DialTimeout("tcp", hostPort, time.Second)
	require.Error(t, err, "the frontend still answers")
}

// A request it cannot read starts nothing.
func TestRefusesARequestItCannotRead(t *testing.T) {
	for _, in := range []string{"", "{}", "not json\n", `{"WorkflowTaskTimeout":"soon"}` + "\n"} {
		var out strings.Builder
		require.Error(t, run(strings.NewReader(in), &out), "%q", in)
		require.Empty(t, out.String(), "%q", in)
	}
}
