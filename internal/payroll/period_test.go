package payroll

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/field"
)

func TestCheckPeriod(t *testing.T) {
	for _, ok := range []string{"2000-01", "2026-11", "2100-12", "2024-02"} {
		require.NoError(t, CheckPeriod("period", ok), ok)
	}
	for _, bad := range []string{"", "1999-12", "2101-01", "2026-13", "2026-00", "2026-1", "26-11", "2026/11", "2026-11-01",
		" 2026-11", "２０２６-11", "+202-11", "2026-1\x00"} {
		err := CheckPeriod("period", bad)
		var fe *field.Error
		require.ErrorAs(t, err, &fe, "%q", bad)
		require.Equal(t, "period", fe.Field)
	}
	require.Equal(t, "2026-11", PeriodOf(time.Date(2026, 11, 30, 23, 59, 0, 0, time.UTC)))
	require.Equal(t, "2026-11", PeriodOf(time.Date(2026, 12, 1, 1, 0, 0, 0, time.FixedZone("EAT", 3*3600))), "the UTC month")
	require.Equal(t, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), PeriodStart("2026-02"))
	require.Panics(t, func() { PeriodStart("x") })
}
