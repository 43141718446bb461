package api

import (
	"strconv"

	"github.com/wagerail/wagerail/internal/platform/field"
)

// Lists page by id: a page asks for limit (1 to maxPage) rows after cursor (the previous page's
// last id); the store is asked for limit+1 so the answer knows whether another page follows.
const (
	defaultPage = 50
	maxPage     = 100
)

// parseLimit reads a limit query value: a whole number from 1 to maxPage, in any spelling the
// document's integer allows ("05" and "+5" are 5), as its validator reads it.
func parseLimit(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxPage {
		return 0, &field.Error{Field: "limit", Problem: "must be a whole number from 1 to 100"}
	}
	return n, nil
}

// pageParams reads limit ("" is defaultPage) and cursor ("" is the start; else an id).
func pageParams(limitRaw, cursor string) (int, string, *Error) {
	limit := defaultPage
	if limitRaw != "" {
		n, err := parseLimit(limitRaw)
		if err != nil {
			return 0, "", fieldError(err)
		}
		limit = n
	}
	if cursor != "" {
		if err := field.Identifier("cursor", cursor, 0); err != nil {
			return 0, "", fieldError(err)
		}
	}
	return limit, cursor, nil
}

// pageOf trims rows read with limit+1 to limit and names the next page's cursor (the last row's
// id) when there is one.
func pageOf[T any](rows []T, limit int, id func(T) string) ([]T, *string) {
	if len(rows) <= limit {
		return rows, nil
	}
	rows = rows[:limit]
	next := id(rows[limit-1])
	return rows, &next
}
