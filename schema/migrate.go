package schema

import (
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/golang-migrate/migrate/v4"
	pgxmigrate "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx" for golang-migrate
)

//go:embed migrations
var migrations embed.FS

// Components in the order they migrate up (and, reversed, down). Each owns a Postgres schema of
// the same name and keeps its own version table, so each could later move to its own database.
var Components = []string{"app", "ledger", "sandbox", "gateway"}

// Version is one component's migration state.
type Version struct {
	Component string `json:"component"`
	Version   uint   `json:"version"`
	Dirty     bool   `json:"dirty"`
}

// open returns a migrator for one component on its own connection pool (the driver closes the
// pool it is given when the migrator closes).
func open(ownerDSN, component string) (*migrate.Migrate, error) {
	sub, err := fs.Sub(migrations, "migrations/"+component)
	if err != nil {
		return nil, err
	}
	src, err := iofs.New(sub, ".")
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", component, err)
	}
	db, err := sql.Open("pgx", ownerDSN)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	drv, err := pgxmigrate.WithInstance(db, &pgxmigrate.Config{
		MigrationsTable: MigrationsTable(component),
		SchemaName:      "public",
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("schema %s: connect: %w", component, err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "pgx5", drv)
	if err != nil {
		drv.Close()
		return nil, fmt.Errorf("schema %s: %w", component, err)
	}
	return m, nil
}

// each opens the migrator of every component in comps in turn and closes it after fn.
func each(ownerDSN string, comps []string, fn func(string, *migrate.Migrate) error) error {
	for _, c := range comps {
		m, err := open(ownerDSN, c)
		if err != nil {
			return err
		}
		err = fn(c, m)
		m.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// Up applies every pending migration of every component, in component order. It must run as the
// owner role.
func Up(ownerDSN string) error {
	return each(ownerDSN, Components, func(c string, m *migrate.Migrate) error {
		if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
			return fmt.Errorf("schema %s up: %w", c, err)
		}
		return nil
	})
}

// Down rolls back n migrations, newest component first, treating the components as one sequence
// (the reverse of Up). With component set, only that component steps back.
func Down(ownerDSN string, n int, component string) error {
	if n <= 0 {
		return errors.New("schema down: N must be positive")
	}
	comps := slices.Clone(Components)
	if component != "" {
		if !slices.Contains(Components, component) {
			return fmt.Errorf("schema down: unknown component %q (one of %v)", component, Components)
		}
		comps = []string{component}
	}
	slices.Reverse(comps)
	return each(ownerDSN, comps, func(c string, m *migrate.Migrate) error {
		for n > 0 {
			if _, _, err := m.Version(); errors.Is(err, migrate.ErrNilVersion) {
				return nil
			}
			if err := m.Steps(-1); err != nil {
				return fmt.Errorf("schema %s down: %w", c, err)
			}
			n--
		}
		return nil
	})
}

// DownBelow rolls component back, one migration at a time, until its version is below v (none
// applied when v is 1): what a test of a migration's data needs to reach the schema before it.
func DownBelow(ownerDSN, component string, v uint) error {
	if !slices.Contains(Components, component) {
		return fmt.Errorf("schema down: unknown component %q (one of %v)", component, Components)
	}
	return each(ownerDSN, []string{component}, func(c string, m *migrate.Migrate) error {
		for {
			now, _, err := m.Version()
			if errors.Is(err, migrate.ErrNilVersion) || (err == nil && now < v) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("schema %s version: %w", c, err)
			}
			if err := m.Steps(-1); err != nil {
				return fmt.Errorf("schema %s down: %w", c, err)
			}
		}
	})
}

// Latest is the newest migration version of each component this build embeds: the schema its
// code is written for.
func Latest() ([]Version, error) {
	var out []Version
	for _, c := range Components {
		entries, err := fs.ReadDir(migrations, "migrations/"+c)
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", c, err)
		}
		v := Version{Component: c}
		for _, e := range entries {
			num, _, ok := strings.Cut(e.Name(), "_")
			n, err := strconv.ParseUint(num, 10, 32)
			if !ok || err != nil {
				return nil, fmt.Errorf("schema %s: migration %s has no version number", c, e.Name())
			}
			v.Version = max(v.Version, uint(n))
		}
		out = append(out, v)
	}
	return out, nil
}

// MigrationsTable is the table, in schema public, that golang-migrate keeps component's version
// in (one row: version, dirty).
func MigrationsTable(component string) string { return "schema_migrations_" + component }

// Versions reports each component's current version (0 when none is applied).
func Versions(ownerDSN string) ([]Version, error) {
	var out []Version
	err := each(ownerDSN, Components, func(c string, m *migrate.Migrate) error {
		v, dirty, err := m.Version()
		if err != nil && !errors.Is(err, migrate.ErrNilVersion) {
			return fmt.Errorf("schema %s version: %w", c, err)
		}
		out = append(out, Version{Component: c, Version: v, Dirty: dirty})
		return nil
	})
	return out, err
}
