package employees_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/catalogs"
	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// TestTerminationDateAndTIN: what pay needs from an employee. A termination date is a date on or
// after the hire date, stored and read back; a TIN is 10 digits, shown masked, unique among the
// business's live employees (free again once its holder is deleted); a re-hire clears the
// termination date. The database refuses both rules' breaks from a writer that skips the store.
func TestTerminationDateAndTIN(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a, b := w.org(), w.org()
	leaver := sample("TIN000001")
	leaver.TerminationDate = time.Date(2026, 11, 15, 18, 0, 0, 0, time.FixedZone("EAT", 3*3600))
	leaver.TIN = "0012345678"
	e := w.create(a, leaver)
	require.Equal(t, date(2026, 11, 15), e.TerminationDate, "a calendar date")
	require.Equal(t, "0012345678", e.TIN)
	require.Equal(t, "****5678", e.MaskedTIN())
	require.Equal(t, employees.Active, e.Status, "a future last day is a notice: the status is the employer's")
	plain := w.create(a, sample("TIN000002"))
	require.True(t, plain.TerminationDate.IsZero())
	require.Empty(t, plain.MaskedTIN())

	// The same TIN: refused in the business, on create and update; another business may have it.
	dup := sample("TIN000003")
	dup.TIN = "0012345678"
	err := w.in(a, func(tx pgx.Tx) error { _, err := employees.Create(w.ctx, tx, a, dup); return err })
	require.ErrorIs(t, err, employees.ErrDuplicateTIN)
	err = w.in(a, func(tx pgx.Tx) error {
		_, err := employees.Update(w.ctx, tx, a, plain.ID, func(x *employees.Employee) error { x.TIN = "0012345678"; return nil })
		return err
	})
	require.ErrorIs(t, err, employees.ErrDuplicateTIN)
	w.create(b, dup)

	// The rules, before the database is touched.
	for _, tc := range []struct {
		name   string
		mutate func(*employees.Employee)
		field  string
	}{
		{"left before hired", func(x *employees.Employee) { x.TerminationDate = x.HireDate.AddDate(0, 0, -1) }, "terminationDate"},
		{"left in year 1", func(x *employees.Employee) { x.TerminationDate = date(1, 1, 2) }, "terminationDate"},
		{"left after 2200", func(x *employees.Employee) { x.TerminationDate = date(2201, 1, 1) }, "terminationDate"},
		{"TIN of 9 digits", func(x *employees.Employee) { x.TIN = "123456789" }, "tin"},
		{"TIN of 11 digits", func(x *employees.Employee) { x.TIN = "12345678901" }, "tin"},
		{"TIN with a letter", func(x *employees.Employee) { x.TIN = "12345678A0" }, "tin"},
		{"TIN with a space", func(x *employees.Employee) { x.TIN = "12345 6789" }, "tin"},
		{"TIN in Arabic-Indic digits", func(x *employees.Employee) { x.TIN = "١٢٣٤٥٦٧٨٩٠" }, "tin"},
	} {
		err := w.in(a, func(tx pgx.Tx) error {
			_, err := employees.Update(w.ctx, tx, a, plain.ID, func(x *employees.Employee) error { tc.mutate(x); return nil })
			return err
		})
		require.ErrorIs(t, err, employees.ErrInvalid, tc.name)
		var fe *field.Error
		require.ErrorAs(t, err, &fe, tc.name)
		require.Equal(t, tc.field, fe.Field, tc.name)
	}
	// Moving the hire date past the last day is the same refusal, named on the termination date.
	err = w.in(a, func(tx pgx.Tx) error {
		_, err := employees.Update(w.ctx, tx, a, e.ID, func(x *employees.Employee) error { x.HireDate = date(2026, 11, 16); return nil })
		return err
	})
	require.ErrorIs(t, err, employees.ErrInvalid)
	// The last day may be the first: a one-day employment.
	require.NoError(t, w.in(a, func(tx pgx.Tx) error {
		got, err := employees.Update(w.ctx, tx, a, plain.ID, func(x *employees.Employee) error { x.TerminationDate = x.HireDate; return nil })
		require.Equal(t, got.HireDate, got.TerminationDate)
		return err
	}))

	// The database says the same to a writer that skips the store.
	for _, q := range []string{
		`UPDATE app.employees SET termination_date = hire_date - 1 WHERE id = $1`,
		`UPDATE app.employees SET tin = '123456789' WHERE id = $1`,
		`UPDATE app.employees SET tin = '12345678901' WHERE id = $1`,
		`UPDATE app.employees SET tin = '' WHERE id = $1`,
	} {
		err := w.in(a, func(tx pgx.Tx) error { _, err := tx.Exec(w.ctx, q, plain.ID); return err })
		require.True(t, db.IsCode(err, pgerrcode.CheckViolation), "%s: %v", q, err)
	}

	// Terminated and re-hired: the old last day goes, or the next payroll would pay nothing.
	require.NoError(t, w.in(a, func(tx pgx.Tx) error {
		got, _, _, err := employees.SetStatus(w.ctx, tx, a, e.ID, employees.Terminated)
		require.NoError(t, err)
		require.Equal(t, date(2026, 11, 15), got.TerminationDate, "terminating keeps the date")
		got, _, _, err = employees.SetStatus(w.ctx, tx, a, e.ID, employees.Active)
		require.True(t, got.TerminationDate.IsZero(), "re-hired")
		require.Equal(t, "0012345678", got.TIN)
		return err
	}))

	// A deleted employee's TIN is free again.
	require.NoError(t, w.in(a, func(tx pgx.Tx) error { _, err := employees.SoftDelete(w.ctx, tx, a, e.ID, now); return err }))
	require.Equal(t, "0012345678", w.create(a, dup).TIN)
}

// TestPayCadence: an employee's pay cadence is the cadence of the payment frequency entry their
// paymentFrequency names (in any case), MONTHLY without one, and stays the deleted entry's while
// the employee still names it; the employee's own read (user scope, no tenant) sees it too.
func TestPayCadence(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.org()
	u := w.user("cadence@example.com")
	tctx := tenancy.WithActor(tenancy.WithTenant(w.ctx, a), u.ID)
	var weekly catalogs.Entry
	require.NoError(t, tenancy.InTx(tctx, w.pool, func(tx pgx.Tx) error {
		var err error
		weekly, err = catalogs.PaymentFrequencies.Create(tctx, tx, catalogs.EntryInput{Name: "Weekly", Cadence: catalogs.Weekly}, now)
		return err
	}))
	onWeekly := sample("CAD000001")
	onWeekly.PaymentFrequency = "weekly"
	ew := w.create(a, onWeekly)
	require.Equal(t, catalogs.Weekly, ew.PayCadence)
	none := sample("CAD000002")
	none.PaymentFrequency = ""
	require.Equal(t, catalogs.Monthly, w.create(a, none).PayCadence, "no payment frequency is monthly")
	require.Equal(t, catalogs.Monthly, w.create(a, sample("CAD000003")).PayCadence, "a name with no entry (filed before the catalogs)")

	require.NoError(t, tenancy.InTx(tctx, w.pool, func(tx pgx.Tx) error {
		_, err := catalogs.PaymentFrequencies.Delete(tctx, tx, weekly.ID, now)
		return err
	}))
	require.NoError(t, w.in(a, func(tx pgx.Tx) error {
		got, err := employees.ByID(w.ctx, tx, a, ew.ID)
		require.Equal(t, catalogs.Weekly, got.PayCadence, "paid as the deleted entry said while the employee names it")
		if err != nil {
			return err
		}
		_, err = tx.Exec(w.ctx, `UPDATE app.employees SET user_id = $2 WHERE id = $1`, ew.ID, u.ID)
		return err
	}))
	// A new entry of that name decides from now on.
	require.NoError(t, tenancy.InTx(tctx, w.pool, func(tx pgx.Tx) error {
		_, err := catalogs.PaymentFrequencies.Create(tctx, tx, catalogs.EntryInput{Name: "Weekly", Cadence: catalogs.Biweekly}, now)
		return err
	}))
	require.NoError(t, tenancy.InUserTx(tenancy.WithActor(context.Background(), u.ID), w.pool, func(tx pgx.Tx) error {
		linked, err := employees.LinkedTo(w.ctx, tx, u.ID)
		require.NoError(t, err)
		require.Len(t, linked, 1)
		require.Equal(t, catalogs.Biweekly, linked[0].PayCadence, "the employee's own read sees their employer's entry")
		var n int
		require.NoError(t, tx.QueryRow(w.ctx, `SELECT count(*) FROM app.payment_frequencies`).Scan(&n))
		require.Equal(t, 2, n, "their employer's entries only, read-only")
		return nil
	}))
	require.NoError(t, tenancy.InUserTx(tenancy.WithActor(context.Background(), "usr_stranger"), w.pool, func(tx pgx.Tx) error {
		var n int
		require.NoError(t, tx.QueryRow(w.ctx, `SELECT count(*) FROM app.payment_frequencies`).Scan(&n))
		require.Zero(t, n, "a user who is nobody's employee sees no entry")
		return nil
	}))
}
