package demorequests_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/demorequests"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/field"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

var t0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

func count(n int64) *int64 { return &n }

func valid() demorequests.Submission {
	return demorequests.Submission{Name: "Almaz Bekele", Email: "almaz@example.com", Company: "Abyssinia Textiles",
		Phone: "+251911234567", EmployeeCount: count(250), Message: "We pay 250 people monthly.\nCan we see EWA?"}
}

// TestSubmissionRules: every bound the document and migration app/0094 state, refused with the
// field it concerns; normalising trims and lower-cases first.
func TestSubmissionRules(t *testing.T) {
	t.Parallel()
	s := demorequests.Submission{Name: "  Almaz  ", Email: "  Almaz@Example.COM ", Company: "\tAcme\n", Phone: " +251911234567 ", Message: "  \n "}
	s.Normalize()
	require.Equal(t, demorequests.Submission{Name: "Almaz", Email: "almaz@example.com", Company: "Acme", Phone: "+251911234567"}, s)
	require.NoError(t, s.Validate())

	for _, tc := range []struct {
		name  string
		edit  func(*demorequests.Submission)
		field string
	}{
		{"blank name", func(s *demorequests.Submission) { s.Name = "" }, "name"},
		{"control character in name", func(s *demorequests.Submission) { s.Name = "Al\x01maz" }, "name"},
		{"NUL in company", func(s *demorequests.Submission) { s.Company = "Ac\x00me" }, "company"},
		{"invalid UTF-8 in name", func(s *demorequests.Submission) { s.Name = "Al\xffmaz" }, "name"},
		{"U+FFFD in name", func(s *demorequests.Submission) { s.Name = "Al\uFFFDmaz" }, "name"},
		{"bidi override in company", func(s *demorequests.Submission) { s.Company = "Ac\u202eme" }, "company"},
		{"zero-width space in name", func(s *demorequests.Submission) { s.Name = "Al\u200bmaz" }, "name"},
		{"name over 256 bytes", func(s *demorequests.Submission) { s.Name = strings.Repeat("a", 257) }, "name"},
		{"company over 256 bytes", func(s *demorequests.Submission) { s.Company = strings.Repeat("ሀ", 86) }, "company"},
		{"no e-mail", func(s *demorequests.Submission) { s.Email = "" }, "email"},
		{"not an e-mail", func(s *demorequests.Submission) { s.Email = "almaz" }, "email"},
		{"two e-mails", func(s *demorequests.Submission) { s.Email = "a@b.et,c@d.et" }, "email"},
		{"phone without +", func(s *demorequests.Submission) { s.Phone = "0911234567" }, "phone"},
		{"phone too long", func(s *demorequests.Submission) { s.Phone = "+2519112345678901" }, "phone"},
		{"no employees", func(s *demorequests.Submission) { s.EmployeeCount = count(0) }, "employeeCount"},
		{"negative employees", func(s *demorequests.Submission) { s.EmployeeCount = count(-1) }, "employeeCount"},
		{"too many employees", func(s *demorequests.Submission) { s.EmployeeCount = count(1_000_001) }, "employeeCount"},
		{"message over 1,024 bytes", func(s *demorequests.Submission) { s.Message = strings.Repeat("m", 1025) }, "message"},
		{"control character in message", func(s *demorequests.Submission) { s.Message = "hi\x1b[31m" }, "message"},
	} {
		s := valid()
		tc.edit(&s)
		var fe *field.Error
		require.ErrorAs(t, s.Validate(), &fe, tc.name)
		require.Equal(t, tc.field, fe.Field, tc.name)
	}
	for _, edit := range []func(*demorequests.Submission){
		func(s *demorequests.Submission) { s.Phone, s.Message, s.EmployeeCount = "", "", nil },
		func(s *demorequests.Submission) { s.EmployeeCount = count(1) },
		func(s *demorequests.Submission) { s.EmployeeCount = count(1_000_000) },
		func(s *demorequests.Submission) { s.Message = strings.Repeat("m", 1024) },
		func(s *demorequests.Submission) { s.Name = strings.Repeat("ሀ", 85) + "a" },
		func(s *demorequests.Submission) { s.Message = "line one\r\n\tline two" },
	} {
		s := valid()
		edit(&s)
		require.NoError(t, s.Validate())
	}

	ch := demorequests.Change{Status: "DONE"}
	require.Error(t, ch.Validate())
	note := "  called \x07 "
	ch = demorequests.Change{Status: demorequests.Contacted, Note: &note}
	ch.Normalize()
	require.Error(t, ch.Validate())
	note = "  "
	ch = demorequests.Change{Status: demorequests.Closed, Note: &note}
	ch.Normalize()
	require.NoError(t, ch.Validate())
	require.Equal(t, "", *ch.Note)

	require.True(t, demorequests.ValidID(demorequests.NewID()))
	for _, id := range []string{"", "dmr_", "dmr_X", "emp_0190a0b0-0000-7000-8000-000000000001", "DMR_0190a0b0-0000-7000-8000-000000000001"} {
		require.False(t, demorequests.ValidID(id), id)
	}
}

// submit runs Submit as the public route does: the runtime role, under the platform tenant.
func submit(t *testing.T, d *testkit.DB, s demorequests.Submission, now time.Time) (demorequests.Receipt, bool) {
	t.Helper()
	var r demorequests.Receipt
	var created bool
	require.NoError(t, db.InTenantTx(context.Background(), d.App, "*", func(tx pgx.Tx) error {
		var err error
		r, created, err = demorequests.Submit(context.Background(), tx, s, now)
		return err
	}))
	return r, created
}

// asPlatform runs fn as the platform role with the cross-tenant setting on, as crosstenant.Tx does.
func asPlatform(t *testing.T, plat *pgxpool.Pool, fn func(tx pgx.Tx) error) error {
	t.Helper()
	return pgx.BeginFunc(context.Background(), plat, func(tx pgx.Tx) error {
		if _, err := tx.Exec(context.Background(), `SELECT set_config($1, 'on', true)`, db.CrossTenantSetting); err != nil {
			return err
		}
		return fn(tx)
	})
}

func list(t *testing.T, plat *pgxpool.Pool, f demorequests.Filter) []demorequests.Request {
	t.Helper()
	var out []demorequests.Request
	require.NoError(t, asPlatform(t, plat, func(tx pgx.Tx) error {
		var err error
		out, err = demorequests.List(context.Background(), tx, f)
		return err
	}))
	return out
}

func update(t *testing.T, plat *pgxpool.Pool, id string, ch demorequests.Change, now time.Time) (demorequests.Request, demorequests.Status, error) {
	t.Helper()
	var r demorequests.Request
	var from demorequests.Status
	err := asPlatform(t, plat, func(tx pgx.Tx) error {
		var err error
		r, from, err = demorequests.Update(context.Background(), tx, id, ch, "usr_admin", now)
		return err
	})
	return r, from, err
}

// TestSubmitDedupesOpenRequestsOfADay: a second submission of an address answers its open
// request of the last 24 hours and writes nothing; an older one, or a CLOSED one, does not hold a
// new request back; racing submissions of one address add one request.
func TestSubmitDedupesOpenRequestsOfADay(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	plat := d.Platform(t)

	first, created := submit(t, d, valid(), t0)
	require.True(t, created)
	require.Equal(t, demorequests.New, first.Status)
	require.Equal(t, t0, first.ReceivedAt)

	again := valid()
	again.Name, again.Message = "Someone Else", "another message"
	r, created := submit(t, d, again, t0.Add(demorequests.DedupeWindow))
	require.False(t, created, "24 hours to the microsecond still counts")
	require.Equal(t, first, r)
	require.Len(t, list(t, plat, demorequests.Filter{}), 1)

	later, created := submit(t, d, valid(), t0.Add(demorequests.DedupeWindow+time.Microsecond))
	require.True(t, created, "past 24 hours the address may ask again")
	require.NotEqual(t, first.ID, later.ID)

	// The newest open one answers; once it is CLOSED, a submission is a new request.
	r, created = submit(t, d, valid(), t0.Add(25*time.Hour))
	require.False(t, created)
	require.Equal(t, later.ID, r.ID)
	_, _, err := update(t, plat, later.ID, demorequests.Change{Status: demorequests.Closed}, t0.Add(25*time.Hour))
	require.NoError(t, err)
	r, created = submit(t, d, valid(), t0.Add(26*time.Hour))
	require.True(t, created)
	require.NotEqual(t, later.ID, r.ID)

	// The stored request is the submission as normalised.
	got := list(t, plat, demorequests.Filter{Limit: 1})[0]
	require.Equal(t, r.ID, got.ID)
	require.Equal(t, "Almaz Bekele", got.Name)
	require.Equal(t, "almaz@example.com", got.Email)
	require.Equal(t, "+251911234567", *got.Phone)
	require.Equal(t, int64(250), *got.EmployeeCount)
	require.Equal(t, valid().Message, *got.Message)
	require.Nil(t, got.Note)
	require.Nil(t, got.UpdatedAt)

	// Racing double submits of a new address: one request.
	var wg sync.WaitGroup
	s := valid()
	s.Email = "race@example.com"
	results := make([]bool, 8)
	for i := range results {
		wg.Go(func() {
			_ = db.InTenantTx(context.Background(), d.App, "*", func(tx pgx.Tx) error {
				var err error
				_, results[i], err = demorequests.Submit(context.Background(), tx, s, t0)
				return err
			})
		})
	}
	wg.Wait()
	n := 0
	for _, c := range results {
		if c {
			n++
		}
	}
	require.Equal(t, 1, n, "one of the racing submissions created the request")
	require.Len(t, list(t, plat, demorequests.Filter{Status: demorequests.New}), 3, "the first, the last one and the race's")

	// A submission Validate refuses is refused before anything is written.
	bad := valid()
	bad.Name = "\x00"
	err = db.InTenantTx(context.Background(), d.App, "*", func(tx pgx.Tx) error {
		_, _, err := demorequests.Submit(context.Background(), tx, bad, t0)
		return err
	})
	var fe *field.Error
	require.ErrorAs(t, err, &fe)
}

// TestUpdateAndList: any open status moves to any status, CLOSED is final, the note is set,
// kept or cleared; the list pages newest first and filters by status and receivedAt.
func TestUpdateAndList(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	plat := d.Platform(t)
	var ids []string
	for i := range 5 {
		s := valid()
		s.Email = strings.Repeat("x", i+1) + "@example.com"
		r, _ := submit(t, d, s, t0.Add(time.Duration(i)*time.Minute))
		ids = append(ids, r.ID)
	}

	page := list(t, plat, demorequests.Filter{Limit: 2})
	require.Equal(t, []string{ids[4], ids[3]}, []string{page[0].ID, page[1].ID})
	page = list(t, plat, demorequests.Filter{Limit: 10, Before: page[1].Seq})
	require.Equal(t, []string{ids[2], ids[1], ids[0]}, []string{page[0].ID, page[1].ID, page[2].ID})
	page = list(t, plat, demorequests.Filter{From: t0.Add(time.Minute), To: t0.Add(3 * time.Minute)})
	require.Equal(t, []string{ids[2], ids[1]}, []string{page[0].ID, page[1].ID}, "from <= receivedAt < to")

	note := "  Called; demo on Tuesday  "
	ch := demorequests.Change{Status: demorequests.Contacted, Note: &note}
	ch.Normalize()
	r, from, err := update(t, plat, ids[0], ch, t0.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, demorequests.New, from)
	require.Equal(t, demorequests.Contacted, r.Status)
	require.Equal(t, "Called; demo on Tuesday", *r.Note)
	require.Equal(t, t0.Add(time.Hour), *r.UpdatedAt)
	require.Equal(t, "usr_admin", *r.UpdatedBy)

	r, from, err = update(t, plat, ids[0], demorequests.Change{Status: demorequests.New}, t0.Add(2*time.Hour))
	require.NoError(t, err)
	require.Equal(t, demorequests.Contacted, from)
	require.Equal(t, "Called; demo on Tuesday", *r.Note, "a change without a note keeps it")
	empty := ""
	r, _, err = update(t, plat, ids[0], demorequests.Change{Status: demorequests.Qualified, Note: &empty}, t0.Add(3*time.Hour))
	require.NoError(t, err)
	require.Nil(t, r.Note, `"" clears the note`)
	require.Equal(t, []string{ids[0]}, []string{list(t, plat, demorequests.Filter{Status: demorequests.Qualified})[0].ID})

	_, _, err = update(t, plat, ids[0], demorequests.Change{Status: demorequests.Closed}, t0.Add(4*time.Hour))
	require.NoError(t, err)
	for _, st := range demorequests.Statuses {
		_, from, err = update(t, plat, ids[0], demorequests.Change{Status: st}, t0.Add(5*time.Hour))
		require.ErrorIs(t, err, demorequests.ErrClosed, "CLOSED is final, even to %s", st)
		require.Equal(t, demorequests.Closed, from)
	}
	for _, id := range []string{"dmr_00000000-0000-7000-8000-000000000000", "nope", "dmr_' OR 1=1 --"} {
		_, _, err = update(t, plat, id, demorequests.Change{Status: demorequests.Contacted}, t0)
		require.ErrorIs(t, err, demorequests.ErrNotFound, id)
		err = asPlatform(t, plat, func(tx pgx.Tx) error {
			_, err := demorequests.Get(context.Background(), tx, id)
			return err
		})
		require.ErrorIs(t, err, demorequests.ErrNotFound, id)
	}
	var got demorequests.Request
	require.NoError(t, asPlatform(t, plat, func(tx pgx.Tx) error {
		var err error
		got, err = demorequests.Get(context.Background(), tx, ids[0])
		return err
	}))
	require.Equal(t, demorequests.Closed, got.Status)
}

// TestTheTableAndItsGrants: the runtime role may add a NEW request and nothing else (no read, no
// change, not even the sequence); the platform role reads and updates only on the cross-tenant
// path and never adds or deletes; the database refuses what the edge refuses.
func TestTheTableAndItsGrants(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	plat := d.Platform(t)
	r, _ := submit(t, d, valid(), t0)

	denied := func(err error, what string) {
		t.Helper()
		require.True(t, db.IsCode(err, pgerrcode.InsufficientPrivilege), "%s: want insufficient_privilege, got %v", what, err)
	}
	for _, q := range []string{
		`SELECT count(*) FROM app.demo_requests`,
		`UPDATE app.demo_requests SET status = 'CLOSED'`,
		`DELETE FROM app.demo_requests`,
		`TRUNCATE app.demo_requests`,
		`SELECT nextval('app.demo_requests_seq_seq')`,
		`INSERT INTO app.demo_requests (id, name, email, company, received_at) VALUES ('` + demorequests.NewID() + `', 'a', 'a@b.et', 'c', now()) RETURNING name`,
	} {
		_, err := d.App.Exec(ctx, q)
		denied(err, "runtime role: "+q)
	}
	// The runtime role adds only fresh requests (the policy's WITH CHECK).
	for _, q := range []string{
		`INSERT INTO app.demo_requests (id, name, email, company, received_at, status) VALUES ($1, 'a', 'a@b.et', 'c', now(), 'QUALIFIED')`,
		`INSERT INTO app.demo_requests (id, name, email, company, received_at, note) VALUES ($1, 'a', 'a@b.et', 'c', now(), 'n')`,
	} {
		_, err := d.App.Exec(ctx, q, demorequests.NewID())
		denied(err, "runtime role: "+q)
	}
	// The database's own bounds.
	for _, tc := range []struct{ col, val string }{
		{"name", "Al\x01maz"}, {"name", " Almaz"}, {"name", strings.Repeat("a", 257)}, {"company", ""},
		{"email", "Almaz@example.com"}, {"email", "almaz"}, {"phone", "0911234567"}, {"employee_count", "0"},
		{"employee_count", "1000001"}, {"message", strings.Repeat("m", 1025)}, {"message", "a\x1bb"}, {"message", ""},
	} {
		cols := map[string]string{"name": "Almaz", "email": "almaz@example.com", "company": "Acme", "phone": "+251911234567",
			"employee_count": "10", "message": "hi"}
		cols[tc.col] = tc.val
		_, err := d.App.Exec(ctx, `INSERT INTO app.demo_requests (id, name, email, company, phone, employee_count, message, received_at)
			VALUES ($1, $2, $3, $4, $5, $6::text::integer, $7, now())`, demorequests.NewID(), cols["name"], cols["email"], cols["company"],
			cols["phone"], cols["employee_count"], cols["message"])
		require.True(t, db.IsCode(err, pgerrcode.CheckViolation), "%s = %q: want check_violation, got %v", tc.col, tc.val, err)
	}
	_, err := d.App.Exec(ctx, `INSERT INTO app.demo_requests (id, name, email, company, received_at) VALUES ('dmr_1', 'a', 'a@b.et', 'c', now())`)
	require.True(t, db.IsCode(err, pgerrcode.CheckViolation), "a malformed id: %v", err)

	// The platform role: nothing without the cross-tenant setting; no insert or delete with it.
	var n int
	require.NoError(t, plat.QueryRow(ctx, `SELECT count(*) FROM app.demo_requests`).Scan(&n))
	require.Zero(t, n, "the platform role outside the cross-tenant path sees nothing")
	tag, err := plat.Exec(ctx, `UPDATE app.demo_requests SET status = 'CLOSED'`)
	require.NoError(t, err)
	require.Zero(t, tag.RowsAffected())
	require.NoError(t, asPlatform(t, plat, func(tx pgx.Tx) error { return tx.QueryRow(ctx, `SELECT count(*) FROM app.demo_requests`).Scan(&n) }))
	require.Equal(t, 1, n)
	for _, q := range []string{
		`DELETE FROM app.demo_requests`,
		`UPDATE app.demo_requests SET name = 'x'`,
		`INSERT INTO app.demo_requests (id, name, email, company, received_at) VALUES ('` + demorequests.NewID() + `', 'a', 'a@b.et', 'c', now())`,
	} {
		err := asPlatform(t, plat, func(tx pgx.Tx) error { _, err := tx.Exec(ctx, q); return err })
		denied(err, "platform role: "+q)
	}

	// The dedupe function answers an id, a status and a time, and only to the runtime role.
	var id, status string
	require.NoError(t, d.App.QueryRow(ctx, `SELECT id, status FROM app.open_demo_request('almaz@example.com', '-infinity')`).Scan(&id, &status))
	require.Equal(t, r.ID, id)
	require.Equal(t, "NEW", status)
	err = plat.QueryRow(ctx, `SELECT id FROM app.open_demo_request('almaz@example.com', '-infinity')`).Scan(&id)
	denied(err, "platform role: app.open_demo_request")
	require.False(t, errors.Is(err, pgx.ErrNoRows))
}
