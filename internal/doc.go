// Package internal holds the product's domains, each in its own package, and under platform/ the
// plumbing they share.
//
// Domains: identity (users, sessions, one-time secrets, platform admins), orgs (organizations,
// members, roles, permissions), employees (and the employee–user link), employeetransfer (an
// employee moved to another business, their obligations handled explicitly), catalogs (departments,
// positions, allowances, deductions, …), uploads (files bound to their SHA-256), kyc (submissions,
// review, the KYC gate), sanctions (lists, screening, checks, the sanctions gate), ewa (early wage
// access requests and settings), payroll (runs, inputs, mandates, the calculator, completion),
// payslip (a payroll entry as a payslip: JSON, HTML, PDF), lending (salary-backed loans),
// equb (savings circles through partner-bank escrow), bnpl (agreements and instalments), wallet
// (ledger-derived balances and transfers), savings (goals held in escrow), disputes (with SLA
// deadlines), notifications (the outbox consumer, preferences, the in-app inbox), notify (e-mail
// and text senders), bankwebhook (stored partner callbacks) and demorequests (the public "request a
// demo" form's inbox).
//
// Platform (internal/platform/…): tenancy (who acts for which tenant, and the tenant-scoped
// transaction), crosstenant (the one audited path across tenants), audit, outbox (with relay
// groups), broker (the outbox's producer to a NATS JetStream stream), idempotency, ratelimit, money, field (validation of outside values), csvsafe (CSV
// cells made safe for spreadsheets), partnerref (transfer-leg references), personname (the one
// normaliser of people's names, for sanctions screening and the holder-name match), callbacksig
// (the signature of partner callbacks, signed by the sandbox and verified by the API), refusal (a
// refused request and each domain's one table of its codes), temporalerr (the Temporal answers
// that are asked again), settle (the settle step of a held transfer, shared by wallet and
// savings), and the plumbing (buildinfo, cli, db, devtemporal with devtemporaltest, freeport,
// logging, pgcluster, promreg, rpcclient, rpcserve, testkit, webauthntest: a software passkey
// authenticator for tests).
//
// A domain may import platform packages and other domains (acyclic); a platform package never
// imports a domain.
package internal
