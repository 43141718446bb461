package payroll

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/wagerail/wagerail/internal/platform/refusal"
)

// Refusal is a refused request (refusal.Refusal): the stores' refusals are of this one type.
type Refusal = refusal.Refusal

// NotFound is the refusal of an id that names nothing in the caller's tenant (another tenant's
// row included: it is not disclosed).
func NotFound(code, noun string) *Refusal {
	return &Refusal{Code: code, Status: http.StatusNotFound, Message: "no such " + noun + " in this organization"}
}

// Move is one action of a state machine: the states it may start from and the state it leaves.
type Move struct {
	From []string
	To   string
}

// Machine is a resource's lifecycle: each action's allowed moves. An action from any other
// state is refused with Code (409) and the current and allowed states in the details.
type Machine struct {
	Noun  string // "one-time earning"
	Code  string // the stable 409 code, e.g. PAYROLL_EARNING_INVALID_STATE
	Moves map[string]Move
}

// Next is the state action leads to from state, or the refusal.
func (m *Machine) Next(action, state string) (string, error) {
	mv, ok := m.Moves[action]
	if !ok {
		panic(fmt.Sprintf("payroll: %s has no action %q", m.Noun, action)) // a programming error
	}
	if !slices.Contains(mv.From, state) {
		return "", &Refusal{Code: m.Code, Status: http.StatusConflict,
			Message: fmt.Sprintf("a %s that is %s cannot be %s", m.Noun, state, action),
			Details: map[string]any{"status": state, "allowedFrom": mv.From}}
	}
	return mv.To, nil
}
