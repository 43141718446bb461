package refusal

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTable(t *testing.T) {
	table := Table{"X_NOT_FOUND": {Status: http.StatusNotFound, Message: "no such x"}}

	r, ok := table.Of("X_NOT_FOUND")
	require.True(t, ok)
	require.Equal(t, Refusal{Code: "X_NOT_FOUND", Status: http.StatusNotFound, Message: "no such x"}, r)
	_, ok = table.Of("Y")
	require.False(t, ok)

	err := table.Error("X_NOT_FOUND")
	require.Equal(t, "X_NOT_FOUND: no such x", err.Error())
	require.Equal(t, "X_NOT_FOUND", table.CodeOf(fmt.Errorf("wrapped: %w", err)))
	require.Empty(t, table.CodeOf(&Refusal{Code: "OTHER_DOMAIN", Status: http.StatusConflict}), "a code of another table")
	require.Empty(t, table.CodeOf(errors.New("connection reset")))
	require.Empty(t, table.CodeOf(nil))
	require.Panics(t, func() { table.Error("UNKNOWN") }, "a code without a row is a programming error")

	// Each call answers its own value: a caller that adds details changes no one else's.
	a, b := table.Error("X_NOT_FOUND"), table.Error("X_NOT_FOUND")
	a.Details = map[string]any{"k": 1}
	require.Nil(t, b.Details)
}
