package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/money"
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

// answerPlatformPage answers a page of a cross-tenant list: read runs on the audited
// cross-tenant path and returns up to limit+1 rows; the answer is {items, nextCursor}, the rows
// trimmed to limit and shown by toJSON, the cursor the last shown row's (cursor).
func answerPlatformPage[R, J any](s *Server, c *gin.Context, limit int, read func(ctx context.Context, tx pgx.Tx) ([]R, error),
	cursor func(R) string, toJSON func(R) J) {
	var rows []R
	err := s.asPlatform(c, func(tx pgx.Tx) error {
		var err error
		rows, err = read(c.Request.Context(), tx)
		return err
	})
	if err != nil {
		writeError(c, err)
		return
	}
	rows, next := pageOf(rows, limit, cursor)
	items := make([]J, 0, len(rows))
	for _, r := range rows {
		items = append(items, toJSON(r))
	}
	c.JSON(http.StatusOK, gin.H{"items": items, "nextCursor": next})
}

// totalsPage is the answer of a list with its filter's totals: a page of items, the next page's
// cursor (null on the last page) and the totals of every row the filter matches, by state.
type totalsPage[J, T any] struct {
	Items      []J          `json:"items"`
	NextCursor *string      `json:"nextCursor"`
	Totals     map[string]T `json:"totals"`
}

// answerTotalsPage answers a list with its filter's totals (totalsPage): rows, read with limit+1,
// trimmed to limit (pageOf, cursor naming the next page) and each shown by item; each total shown
// by total under its state.
func answerTotalsPage[R, J any, K ~string, V, T any](c *gin.Context, limit int, rows []R, totals map[K]V,
	cursor func(R) string, item func(R) J, total func(V) T) {
	rows, next := pageOf(rows, limit, cursor)
	out := totalsPage[J, T]{Items: make([]J, 0, len(rows)), NextCursor: next, Totals: make(map[string]T, len(totals))}
	for _, r := range rows {
		out.Items = append(out.Items, item(r))
	}
	for k, v := range totals {
		out.Totals[string(k)] = total(v)
	}
	c.JSON(http.StatusOK, out)
}

// bookTotalsRefusal answers a list whose sums pass int64 santim (money.ErrOverflow) as 422 code:
// the caller's filter is too wide for the figures to be carried, which is no server fault.
// Anything else passes.
func bookTotalsRefusal(err error, code string) error {
	if errors.Is(err, money.ErrOverflow) {
		return NewError(http.StatusUnprocessableEntity, code, "the filter's sums pass what a santim total can carry; narrow the filter")
	}
	return err
}

// filterParam is an optional parameter of a list's filter: a string field (dst) set from the
// query when given, after check.
type filterParam struct {
	name  string
	dst   *string
	check func(string) error
}

// idParam is an optional filter parameter that names a row (an identifier).
func idParam(name string, dst *string) filterParam {
	return filterParam{name, dst, func(v string) error { return field.Identifier(name, v, 0) }}
}

// enumParam is an optional filter parameter that is one of allowed, refused with problem otherwise.
func enumParam(name string, dst *string, problem string, allowed ...string) filterParam {
	return filterParam{name, dst, enumCheck(name, problem, allowed...)}
}

// readFilter reads a list's filter after its page: each of params given (in order: the first
// refused is the answer), then the window from/to (timeWindow).
func readFilter(q url.Values, from, to *time.Time, params ...filterParam) *Error {
	for _, p := range params {
		if !q.Has(p.name) {
			continue
		}
		if err := p.check(q.Get(p.name)); err != nil {
			return fieldError(err)
		}
		*p.dst = q.Get(p.name)
	}
	var e *Error
	*from, *to, e = timeWindow(q)
	return e
}

// prefixedCursor refuses a cursor that does not start with prefix (every row id of the list's
// table does, by its CHECK) or is the bare prefix: it is no nextCursor of this list.
func prefixedCursor(cursor, prefix string) *Error {
	if cursor != "" && (!strings.HasPrefix(cursor, prefix) || len(cursor) == len(prefix)) {
		return fieldError(&field.Error{Field: "cursor", Problem: "must be a nextCursor this list returned"})
	}
	return nil
}

// listQuery checks a list's query string: each parameter at most once, none it does not know. An
// unknown name is echoed back only when it is an identifier (never a caller's control bytes).
func listQuery(q url.Values, known map[string]bool) *Error {
	for k, v := range q {
		if !known[k] {
			if field.Identifier("parameter", k, 64) == nil {
				return fieldError(&field.Error{Field: k, Problem: "is not a parameter of this list"})
			}
			return fieldError(&field.Error{Field: "parameter", Problem: "is not a parameter of this list"})
		}
		if len(v) > 1 {
			return fieldError(&field.Error{Field: k, Problem: "must be given at most once"})
		}
	}
	return nil
}

// noQuery refuses any query string: a named parameter as listQuery names it, anything else (a
// query that does not parse as parameters) as the query.
func noQuery(c *gin.Context) *Error {
	raw := c.Request.URL.RawQuery
	if raw == "" {
		return nil
	}
	q, err := url.ParseQuery(raw)
	if err == nil && len(q) > 0 {
		return listQuery(q, nil)
	}
	return fieldError(&field.Error{Field: "query", Problem: "this route takes no query parameters"})
}

// seqListQuery is the start of every list paged by a row number: the query's names checked
// (listQuery), then its limit and its cursor (idCursor).
func seqListQuery(q url.Values, known map[string]bool) (limit int, cursor int64, e *Error) {
	if e = listQuery(q, known); e != nil {
		return 0, 0, e
	}
	if limit, _, e = pageParams(q.Get("limit"), ""); e != nil {
		return 0, 0, e
	}
	if cursor, e = idCursor(q.Get("cursor")); e != nil {
		return 0, 0, e
	}
	return limit, cursor, nil
}

// idListQuery is the start of every list paged by a row's id: the query's names checked
// (listQuery), then its limit and its cursor (pageParams: an identifier).
func idListQuery(q url.Values, known map[string]bool) (limit int, cursor string, e *Error) {
	if e = listQuery(q, known); e != nil {
		return 0, "", e
	}
	return pageParams(q.Get("limit"), q.Get("cursor"))
}

// idCursor reads a list's cursor when it is a row's number: "" (0, the start) or a positive whole
// number written plainly, as the list's own nextCursor is.
func idCursor(v string) (int64, *Error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || v != strconv.FormatInt(n, 10) {
		return 0, fieldError(&field.Error{Field: "cursor", Problem: "must be a nextCursor this list returned"})
	}
	return n, nil
}

// timeWindow reads a list's optional from and to (RFC 3339 times, from before to); zero when
// absent.
func timeWindow(q url.Values) (from, to time.Time, e *Error) {
	for _, p := range []struct {
		name string
		dst  *time.Time
	}{{"from", &from}, {"to", &to}} {
		if !q.Has(p.name) {
			continue
		}
		v := q.Get(p.name)
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil || len(v) > 64 || t.Year() < 1 || t.Year() > 9999 {
			return from, to, fieldError(&field.Error{Field: p.name, Problem: "must be an RFC 3339 time, e.g. 2026-11-21T12:00:00Z"})
		}
		*p.dst = t
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return from, to, fieldError(&field.Error{Field: "to", Problem: "must be after from"})
	}
	return from, to, nil
}

// pagedFilters reads a list's page (limit, cursor), then each of params in order, each at
// most once and checked (singleQuery: an empty value is an absent one). It has answered when ok
// is false.
func pagedFilters(c *gin.Context, params ...filterParam) (limit int, cursor string, ok bool) {
	if limit, cursor, ok = ewaPage(c); !ok {
		return
	}
	for _, p := range params {
		if *p.dst, ok = singleQuery(c, p.name, false, p.check); !ok {
			return
		}
	}
	return
}

// itemsPage is a page of a list: its items (never null) and the next page's cursor.
type itemsPage[J any] struct {
	Items      []J     `json:"items"`
	NextCursor *string `json:"nextCursor"`
}

// itemsPageOf is rows read with limit+1 as a page (pageOf, the cursor the last row's id) shown by
// toJSON.
func itemsPageOf[T, J any](rows []T, limit int, id func(T) string, toJSON func(T) J) itemsPage[J] {
	out := itemsPage[J]{Items: []J{}}
	rows, out.NextCursor = pageOf(rows, limit, id)
	for _, r := range rows {
		out.Items = append(out.Items, toJSON(r))
	}
	return out
}

// onPathRow runs move on the path's row (:id) in the tenant's transaction and answers its error
// (inTenantAudited: a refusal by a rule audited DENIED as action on target and the id). It has
// answered when ok is false.
func onPathRow[T any](s *Server, c *gin.Context, action, target string, move func(ctx context.Context, tx db.BunTx, id string) (T, error)) (T, bool) {
	id, ok := pathID(c)
	if !ok {
		var zero T
		return zero, false
	}
	return inTenantAudited(s, c, action, target, id, func(ctx context.Context, tx db.BunTx) (T, error) { return move(ctx, tx, id) })
}

// readPathRow is onPathRow of a read: it has no action, so nothing is audited.
func readPathRow[T any](s *Server, c *gin.Context, read func(ctx context.Context, tx db.BunTx, id string) (T, error)) (T, bool) {
	return onPathRow(s, c, "", "", read)
}
