package ledger

import (
	"context"
	"strings"
	"time"

	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
)

// deadlineMargin is how long before its caller's deadline the ledger stops working on a call. A
// caller told DeadlineExceeded treats the outcome as unknown and compensates by key, taking
// nothing found for nothing to void (activities.LedgerVoid), so nothing may commit for it after
// its deadline. Two things would: the server's deadline is the caller's plus the request's
// transit time (gRPC sends the time left, not the deadline), and a statement granted an
// account's lock just before the database gives up (Store.inTx's statement_timeout) still
// commits. The margin covers the transit time plus that commit.
const deadlineMargin = 250 * time.Millisecond

// ledgerMethods prefixes the full method names of the ledger's RPCs (not those of the health
// and reflection services the same server answers, whose probes may carry short deadlines).
var ledgerMethods = "/" + ledgerv1.LedgerService_ServiceDesc.ServiceName + "/"

// callDeadline returns the context a ledger call is served under: its deadline is
// deadlineMargin before the caller's. ok is false when the caller has less than the margin
// left: the call could not finish before its caller gives up, so it is not served at all.
func callDeadline(ctx context.Context, fullMethod string) (serve context.Context, cancel context.CancelFunc, ok bool) {
	d, has := ctx.Deadline()
	if !has || !strings.HasPrefix(fullMethod, ledgerMethods) {
		return ctx, func() {}, true
	}
	stop := d.Add(-deadlineMargin)
	if !time.Now().Before(stop) {
		return ctx, func() {}, false
	}
	serve, cancel = context.WithDeadline(ctx, stop)
	return serve, cancel, true
}
