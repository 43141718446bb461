package activities

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The record step reads the saga that owns a fan-out (or a part of a run paid in parts) from its
// id, and refuses any id that is not one a payroll saga makes.
func TestPayrollFanoutOwner(t *testing.T) {
	for id, owner := range map[string]string{
		"payroll-disburse-prun_1-pay":   "payroll-disburse-prun_1",
		"payroll-disburse-prun_1-pay2":  "payroll-disburse-prun_1",
		"payroll-disburse-prun_1-pay12": "payroll-disburse-prun_1",
		"retry-key-pay-pay":             "retry-key-pay",
	} {
		got, ok := PayrollFanoutOwner(id)
		require.True(t, ok, id)
		require.Equal(t, owner, got, id)
	}
	for _, id := range []string{"", "-pay", "saga-pay1", "saga-pay0", "saga-pay02", "saga-pay+2", "saga-pay2x", "saga", "saga-payroll"} {
		_, ok := PayrollFanoutOwner(id)
		require.False(t, ok, id)
	}
}
