package ratelimit

import (
	"context"
	"crypto/sha256"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// clock is an injected clock the test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

type fixture struct {
	db  *testkit.DB
	l   *Limiter
	clk *clock
	m   *Metrics
}

// newFixture is a limiter on a fresh database, as the runtime role, on an injected clock at t0.
func newFixture(t *testing.T) fixture {
	t.Helper()
	d := testkit.NewDB(t)
	clk := &clock{t: t0}
	m := NewMetrics(prometheus.NewRegistry())
	return fixture{db: d, l: New(d.App, WithClock(clk.Now), WithMetrics(m)), clk: clk, m: m}
}

func (f fixture) allow(t *testing.T, r Rule, subject string) Decision {
	t.Helper()
	d, err := f.l.Allow(context.Background(), r, subject)
	require.NoError(t, err)
	return d
}

func (f fixture) refusals(rule string) int {
	return int(testutil.ToFloat64(f.m.refusals.WithLabelValues(rule)))
}

// row reads the counter of (rule, subject); ok is false when there is none.
func (f fixture) row(t *testing.T, rule, subject string) (start time.Time, hits int, end time.Time, ok bool) {
	t.Helper()
	var n int
	require.NoError(t, f.db.App.QueryRow(context.Background(), `SELECT count(*) FROM app.rate_limit_counters WHERE key = $1`, key(rule, subject)).Scan(&n))
	if n == 0 {
		return time.Time{}, 0, time.Time{}, false
	}
	require.NoError(t, f.db.App.QueryRow(context.Background(),
		`SELECT window_start, hits, expires_at FROM app.rate_limit_counters WHERE key = $1`, key(rule, subject)).Scan(&start, &hits, &end))
	return start, hits, end, true
}

func (f fixture) rows(t *testing.T) int {
	t.Helper()
	var n int
	require.NoError(t, f.db.App.QueryRow(context.Background(), `SELECT count(*) FROM app.rate_limit_counters`).Scan(&n))
	return n
}

var signin = Rule{Name: "signin.account", Limit: 5, Window: time.Minute}

func TestLimitIsReachedExactlyAtLimitPlusOne(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for i := 1; i <= signin.Limit; i++ {
		d := f.allow(t, signin, "ada@example.com")
		require.Equal(t, Decision{Allowed: true, Remaining: signin.Limit - i}, d, "hit %d", i)
	}
	require.Zero(t, f.refusals(signin.Name))

	d := f.allow(t, signin, "ada@example.com")
	require.Equal(t, Decision{Allowed: false, Remaining: 0, RetryAfter: time.Minute}, d, "hit limit+1")
	d = f.allow(t, signin, "ada@example.com")
	require.Equal(t, Decision{Allowed: false, Remaining: 0, RetryAfter: time.Minute}, d, "hit limit+2")
	require.Equal(t, 2, f.refusals(signin.Name))

	// The count saturates at limit + 1 and the window does not move.
	start, hits, end, ok := f.row(t, signin.Name, "ada@example.com")
	require.True(t, ok)
	require.Equal(t, signin.Limit+1, hits)
	require.True(t, start.Equal(t0))
	require.True(t, end.Equal(t0.Add(time.Minute)))
}

func TestLimitOfOne(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := Rule{Name: "otp.send", Limit: 1, Window: time.Second}
	require.Equal(t, Decision{Allowed: true, Remaining: 0}, f.allow(t, r, "+251911000000"))
	require.Equal(t, Decision{Allowed: false, RetryAfter: time.Second}, f.allow(t, r, "+251911000000"))
	f.clk.Set(t0.Add(time.Second))
	require.Equal(t, Decision{Allowed: true, Remaining: 0}, f.allow(t, r, "+251911000000"))
}

func TestRetryAfterIsTheTimeToTheWindowsEndRoundedUp(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := Rule{Name: "magiclink.ip", Limit: 2, Window: time.Minute}
	f.allow(t, r, "192.0.2.1")
	f.clk.Set(t0.Add(10 * time.Second))
	f.allow(t, r, "192.0.2.1")

	for _, tc := range []struct {
		at   time.Duration // since t0, the window's start
		want time.Duration
	}{
		{10 * time.Second, 50 * time.Second},
		{20*time.Second + 300*time.Millisecond, 40 * time.Second},
		{30 * time.Second, 30 * time.Second},
		{30*time.Second + time.Microsecond, 30 * time.Second},
		{59 * time.Second, time.Second},
		{59*time.Second + 999_999*time.Microsecond, time.Second}, // 1µs left: at least a second
	} {
		f.clk.Set(t0.Add(tc.at))
		d := f.allow(t, r, "192.0.2.1")
		require.Equal(t, Decision{Allowed: false, RetryAfter: tc.want}, d, "at t0+%s", tc.at)
	}
}

func TestTheCounterRestartsWhenTheWindowHasPassed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for range signin.Limit + 1 {
		f.allow(t, signin, "ada@example.com")
	}
	f.clk.Set(t0.Add(signin.Window - time.Microsecond))
	require.False(t, f.allow(t, signin, "ada@example.com").Allowed, "the window's last microsecond")

	// The window is [start, start+Window): at its end a new one starts with this hit.
	next := t0.Add(signin.Window)
	f.clk.Set(next)
	require.Equal(t, Decision{Allowed: true, Remaining: signin.Limit - 1}, f.allow(t, signin, "ada@example.com"))
	start, hits, end, _ := f.row(t, signin.Name, "ada@example.com")
	require.True(t, start.Equal(next))
	require.Equal(t, 1, hits)
	require.True(t, end.Equal(next.Add(signin.Window)))

	// A hit long after (many windows) starts its own window too, not one aligned to the old.
	later := t0.Add(7*signin.Window + 13*time.Second)
	f.clk.Set(later)
	require.Equal(t, Decision{Allowed: true, Remaining: signin.Limit - 1}, f.allow(t, signin, "ada@example.com"))
	start, _, _, _ = f.row(t, signin.Name, "ada@example.com")
	require.True(t, start.Equal(later))
}

func TestAShortenedWindowAppliesToRunningCounters(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	long := Rule{Name: "signin.ip", Limit: 1, Window: time.Hour}
	f.allow(t, long, "198.51.100.7")
	short := long
	short.Window = time.Minute
	f.clk.Set(t0.Add(30 * time.Second))
	require.Equal(t, Decision{Allowed: false, RetryAfter: 30 * time.Second}, f.allow(t, short, "198.51.100.7"))
	f.clk.Set(t0.Add(time.Minute))
	require.Equal(t, Decision{Allowed: true, Remaining: 0}, f.allow(t, short, "198.51.100.7"))
}

func TestAClockThatWentBackNeverAsksForMoreThanAWindow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := Rule{Name: "otp.verify", Limit: 1, Window: time.Minute}
	f.allow(t, r, "s")
	f.clk.Set(t0.Add(-10 * time.Minute))
	require.Equal(t, Decision{Allowed: false, RetryAfter: time.Minute}, f.allow(t, r, "s"))
}

func TestResetClearsOneCounter(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	ip := Rule{Name: "signin.ip", Limit: 5, Window: time.Minute}
	for range signin.Limit + 1 {
		f.allow(t, signin, "ada@example.com")
		f.allow(t, ip, "ada@example.com") // same subject, other rule
	}
	f.allow(t, signin, "bob@example.com")

	require.NoError(t, f.l.Reset(ctx, signin, "ada@example.com"))
	_, _, _, ok := f.row(t, signin.Name, "ada@example.com")
	require.False(t, ok)
	require.Equal(t, Decision{Allowed: true, Remaining: signin.Limit - 1}, f.allow(t, signin, "ada@example.com"))
	// Nothing else moved.
	require.False(t, f.allow(t, ip, "ada@example.com").Allowed)
	require.Equal(t, Decision{Allowed: true, Remaining: signin.Limit - 2}, f.allow(t, signin, "bob@example.com"))

	// Resetting what has no counter is fine.
	require.NoError(t, f.l.Reset(ctx, signin, "nobody@example.com"))
}

func TestSubjectsAndRulesCountApart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	other := Rule{Name: "signin.ip", Limit: signin.Limit, Window: signin.Window}
	for range signin.Limit {
		require.True(t, f.allow(t, signin, "a@example.com").Allowed)
	}
	require.False(t, f.allow(t, signin, "a@example.com").Allowed)
	require.Equal(t, Decision{Allowed: true, Remaining: signin.Limit - 1}, f.allow(t, signin, "b@example.com"))
	require.Equal(t, Decision{Allowed: true, Remaining: signin.Limit - 1}, f.allow(t, other, "a@example.com"))
	require.Equal(t, 3, f.rows(t))
	require.Equal(t, 1, f.refusals(signin.Name))
	require.Zero(t, f.refusals(other.Name))
}

// Many replicas racing on one subject: the row serialises them, and exactly Limit get through.
func TestConcurrentHitsAllowExactlyTheLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := Rule{Name: "signin.account", Limit: 10, Window: time.Minute}
	const n = 50
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		allowed int
		errs    []error
		start   = make(chan struct{})
	)
	// A limiter per "replica", each with its own pool, as several API processes would have.
	replicas := []*Limiter{f.l}
	for range 4 {
		pool, err := db.Open(context.Background(), f.db.AppDSN, 5)
		require.NoError(t, err)
		t.Cleanup(pool.Close)
		replicas = append(replicas, New(pool, WithClock(f.clk.Now), WithMetrics(f.m)))
	}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			d, err := replicas[i%len(replicas)].Allow(context.Background(), r, "victim@example.com")
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			if d.Allowed {
				allowed++
			}
		}()
	}
	close(start)
	wg.Wait()
	require.Empty(t, errs)
	require.Equal(t, r.Limit, allowed)
	require.Equal(t, n-r.Limit, f.refusals(r.Name))
	_, hits, _, _ := f.row(t, r.Name, "victim@example.com")
	require.Equal(t, r.Limit+1, hits)
}

// hostileSubjects are subjects an attacker controls the bytes of.
var hostileSubjects = []string{
	"",
	"\xff\xfe\xfd",                      // invalid UTF-8
	"a\x00b",                            // NUL inside
	"a",                                 // what "a\x00b" would be cut to by a C string
	"\x00",                              // NUL alone
	strings.Repeat("x", 1<<20) + "\xc0", // a megabyte, ending in a broken sequence
	"'; DROP TABLE app.rate_limit_counters; --",
	"ADA@example.com", // subjects are bytes: the edge normalises e-mail before
	"ada@example.com",
}

func TestAnySubjectIsHashedAndCounted(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := Rule{Name: "signin.account", Limit: 2, Window: time.Minute}
	for _, s := range hostileSubjects {
		require.Equal(t, Decision{Allowed: true, Remaining: 1}, f.allow(t, r, s))
	}
	for _, s := range hostileSubjects {
		require.Equal(t, Decision{Allowed: true, Remaining: 0}, f.allow(t, r, s))
		require.Equal(t, Decision{Allowed: false, RetryAfter: time.Minute}, f.allow(t, r, s))
	}
	require.Equal(t, len(hostileSubjects), f.rows(t), "each subject its own counter")

	// The keys are the SHA-256 of "<rule>\x00<subject>" and nothing of the subject is kept.
	rows, err := f.db.App.Query(context.Background(), `SELECT key FROM app.rate_limit_counters`)
	require.NoError(t, err)
	got := map[[32]byte]bool{}
	for rows.Next() {
		var k []byte
		require.NoError(t, rows.Scan(&k))
		require.Len(t, k, 32)
		got[[32]byte(k)] = true
	}
	require.NoError(t, rows.Err())
	for _, s := range hostileSubjects {
		require.True(t, got[sha256.Sum256([]byte(r.Name+"\x00"+s))], "subject %.20q", s)
		require.NoError(t, f.l.Reset(context.Background(), r, s))
	}
	require.Zero(t, f.rows(t))
}

func TestCleanupDeletesEndedWindows(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	short := Rule{Name: "otp.send", Limit: 3, Window: time.Minute}
	long := Rule{Name: "signin.ip", Limit: 3, Window: time.Hour}
	f.allow(t, short, "ends-at-t0+1m")
	f.allow(t, long, "ends-at-t0+1h")
	f.clk.Set(t0.Add(30 * time.Second))
	f.allow(t, short, "ends-at-t0+1m30s")

	f.clk.Set(t0.Add(time.Minute)) // exactly the first window's end: it has passed
	n, err := f.l.Cleanup(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	_, _, _, ok := f.row(t, short.Name, "ends-at-t0+1m")
	require.False(t, ok)
	_, _, _, ok = f.row(t, short.Name, "ends-at-t0+1m30s")
	require.True(t, ok)

	f.clk.Set(t0.Add(2 * time.Hour))
	n, err = f.l.Cleanup(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	require.Zero(t, f.rows(t))

	n, err = f.l.Cleanup(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "a second run finds nothing")
}

func TestCleanupDeletesInBatches(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	// More ended counters than one batch, and one running.
	_, err := f.db.App.Exec(ctx, `
		INSERT INTO app.rate_limit_counters (key, window_start, hits, expires_at)
		SELECT sha256(int4send(i)), $1, 1, $2 FROM generate_series(1, $3) AS i`,
		t0, t0.Add(time.Minute), cleanupBatch*2+7)
	require.NoError(t, err)
	f.allow(t, Rule{Name: "signin.ip", Limit: 1, Window: time.Hour}, "running")
	f.clk.Set(t0.Add(time.Minute))
	n, err := f.l.Cleanup(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(cleanupBatch*2+7), n)
	require.Equal(t, 1, f.rows(t))
}

// Without WithClock the database's clock is the one every replica uses.
func TestTheDatabaseClockByDefault(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	l := New(d.App)
	r := Rule{Name: "signin.account", Limit: 1, Window: time.Hour}
	var before, after, start, end time.Time
	require.NoError(t, d.App.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&before))
	dec, err := l.Allow(ctx, r, "ada@example.com")
	require.NoError(t, err)
	require.Equal(t, Decision{Allowed: true, Remaining: 0}, dec)
	require.NoError(t, d.App.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&after))
	require.NoError(t, d.App.QueryRow(ctx, `SELECT window_start, expires_at FROM app.rate_limit_counters WHERE key = $1`,
		key(r.Name, "ada@example.com")).Scan(&start, &end))
	require.False(t, start.Before(before), "window %s started before the call at %s", start, before)
	require.False(t, start.After(after), "window %s started after the call returned at %s", start, after)
	require.True(t, end.Equal(start.Add(time.Hour)))

	dec, err = l.Allow(ctx, r, "ada@example.com")
	require.NoError(t, err)
	require.False(t, dec.Allowed)
	require.GreaterOrEqual(t, dec.RetryAfter, time.Second)
	require.LessOrEqual(t, dec.RetryAfter, time.Hour)
	require.Zero(t, dec.RetryAfter%time.Second)

	// The window has not ended by the database's clock: nothing to clean up.
	n, err := l.Cleanup(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
}

func TestInvalidRulesAreRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	for name, r := range map[string]Rule{
		"empty name":      {Name: "", Limit: 1, Window: time.Minute},
		"long name":       {Name: strings.Repeat("a", maxNameLen+1), Limit: 1, Window: time.Minute},
		"NUL in name":     {Name: "signin\x00ip", Limit: 1, Window: time.Minute},
		"upper case":      {Name: "Signin", Limit: 1, Window: time.Minute},
		"space":           {Name: "sign in", Limit: 1, Window: time.Minute},
		"zero limit":      {Name: "r", Limit: 0, Window: time.Minute},
		"negative limit":  {Name: "r", Limit: -1, Window: time.Minute},
		"limit too large": {Name: "r", Limit: 1 << 31, Window: time.Minute},
		"zero window":     {Name: "r", Limit: 1},
		"sub-second":      {Name: "r", Limit: 1, Window: time.Second - 1},
		"negative window": {Name: "r", Limit: 1, Window: -time.Minute},
	} {
		require.ErrorIs(t, r.Validate(), ErrInvalidRule, name)
		_, err := f.l.Allow(ctx, r, "s")
		require.ErrorIs(t, err, ErrInvalidRule, name)
		require.ErrorIs(t, f.l.Reset(ctx, r, "s"), ErrInvalidRule, name)
	}
	require.Zero(t, f.rows(t), "nothing written")

	for _, r := range []Rule{
		{Name: "a", Limit: 1, Window: time.Second},
		{Name: strings.Repeat("z", maxNameLen), Limit: 1<<31 - 2, Window: 24 * time.Hour},
		{Name: "magic-link:ip_v6.2", Limit: 3, Window: 15 * time.Minute},
	} {
		require.NoError(t, r.Validate(), r.Name)
		_, err := f.l.Allow(ctx, r, "s")
		require.NoError(t, err, r.Name)
	}
}

// The runtime role may count, read, reset and clean up, and nothing more; the table is global
// (no row-level security) on purpose; the cross-tenant role has no business with it.
func TestTheTableAndItsGrants(t *testing.T) {
	t.Parallel()
	d := testkit.NewDB(t)
	ctx := context.Background()
	var rls bool
	require.NoError(t, d.App.QueryRow(ctx, `SELECT relrowsecurity FROM pg_class WHERE oid = 'app.rate_limit_counters'::regclass`).Scan(&rls))
	require.False(t, rls)
	for _, tc := range []struct {
		role, priv string
		want       bool
	}{
		{"wagerail_app", "SELECT", true},
		{"wagerail_app", "INSERT", true},
		{"wagerail_app", "UPDATE", true},
		{"wagerail_app", "DELETE", true},
		{"wagerail_app", "TRUNCATE", false},
		{"wagerail_app", "REFERENCES", false},
		{"wagerail_app", "TRIGGER", false},
		{"wagerail_platform", "SELECT", false},
		{"wagerail_platform", "INSERT", false},
		{"wagerail_platform", "DELETE", false},
	} {
		var has bool
		require.NoError(t, d.App.QueryRow(ctx, `SELECT has_table_privilege($1, 'app.rate_limit_counters', $2)`, tc.role, tc.priv).Scan(&has))
		require.Equal(t, tc.want, has, "%s %s", tc.role, tc.priv)
	}
	// The database refuses a key that is not a SHA-256 and a window that ends before it starts.
	_, err := d.App.Exec(ctx, `INSERT INTO app.rate_limit_counters VALUES ('\x01', $1, 1, $2)`, t0, t0.Add(time.Minute))
	require.Error(t, err)
	_, err = d.App.Exec(ctx, `INSERT INTO app.rate_limit_counters VALUES (sha256('k'), $1, 1, $1)`, t0)
	require.Error(t, err)
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg, signin)
	require.Equal(t, 1, testutil.CollectAndCount(m.refusals), "listed rules are exported at 0")
	require.Zero(t, testutil.ToFloat64(m.refusals.WithLabelValues(signin.Name)))
	// A second registration on the same registry shares the counter.
	again := NewMetrics(reg)
	again.refused(signin.Name)
	require.Equal(t, 1.0, testutil.ToFloat64(m.refusals.WithLabelValues(signin.Name)))
	// Not registered, and nil: both fine.
	NewMetrics(nil).refused("x")
	var none *Metrics
	none.refused("x")
}

// Whatever bytes a subject holds, Allow counts it and never fails.
func FuzzAllowSubject(f *testing.F) {
	for _, s := range hostileSubjects {
		if len(s) < 1<<10 {
			f.Add(s)
		}
	}
	d := testkit.NewDB(f)
	clk := &clock{t: t0}
	l := New(d.App, WithClock(clk.Now))
	r := Rule{Name: "fuzz", Limit: 1, Window: time.Minute}
	f.Fuzz(func(t *testing.T, subject string) {
		ctx := context.Background()
		require.NoError(t, l.Reset(ctx, r, subject))
		dec, err := l.Allow(ctx, r, subject)
		require.NoError(t, err)
		require.Equal(t, Decision{Allowed: true, Remaining: 0}, dec)
		dec, err = l.Allow(ctx, r, subject)
		require.NoError(t, err)
		require.Equal(t, Decision{Allowed: false, RetryAfter: time.Minute}, dec)
	})
}
