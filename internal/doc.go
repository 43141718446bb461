// Package internal groups the shared building blocks (cli, db, devtemporal, logging, pgcluster,
// rpcserve, testkit, …). Each subpackage is small and imports only what is below it.
package internal
