package rpcserve_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"

	"github.com/wagerail/wagerail/internal/platform/rpcserve"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// Every Wagerail gRPC process answers the standard health service, lists its services through
// server reflection (what grpcurl needs) and serves /healthz and /metrics on the metrics port.
func TestHealthReflectionAndMetrics(t *testing.T) {
	srv := rpcserve.New("probe", slog.New(slog.NewTextHandler(io.Discard, nil)))
	conn, metricsURL := testkit.ServeGRPC(t, srv)
	ctx := context.Background()

	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	require.Equal(t, healthpb.HealthCheckResponse_SERVING, resp.GetStatus())

	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	require.NoError(t, err)
	require.NoError(t, stream.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{ListServices: "*"},
	}))
	got, err := stream.Recv()
	require.NoError(t, err)
	var names []string
	for _, s := range got.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	require.Contains(t, names, "grpc.health.v1.Health")
	require.NoError(t, stream.CloseSend())

	for _, path := range []string{"/healthz", "/metrics"} {
		r, err := http.Get(metricsURL + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(r.Body)
		r.Body.Close()
		require.Equal(t, http.StatusOK, r.StatusCode, path)
		require.NotEmpty(t, body, path)
	}
}
