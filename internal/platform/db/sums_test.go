package db

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/money"
)

// rowOf scans fixed values into the destinations, as a driver's row does (pointers of the
// destinations' types).
type rowOf []any

func (r rowOf) Scan(dest ...any) error {
	if len(dest) != len(r) {
		return errors.New("column count")
	}
	for i, d := range dest {
		switch d := d.(type) {
		case *string:
			*d = r[i].(string)
		case *int64:
			*d = r[i].(int64)
		case **string:
			if r[i] == nil {
				*d = nil
				continue
			}
			v := r[i].(string)
			*d = &v
		default:
			return errors.New("destination type")
		}
	}
	return nil
}

// TestScanCountedSums: a totals row's keys, count and sums, each sum parsed exactly (int64's edge
// included, a null as 0); one past int64 is money.ErrOverflow naming the group; a scan error is
// the scan's.
func TestScanCountedSums(t *testing.T) {
	got, err := ScanCountedSums(rowOf{"LOAN", "REMITTED", int64(3), "9223372036854775807", nil}, 2, 2)
	require.NoError(t, err)
	require.Equal(t, CountedSums{Keys: []string{"LOAN", "REMITTED"}, Count: 3, Sums: []int64{9223372036854775807, 0}}, got)

	_, err = ScanCountedSums(rowOf{"PAID", int64(2), "9223372036854775808"}, 1, 1)
	require.ErrorIs(t, err, money.ErrOverflow)
	require.ErrorContains(t, err, "PAID")
	_, err = ScanCountedSums(rowOf{"PAID", int64(2), "1.5"}, 1, 1)
	require.Error(t, err)
	require.NotErrorIs(t, err, money.ErrOverflow)
	_, err = ScanCountedSums(rowOf{"PAID", int64(2)}, 1, 1)
	require.EqualError(t, err, "column count")
}
