package db

import (
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5"
)

// Page is a list's window in a store: at most Limit rows with ids after After ("" the start). A
// handler asks for one row more than it shows, to learn whether another page follows.
type Page struct {
	After string
	Limit int
}

// MaxPageRows bounds Page.Limit: the API's largest page and the row that tells of a next one.
const MaxPageRows = 101

// Rows is the query's LIMIT: Limit, or MaxPageRows when Limit is out of 1..MaxPageRows.
func (p Page) Rows() int64 {
	if p.Limit < 1 || p.Limit > MaxPageRows {
		return MaxPageRows
	}
	return int64(p.Limit)
}

// NotFoundOr is nf when err says a query found no row (bun's sql.ErrNoRows or pgx's ErrNoRows),
// err otherwise (nil included).
func NotFoundOr(err, nf error) error {
	if errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows) {
		return nf
	}
	return err
}
