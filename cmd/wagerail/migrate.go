package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/wagerail/wagerail/internal/platform/cli"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/schema"
)

func migrateCommand() *cli.Command {
	var ownerURL, component string
	c := cli.New("migrate", "wagerail migrate up | down N | version [flags]",
		"Apply, roll back or show the embedded SQL migrations (components: app, ledger, sandbox, gateway).\nRuns as the owner role; the runtime role never runs DDL.")
	c.String(&ownerURL, "database-owner-url", "DATABASE_OWNER_URL", "", "Postgres URL of the owner (migration) role (default: the private Postgres of `make run` in this directory)")
	c.String(&component, "component", "", "", "down only: roll back this component alone")
	c.Run = func(ctx context.Context, args []string) error {
		url, err := resolveDatabaseURL("migrate", ownerURL, db.OwnerRole)
		if err != nil {
			return err
		}
		if len(args) == 0 {
			return errors.New("migrate: say up, down N or version")
		}
		switch args[0] {
		case "up":
			if err := schema.Up(url); err != nil {
				return err
			}
		case "down":
			if len(args) != 2 {
				return errors.New("migrate down: give the number of migrations to roll back, e.g. migrate down 1")
			}
			n, err := strconv.Atoi(args[1])
			if err != nil || n <= 0 {
				return fmt.Errorf("migrate down: %q is not a positive number", args[1])
			}
			if err := schema.Down(url, n, component); err != nil {
				return err
			}
		case "version":
		default:
			return fmt.Errorf("migrate: unknown action %q (up, down N, version)", args[0])
		}
		vs, err := schema.Versions(url)
		if err != nil {
			return err
		}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(vs)
	}
	return c
}
