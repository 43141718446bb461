// Package gatewayv1 holds the integration gateway's gRPC contract and its generated Go code.
package gatewayv1

//go:generate protoc -I . --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative gateway.proto
