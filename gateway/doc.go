// Package gateway is the integration gateway: one adapter per partner bank (the sandbox adapter
// over HTTP first), account lookup with holder-name matching, disbursement (single and bulk),
// status lookup, statement ingestion (CSV and ISO 20022 camt.053, into schema gateway), adapter
// health by the spec's degraded rule, and national id verification against a national ID
// registry (Fayda; the sandbox's registry in development). Reconciliation of the ingested
// statements with the ledger lives in package reconcile, which reads them through Store.
//
// Layout: Adapter (adapter.go) is a bank's protocol, RegistryAdapter (registry.go) a national ID
// registry's; Guard and GuardRegistry (guard.go, registry.go) wrap each with one guard of its
// own: per-call deadlines, retries where they are safe, a circuit breaker and the health window
// (health.go); Gateway and Server (gateway.go, grpc.go) are the service and its gRPC edge;
// errors.go holds the error reasons and ToStatus, the one mapping from the service's domain
// errors to gRPC statuses, applied by Metrics.UnaryInterceptor; Client (client.go) is the Go
// client other processes use, with deadlines, a circuit breaker and typed errors;
// Store (store.go, transfers.go) is schema gateway, including the transfer register every
// disbursement is recorded in before it is sent, which FindTransfer reads for the bank-callback
// handler. gatewaytest runs the real sandbox and gateway in process for other packages' tests.
//
// It must not touch the ledger, and never treats a timeout as a failure: a transfer whose answer did not arrive is
// UNKNOWN until the partner says otherwise.
//
// # Settlement: one poller, the saga's
//
// A transfer ends when its partner says SETTLED or FAILED. That word arrives by the partner's
// callback (api → internal/bankwebhook → a signal to the saga), or, when a callback is late or
// lost, by the saga's own status lookup on a backing-off timer (workflows' payout block, through
// GetTransferStatus or GetBatchStatus). The saga owns that question: its timer is in its
// history, so it survives any crash, it asks only about transfers someone waits on, and it stops
// asking the moment the transfer ends. The gateway runs no poller of its own (it had one, which
// asked about the same PENDING transfers a second time). The transfer register follows both
// sources: every status answer the gateway relays is recorded (TransferStatus, BatchStatus),
// and every callback matched to a transfer is recorded by the callback path
// (Store.RecordSettlement, called by internal/bankwebhook). Statuses only move forward
// (gateway.transfer_status_follows), so the two sources cannot disagree in the register.
package gateway
