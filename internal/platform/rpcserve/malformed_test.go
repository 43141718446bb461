package rpcserve_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"

	"github.com/wagerail/wagerail/internal/platform/rpcserve"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// rawCodec sends the test's bytes as they are, which a generated client never would.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return mem.BufferSlice{mem.SliceBuffer(v.([]byte))}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }

// A request that does not decode (a string that is not UTF-8, a truncated field, plain garbage) is
// the caller's error: InvalidArgument, never Internal, on unary and streaming calls alike.
func TestHardening4_UndecodableRequestIsInvalidArgument(t *testing.T) {
	srv := rpcserve.New("probe", slog.New(slog.NewTextHandler(io.Discard, nil)))
	conn, _ := testkit.ServeGRPC(t, srv)
	ctx := context.Background()
	raw := grpc.ForceCodecV2(rawCodec{})

	probes := map[string][]byte{
		"invalid utf-8 string": {0x0a, 0x02, 0xc3, 0x28},
		"lone continuation":    {0x0a, 0x01, 0xff},
		"truncated length":     {0x0a, 0x05, 'a'},
		"truncated varint":     {0x08, 0xff},
		"reserved wire type":   {0x0f},
		"field number zero":    {0x02, 0x00},
	}
	for name, body := range probes {
		var out []byte
		err := conn.Invoke(ctx, "/grpc.health.v1.Health/Check", body, &out, raw)
		require.Equal(t, codes.InvalidArgument, status.Code(err), "%s: %v", name, err)
	}

	// A well-formed request still works through the same codec.
	good, err := proto.Marshal(&healthpb.HealthCheckRequest{Service: ""})
	require.NoError(t, err)
	var out []byte
	require.NoError(t, conn.Invoke(ctx, "/grpc.health.v1.Health/Check", good, &out, raw))

	// Streaming: server reflection receives a request whose string is not UTF-8.
	desc := &grpc.StreamDesc{StreamName: "ServerReflectionInfo", ServerStreams: true, ClientStreams: true}
	stream, err := conn.NewStream(ctx, desc, "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", raw)
	require.NoError(t, err)
	require.NoError(t, stream.SendMsg([]byte{0x0a, 0x01, 0xff}))
	require.NoError(t, stream.CloseSend())
	err = stream.RecvMsg(&out)
	require.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)

	// And a generated client is unaffected.
	_, err = reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	require.NoError(t, err)
}
