// Package ledgerv1 holds the generated Go code of the ledger service's protocol
// (ledger.proto). Regenerate with `make generate`.
package ledgerv1

//go:generate protoc --proto_path=. --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative ledger.proto
