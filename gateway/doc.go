// Package gateway is the integration gateway: one adapter per partner bank (the sandbox adapter
// over HTTP first), account lookup, disbursement, status lookup, statement ingestion (schema
// gateway), adapter health and the reconciliation runner. It must not post to the ledger except
// through the ledger's client, and never treats a timeout as a failure: a timed-out transfer is
// UNKNOWN until the partner says otherwise.
package gateway
