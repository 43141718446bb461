package temporalerr

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
)

func TestTransient(t *testing.T) {
	for _, err := range []error{
		serviceerror.NewUnavailable("busy"),
		serviceerror.NewResourceExhausted(0, "rate"),
		serviceerror.NewDeadlineExceeded("server timeout"),
		serviceerror.NewAborted("again"),
		serviceerror.NewNamespaceNotFound("default"),
		serviceerror.NewNamespaceUnavailable("default"),
		fmt.Errorf("wrapped: %w", serviceerror.NewUnavailable("busy")),
	} {
		require.True(t, Transient(err), "%v", err)
	}
	for _, err := range []error{
		nil,
		serviceerror.NewNotFound("no such workflow"),
		serviceerror.NewInvalidArgument("bad id"),
		serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", ""),
		context.DeadlineExceeded, // the caller's own deadline: not the server's answer
		errors.New("connection reset"),
	} {
		require.False(t, Transient(err), "%v", err)
	}
}
