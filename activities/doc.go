// Package activities holds every step that touches the world for the workflows: methods on structs
// built with their dependencies (ledger client, gateway client, stores), grouped by what they talk
// to. Every activity returns its error through temporalError (errors.go), the one place where
// ledger and gateway reasons, gRPC codes and database errors become Temporal application errors:
// business outcomes non-retryable and typed with their reason, infrastructure failures retryable.
// It must never import workflows.
package activities
