//go:build noembed

package main

import (
	"context"
	"errors"
	"log/slog"
)

// errNoDevStack is `wagerail dev` in a binary built with -tags noembed (the production image):
// it carries no embedded Temporal server or Web UI, so it cannot run the one-process stack.
var errNoDevStack = errors.New("dev: this wagerail was built without the embedded dev stack (-tags noembed, as the production image is): " +
	"run the processes on their own (wagerail api, worker, ledger, gateway) against your Postgres and Temporal, " +
	"or use a build without the tag (make build) for `wagerail dev`")

// runDev refuses, saying why: the one-process stack is not in this build.
func runDev(context.Context, *slog.Logger, devConfig) error { return errNoDevStack }
