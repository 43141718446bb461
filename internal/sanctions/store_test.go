package sanctions_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
	"github.com/wagerail/wagerail/internal/sanctions"
)

// sharedData is the real lists, beside the checkout (see ../shared/data/sanctions/README.md).
const sharedData = "../../../shared/data/sanctions"

func realFile(t *testing.T, name string) sanctions.File {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sharedData, name))
	require.NoError(t, err, "the real lists are expected in %s", sharedData)
	return sanctions.File{Name: name, Data: b}
}

func fixtureFile(t *testing.T, name string) sanctions.File {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return sanctions.File{Name: name, Data: b}
}

// truncated is f cut in the middle of a line about frac of the way in.
func truncated(f sanctions.File, frac float64) sanctions.File {
	n := int(float64(len(f.Data)) * frac)
	for n < len(f.Data) && (f.Data[n] == '\n' || f.Data[n-1] == '\n') {
		n++
	}
	return sanctions.File{Name: f.Name, Data: f.Data[:n]}
}

type listDB struct {
	*testkit.DB
	platform *pgxpool.Pool
	ctx      context.Context
}

func newListDB(t *testing.T) *listDB {
	d := testkit.NewDB(t)
	return &listDB{DB: d, platform: d.Platform(t), ctx: tenancy.WithActor(context.Background(), "system:test")}
}

func (l *listDB) ingest(t *testing.T, src sanctions.Source, files ...sanctions.File) sanctions.IngestReport {
	t.Helper()
	rep, err := sanctions.Ingest(l.ctx, l.platform, src, sanctions.IngestOptions{}, files...)
	require.NoError(t, err)
	return rep
}

// versions lists (id, active, entries in the table) per source, as the owner sees them.
func (l *listDB) versions(t *testing.T) map[int64][2]int {
	t.Helper()
	rows, err := l.App.Query(l.ctx, `SELECT v.id, v.active::int, (SELECT count(*) FROM app.sanctions_entries e WHERE e.version_id = v.id)
		FROM app.sanctions_list_versions v ORDER BY v.id`)
	require.NoError(t, err)
	out := map[int64][2]int{}
	for rows.Next() {
		var id int64
		var active, n int
		require.NoError(t, rows.Scan(&id, &active, &n))
		out[id] = [2]int{active, n}
	}
	require.NoError(t, rows.Err())
	return out
}

func (l *listDB) screen(t *testing.T, name, dob string) sanctions.Result {
	t.Helper()
	d, err := sanctions.ParseDOB(dob, time.Now())
	require.NoError(t, err)
	res, err := sanctions.Screen(l.ctx, l.App, name, d)
	require.NoError(t, err)
	return res
}

func hasEvidence(res sanctions.Result, src sanctions.Source, ref string) (sanctions.Evidence, bool) {
	for _, e := range res.Evidence {
		if e.ListSource == src && e.SourceRef == ref {
			return e, true
		}
	}
	return sanctions.Evidence{}, false
}

// The full real OFAC (SDN + alternate names) and UN files, ingested and screened against: listed
// names with spelling variants, aliases and reordered tokens are found; unrelated names are clear.
func TestIngestRealListsAndScreen(t *testing.T) {
	l := newListDB(t)
	sdn, alt, un := realFile(t, "ofac-sdn.csv"), realFile(t, "ofac-alt.csv"), realFile(t, "un-consolidated.xml")

	start := time.Now()
	ofac := l.ingest(t, sanctions.OFAC, sdn, alt)
	t.Logf("OFAC ingest: %d entries, %d names, %d aliases of unlisted entries skipped, in %v",
		ofac.Entries, ofac.Names, ofac.SkippedAliases, time.Since(start))
	start = time.Now()
	unRep := l.ingest(t, sanctions.UN, un)
	t.Logf("UN ingest: %d entries, %d names, in %v", unRep.Entries, unRep.Names, time.Since(start))
	require.Equal(t, 7379, ofac.Entries, "every line of sdn.csv")
	require.Equal(t, 1003, unRep.Entries, "every INDIVIDUAL and ENTITY")
	require.False(t, ofac.Unchanged)
	require.Greater(t, ofac.Names, ofac.Entries)
	require.Equal(t, map[int64][2]int{ofac.Version: {1, 7379}, unRep.Version: {1, 1003}}, l.versions(t))

	start = time.Now()
	screened := 0
	for _, tc := range []struct {
		name, dob string
		want      sanctions.Outcome
		src       sanctions.Source
		ref       string
	}{
		// OFAC aliases (alt.csv) and transliteration variants of them.
		{"Osama bin Laden", "", sanctions.Block, sanctions.OFAC, "6365"},
		{"Usama Bin Ladin", "", sanctions.Block, sanctions.OFAC, "6365"},
		{"Ladin, Osama Bin", "", sanctions.Block, sanctions.OFAC, "6365"},
		{"Osama Binladen", "", sanctions.Block, sanctions.OFAC, "6365"},
		{"Usama bin Muhammad bin Awad BIN LADEN", "", sanctions.Block, sanctions.OFAC, "6365"},
		{"Usama bin Ladin", "1957-07-30", sanctions.Block, sanctions.OFAC, "6365"},
		// A partial name is reviewed; so is an exact one whose date of birth disagrees.
		{"Laden Osama", "", sanctions.Review, sanctions.OFAC, "6365"},
		{"Usama bin Ladin", "1990-01-01", sanctions.Review, sanctions.OFAC, "6365"},
		// Primary names: reordered, with diacritics, misspelt.
		{"Mladen Naletilic", "", sanctions.Block, sanctions.OFAC, "7753"},
		{"Mladen Naletilić", "1946-12-01", sanctions.Block, sanctions.OFAC, "7753"},
		{"Naletilich Mladen", "", sanctions.Block, sanctions.OFAC, "7753"},
		{"Saddam Husayn", "", sanctions.Block, sanctions.OFAC, "7843"},
		{"Jong Un Kim", "", sanctions.Block, sanctions.OFAC, "20157"},
		// UN: primary names, aliases (INDIVIDUAL_ALIAS), both lists at once.
		{"Frank Kakorere", "", sanctions.Block, sanctions.UN, "CDi.002"},
		{"Bwambale Frank Kakolele", "", sanctions.Block, sanctions.UN, "CDi.002"},
		{"Eric Badege", "1971-05-05", sanctions.Block, sanctions.UN, "CDi.001"},
		{"Eric Badege", "", sanctions.Block, sanctions.OFAC, "15718"},
		{"Hamza Usama Muhammad Bin Laden", "", sanctions.Block, sanctions.UN, "QDi.421"},
	} {
		res := l.screen(t, tc.name, tc.dob)
		screened++
		require.Equal(t, tc.want, res.Outcome, "%q (%s): %+v", tc.name, tc.dob, res.Evidence)
		ev, ok := hasEvidence(res, tc.src, tc.ref)
		require.True(t, ok, "%q: %s %s not in the evidence %+v", tc.name, tc.src, tc.ref, res.Evidence)
		require.GreaterOrEqual(t, ev.Score, sanctions.ReviewThreshold)
		require.NotEmpty(t, ev.MatchedName)
		require.NotEmpty(t, ev.PrimaryName)
		require.Equal(t, map[sanctions.Source]int64{sanctions.OFAC: ofac.Version, sanctions.UN: unRep.Version}[ev.ListSource], ev.ListVersion)
		require.Equal(t, []int64{ofac.Version, unRep.Version}, res.ListVersions)
		require.LessOrEqual(t, len(res.Evidence), sanctions.MaxEvidence)
		if tc.dob == "1957-07-30" {
			require.Equal(t, sanctions.DOBAgree, ev.DOBMatch)
		}
		if tc.dob == "1990-01-01" {
			require.Equal(t, sanctions.DOBDisagree, ev.DOBMatch)
		}
	}
	for _, name := range []string{"Abebe Bekele", "Tigist Haile Mariam", "Selamawit Getachew Alemu",
		"Yohannes Tesfaye Kebede", "Dawit Abraham", "Haile Gebrselassie", "ሰላማዊት ጌታቸው", "Meron Tadesse Wolde"} {
		res := l.screen(t, name, "1990-02-03")
		screened++
		require.Equal(t, sanctions.Clear, res.Outcome, "%q: %+v", name, res.Evidence)
		require.Empty(t, res.Evidence)
		require.Less(t, res.Score, sanctions.ReviewThreshold)
	}
	t.Logf("screened %d names in %v", screened, time.Since(start))
}

// Ingest is idempotent per content; a malformed or truncated file is refused with its line number
// and leaves the previous version active; a file cut at a line boundary is caught by its size; an
// older version is never put back.
func TestIngestVersions(t *testing.T) {
	l := newListDB(t)
	sdn, alt, un := realFile(t, "ofac-sdn.csv"), realFile(t, "ofac-alt.csv"), realFile(t, "un-consolidated.xml")
	first := l.ingest(t, sanctions.OFAC, sdn, alt)
	unFirst := l.ingest(t, sanctions.UN, un)
	want := map[int64][2]int{first.Version: {1, 7379}, unFirst.Version: {1, 1003}}

	// The same content again, under other file names: unchanged, nothing written.
	again := l.ingest(t, sanctions.OFAC, sanctions.File{Name: "copy.csv", Data: sdn.Data}, sanctions.File{Name: "copy-alt.csv", Data: alt.Data})
	require.True(t, again.Unchanged)
	require.Equal(t, first.Version, again.Version)
	require.Equal(t, first.ContentHash, again.ContentHash)
	require.Equal(t, want, l.versions(t))

	// Truncated copies of each file: refused, naming the line, nothing changes.
	for _, tc := range []struct {
		src   sanctions.Source
		files []sanctions.File
		bad   string
	}{
		{sanctions.OFAC, []sanctions.File{truncated(sdn, 0.6), alt}, sdn.Name},
		{sanctions.OFAC, []sanctions.File{sdn, truncated(alt, 0.4)}, alt.Name},
		{sanctions.UN, []sanctions.File{truncated(un, 0.7)}, un.Name},
	} {
		_, err := sanctions.Ingest(l.ctx, l.platform, tc.src, sanctions.IngestOptions{}, tc.files...)
		var pe *sanctions.ParseError
		require.True(t, errors.As(err, &pe), "%v", err)
		require.Equal(t, tc.bad, pe.File)
		cut := tc.files[0]
		if tc.files[0].Name != tc.bad {
			cut = tc.files[1]
		}
		require.Equal(t, strings.Count(string(cut.Data), "\n")+1, pe.Line, "the line the file stops in: %v", err)
		require.Contains(t, err.Error(), tc.bad+" line ")
		require.Equal(t, want, l.versions(t), "the previous versions stay active")
	}

	// A damaged line in the middle: its number.
	lines := strings.SplitAfter(string(sdn.Data), "\n")
	lines[4999] = `6999,"BROKEN ENTRY",individual` + "\n"
	_, err := sanctions.Ingest(l.ctx, l.platform, sanctions.OFAC, sanctions.IngestOptions{}, sanctions.File{Name: "sdn.csv", Data: []byte(strings.Join(lines, ""))}, alt)
	require.ErrorContains(t, err, "sdn.csv line 5000: 3 fields, want 12")

	// Cut at a line boundary the file parses: the shrink guard refuses it unless told.
	half := sanctions.File{Name: "sdn.csv", Data: []byte(strings.Join(lines[:3000], ""))}
	_, err = sanctions.Ingest(l.ctx, l.platform, sanctions.OFAC, sanctions.IngestOptions{}, half, alt)
	require.ErrorIs(t, err, sanctions.ErrShrank)
	require.ErrorContains(t, err, "--allow-shrink")
	require.Equal(t, want, l.versions(t))
	// The aliases cut at a line boundary: every entry is there but half the names are gone
	// (found by an audit: "Osama bin Laden" then screened CLEAR). Refused the same way.
	altLines := strings.SplitAfter(string(alt.Data), "\n")
	fewAliases := sanctions.File{Name: alt.Name, Data: []byte(strings.Join(altLines[:150], ""))}
	_, err = sanctions.Ingest(l.ctx, l.platform, sanctions.OFAC, sanctions.IngestOptions{}, sdn, fewAliases)
	require.ErrorIs(t, err, sanctions.ErrShrank)
	require.ErrorContains(t, err, "names")
	require.Equal(t, want, l.versions(t))

	// A database failure mid-load (a cancelled context) rolls everything back.
	ctx, cancel := context.WithCancel(l.ctx)
	cancel()
	_, err = sanctions.Ingest(ctx, l.platform, sanctions.UN, sanctions.IngestOptions{}, sanctions.File{Name: "un.xml", Data: []byte(strings.Replace(string(un.Data), "ERIC", "ERIK", 1))})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, want, l.versions(t))

	// A real new version (smaller, allowed) replaces the old one; the old one's entries go.
	allowed, err := sanctions.Ingest(l.ctx, l.platform, sanctions.OFAC, sanctions.IngestOptions{AllowShrink: true}, half, alt)
	require.NoError(t, err)
	require.Equal(t, first.Version, allowed.Previous)
	require.Equal(t, 3000, allowed.Entries)
	require.Equal(t, map[int64][2]int{first.Version: {0, 0}, unFirst.Version: {1, 1003}, allowed.Version: {1, 3000}}, l.versions(t))
	// Kim Jong Un (line 5159) is not in the first 3000 lines any more; Naletilic (line 738) is.
	_, listed := hasEvidence(l.screen(t, "Kim Jong Un", ""), sanctions.OFAC, "20157")
	require.False(t, listed)
	_, listed = hasEvidence(l.screen(t, "Mladen Naletilic", ""), sanctions.OFAC, "7753")
	require.True(t, listed)
	// Putting the superseded content back is refused.
	_, err = sanctions.Ingest(l.ctx, l.platform, sanctions.OFAC, sanctions.IngestOptions{}, sdn, alt)
	require.ErrorIs(t, err, sanctions.ErrSuperseded)

	// Every ingest that wrote is audited under the platform tenant, with the actor.
	var audits int
	require.NoError(t, db.InTenantTx(l.ctx, l.platform, crosstenant.PlatformTenant, func(tx pgx.Tx) error {
		return tx.QueryRow(l.ctx, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND actor = 'system:test' AND outcome = 'SUCCESS'`,
			sanctions.ActionListIngested).Scan(&audits)
	}))
	require.Equal(t, 3, audits)
}

// The runtime role reads the lists and cannot write them; it records checks and cannot change
// them.
func TestRolesOnSanctionsTables(t *testing.T) {
	l := newListDB(t)
	l.ingest(t, sanctions.National, fixtureFile(t, "national-sample.csv"))
	ctx := l.ctx
	for _, stmt := range []string{
		`INSERT INTO app.sanctions_list_versions (source, content_hash, entry_count, name_count, ingested_by) VALUES ('UN', repeat('a', 64), 0, 0, 'x')`,
		`UPDATE app.sanctions_list_versions SET active = false`,
		`DELETE FROM app.sanctions_names`,
		`DELETE FROM app.sanctions_entries`,
		`UPDATE app.sanctions_entries SET primary_name = 'x'`,
		`SELECT nextval('app.sanctions_entry_ids')`,
	} {
		_, err := l.App.Exec(ctx, stmt)
		require.True(t, db.IsCode(err, pgerrcode.InsufficientPrivilege), "%s: %v", stmt, err)
	}
	var n int
	require.NoError(t, l.App.QueryRow(ctx, `SELECT count(*) FROM app.sanctions_names`).Scan(&n))
	require.Positive(t, n)
	// Ingest refuses a pool that is not the platform role.
	_, err := sanctions.Ingest(ctx, l.App, sanctions.UN, sanctions.IngestOptions{}, fixtureFile(t, "un-sample.xml"))
	require.ErrorIs(t, err, crosstenant.ErrNotPlatformRole)

	tenant, _ := newTenant(t, l)
	res := l.screen(t, "Someone Unlisted", "")
	var id string
	require.NoError(t, tenancy.InTx(tenancy.WithTenant(ctx, tenant), l.App, func(tx pgx.Tx) error {
		c, err := sanctions.RecordCheck(ctx, tx, tenant, sanctions.Subject{Type: sanctions.SubjectEmployee, ID: "emp-1"}, res)
		id = c.ID
		return err
	}))
	for _, stmt := range []string{`UPDATE app.sanctions_checks SET outcome = 'CLEAR'`, `DELETE FROM app.sanctions_checks`} {
		err := tenancy.InTx(tenancy.WithTenant(ctx, tenant), l.App, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, stmt)
			return err
		})
		require.True(t, db.IsCode(err, pgerrcode.InsufficientPrivilege), "%s: %v", stmt, err)
	}
	require.NotEmpty(t, id)
}

// newTenant makes an organization with an owner user and returns both ids.
func newTenant(t *testing.T, l *listDB) (tenant, user string) {
	t.Helper()
	u, err := identity.CreateUser(l.ctx, l.App, identity.NewUser{Email: testkit.Unique("u") + "@example.org", Name: "Abebe Kebede"})
	require.NoError(t, err)
	id := orgs.NewOrganizationID()
	require.NoError(t, db.InTenantTx(l.ctx, l.App, id, func(tx pgx.Tx) error {
		_, _, err := orgs.Create(l.ctx, tx, orgs.NewOrganization{ID: id, Name: "Acme", Kind: orgs.Business}, u.ID)
		return err
	}))
	return id, u.ID
}

// record screens name and records the result for subject in tenant.
func record(t *testing.T, l *listDB, tenant string, s sanctions.Subject, name, dob string) sanctions.Check {
	t.Helper()
	res := l.screen(t, name, dob)
	var c sanctions.Check
	require.NoError(t, tenancy.InTx(tenancy.WithTenant(l.ctx, tenant), l.App, func(tx pgx.Tx) error {
		var err error
		c, err = sanctions.RecordCheck(l.ctx, tx, tenant, s, res)
		return err
	}))
	return c
}

func gate(l *listDB, ctx context.Context, tenant string, typ sanctions.SubjectType, id string) error {
	return tenancy.InTx(tenancy.WithTenant(ctx, tenant), l.App, func(tx pgx.Tx) error {
		return sanctions.Gate(ctx, tx, tenant, typ, id)
	})
}

func resolve(t *testing.T, l *listDB, checkID string, d sanctions.Decision) (sanctions.Check, error) {
	t.Helper()
	var c sanctions.Check
	err := crosstenant.Tx(l.ctx, l.platform, "test review", func(tx pgx.Tx) error {
		var err error
		c, err = sanctions.ResolveReview(l.ctx, tx, checkID, d, "user-reviewer", "checked the passport", time.Now())
		return err
	})
	return c, err
}

// The gate opens only for a current CLEAR (or a cleared REVIEW) and fails closed on everything
// else: no check, a database error, a cancelled context, BLOCK, REVIEW, a confirmed hit, a stale
// check.
func TestGateFailsClosed(t *testing.T) {
	l := newListDB(t)
	l.ingest(t, sanctions.National, fixtureFile(t, "national-sample.csv"))
	tenant, user := newTenant(t, l)
	other, _ := newTenant(t, l)
	ctx := l.ctx

	err := gate(l, ctx, tenant, sanctions.SubjectEmployee, "emp-none")
	require.ErrorIs(t, err, sanctions.ErrNoCheck)
	require.Equal(t, sanctions.CodeNoCheck, sanctions.GateCode(err))

	clear := record(t, l, tenant, sanctions.Subject{Type: sanctions.SubjectUser, ID: user}, "Abebe Kebede", "1988-05-01")
	require.Equal(t, sanctions.Clear, clear.Outcome)
	require.False(t, clear.NeedsReview)
	require.Equal(t, user, clear.Subject.UserID)
	require.NoError(t, gate(l, ctx, tenant, sanctions.SubjectUser, user))
	// Another tenant's gate does not see this tenant's check.
	require.ErrorIs(t, gate(l, ctx, other, sanctions.SubjectUser, user), sanctions.ErrNoCheck)

	// A cancelled context and a broken transaction: errors, never a pass.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err = sanctions.Gate(cctx, l.App, tenant, sanctions.SubjectUser, user)
	require.Error(t, err)
	require.Equal(t, sanctions.CodeUnavailable, sanctions.GateCode(err))
	err = tenancy.InTx(tenancy.WithTenant(ctx, tenant), l.App, func(tx pgx.Tx) error {
		_, _ = tx.Exec(ctx, `SELECT 1/0`)
		return sanctions.Gate(ctx, tx, tenant, sanctions.SubjectUser, user)
	})
	require.Error(t, err)
	require.Equal(t, sanctions.CodeUnavailable, sanctions.GateCode(err))
	require.ErrorContains(t, sanctions.Gate(ctx, l.App, "", sanctions.SubjectUser, user), "tenant")
	require.Error(t, sanctions.Gate(ctx, l.App, tenant, "ROBOT", user))

	// BLOCK.
	blocked := record(t, l, tenant, sanctions.Subject{Type: sanctions.SubjectEmployee, ID: "emp-1"}, "Tesfaye Worku Demissie", "1975-03-14")
	require.Equal(t, sanctions.Block, blocked.Outcome)
	require.True(t, blocked.NeedsReview)
	require.Equal(t, "NAT-0001", blocked.Evidence[0].SourceRef)
	require.Equal(t, sanctions.DOBAgree, blocked.Evidence[0].DOBMatch)
	err = gate(l, ctx, tenant, sanctions.SubjectEmployee, "emp-1")
	require.ErrorIs(t, err, sanctions.ErrSanctionsBlocked)
	require.Equal(t, sanctions.CodeBlocked, sanctions.GateCode(err))
	_, err = resolve(t, l, blocked.ID, sanctions.Cleared)
	require.ErrorIs(t, err, sanctions.ErrClearBlock, "a BLOCK is never cleared")
	confirmed, err := resolve(t, l, blocked.ID, sanctions.Confirmed)
	require.NoError(t, err)
	require.False(t, confirmed.NeedsReview)
	require.ErrorIs(t, gate(l, ctx, tenant, sanctions.SubjectEmployee, "emp-1"), sanctions.ErrSanctionsBlocked)
	_, err = resolve(t, l, blocked.ID, sanctions.Confirmed)
	require.ErrorIs(t, err, sanctions.ErrNotReviewable)

	// REVIEW: closed until cleared; CONFIRMED keeps it closed.
	review := record(t, l, tenant, sanctions.Subject{Type: sanctions.SubjectEmployee, ID: "emp-2"}, "Tesfaye Worku Bekele", "")
	require.Equal(t, sanctions.Review, review.Outcome, "%+v", review.Evidence)
	err = gate(l, ctx, tenant, sanctions.SubjectEmployee, "emp-2")
	require.ErrorIs(t, err, sanctions.ErrSanctionsReview)
	require.Equal(t, sanctions.CodeReview, sanctions.GateCode(err))
	cleared, err := resolve(t, l, review.ID, sanctions.Cleared)
	require.NoError(t, err)
	require.Equal(t, sanctions.Cleared, cleared.Decision)
	require.NoError(t, gate(l, ctx, tenant, sanctions.SubjectEmployee, "emp-2"))
	review3 := record(t, l, tenant, sanctions.Subject{Type: sanctions.SubjectEmployee, ID: "emp-3"}, "Tesfaye Worku Bekele", "")
	_, err = resolve(t, l, review3.ID, sanctions.Confirmed)
	require.NoError(t, err)
	require.ErrorIs(t, gate(l, ctx, tenant, sanctions.SubjectEmployee, "emp-3"), sanctions.ErrSanctionsBlocked)
	_, err = resolve(t, l, "no-such-check", sanctions.Confirmed)
	require.ErrorIs(t, err, sanctions.ErrNotFound)

	// A new list version makes every check stale until it is re-screened.
	l.ingest(t, sanctions.UN, fixtureFile(t, "un-sample.xml"))
	err = gate(l, ctx, tenant, sanctions.SubjectUser, user)
	require.ErrorIs(t, err, sanctions.ErrCheckStale)
	require.Equal(t, sanctions.CodeStale, sanctions.GateCode(err))

	// The decisions and checks are audited in the tenant.
	var screened, decided int
	require.NoError(t, tenancy.InTx(tenancy.WithTenant(ctx, tenant), l.App, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE action = $1), count(*) FILTER (WHERE action = $2) FROM app.audit_log`,
			sanctions.ActionScreened, sanctions.ActionReviewDecided).Scan(&screened, &decided)
	}))
	require.Equal(t, 4, screened)
	require.Equal(t, 3, decided)
}

// Re-screening after an ingest finds a subject that a new list version lists: the new check is
// flagged for review, the gate closes, an event goes out; clear subjects stay clear; a REVIEW a
// reviewer cleared keeps its decision while its match is the same.
func TestRescreenFindsNewHit(t *testing.T) {
	l := newListDB(t)
	national := fixtureFile(t, "national-sample.csv")
	l.ingest(t, sanctions.National, national)
	a, userA := newTenant(t, l)
	b, _ := newTenant(t, l)
	ctx := l.ctx

	record(t, l, a, sanctions.Subject{Type: sanctions.SubjectUser, ID: userA}, "Abebe Kebede", "1988-05-01")
	record(t, l, b, sanctions.Subject{Type: sanctions.SubjectEmployee, ID: "emp-b1", UserID: ""}, "Mulu Alemayehu Desta", "")
	cleared := record(t, l, b, sanctions.Subject{Type: sanctions.SubjectEmployee, ID: "emp-b2"}, "Tesfaye Worku Bekele", "")
	require.Equal(t, sanctions.Review, cleared.Outcome)
	_, err := resolve(t, l, cleared.ID, sanctions.Cleared)
	require.NoError(t, err)
	blocked := record(t, l, b, sanctions.Subject{Type: sanctions.SubjectEmployee, ID: "emp-b3"}, "Hagos Gebremedhin", "")
	require.Equal(t, sanctions.Block, blocked.Outcome)
	for _, s := range []struct{ tenant, id string }{{a, userA}, {b, "emp-b1"}, {b, "emp-b2"}} {
		typ := sanctions.SubjectEmployee
		if s.id == userA {
			typ = sanctions.SubjectUser
		}
		require.NoError(t, gate(l, ctx, s.tenant, typ, s.id))
	}

	// Version 2 of the national list adds Abebe Kebede.
	v2 := sanctions.File{Name: "national-v2.csv", Data: append([]byte(string(national.Data)), "Abebe Kebede,Abebe Kebede Tola,1988-05-01,NAT-0005,INDIVIDUAL\n"...)}
	rep := l.ingest(t, sanctions.National, v2)
	require.Equal(t, 5, rep.Entries)
	require.ErrorIs(t, gate(l, ctx, a, sanctions.SubjectUser, userA), sanctions.ErrCheckStale, "stale until re-screened")

	res, err := sanctions.Rescreen(ctx, l.platform)
	require.NoError(t, err)
	require.Equal(t, sanctions.RescreenReport{Rescreened: 3, NewHits: 1}, res, "the BLOCK is left alone")

	err = gate(l, ctx, a, sanctions.SubjectUser, userA)
	require.ErrorIs(t, err, sanctions.ErrSanctionsBlocked)
	var hit sanctions.Check
	require.NoError(t, tenancy.InTx(tenancy.WithTenant(ctx, a), l.App, func(tx pgx.Tx) error {
		hit, err = sanctions.LatestCheck(ctx, tx, a, sanctions.SubjectUser, userA)
		return err
	}))
	require.Equal(t, sanctions.TriggerRescreen, hit.Trigger)
	require.True(t, hit.NeedsReview)
	require.Equal(t, "NAT-0005", hit.Evidence[0].SourceRef)
	require.Equal(t, rep.Version, hit.Evidence[0].ListVersion)
	require.Equal(t, []int64{rep.Version}, hit.ListVersions)
	require.NoError(t, gate(l, ctx, b, sanctions.SubjectEmployee, "emp-b1"), "still clear, against the new version")
	require.NoError(t, gate(l, ctx, b, sanctions.SubjectEmployee, "emp-b2"), "the cleared match is the same entry")
	var carried sanctions.Check
	require.NoError(t, tenancy.InTx(tenancy.WithTenant(ctx, b), l.App, func(tx pgx.Tx) error {
		carried, err = sanctions.LatestCheck(ctx, tx, b, sanctions.SubjectEmployee, "emp-b2")
		return err
	}))
	require.Equal(t, sanctions.Cleared, carried.Decision)
	require.Equal(t, "user-reviewer", carried.ReviewedBy)
	require.Contains(t, carried.ReviewNote, cleared.ID)

	// The new hit was announced in its tenant, audited as the re-screening job.
	var events, audits int
	require.NoError(t, tenancy.InTx(tenancy.WithTenant(ctx, a), l.App, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM app.outbox WHERE type = $1 AND payload->>'checkId' = $2`,
			sanctions.EventReviewRequired, hit.ID).Scan(&events); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT count(*) FROM app.audit_log WHERE action = $1 AND actor = $2 AND target_id = $3`,
			sanctions.ActionScreened, sanctions.RescreenActor, hit.ID).Scan(&audits)
	}))
	require.Equal(t, 1, events)
	require.Equal(t, 1, audits)

	// Nothing is due any more: a second run does nothing.
	res, err = sanctions.Rescreen(ctx, l.platform)
	require.NoError(t, err)
	require.Zero(t, res.Rescreened)
}

// A user reads their own checks in every organization (and nobody else's); the platform lists
// every tenant's with filters and a cursor.
func TestListChecks(t *testing.T) {
	l := newListDB(t)
	l.ingest(t, sanctions.National, fixtureFile(t, "national-sample.csv"))
	a, userA := newTenant(t, l)
	b, userB := newTenant(t, l)
	ctx := l.ctx
	record(t, l, a, sanctions.Subject{Type: sanctions.SubjectUser, ID: userA}, "Abebe Kebede", "")
	record(t, l, b, sanctions.Subject{Type: sanctions.SubjectEmployee, ID: "emp-9", UserID: userA}, "Abebe Kebede", "")
	record(t, l, b, sanctions.Subject{Type: sanctions.SubjectUser, ID: userB}, "Tesfaye Worku Demissie", "")

	var mine []sanctions.Check
	require.NoError(t, tenancy.InUserTx(tenancy.WithActor(ctx, userA), l.App, func(tx pgx.Tx) error {
		var err error
		mine, err = sanctions.ListChecks(ctx, tx, sanctions.CheckFilter{UserID: userA, Limit: 100})
		return err
	}))
	require.Len(t, mine, 2)
	require.Equal(t, b, mine[0].TenantID, "newest first")
	require.Equal(t, a, mine[1].TenantID)
	// RLS alone, without the filter, shows A nothing else.
	require.NoError(t, tenancy.InUserTx(tenancy.WithActor(ctx, userA), l.App, func(tx pgx.Tx) error {
		all, err := sanctions.ListChecks(ctx, tx, sanctions.CheckFilter{Limit: 100})
		require.Len(t, all, 2)
		return err
	}))

	var page1, page2 []sanctions.Check
	yes := true
	require.NoError(t, crosstenant.Tx(ctx, l.platform, "test list", func(tx pgx.Tx) error {
		var err error
		if page1, err = sanctions.ListChecks(ctx, tx, sanctions.CheckFilter{Limit: 2}); err != nil {
			return err
		}
		if page2, err = sanctions.ListChecks(ctx, tx, sanctions.CheckFilter{Limit: 2, Before: page1[1].Seq}); err != nil {
			return err
		}
		review, err := sanctions.ListChecks(ctx, tx, sanctions.CheckFilter{Limit: 10, NeedsReview: &yes})
		require.NoError(t, err)
		require.Len(t, review, 1)
		require.Equal(t, sanctions.Block, review[0].Outcome)
		blocks, err := sanctions.ListChecks(ctx, tx, sanctions.CheckFilter{Limit: 10, Outcome: sanctions.Clear, TenantID: a})
		require.NoError(t, err)
		require.Len(t, blocks, 1)
		one, err := sanctions.CheckByID(ctx, tx, blocks[0].ID)
		require.NoError(t, err)
		require.Equal(t, blocks[0], one)
		_, err = sanctions.CheckByID(ctx, tx, "no-such-check")
		require.ErrorIs(t, err, sanctions.ErrNotFound)
		return nil
	}))
	require.Len(t, page1, 2)
	require.Len(t, page2, 1)
	require.Greater(t, page1[1].Seq, page2[0].Seq)
	_, err := sanctions.ListChecks(ctx, l.App, sanctions.CheckFilter{Limit: sanctions.MaxListChecks + 1})
	require.Error(t, err)
}

// Screening with no list ingested is an error, never a CLEAR; RecordCheck refuses a result that
// was not screened against anything and bad subjects.
func TestScreenRefusals(t *testing.T) {
	l := newListDB(t)
	_, err := sanctions.Screen(l.ctx, l.App, "Abebe Kebede", time.Time{})
	require.ErrorIs(t, err, sanctions.ErrNoActiveList)
	l.ingest(t, sanctions.National, fixtureFile(t, "national-sample.csv"))
	for _, bad := range []string{"", "   ", "...", "a\x00b", strings.Repeat("a", 257)} {
		_, err := sanctions.Screen(l.ctx, l.App, bad, time.Time{})
		require.Error(t, err, "%q", bad)
	}
	tenant, _ := newTenant(t, l)
	res := l.screen(t, "Abebe Kebede", "")
	err = tenancy.InTx(tenancy.WithTenant(l.ctx, tenant), l.App, func(tx pgx.Tx) error {
		for _, s := range []sanctions.Subject{{Type: "ROBOT", ID: "x"}, {Type: sanctions.SubjectEmployee, ID: "a b"},
			{Type: sanctions.SubjectUser, ID: "u1", UserID: "u2"}} {
			_, err := sanctions.RecordCheck(l.ctx, tx, tenant, s, res)
			require.Error(t, err, "%+v", s)
		}
		_, err := sanctions.RecordCheck(l.ctx, tx, tenant, sanctions.Subject{Type: sanctions.SubjectEmployee, ID: "e"}, sanctions.Result{Name: "X", Outcome: sanctions.Clear})
		require.ErrorContains(t, err, "no list version")
		return nil
	})
	require.NoError(t, err)
}

// A KYC approval screens the document's name and the employee's name on record, and records the
// worse: here the record's name, a REVIEW a reviewer cleared. When the document's name is listed
// later, re-screening finds it: a check re-screens every name its subject was screened under.
func TestRescreenScreensEveryNameOfACheck(t *testing.T) {
	l := newListDB(t)
	national := fixtureFile(t, "national-sample.csv")
	l.ingest(t, sanctions.National, national)
	tenant, _ := newTenant(t, l)
	ctx := l.ctx
	subject := sanctions.Subject{Type: sanctions.SubjectEmployee, ID: "emp-1"}

	onDocument, onRecord := l.screen(t, "Mekdes Alemu Haile", ""), l.screen(t, "Tesfaye Worku Bekele", "")
	require.Equal(t, sanctions.Clear, onDocument.Outcome)
	require.Equal(t, sanctions.Review, onRecord.Outcome)
	res := sanctions.Worse(onDocument, onRecord)
	require.Equal(t, "Tesfaye Worku Bekele", res.Name)
	require.Equal(t, []string{"Mekdes Alemu Haile"}, res.OtherNames)
	require.Equal(t, res, sanctions.Worse(res, l.screen(t, "MEKDES  alemu haile", "")), "a name is kept once")
	var c sanctions.Check
	require.NoError(t, tenancy.InTx(tenancy.WithTenant(ctx, tenant), l.App, func(tx pgx.Tx) error {
		var err error
		c, err = sanctions.RecordCheck(ctx, tx, tenant, subject, res)
		return err
	}))
	_, err := resolve(t, l, c.ID, sanctions.Cleared)
	require.NoError(t, err)
	require.NoError(t, gate(l, ctx, tenant, subject.Type, subject.ID))

	v2 := sanctions.File{Name: "national-v2.csv", Data: append([]byte(string(national.Data)), "Mekdes Alemu Haile,,,NAT-0006,INDIVIDUAL\n"...)}
	l.ingest(t, sanctions.National, v2)
	rep, err := sanctions.Rescreen(ctx, l.platform)
	require.NoError(t, err)
	require.Equal(t, sanctions.RescreenReport{Rescreened: 1, NewHits: 1}, rep)
	require.Error(t, gate(l, ctx, tenant, subject.Type, subject.ID))
	var hit sanctions.Check
	require.NoError(t, tenancy.InTx(tenancy.WithTenant(ctx, tenant), l.App, func(tx pgx.Tx) error {
		hit, err = sanctions.LatestCheck(ctx, tx, tenant, subject.Type, subject.ID)
		return err
	}))
	require.Equal(t, "Mekdes Alemu Haile", hit.Name)
	require.Equal(t, []string{"Tesfaye Worku Bekele"}, hit.OtherNames)
	require.Equal(t, "NAT-0006", hit.Evidence[0].SourceRef)
	require.True(t, hit.NeedsReview)
}
