// Package platform groups the plumbing every domain shares: tenancy and the cross-tenant path,
// audit, outbox, idempotency, rate limits, money, field validators, log redaction, the database
// and RPC foundations, the dev stack and the test kit. Nothing under platform imports a domain
// package (internal/<domain>); the import-direction test holds it to that.
package platform
