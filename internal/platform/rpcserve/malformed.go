package rpcserve

import (
	"context"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	protov2 "google.golang.org/protobuf/proto"
)

// grpc-go answers a request it cannot decode with codes.Internal before any interceptor or handler
// runs, and proto3 decoding fails on any string field that is not valid UTF-8: a hostile caller
// could make every service report an internal fault. The server codec therefore never fails to
// decode a request: it empties the message and marks it with an unknown field that no Wagerail
// message uses, and the interceptors below turn the mark into InvalidArgument, the caller's error.

// malformedField is the highest field number protobuf allows; no .proto of ours will use it.
const malformedField protowire.Number = protowire.MaxValidNumber

type lenientCodec struct{ encoding.CodecV2 }

func (c lenientCodec) Unmarshal(data mem.BufferSlice, v any) error {
	err := c.CodecV2.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	m, ok := v.(protov2.Message)
	if !ok {
		return err
	}
	protov2.Reset(m)
	mark := protowire.AppendTag(nil, malformedField, protowire.VarintType)
	m.ProtoReflect().SetUnknown(protowire.AppendVarint(mark, 1))
	return nil
}

func malformed(req any) bool {
	m, ok := req.(protov2.Message)
	if !ok {
		return false
	}
	b := m.ProtoReflect().GetUnknown()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		if num == malformedField {
			return true
		}
		b = b[n:]
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return false
		}
		b = b[n:]
	}
	return false
}

// errMalformed carries the reason every Wagerail service uses for a caller's bad field, naming the
// request as a whole as the field.
var errMalformed = func() error {
	st, err := status.New(codes.InvalidArgument, "request is not a well-formed protobuf message (every string must be valid UTF-8)").
		WithDetails(&errdetails.ErrorInfo{Reason: "INVALID_ARGUMENT", Domain: "rpc.wagerail.dev", Metadata: map[string]string{"field": "request"}})
	if err != nil {
		panic(err) // an ErrorInfo always marshals
	}
	return st.Err()
}()

func malformedUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if malformed(req) {
		return nil, errMalformed
	}
	return handler(ctx, req)
}

func malformedStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, checkedStream{ss})
}

type checkedStream struct{ grpc.ServerStream }

func (s checkedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if malformed(m) {
		return errMalformed
	}
	return nil
}

func serverCodec() grpc.ServerOption {
	return grpc.ForceServerCodecV2(lenientCodec{encoding.GetCodecV2(proto.Name)})
}
