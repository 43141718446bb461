package db

import (
	"strconv"
	"strings"
)

// Where gathers the conditions of a list's WHERE clause from its optional filters, each
// condition's ? becoming its argument's $n (every ? of one condition the same argument). Args
// are the arguments, in order, for the statement's own after them.
type Where struct {
	conds []string
	Args  []any
}

// Add adds cond with its argument v.
func (w *Where) Add(cond string, v any) {
	w.Args = append(w.Args, v)
	w.conds = append(w.conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(w.Args))))
}

// AddIf adds cond when set (a filter's field that is given).
func (w *Where) AddIf(set bool, cond string, v any) {
	if set {
		w.Add(cond, v)
	}
}

// String is the conditions joined by AND ("true" when there are none).
func (w *Where) String() string {
	if len(w.conds) == 0 {
		return "true"
	}
	return strings.Join(w.conds, " AND ")
}

// Next is the placeholder of the next argument a statement appends after Args.
func (w *Where) Next() string { return "$" + strconv.Itoa(len(w.Args)+1) }
