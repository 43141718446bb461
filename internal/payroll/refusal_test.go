package payroll

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMachineRefusesIllegalMovesWithItsCode(t *testing.T) {
	m := &Machine{Noun: "thing", Code: "THING_INVALID_STATE", Moves: map[string]Move{
		"approved": {From: []string{"DRAFT"}, To: "APPROVED"},
		"voided":   {From: []string{"DRAFT", "APPROVED"}, To: "VOID"},
	}}
	to, err := m.Next("approved", "DRAFT")
	require.NoError(t, err)
	require.Equal(t, "APPROVED", to)
	to, err = m.Next("voided", "APPROVED")
	require.NoError(t, err)
	require.Equal(t, "VOID", to)

	_, err = m.Next("approved", "VOID")
	var r *Refusal
	require.ErrorAs(t, err, &r)
	require.Equal(t, "THING_INVALID_STATE", r.Code)
	require.Equal(t, http.StatusConflict, r.Status)
	require.Equal(t, "a thing that is VOID cannot be approved", r.Message)
	require.Equal(t, map[string]any{"status": "VOID", "allowedFrom": []string{"DRAFT"}}, r.Details)

	require.Panics(t, func() { _, _ = m.Next("posted", "DRAFT") }, "an action the machine does not know is a bug")
}
