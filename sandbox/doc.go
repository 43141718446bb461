// Package sandbox is the simulated partner bank every test and `wagerail dev` talks to over HTTP:
// accounts, holds, asynchronous settlement, refunds, bulk transfers, statements, signed callbacks
// and fault injection; and, beside it, a simulated national ID registry (identity.go). It keeps
// the bank's state and the registry's identities in schema sandbox and must
// not import any other Wagerail domain package: it is the outside world.
package sandbox
