// Package internal groups the shared building blocks and the domain stores.
//
// Blocks: identity (users, sessions, one-time secrets, platform admins), orgs (organizations,
// members, roles, permissions), tenancy (who acts for which tenant, and the tenant-scoped
// transaction), crosstenant (the one audited path across tenants), audit, outbox, idempotency,
// notify (e-mail and text senders), ratelimit, money, field (validation of outside values),
// csvsafe (CSV cells made safe for spreadsheets), bankwebhook (stored partner callbacks), and the
// plumbing (cli, db, devtemporal, freeport, logging, pgcluster, rpcclient, rpcserve, testkit).
//
// Domain stores: employees (and the employee–user link), catalogs (departments, positions,
// allowances, deductions, …), uploads (files bound to their SHA-256), kyc (submissions, review,
// the KYC gate) and sanctions (lists, screening, checks, the sanctions gate).
//
// Each subpackage is small and imports only what is below it.
package internal
