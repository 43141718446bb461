package workflows

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryDepsFieldIsAGroup: a field added to Deps is registered without a second edit, and one
// that is not an activities.Group fails here instead of at a worker's start.
func TestEveryDepsFieldIsAGroup(t *testing.T) {
	var gs []string
	require.NotPanics(t, func() {
		for _, g := range (Deps{}).groups() {
			gs = append(gs, reflect.TypeOf(g).Elem().Name())
		}
	})
	require.Len(t, gs, reflect.TypeOf(Deps{}).NumField())
	require.Contains(t, gs, "Reconcile")
}
