// Package orgs owns organizations (the tenants: businesses, financial institutions, merchants),
// their members with a member role (owner, admin, member), application roles with permission maps,
// invitations, and the answer to "may this user do that here" (Access), cached per (user,
// organization) for 60 seconds and invalidated on every change.
//
// Every table here is tenant-scoped under FORCED row-level security; callers pass a transaction
// opened by tenancy.InTx (or internal/platform/crosstenant for platform admins). A user additionally sees
// their own memberships in every tenant (db.UserSetting), which is how "my organizations" works
// without a cross-tenant role.
package orgs
