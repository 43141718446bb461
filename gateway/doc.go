// Package gateway is the integration gateway: one adapter per partner bank (the sandbox adapter
// over HTTP first), account lookup with holder-name matching, disbursement (single and bulk),
// status lookup, statement ingestion (CSV and ISO 20022 camt.053, into schema gateway), adapter
// health by the spec's degraded rule. Reconciliation of the ingested statements with the ledger
// lives in package reconcile, which reads them through Store.
//
// Layout: Adapter (adapter.go) is a bank's protocol; Guard (guard.go) wraps every adapter with
// per-call deadlines, retries where they are safe, a circuit breaker and the health window
// (health.go); Gateway and Server (gateway.go, grpc.go) are the service and its gRPC edge;
// errors.go holds the error reasons and ToStatus, the one mapping from the service's domain
// errors to gRPC statuses, applied by Metrics.UnaryInterceptor; Client (client.go) is the Go
// client other processes use, with deadlines, a circuit breaker and typed errors;
// Store (store.go, transfers.go) is schema gateway, including the transfer register every
// disbursement is recorded in before it is sent, which FindTransfer reads for the bank-callback
// handler; SettlementPoller (settlement.go) resolves transfers whose outcome is still open
// (INITIATED past a grace period, PENDING) by asking their partner, on the audited cross-tenant
// path. gatewaytest runs the real sandbox and gateway in process for other packages' tests.
//
// It must not touch the ledger, and never treats a timeout as a failure: a transfer whose answer did not arrive is
// UNKNOWN until the partner says otherwise.
package gateway
