package ewa

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Get is a placeholder until the EWA store lands (delete this file at the merge).
func Get(ctx context.Context, tx pgx.Tx, id string) (Request, error) { return Request{}, errNotBuilt }
