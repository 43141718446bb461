package db

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestWhere(t *testing.T) {
	var w Where
	require.Equal(t, "true", w.String())
	require.Equal(t, "$1", w.Next())
	at := time.Unix(0, 0)
	w.Add("fi_id = ?", "fi_1")
	w.AddIf(false, "status = ?", "")
	w.AddIf(true, "(a = ? OR b = ?)", "x")
	w.AddIf(true, "at >= ?", at)
	require.Equal(t, "fi_id = $1 AND (a = $2 OR b = $2) AND at >= $3", w.String())
	require.Equal(t, []any{"fi_1", "x", at}, w.Args)
	require.Equal(t, "$4", w.Next())
}
