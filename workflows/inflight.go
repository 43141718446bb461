package workflows

import (
	"slices"

	"github.com/wagerail/wagerail/internal/bnpl"
	"github.com/wagerail/wagerail/internal/equb"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/payroll"
	"github.com/wagerail/wagerail/internal/platform/inflight"
	"github.com/wagerail/wagerail/internal/savings"
	"github.com/wagerail/wagerail/internal/wallet"
)

// InFlight are the kinds of money these sagas hold in flight, each domain's own declaration
// (internal/platform/inflight): what the worker's svc_sagas_in_flight gauges watch. A saga that
// puts money in a new state it must leave adds its kind to its domain's InFlight.
func InFlight() []inflight.Kind {
	return slices.Concat(ewa.InFlight, lending.InFlight, bnpl.InFlight, payroll.InFlight, equb.InFlight, savings.InFlight, wallet.InFlight)
}
