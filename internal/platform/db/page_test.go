package db_test

import (
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"

	"github.com/wagerail/wagerail/internal/platform/db"
)

func TestPageRowsBoundsTheLimit(t *testing.T) {
	for _, c := range []struct {
		limit int
		want  int64
	}{{1, 1}, {21, 21}, {db.MaxPageRows, db.MaxPageRows}, {0, db.MaxPageRows}, {-1, db.MaxPageRows},
		{db.MaxPageRows + 1, db.MaxPageRows}, {int(^uint(0) >> 1), db.MaxPageRows}} {
		assert.Equal(t, c.want, db.Page{Limit: c.limit}.Rows(), "limit %d", c.limit)
	}
}

func TestNotFoundOrMapsBothNoRowErrors(t *testing.T) {
	nf := errors.New("not found")
	other := errors.New("connection reset")
	assert.Same(t, nf, db.NotFoundOr(sql.ErrNoRows, nf))
	assert.Same(t, nf, db.NotFoundOr(pgx.ErrNoRows, nf))
	assert.Same(t, nf, db.NotFoundOr(fmt.Errorf("load: %w", pgx.ErrNoRows), nf))
	assert.Same(t, other, db.NotFoundOr(other, nf))
	assert.NoError(t, db.NotFoundOr(nil, nf))
}
