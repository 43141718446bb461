package employees_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/employees"
	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

var now = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

type world struct {
	t    *testing.T
	d    *testkit.DB
	pool *pgxpool.Pool
	ctx  context.Context
}

func newWorld(t *testing.T) *world {
	d := testkit.NewDB(t)
	return &world{t: t, d: d, pool: d.App, ctx: context.Background()}
}

func (w *world) org() string {
	w.t.Helper()
	id := orgs.NewOrganizationID()
	require.NoError(w.t, db.InTenantTx(w.ctx, w.pool, id, func(tx pgx.Tx) error {
		_, _, err := orgs.Create(w.ctx, tx, orgs.NewOrganization{ID: id, Name: "Biz " + id, Kind: orgs.Business}, "")
		return err
	}))
	return id
}

func (w *world) in(tenant string, fn func(tx pgx.Tx) error) error {
	return db.InTenantTx(w.ctx, w.pool, tenant, fn)
}

func (w *world) user(email string) identity.User {
	w.t.Helper()
	u, err := identity.CreateUser(w.ctx, w.pool, identity.NewUser{Email: email, Name: "User"})
	require.NoError(w.t, err)
	return u
}

func sample(nationalID string) employees.Employee {
	return employees.Employee{
		FirstName: " Abebe ", LastName: "Kebede", Email: " Abebe@Example.COM ", Phone: "+251911234567",
		NationalID: nationalID, Department: "Engineering", Position: "Developer", EmploymentType: "Full time",
		PaymentFrequency: "Monthly", HireDate: time.Date(2024, 3, 1, 15, 4, 5, 0, time.FixedZone("EAT", 3*3600)),
		GrossMonthlySalarySantim: 2_500_000,
		Payout:                   employees.PayoutAccount{Partner: "sandbox", AccountNumber: "1000123456789", HolderName: "Abebe Kebede"},
	}
}

func (w *world) create(tenant string, e employees.Employee) employees.Employee {
	w.t.Helper()
	var out employees.Employee
	require.NoError(w.t, w.in(tenant, func(tx pgx.Tx) error {
		var err error
		out, err = employees.Create(w.ctx, tx, tenant, e)
		return err
	}))
	return out
}

func TestCreateReadAndNormalize(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.org()
	e := w.create(a, sample("ab-12 3456"))
	require.Regexp(t, `^emp_[0-9a-f-]{36}$`, e.ID)
	require.Equal(t, a, e.TenantID)
	require.Equal(t, "Abebe", e.FirstName)
	require.Equal(t, "Abebe Kebede", e.FullName, "defaults to first and last")
	require.Equal(t, "abebe@example.com", e.Email)
	require.Equal(t, "AB123456", e.NationalID, "upper-cased without separators")
	require.Equal(t, "****3456", e.MaskedNationalID())
	require.Equal(t, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), e.HireDate)
	require.Equal(t, employees.Active, e.Status)
	require.Equal(t, int64(2_500_000), e.GrossMonthlySalarySantim)
	require.Empty(t, e.UserID)

	require.NoError(t, w.in(a, func(tx pgx.Tx) error {
		got, err := employees.ByID(w.ctx, tx, a, e.ID)
		require.NoError(t, err)
		require.Equal(t, e, got)
		return nil
	}))

	// The bound itself is a salary; one santim more, a negative one and int64's extremes are not.
	max := sample("MAX000001")
	max.GrossMonthlySalarySantim = employees.MaxGrossMonthlySalarySantim
	require.Equal(t, employees.MaxGrossMonthlySalarySantim, w.create(a, max).GrossMonthlySalarySantim)
	zero := sample("ZERO00001")
	zero.GrossMonthlySalarySantim = 0
	w.create(a, zero)
	for _, v := range []int64{-1, employees.MaxGrossMonthlySalarySantim + 1, math.MaxInt64, math.MinInt64} {
		bad := sample("BAD000001")
		bad.GrossMonthlySalarySantim = v
		err := w.in(a, func(tx pgx.Tx) error { _, err := employees.Create(w.ctx, tx, a, bad); return err })
		require.ErrorIs(t, err, employees.ErrInvalid, "%d", v)
		var fe *field.Error
		require.ErrorAs(t, err, &fe)
		require.Equal(t, "grossMonthlySalarySantim", fe.Field)
	}
}

func TestValidateRefusals(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		mutate func(e *employees.Employee)
		field  string
	}{
		"no first name":        {func(e *employees.Employee) { e.FirstName = "  " }, "firstName"},
		"control in last name": {func(e *employees.Employee) { e.LastName = "K\x00" }, "lastName"},
		"bad e-mail":           {func(e *employees.Employee) { e.Email = "nope" }, "email"},
		"bad phone":            {func(e *employees.Employee) { e.Phone = "0911234567" }, "phone"},
		"short national id":    {func(e *employees.Employee) { e.NationalID = "12345" }, "nationalId"},
		"long national id":     {func(e *employees.Employee) { e.NationalID = "123456789012345678901234567890123" }, "nationalId"},
		"national id symbols":  {func(e *employees.Employee) { e.NationalID = "1234:5678" }, "nationalId"},
		"no national id":       {func(e *employees.Employee) { e.NationalID = "" }, "nationalId"},
		"long department":      {func(e *employees.Employee) { e.Department = string(make([]byte, 129)) }, "department"},
		"no hire date":         {func(e *employees.Employee) { e.HireDate = time.Time{} }, "hireDate"},
		"hire date year 1":     {func(e *employees.Employee) { e.HireDate = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC) }, "hireDate"},
		"bad status":           {func(e *employees.Employee) { e.Status = "FIRED" }, "status"},
		"no partner":           {func(e *employees.Employee) { e.Payout.Partner = "" }, "payoutAccount.partner"},
		"account with space":   {func(e *employees.Employee) { e.Payout.AccountNumber = "100 200" }, "payoutAccount.accountNumber"},
		"account too long":     {func(e *employees.Employee) { e.Payout.AccountNumber = fmt.Sprintf("%065d", 1) }, "payoutAccount.accountNumber"},
		"no holder":            {func(e *employees.Employee) { e.Payout.HolderName = "" }, "payoutAccount.holderName"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			e := sample("AB123456")
			e.Status = employees.Active
			c.mutate(&e)
			e.Normalize()
			err := e.Validate()
			var fe *field.Error
			require.ErrorAs(t, err, &fe)
			require.Equal(t, c.field, fe.Field)
		})
	}
}

func TestStatusTransitions(t *testing.T) {
	t.Parallel()
	all := []employees.Status{employees.Active, employees.OnLeave, employees.Suspended, employees.Terminated}
	for _, from := range all {
		for _, to := range all {
			want := from != employees.Terminated || to == employees.Active || to == employees.Terminated
			require.Equal(t, want, from.CanBecome(to), "%s → %s", from, to)
		}
		require.False(t, from.CanBecome("FIRED"))
	}
}

func TestDuplicateNationalIDAndSoftDelete(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a, b := w.org(), w.org()
	first := w.create(a, sample("ET0000001"))
	err := w.in(a, func(tx pgx.Tx) error { _, err := employees.Create(w.ctx, tx, a, sample("et-0000001")); return err })
	require.ErrorIs(t, err, employees.ErrDuplicateNationalID, "the same id in another spelling")
	// Another business may employ the same person.
	w.create(b, sample("ET0000001"))

	// Update into a taken national id is refused too.
	second := w.create(a, sample("ET0000002"))
	err = w.in(a, func(tx pgx.Tx) error {
		_, err := employees.Update(w.ctx, tx, a, second.ID, func(e *employees.Employee) error { e.NationalID = "ET0000001"; return nil })
		return err
	})
	require.ErrorIs(t, err, employees.ErrDuplicateNationalID)

	// Deleted: gone from reads and lists and counts, the national id free again, a second delete 404.
	var counts employees.Counts
	require.NoError(t, w.in(a, func(tx pgx.Tx) error {
		_, err := employees.SoftDelete(w.ctx, tx, a, first.ID, now)
		require.NoError(t, err)
		_, err = employees.ByID(w.ctx, tx, a, first.ID)
		require.ErrorIs(t, err, employees.ErrNotFound)
		_, err = employees.SoftDelete(w.ctx, tx, a, first.ID, now)
		require.ErrorIs(t, err, employees.ErrNotFound)
		_, err = employees.Update(w.ctx, tx, a, first.ID, func(*employees.Employee) error { return nil })
		require.ErrorIs(t, err, employees.ErrNotFound)
		list, err := employees.List(w.ctx, tx, a, employees.Filter{})
		require.NoError(t, err)
		require.Len(t, list, 1)
		counts, err = employees.Count(w.ctx, tx, a)
		return err
	}))
	require.Equal(t, employees.Counts{Total: 1, Active: 1, ByStatus: map[employees.Status]int64{
		employees.Active: 1, employees.OnLeave: 0, employees.Suspended: 0, employees.Terminated: 0}}, counts)
	again := w.create(a, sample("ET0000001"))
	require.NotEqual(t, first.ID, again.ID)

	// The runtime role cannot delete a row for real, even in its own tenant.
	err = w.in(a, func(tx pgx.Tx) error {
		_, err := tx.Exec(w.ctx, `DELETE FROM app.employees WHERE id = $1`, again.ID)
		return err
	})
	require.True(t, db.IsCode(err, pgerrcode.InsufficientPrivilege), "want insufficient_privilege, got %v", err)
}

func TestDatabaseHoldsTheSalaryBound(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.org()
	e := w.create(a, sample("ET1000001"))
	for _, v := range []string{"-1", "1000000000001", "9223372036854775807"} {
		err := w.in(a, func(tx pgx.Tx) error {
			_, err := tx.Exec(w.ctx, `UPDATE app.employees SET gross_monthly_salary_santim = $2::numeric WHERE id = $1`, e.ID, v)
			return err
		})
		require.True(t, db.IsCode(err, pgerrcode.CheckViolation), "%s: want check_violation, got %v", v, err)
	}
}

func TestUpdateAndStatus(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.org()
	e := w.create(a, sample("ET2000001"))
	require.NoError(t, w.in(a, func(tx pgx.Tx) error {
		got, err := employees.Update(w.ctx, tx, a, e.ID, func(x *employees.Employee) error {
			x.ID, x.TenantID, x.UserID = "emp_other", "org_other", "usr_other" // ignored
			x.GrossMonthlySalarySantim = 3_000_000
			x.Department = ""
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, e.ID, got.ID)
		require.Equal(t, a, got.TenantID)
		require.Empty(t, got.UserID)
		require.Equal(t, int64(3_000_000), got.GrossMonthlySalarySantim)
		require.Empty(t, got.Department)

		boom := errors.New("boom")
		_, err = employees.Update(w.ctx, tx, a, e.ID, func(*employees.Employee) error { return boom })
		require.ErrorIs(t, err, boom)

		_, from, changed, err := employees.SetStatus(w.ctx, tx, a, e.ID, employees.Active)
		require.NoError(t, err)
		require.False(t, changed, "same status: no change")
		require.Equal(t, employees.Active, from)
		got, from, changed, err = employees.SetStatus(w.ctx, tx, a, e.ID, employees.Terminated)
		require.NoError(t, err)
		require.True(t, changed)
		require.Equal(t, employees.Active, from)
		require.Equal(t, employees.Terminated, got.Status)
		_, _, _, err = employees.SetStatus(w.ctx, tx, a, e.ID, employees.OnLeave)
		require.ErrorIs(t, err, employees.ErrInvalidTransition)
		_, _, _, err = employees.SetStatus(w.ctx, tx, a, e.ID, "FIRED")
		require.ErrorIs(t, err, employees.ErrInvalidTransition)
		got, _, _, err = employees.SetStatus(w.ctx, tx, a, e.ID, employees.Active)
		require.NoError(t, err, "re-hire")
		require.Equal(t, employees.Active, got.Status)
		n, err := employees.CountActive(w.ctx, tx, a)
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		return nil
	}))
}

func TestListFiltersAndPages(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a, b := w.org(), w.org()
	var ids []string
	for i := 0; i < 7; i++ {
		e := sample(fmt.Sprintf("LIST%05d", i))
		e.FirstName = fmt.Sprintf("Name%d", i)
		e.FullName = ""
		if i%2 == 0 {
			e.Department = "Sales"
		}
		if i == 3 {
			e.LastName = "100%_Tesfaye"
		}
		ids = append(ids, w.create(a, e).ID)
	}
	w.create(b, sample("LIST00000"))
	require.NoError(t, w.in(a, func(tx pgx.Tx) error {
		_, _, _, err := employees.SetStatus(w.ctx, tx, a, ids[1], employees.Suspended)
		return err
	}))
	list := func(f employees.Filter) []string {
		var out []string
		require.NoError(t, w.in(a, func(tx pgx.Tx) error {
			es, err := employees.List(w.ctx, tx, a, f)
			for _, e := range es {
				require.Equal(t, a, e.TenantID)
				out = append(out, e.ID)
			}
			return err
		}))
		return out
	}
	// Pages of 3 by cursor: every row once, in id order.
	var paged []string
	after := ""
	for {
		page := list(employees.Filter{Limit: 3, After: after})
		paged = append(paged, page...)
		if len(page) < 3 {
			break
		}
		after = page[len(page)-1]
	}
	require.Equal(t, ids, paged)
	require.Len(t, list(employees.Filter{Limit: 1000}), 7, "an out-of-range limit means the default")
	require.Equal(t, []string{ids[1]}, list(employees.Filter{Status: employees.Suspended}))
	require.Equal(t, []string{ids[0], ids[2], ids[4], ids[6]}, list(employees.Filter{Department: "sALES"}))
	require.Equal(t, []string{ids[4], ids[6]}, list(employees.Filter{Department: "Sales", Status: employees.Active, After: ids[3]}))
	require.Equal(t, []string{ids[5]}, list(employees.Filter{Query: "name5"}))
	require.Equal(t, []string{ids[3]}, list(employees.Filter{Query: "100%_"}), "LIKE wildcards are literal")
	require.Equal(t, []string{ids[3]}, list(employees.Filter{Query: "_"}))
	require.Empty(t, list(employees.Filter{Query: "N%5"}), "as a wildcard it would match Name5")
	require.Empty(t, list(employees.Filter{Query: `Name\`}))
}

// TestRowLevelSecurity: a tenant sees only its employees; a user (and no tenant) sees only the
// rows linked to them, in every tenant; a tenant's transaction that also names the user does not
// widen to the user's rows elsewhere.
func TestRowLevelSecurity(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a, b := w.org(), w.org()
	u := w.user("linked@example.com")
	ea := w.create(a, sample("RLS000001"))
	eb := w.create(b, sample("RLS000002"))
	w.create(b, sample("RLS000003"))
	for _, x := range []struct{ tenant, id string }{{a, ea.ID}, {b, eb.ID}} {
		require.NoError(t, w.in(x.tenant, func(tx pgx.Tx) error {
			_, err := tx.Exec(w.ctx, `UPDATE app.employees SET user_id = $2 WHERE id = $1`, x.id, u.ID)
			return err
		}))
	}
	require.NoError(t, w.in(a, func(tx pgx.Tx) error {
		var n int
		require.NoError(t, tx.QueryRow(w.ctx, `SELECT count(*) FROM app.employees`).Scan(&n))
		require.Equal(t, 1, n)
		_, err := employees.ByID(w.ctx, tx, b, eb.ID)
		require.ErrorIs(t, err, employees.ErrNotFound, "b's row through a's transaction")
		return nil
	}))
	userCtx := tenancy.WithActor(w.ctx, u.ID)
	require.NoError(t, tenancy.InUserTx(userCtx, w.pool, func(tx pgx.Tx) error {
		var n int
		require.NoError(t, tx.QueryRow(w.ctx, `SELECT count(*) FROM app.employees`).Scan(&n))
		require.Equal(t, 2, n, "the user's two linked rows, not b's other employee")
		linked, err := employees.LinkedTo(w.ctx, tx, u.ID)
		require.NoError(t, err)
		require.Len(t, linked, 2)
		// Read-only: the user scope cannot change its own rows.
		tag, err := tx.Exec(w.ctx, `UPDATE app.employees SET gross_monthly_salary_santim = 1 WHERE id = $1`, ea.ID)
		require.NoError(t, err)
		require.Zero(t, tag.RowsAffected())
		return nil
	}))
	require.NoError(t, tenancy.InTx(tenancy.WithTenant(userCtx, a), w.pool, func(tx pgx.Tx) error {
		var n int
		require.NoError(t, tx.QueryRow(w.ctx, `SELECT count(*) FROM app.employees`).Scan(&n))
		require.Equal(t, 1, n, "tenant a's transaction does not show the user's row in b")
		return nil
	}))
}

func TestLinkFlow(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.org()
	e := w.create(a, sample("LNK000001"))
	issue := func(ch employees.Channel, at time.Time) (employees.LinkInvitation, error) {
		var inv employees.LinkInvitation
		err := w.in(a, func(tx pgx.Tx) error {
			var err error
			inv, err = employees.IssueLink(w.ctx, tx, a, e.ID, ch, at)
			return err
		})
		return inv, err
	}
	accept := func(token string, u identity.User, at time.Time) (employees.Employee, error) {
		tenant, ok := employees.LinkTenant(token)
		require.True(t, ok)
		require.Equal(t, a, tenant)
		var out employees.Employee
		err := w.in(tenant, func(tx pgx.Tx) error {
			var err error
			out, _, err = employees.AcceptLink(w.ctx, tx, tenant, token, u, at)
			return err
		})
		return out, err
	}

	first, err := issue(employees.ByEmail, now)
	require.NoError(t, err)
	require.Equal(t, "abebe@example.com", first.To)
	require.Equal(t, now.Add(employees.LinkTTL), first.ExpiresAt)
	second, err := issue(employees.ByEmail, now)
	require.NoError(t, err)

	stranger := w.user("stranger@example.com")
	owner := w.user("ABEBE@example.com")
	_, err = accept(first.Token, owner, now)
	require.ErrorIs(t, err, employees.ErrInvalidLink, "replaced by the second")
	_, err = accept(second.Token, stranger, now)
	require.ErrorIs(t, err, employees.ErrLinkMismatch)
	_, err = accept(second.Token, owner, now.Add(employees.LinkTTL))
	require.ErrorIs(t, err, employees.ErrInvalidLink, "expired")
	got, err := accept(second.Token, owner, now.Add(time.Hour))
	require.NoError(t, err, "the refusals rolled back: the token still works")
	require.Equal(t, owner.ID, got.UserID)
	_, err = accept(second.Token, owner, now.Add(time.Hour))
	require.ErrorIs(t, err, employees.ErrInvalidLink, "single use")
	_, err = issue(employees.ByEmail, now)
	require.ErrorIs(t, err, employees.ErrAlreadyLinked)

	// A user is one employee per business.
	other := sample("LNK000002")
	other.Email = "abebe@example.com"
	e = w.create(a, other)
	inv, err := issue(employees.ByEmail, now)
	require.NoError(t, err)
	_, err = accept(inv.Token, owner, now)
	require.ErrorIs(t, err, employees.ErrUserAlreadyLinked)

	// By phone: the user's phone must be verified and the employee's.
	other = sample("LNK000003")
	other.Email = ""
	other.Phone = "+251922000001"
	e = w.create(a, other)
	_, err = issue(employees.ByEmail, now)
	require.ErrorIs(t, err, employees.ErrNoContact)
	inv, err = issue(employees.ByPhone, now)
	require.NoError(t, err)
	require.Equal(t, "+251922000001", inv.To)
	texted := w.user("texted@example.com")
	_, err = accept(inv.Token, texted, now)
	require.ErrorIs(t, err, employees.ErrLinkMismatch, "no verified phone")
	require.NoError(t, identity.SetVerifiedPhone(w.ctx, w.pool, texted.ID, "+251922000001", now))
	texted, err = identity.UserByID(w.ctx, w.pool, texted.ID)
	require.NoError(t, err)
	// The employee's phone changes after the text went out: the link went to someone else.
	require.NoError(t, w.in(a, func(tx pgx.Tx) error {
		_, err := employees.Update(w.ctx, tx, a, e.ID, func(x *employees.Employee) error { x.Phone = "+251922000002"; return nil })
		return err
	}))
	_, err = accept(inv.Token, texted, now)
	require.ErrorIs(t, err, employees.ErrInvalidLink)
	require.NoError(t, w.in(a, func(tx pgx.Tx) error {
		_, err := employees.Update(w.ctx, tx, a, e.ID, func(x *employees.Employee) error { x.Phone = "+251922000001"; return nil })
		return err
	}))
	got, err = accept(inv.Token, texted, now)
	require.NoError(t, err)
	require.Equal(t, texted.ID, got.UserID)

	// A deleted employee's pending link dies with it.
	other = sample("LNK000004")
	other.Email = "deleted@example.com"
	e = w.create(a, other)
	inv, err = issue(employees.ByEmail, now)
	require.NoError(t, err)
	require.NoError(t, w.in(a, func(tx pgx.Tx) error { _, err := employees.SoftDelete(w.ctx, tx, a, e.ID, now); return err }))
	_, err = accept(inv.Token, w.user("deleted@example.com"), now)
	require.ErrorIs(t, err, employees.ErrInvalidLink)
}

func TestLinkTenantShape(t *testing.T) {
	t.Parallel()
	tok := identity.NewToken()
	for _, c := range []struct {
		in   string
		ok   bool
		want string
	}{
		{"org_1." + tok, true, "org_1"},
		{"org.with.dots." + tok, true, "org.with.dots"},
		{tok, false, ""},
		{"." + tok, false, ""},
		{"org_1." + tok[:42], false, ""},
		{"org_1." + tok[:42] + "=", false, ""},
		{"org 1." + tok, false, ""},
		{"", false, ""},
	} {
		got, ok := employees.LinkTenant(c.in)
		require.Equal(t, c.ok, ok, c.in)
		require.Equal(t, c.want, got, c.in)
	}
}

// FuzzValidate: whatever the fields, Normalize and Validate never panic, and an employee they
// accept is one the database stores.
func FuzzValidate(f *testing.F) {
	f.Add("Abebe", "Kebede", "", "a@b.co", "+251911234567", "AB123456", "Sales", "sandbox", "100200", "Abebe", int64(1), 2024)
	f.Add("\x00", "", "\xff", "@", "+0", "-", "", "", "", "", int64(-1), 0)
	f.Fuzz(func(t *testing.T, first, last, full, email, phone, nid, dept, partner, account, holder string, salary int64, year int) {
		e := employees.Employee{FirstName: first, LastName: last, FullName: full, Email: email, Phone: phone, NationalID: nid,
			Department: dept, HireDate: time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC), Status: employees.Active,
			GrossMonthlySalarySantim: salary, Payout: employees.PayoutAccount{Partner: partner, AccountNumber: account, HolderName: holder}}
		e.Normalize()
		if err := e.Validate(); err != nil {
			var fe *field.Error
			require.ErrorAs(t, err, &fe)
			return
		}
		require.GreaterOrEqual(t, e.GrossMonthlySalarySantim, int64(0))
		require.LessOrEqual(t, e.GrossMonthlySalarySantim, employees.MaxGrossMonthlySalarySantim)
		require.Regexp(t, `^[A-Z0-9]{6,32}$`, e.NationalID)
	})
}

// Who set an employee's payout account is kept for the payroll retry's four-eyes rule: the
// creator, then whoever changes the account; other changes leave it as it was.
func TestPayoutChangeRecordsWhoSetIt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.org()
	as := func(actor string) context.Context {
		return tenancy.With(w.ctx, tenancy.Scope{TenantID: a, Actor: actor})
	}
	var e employees.Employee
	setBy := func() string {
		var by *string
		require.NoError(t, w.in(a, func(tx pgx.Tx) error {
			return tx.QueryRow(w.ctx, `SELECT payout_changed_by FROM app.employees WHERE id = $1`, e.ID).Scan(&by)
		}))
		if by == nil {
			return ""
		}
		return *by
	}
	update := func(actor string, change func(*employees.Employee)) {
		require.NoError(t, w.in(a, func(tx pgx.Tx) error {
			_, err := employees.Update(as(actor), tx, a, e.ID, func(x *employees.Employee) error { change(x); return nil })
			return err
		}))
	}
	require.NoError(t, w.in(a, func(tx pgx.Tx) error {
		var err error
		e, err = employees.Create(as("usr_maker"), tx, a, sample("ET3000001"))
		return err
	}))
	require.Equal(t, "usr_maker", setBy())
	update("usr_other", func(x *employees.Employee) { x.Department = "Finance" })
	require.Equal(t, "usr_maker", setBy(), "another field changed")
	update("usr_other", func(x *employees.Employee) { x.Payout.HolderName = "Abebe K. Kebede" })
	require.Equal(t, "usr_other", setBy(), "the holder changed")
	update("usr_maker", func(x *employees.Employee) { x.Payout.AccountNumber = "2000123456789" })
	require.Equal(t, "usr_maker", setBy(), "the account changed")
}
