package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wagerail/wagerail/internal/db"
)

// openRuntimeDB opens the runtime role's pool for process who. A failure is one line saying what
// to check: pgx puts every address it tried on a line of its own.
func openRuntimeDB(ctx context.Context, who, url string, maxConns int32) (*pgxpool.Pool, error) {
	pool, err := db.Open(ctx, url, maxConns)
	if err != nil {
		return nil, fmt.Errorf("%s: %s (check --database-url / DATABASE_URL)", who, strings.Join(strings.Fields(err.Error()), " "))
	}
	return pool, nil
}
