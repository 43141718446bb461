package db

import (
	"fmt"
	"strings"

	"github.com/wagerail/wagerail/internal/platform/money"
)

// CountedSums is one group of a totals query: its key columns, its row count and its santim sums.
type CountedSums struct {
	Keys  []string
	Count int64
	Sums  []int64
}

// Scanner is a row as pgx (pgx.Row, pgx.CollectableRow) and database/sql (*sql.Rows) scan it.
type Scanner interface {
	Scan(dest ...any) error
}

// ScanCountedSums reads one row of a totals query written as its key columns (keys of them, text,
// not null), count(*), then sums exact numeric sums read as text (sum(x)::text; null reads as 0):
// each sum is parsed with money.ParseSum, so one past int64 is money.ErrOverflow (wrapped with the
// group's keys), never a wrapped figure nor Postgres's numeric_value_out_of_range.
func ScanCountedSums(row Scanner, keys, sums int) (CountedSums, error) {
	out := CountedSums{Keys: make([]string, keys), Sums: make([]int64, sums)}
	texts := make([]*string, sums)
	dest := make([]any, 0, keys+1+sums)
	for i := range out.Keys {
		dest = append(dest, &out.Keys[i])
	}
	dest = append(dest, &out.Count)
	for i := range texts {
		dest = append(dest, &texts[i])
	}
	if err := row.Scan(dest...); err != nil {
		return CountedSums{}, err
	}
	for i, t := range texts {
		if t == nil {
			continue
		}
		v, err := money.ParseSum(*t)
		if err != nil {
			return CountedSums{}, fmt.Errorf("%s: %w", strings.Join(out.Keys, " "), err)
		}
		out.Sums[i] = v
	}
	return out, nil
}
