package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/activities"
)

// The payout block's gates: each saga reads the shared gates (KYC, sanctions, the payout
// account's lookup) through its own gateTable, and runGates runs them in its order, failing
// closed when a gate cannot decide.

// gateTable is a saga's reading of the shared gates: which it runs, in order, and its own code
// for each refusal and for a gate that could not decide (it fails closed).
type gateTable struct {
	// gates are run in this order; the first refusal ends the loop.
	gates []activities.GateKind
	// refusals maps a gate's refusal code (activities.Gate…) to the saga's; other is the saga's
	// code for a refusal code it does not list.
	refusals map[string]string
	other    string
	// unavailable is the saga's code for a gate that could not decide.
	unavailable map[activities.GateKind]string
}

// code is the saga's code of a gate's refusal code.
func (t gateTable) code(gateCode string) string {
	if c, ok := t.refusals[gateCode]; ok {
		return c
	}
	return t.other
}

var gateActions = map[activities.GateKind]activities.Action[activities.GateInput]{
	activities.GateKYC:          activities.KycGate,
	activities.GateSanctions:    activities.SanctionsGate,
	activities.GateAccount:      activities.AccountGate,
	activities.GateCounterparty: activities.CounterpartyGate,
}

// runGates runs the table's gates as local activities. refused is false when all passed; else
// code is the saga's refusal code and reason the refusal's text. A gate that could not decide
// has its one audit row written (GateFailed) and refuses.
func runGates(ctx workflow.Context, in activities.GateInput, t gateTable) (code, reason string, refused bool) {
	log := workflow.GetLogger(ctx)
	for _, kind := range t.gates {
		err := doLocal(ctx, localGateOptions(), gateActions[kind], in)
		if err == nil {
			continue
		}
		if gc, ok := activities.GateRefusal(err); ok {
			return t.code(gc), err.Error(), true
		}
		log.Warn("gate could not decide; refusing", "gate", string(kind), "error", err)
		if ferr := doLocal(ctx, localRecordOptions(), activities.GateFailed,
			activities.GateFailedInput{Gate: kind, Input: in, Cause: activities.ErrorType(err)}); ferr != nil {
			log.Error("gate failure not recorded", "gate", string(kind), "error", ferr)
		}
		return t.unavailable[kind], "gate " + string(kind) + " unavailable", true
	}
	return "", "", false
}
