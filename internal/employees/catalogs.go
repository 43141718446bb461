package employees

import (
	"context"
	"errors"
	"slices"

	"github.com/wagerail/wagerail/internal/catalogs"
	"github.com/wagerail/wagerail/internal/platform/db"
)

// ErrNotInCatalog: an employee's employment type or payment frequency names no entry of the
// employer's catalog (unknown, deleted, or another organization's). It comes as a *CatalogError
// naming the field.
var ErrNotInCatalog = errors.New("employees: not an entry of the employer's catalog")

// CatalogError is ErrNotInCatalog for one field (employmentType or paymentFrequency).
type CatalogError struct{ Field string }

func (e *CatalogError) Error() string {
	return e.Field + " must name an entry of the employer's catalog"
}
func (e *CatalogError) Unwrap() error { return ErrNotInCatalog }

// catalogFields are the employee fields a catalog lists the values of, with their catalog.
var catalogFields = []struct {
	name    string
	catalog *catalogs.Catalog
	value   func(*Employee) *string
}{
	{"employmentType", catalogs.EmploymentTypes, func(e *Employee) *string { return &e.EmploymentType }},
	{"paymentFrequency", catalogs.PaymentFrequencies, func(e *Employee) *string { return &e.PaymentFrequency }},
}

// ResolveCatalogs holds e's employment type and payment frequency to the employer's catalogs (the
// tenant of ctx, read through q): each one set must be an entry that is not deleted, compared
// case-insensitively, and becomes the entry's own spelling, so a payroll grouping by them sees
// one name per entry. "" (none) passes. only, when given, limits the check to those fields (an
// update checks what it changes, not a value filed before the entry was deleted). Errors:
// *CatalogError (ErrNotInCatalog).
func ResolveCatalogs(ctx context.Context, q db.Querier, e *Employee, only ...string) error {
	rows := []ImportRow{{Employee: *e}}
	if err := resolveRows(ctx, q, rows, only); err != nil {
		return err
	}
	if rows[0].Err != nil {
		return rows[0].Err
	}
	*e = rows[0].Employee
	return nil
}

// ResolveImportCatalogs is ResolveCatalogs for every row of an import still without an error: a
// row whose value is no entry gets a *CatalogError as its Err. One query per catalog for the
// whole file.
func ResolveImportCatalogs(ctx context.Context, q db.Querier, rows []ImportRow) error {
	return resolveRows(ctx, q, rows, nil)
}

func resolveRows(ctx context.Context, q db.Querier, rows []ImportRow, only []string) error {
	for _, f := range catalogFields {
		if len(only) > 0 && !slices.Contains(only, f.name) {
			continue
		}
		var names []string
		seen := map[string]bool{}
		for i := range rows {
			if v := *f.value(&rows[i].Employee); rows[i].Err == nil && v != "" && !seen[v] {
				seen[v] = true
				names = append(names, v)
			}
		}
		if len(names) == 0 {
			continue
		}
		found, err := f.catalog.Resolve(ctx, q, names)
		if err != nil {
			return err
		}
		for i := range rows {
			v := f.value(&rows[i].Employee)
			if rows[i].Err != nil || *v == "" {
				continue
			}
			entry, ok := found[*v]
			if !ok {
				rows[i].Err = &CatalogError{Field: f.name}
				continue
			}
			*v = entry
		}
	}
	return nil
}
