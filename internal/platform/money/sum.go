package money

import (
	"errors"
	"fmt"
	"strconv"
)

// ParseSum reads an exact sum of santim written as a whole number: a SQL sum taken in numeric
// (exact, never wrapped) and read as text, so that a sum past int64 is the caller's refusal
// instead of Postgres's numeric_value_out_of_range, which would abort the transaction and reach
// the caller as an internal error. ErrOverflow when the sum leaves int64; any other text is an
// error of its own (not a sum).
func ParseSum(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if ne := (*strconv.NumError)(nil); errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
		return 0, fmt.Errorf("%w: %s", ErrOverflow, s)
	}
	if err != nil {
		return 0, fmt.Errorf("money: not a whole number of santim: %q", s)
	}
	return n, nil
}

// ParseSums parses texts[i] into *into[i] (ParseSum), in order: the sums of one SQL row read as
// text. The first error is returned (ErrOverflow for a sum past int64), and the figures from it
// on are left as they were; texts and into must be as long as each other.
func ParseSums(texts []string, into ...*int64) error {
	if len(texts) != len(into) {
		return fmt.Errorf("money: %d sums for %d figures", len(texts), len(into))
	}
	for i, s := range texts {
		v, err := ParseSum(s)
		if err != nil {
			return err
		}
		*into[i] = v
	}
	return nil
}
