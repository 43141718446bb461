// Package uploads owns uploaded files: the rules a file must pass before it is stored (allowed
// media types, the declared type agreeing with the bytes, a size limit), the Store that keeps the
// bytes (a directory by default; an S3-compatible store can sit behind the same interface), and
// the app.uploads row that records each file's tenant, key, size and SHA-256.
//
// Keys are minted here ("upl_" + a UUID) and never come from a client; a tenant id reaches the
// filesystem only after field.Identifier and ObjectPath have checked it. The row, not the file,
// is what makes an upload exist: the API looks the row up under RLS before it opens a file, so a
// file written by a request that failed before its row committed is never served.
//
// Other packages bind to an upload by (tenant, key) and its hash: Lookup returns the row and
// VerifyContent re-hashes the stored bytes, failing with ErrHashMismatch when they changed.
//
// This package does not authorize: the API decides who may upload or read for which tenant.
package uploads
