package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
)

// countingConsumer counts the deliveries of each event; fail, while set, refuses them.
type countingConsumer struct {
	name string
	mu   sync.Mutex
	got  map[string]int
	fail bool
}

func (c *countingConsumer) Name() string { return c.name }

func (c *countingConsumer) Consume(_ context.Context, e outbox.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.got == nil {
		c.got = map[string]int{}
	}
	c.got[e.ID]++
	if c.fail {
		return errors.New("downstream refused")
	}
	return nil
}

func (c *countingConsumer) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.got {
		out[k] = v
	}
	return out
}

func (c *countingConsumer) setFail(f bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fail = f
}

type deadLetterPage struct {
	Items      []deadLetterJSON `json:"items"`
	NextCursor *string          `json:"nextCursor"`
}

// One consumer fails, two are healthy, against the real Postgres and the real relay: the healthy
// ones get each event exactly once; the failing one dead-letters each; the platform admin lists
// the dead letters with filters and requeues two of them through the HTTP route (audited), after
// which the fixed consumer gets those two once more and nobody else gets anything again. Other
// callers are refused as the route table's Platform level says.
func TestDeadLettersListAndRequeuePerConsumer(t *testing.T) {
	f := newAuthFixture(t)
	platform := f.platformAdmin("outbox-admin@example.com")
	owner, _ := f.signUp("outbox-owner@example.com", "BUSINESS")
	anonymous := f.client()

	plat := f.d.Platform(t)
	now := time.Now().Add(time.Hour).Truncate(time.Millisecond) // every row written now is due
	var clockMu sync.Mutex
	clock := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	advance := func(d time.Duration) { clockMu.Lock(); now = now.Add(d); clockMu.Unlock() }
	relay, err := outbox.NewRelay(outbox.Config{Platform: plat, Registerer: prometheus.NewRegistry(), Now: clock,
		MaxAttempts: 2, BackoffBase: time.Second, BackoffCap: time.Second})
	require.NoError(t, err)
	mail, ledger, broken := &countingConsumer{name: "mail"}, &countingConsumer{name: "ledger"}, &countingConsumer{name: "broken", fail: true}
	require.NoError(t, relay.Register(outbox.AllEvents, mail))
	require.NoError(t, relay.Register("ewa.disbursed.v1", ledger))
	require.NoError(t, relay.Register(outbox.AllEvents, broken))
	poll := func() outbox.PollResult {
		res, err := relay.Poll(context.Background())
		require.NoError(t, err)
		return res
	}

	write := func(tenant, typ string) outbox.Event {
		ctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tenant, Actor: "user-1"})
		var ev outbox.Event
		require.NoError(t, tenancy.InTx(ctx, f.d.App, func(tx pgx.Tx) error {
			var err error
			ev, err = outbox.Write(ctx, tx, typ, map[string]string{"ref": tenant})
			return err
		}))
		return ev
	}
	ewaA, ewaB, kycA := write("tenant-a", "ewa.disbursed.v1"), write("tenant-b", "ewa.disbursed.v1"), write("tenant-a", "kyc.approved.v1")

	require.Equal(t, 3, poll().Retried)
	advance(time.Second)
	res := poll()
	require.Equal(t, 3, res.DeadLettered)
	require.Zero(t, poll().Claimed, "nothing owed any more")
	require.Equal(t, map[string]int{ewaA.ID: 1, ewaB.ID: 1, kycA.ID: 1}, mail.counts())
	require.Equal(t, map[string]int{ewaA.ID: 1, ewaB.ID: 1}, ledger.counts())
	require.Equal(t, map[string]int{ewaA.ID: 2, ewaB.ID: 2, kycA.ID: 2}, broken.counts())

	list := func(query string) deadLetterPage {
		t.Helper()
		rec := platform.call(http.MethodGet, "/api/admin/outbox/dead-letters"+query, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		return decode[deadLetterPage](t, rec)
	}
	all := list("")
	require.Len(t, all.Items, 3)
	require.Nil(t, all.NextCursor)
	for i, ev := range []outbox.Event{ewaA, ewaB, kycA} {
		dl := all.Items[i]
		require.Equal(t, ev.ID, dl.EventID, "oldest first")
		require.Equal(t, "broken", dl.Consumer)
		require.Equal(t, ev.Type, dl.Type)
		require.Equal(t, ev.TenantID, dl.TenantID)
		require.Equal(t, 2, dl.Attempts)
		require.Equal(t, "broken: downstream refused", dl.LastError)
		require.JSONEq(t, string(ev.Payload), string(dl.Payload))
	}
	ids := func(p deadLetterPage) []string {
		var out []string
		for _, it := range p.Items {
			out = append(out, it.EventID)
		}
		return out
	}
	deadAt := all.Items[0].DeadAt.Format(time.RFC3339Nano)
	justAfter := all.Items[0].DeadAt.Add(time.Millisecond).Format(time.RFC3339Nano)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"?consumer=broken&type=kyc.approved.v1", []string{kycA.ID}},
		{"?consumer=mail", nil},
		{"?type=ewa.disbursed.v1&tenantId=tenant-b", []string{ewaB.ID}},
		{"?from=" + url.QueryEscape(deadAt), []string{ewaA.ID, ewaB.ID, kycA.ID}},
		{"?from=" + url.QueryEscape(justAfter), nil},
		{"?to=" + url.QueryEscape(deadAt), nil},
		{"?from=" + url.QueryEscape(deadAt) + "&to=" + url.QueryEscape(justAfter), []string{ewaA.ID, ewaB.ID, kycA.ID}},
	} {
		require.Equal(t, tc.want, ids(list(tc.query)), tc.query)
	}
	first := list("?limit=2")
	require.Equal(t, []string{ewaA.ID, ewaB.ID}, ids(first))
	require.NotNil(t, first.NextCursor)
	rest := list("?limit=2&cursor=" + *first.NextCursor)
	require.Equal(t, []string{kycA.ID}, ids(rest))
	require.Nil(t, rest.NextCursor)

	// Refusals: the document refuses each one too, and nothing changes.
	for _, q := range []string{"?consumer=Broken", "?type=ewa.disbursed", "?tenantId=a%20b", "?limit=0", "?limit=101", "?cursor=0",
		"?from=yesterday"} {
		require.Error(t, platform.documentVerdict(http.MethodGet, "/api/admin/outbox/dead-letters"+q, nil), q)
		rec := platform.hostile(http.MethodGet, "/api/admin/outbox/dead-letters"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", q, rec.Body.String())
		require.Equal(t, "INVALID_REQUEST", errCode(rec), q)
	}
	// What no schema states, the operation's description does: unknown or repeated parameters.
	for _, q := range []string{"?bogus=1", "?consumer=broken&consumer=mail"} {
		rec := platform.hostile(http.MethodGet, "/api/admin/outbox/dead-letters"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", q, rec.Body.String())
		require.Equal(t, "INVALID_REQUEST", errCode(rec), q)
	}
	rec := platform.call(http.MethodGet, "/api/admin/outbox/dead-letters?from="+url.QueryEscape(justAfter)+"&to="+url.QueryEscape(deadAt), nil)
	require.Equal(t, http.StatusBadRequest, rec.Code, "to must be after from: %s", rec.Body.String())
	const requeuePath = "/api/admin/outbox/dead-letters/requeue"
	tooMany := make([]int64, 101)
	for i := range tooMany {
		tooMany[i] = int64(i + 1)
	}
	for _, body := range []any{
		map[string]any{}, map[string]any{"ids": []int64{}}, map[string]any{"ids": tooMany},
		map[string]any{"ids": []int64{all.Items[0].ID, all.Items[0].ID}}, map[string]any{"ids": []int64{0}},
		map[string]any{"ids": []string{"1"}}, map[string]any{"ids": []int64{1}, "all": true},
	} {
		require.Error(t, platform.documentVerdict(http.MethodPost, requeuePath, body), "%v", body)
		rec := platform.hostile(http.MethodPost, requeuePath, body)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%v: %s", body, rec.Body.String())
	}
	rec = platform.call(http.MethodPost, requeuePath, map[string]any{"ids": []int64{all.Items[0].ID, all.Items[2].ID + 1000}})
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	require.Equal(t, "NOT_FOUND", errCode(rec))
	require.Contains(t, rec.Body.String(), fmt.Sprintf(`"missing":[%d]`, all.Items[2].ID+1000))

	// Not the platform's: refused before anything is read or changed.
	for _, cl := range []struct {
		who    *apiClient
		status int
		code   string
	}{{owner, http.StatusForbidden, "PLATFORM_ADMIN_REQUIRED"}, {anonymous, http.StatusUnauthorized, "UNAUTHENTICATED"}} {
		rec := cl.who.call(http.MethodGet, "/api/admin/outbox/dead-letters", nil)
		require.Equal(t, cl.status, rec.Code, rec.Body.String())
		require.Equal(t, cl.code, errCode(rec))
		rec = cl.who.call(http.MethodPost, requeuePath, map[string]any{"ids": []int64{all.Items[0].ID}})
		require.Equal(t, cl.status, rec.Code, rec.Body.String())
		require.Equal(t, cl.code, errCode(rec))
	}
	require.Len(t, list("").Items, 3, "nothing was requeued")
	require.Zero(t, poll().Claimed)

	// While a relay holds one of the events (delivering it to a consumer that still owes it),
	// its dead letters wait: 409, nothing requeued.
	sys := tenancy.WithActor(context.Background(), "system:test")
	lease := func(until string) {
		require.NoError(t, crosstenant.Tx(sys, plat, "test: lease an event", func(tx pgx.Tx) error {
			_, err := tx.Exec(sys, `UPDATE app.outbox SET published_at = NULL, claim_id = gen_random_uuid(), claimed_until = now() + $2::interval
				WHERE event_id = $1`, kycA.ID, until)
			return err
		}))
	}
	lease("1 minute")
	rec = platform.call(http.MethodPost, requeuePath, map[string]any{"ids": []int64{all.Items[0].ID, all.Items[2].ID}})
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())
	require.Equal(t, "OUTBOX_EVENT_IN_FLIGHT", errCode(rec))
	require.Len(t, list("").Items, 3, "nothing was requeued")
	lease("-1 second") // that relay's lease ended (its outcome would be discarded)

	// Fixed, and two of the three requeued: the broken consumer gets those once more, nobody else.
	broken.setFail(false)
	rec = platform.call(http.MethodPost, requeuePath, map[string]any{"ids": []int64{all.Items[2].ID, all.Items[0].ID}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	requeued := decode[struct {
		Requeued []deadLetterJSON `json:"requeued"`
	}](t, rec).Requeued
	require.Len(t, requeued, 2)
	require.Equal(t, []string{kycA.ID, ewaA.ID}, []string{requeued[0].EventID, requeued[1].EventID}, "in the request's order")
	res = poll()
	require.Equal(t, 2, res.Claimed)
	require.Equal(t, 2, res.Published)
	require.Equal(t, map[string]int{ewaA.ID: 3, ewaB.ID: 2, kycA.ID: 3}, broken.counts())
	require.Equal(t, map[string]int{ewaA.ID: 1, ewaB.ID: 1, kycA.ID: 1}, mail.counts(), "healthy consumers: each event exactly once")
	require.Equal(t, map[string]int{ewaA.ID: 1, ewaB.ID: 1}, ledger.counts())
	require.Equal(t, []string{ewaB.ID}, ids(list("")))

	// The requeue is audited per dead letter under the event's tenant, the admin as actor.
	type auditRow struct{ tenant, actor, outcome, target, consumer string }
	var rows []auditRow
	actx := tenancy.WithActor(context.Background(), "system:test")
	require.NoError(t, crosstenant.Tx(actx, plat, "test: read the requeue audit", func(tx pgx.Tx) error {
		r, err := tx.Query(actx, `SELECT tenant_id, actor, outcome, target_id, details->>'consumer' FROM app.audit_log
			WHERE action = $1 ORDER BY id`, outbox.AuditRequeued)
		if err != nil {
			return err
		}
		rows, err = pgx.CollectRows(r, func(row pgx.CollectableRow) (auditRow, error) {
			var a auditRow
			return a, row.Scan(&a.tenant, &a.actor, &a.outcome, &a.target, &a.consumer)
		})
		return err
	}))
	require.Len(t, rows, 2)
	for i, ev := range []outbox.Event{kycA, ewaA} {
		require.Equal(t, ev.TenantID, rows[i].tenant)
		require.Equal(t, ev.ID, rows[i].target)
		require.Equal(t, "SUCCESS", rows[i].outcome)
		require.Equal(t, "broken", rows[i].consumer)
		require.NotContains(t, rows[i].actor, "system:", "the admin is the actor")
		require.NotEmpty(t, rows[i].actor)
	}
}
