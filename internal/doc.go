// Package internal groups the shared building blocks: identity (users, sessions, one-time
// secrets, platform admins), orgs (organizations, members, roles, permissions), tenancy (who acts
// for which tenant, and the tenant-scoped transaction), crosstenant (the one audited path across
// tenants), audit, outbox, idempotency, notify (e-mail and text senders), ratelimit, money, field
// (validation of outside values), bankwebhook (stored partner callbacks), and the plumbing (cli,
// db, devtemporal, freeport, logging, pgcluster, rpcclient, rpcserve, testkit). Each subpackage is
// small and imports only what is below it.
package internal
