package main

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

func TestTemporalConnectionIsUncompressedOnLoopbackOnly(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7233": true, "localhost:7233": true, "LOCALHOST:7233": true, "[::1]:7233": true, "127.3.2.1:7233": true,
		"temporal:7233": false, "10.0.0.5:7233": false, "temporal.internal.example:7233": false, "[2001:db8::1]:7233": false,
		"127.0.0.1": false, "": false, "localhost.evil.example:7233": false,
	} {
		_, none := temporalConnection(addr).GrpcCompression.(*client.GrpcCompressionNone)
		require.Equal(t, want, none, addr)
	}
}
