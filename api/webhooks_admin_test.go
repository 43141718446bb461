package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/callbacksig"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// The sagas the webhook tests deliver to: a tiny workflow that waits on the settlement signal
// and records the event ids it saw, deduping by event id like every saga does. Its id is the
// transfer's reference (bankwebhook.WorkflowIDOf).

const (
	recorderWorkflow = "test-settlement-recorder"
	recorderQuery    = "seen"
)

// recorderState is what a recorder saw: the distinct event ids in arrival order (with their
// statuses) and the number of signals, duplicates included.
type recorderState struct {
	Seen     []string
	Statuses []string
	Signals  int
}

// settlementRecorder records settlements until it is cancelled; with finish it returns at once
// (a saga that has closed).
func settlementRecorder(ctx workflow.Context, finish bool) (recorderState, error) {
	var st recorderState
	if err := workflow.SetQueryHandler(ctx, recorderQuery, func() (recorderState, error) { return st, nil }); err != nil {
		return st, err
	}
	if finish {
		return st, nil
	}
	seen := map[string]bool{}
	ch := workflow.GetSignalChannel(ctx, bankwebhook.SettlementSignalName)
	for {
		var s bankwebhook.Settlement
		ch.Receive(ctx, &s)
		st.Signals++
		if seen[s.EventID] {
			continue
		}
		seen[s.EventID] = true
		st.Seen = append(st.Seen, s.EventID)
		st.Statuses = append(st.Statuses, s.Status)
	}
}

// sagaHarness is a Temporal client on the shared embedded server and a worker running the
// recorder on a queue of its own.
type sagaHarness struct {
	tc    client.Client
	queue string
}

func newSagaHarness(t testing.TB) *sagaHarness {
	t.Helper()
	ts := devtemporaltest.Server(t)
	tc, err := client.Dial(client.Options{HostPort: ts.HostPort(), Namespace: ts.Namespace()})
	require.NoError(t, err)
	h := &sagaHarness{tc: tc, queue: testkit.Unique("hooks")}
	w := worker.New(tc, h.queue, worker.Options{})
	w.RegisterWorkflowWithOptions(settlementRecorder, workflow.RegisterOptions{Name: recorderWorkflow})
	require.NoError(t, w.Start())
	t.Cleanup(func() {
		w.Stop()
		tc.Close()
	})
	return h
}

// start runs a recorder with workflow id wfID; finished runs one that has already closed.
func (h *sagaHarness) start(t testing.TB, wfID string, finished bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := h.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wfID, TaskQueue: h.queue}, recorderWorkflow, finished)
	require.NoError(t, err)
	if finished {
		require.NoError(t, run.Get(ctx, nil))
	}
}

// seen asks the recorder what it saw (a query after a signal returned sees it).
func (h *sagaHarness) seen(t testing.TB, wfID string) recorderState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	v, err := h.tc.QueryWorkflow(ctx, wfID, "", recorderQuery)
	require.NoError(t, err)
	var st recorderState
	require.NoError(t, v.Get(&st))
	return st
}

// hooksFixture is an API with platform admins, partner secrets and sagas on the embedded
// Temporal server.
type hooksFixture struct {
	*authFixture
	saga *sagaHarness
	run  string // prefixes references, so tests sharing the Temporal server never collide
	root *apiClient
	seq  int
}

func newHooksFixture(t testing.TB) *hooksFixture {
	t.Helper()
	f := &hooksFixture{authFixture: &authFixture{t: t, d: testkit.NewDB(t), inbox: &notify.Memory{},
		clock: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}, saga: newSagaHarness(t), run: testkit.Unique("wh")}
	f.srv = f.server(f.saga.tc)
	f.root = f.platformAdmin("root@hooks.example")
	return f
}

// server is another API on the same database with temporal as its Temporal client.
func (f *hooksFixture) server(temporal client.Client) *Server {
	srv := New(Deps{
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), DB: f.d.App, Platform: f.d.Platform(f.t),
		Registry: prometheus.NewRegistry(), Mailer: f.inbox, Texter: f.inbox, Now: f.now, Temporal: temporal,
		WebhookSecrets: map[string][]byte{"sandbox": sandboxSecret, "otherbank": []byte("otherbank-secret")},
	})
	return srv
}

func (f *hooksFixture) ref(name string) string { return f.run + "-" + name }

// transfer records, as the gateway does, a transfer of tenant with reference ref(name) at
// partner; saga "running" starts its recorder, "finished" one that has closed, "" none.
func (f *hooksFixture) transfer(partner, name, tenant string, amount int64, saga string) string {
	f.t.Helper()
	ref := f.ref(name)
	require.NoError(f.t, gateway.NewStore(f.d.App).RecordTransfers(context.Background(), tenant, []gateway.TransferRecord{{
		Partner: partner, Reference: ref, TenantID: tenant, Domain: "EWA", AmountSantim: amount,
		Currency: "ETB", FromAccount: "employer-1", ToAccount: "employee-1",
	}}))
	if saga != "" {
		f.saga.start(f.t, bankwebhook.WorkflowIDOf(ref), saga == "finished")
	}
	return ref
}

// callback posts a signed callback about ref to srv as partner and returns the answer.
func (f *hooksFixture) callback(srv *Server, partner, ref, eventID, status, tenant string, amount int64) (*httptest.ResponseRecorder, []byte) {
	f.t.Helper()
	body := callbackBodyRef(ref, eventID, status, tenant, amount)
	f.seq++
	nonce := "nonce-" + strconv.Itoa(f.seq)
	secret := sandboxSecret
	if partner == "otherbank" {
		secret = []byte("otherbank-secret")
	}
	ts := strconv.FormatInt(f.now().Unix(), 10)
	// The signature covers the raw bytes, which the contract client sends as they are.
	rec := newAPIClient(f.t, srv).call(http.MethodPost, "/api/integration/bank-callback/"+partner, body,
		"x-svc-timestamp", ts, "x-svc-nonce", nonce, "x-svc-signature", callbacksig.Sign(secret, ts, nonce, body))
	return rec, body
}

// audits counts audit rows of action across every tenant, as "tenant actor outcome".
func (f *hooksFixture) audits(action string) []string {
	f.t.Helper()
	var out []string
	ctx := tenancy.WithActor(context.Background(), "admin-test")
	require.NoError(f.t, crosstenant.Tx(ctx, f.d.Platform(f.t), "test inspection", func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT tenant_id || ' ' || actor || ' ' || outcome FROM app.audit_log WHERE action = $1 ORDER BY id`, action)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	return out
}

type webhookEventListJSON struct {
	Items      []webhookEventJSON `json:"items"`
	NextCursor *string            `json:"nextCursor"`
}

type webhookReplayJSON struct {
	ID           int64   `json:"id"`
	EventID      string  `json:"eventId"`
	AttemptID    int64   `json:"attemptId"`
	Outcome      string  `json:"outcome"`
	EventOutcome string  `json:"eventOutcome"`
	WorkflowID   string  `json:"workflowId"`
	Problem      *string `json:"problem"`
}

func (f *hooksFixture) list(query string) webhookEventListJSON {
	f.t.Helper()
	path := "/api/integration/webhooks"
	if query != "" {
		path += "?" + query
	}
	rec := f.root.call(http.MethodGet, path, nil)
	require.Equal(f.t, http.StatusOK, rec.Code, rec.Body.String())
	return decode[webhookEventListJSON](f.t, rec)
}

func eventIDs(items []webhookEventJSON) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.EventID)
	}
	return out
}

func (f *hooksFixture) get(id int64) webhookEventDetailJSON {
	f.t.Helper()
	rec := f.root.call(http.MethodGet, fmt.Sprintf("/api/integration/webhooks/%d", id), nil)
	require.Equal(f.t, http.StatusOK, rec.Code, rec.Body.String())
	return decode[webhookEventDetailJSON](f.t, rec)
}

func (f *hooksFixture) replay(id int64) webhookReplayJSON {
	f.t.Helper()
	rec := f.root.call(http.MethodPost, fmt.Sprintf("/api/integration/webhooks/%d/replay", id), nil)
	require.Equal(f.t, http.StatusOK, rec.Code, rec.Body.String())
	return decode[webhookReplayJSON](f.t, rec)
}

func deliveriesOf(d webhookEventDetailJSON) []string {
	out := []string{}
	for _, at := range d.Deliveries {
		out = append(out, at.Trigger+" "+at.Outcome)
	}
	return out
}

type callbackAck struct {
	Status  string `json:"status"`
	Outcome string `json:"outcome"`
	ID      int64  `json:"id"`
}

// The list filters by partner, outcome and received time, pages newest first, and never shows a
// raw body; one event shows its raw body and every delivery attempt.
func TestWebhookAdminListFiltersAndPages(t *testing.T) {
	t.Parallel()
	f := newHooksFixture(t)
	refA := f.transfer("sandbox", "a", "tenant-a", 1_000, "running")
	refFin := f.transfer("sandbox", "fin", "tenant-a", 1_000, "finished")
	refO := f.transfer("otherbank", "o", "tenant-b", 2_000, "running")

	post := func(partner, ref, eventID, tenant string, amount int64, want string) (callbackAck, []byte) {
		rec, body := f.callback(f.srv, partner, ref, eventID, "SETTLED", tenant, amount)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		ack := decode[callbackAck](t, rec)
		require.Equal(t, want, ack.Outcome, eventID)
		f.advance(time.Minute)
		return ack, body
	}
	t0 := f.now()
	a, bodyA := post("sandbox", refA, "ev-a", "tenant-a", 1_000, "APPLIED")
	post("sandbox", refA, "ev-a", "tenant-a", 1_000, "DUPLICATE")
	fin, _ := post("sandbox", refFin, "ev-fin", "tenant-a", 1_000, "SAGA_FINISHED")
	t1 := f.now()
	x, _ := post("sandbox", f.ref("x"), "ev-x", "tenant-a", 1_000, "UNMATCHED")
	o, _ := post("otherbank", refO, "ev-o", "tenant-b", 2_000, "APPLIED")

	all := f.list("")
	require.Equal(t, []string{"ev-o", "ev-x", "ev-fin", "ev-a"}, eventIDs(all.Items), "newest first")
	require.Nil(t, all.NextCursor)
	rec := f.root.call(http.MethodGet, "/api/integration/webhooks", nil)
	require.NotContains(t, rec.Body.String(), "rawBody", "the list never carries a raw body")

	require.Equal(t, []string{"ev-o"}, eventIDs(f.list("partner=otherbank").Items))
	require.Equal(t, []string{"ev-o", "ev-a"}, eventIDs(f.list("outcome=APPLIED").Items))
	require.Equal(t, []string{"ev-fin"}, eventIDs(f.list("outcome=SAGA_FINISHED").Items))
	require.Equal(t, []string{"ev-x"}, eventIDs(f.list("outcome=UNMATCHED").Items))
	require.Equal(t, []string{"ev-a"}, eventIDs(f.list("outcome=DUPLICATE").Items))
	require.Empty(t, f.list("outcome=PENDING").Items)
	require.Equal(t, []string{"ev-fin", "ev-a"}, eventIDs(f.list("from="+url.QueryEscape(t0.Format(time.RFC3339))+"&to="+url.QueryEscape(t1.Format(time.RFC3339))).Items))
	require.Equal(t, []string{"ev-o", "ev-x"}, eventIDs(f.list("from="+url.QueryEscape(t1.Format(time.RFC3339Nano))).Items))
	require.Equal(t, []string{"ev-a"}, eventIDs(f.list("partner=sandbox&outcome=APPLIED&to="+url.QueryEscape(t1.Format(time.RFC3339))).Items))

	// Paging: two at a time, then the rest.
	var walked []string
	cursor := ""
	for pages := 0; pages < 5; pages++ {
		q := "limit=2"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		page := f.list(q)
		require.LessOrEqual(t, len(page.Items), 2)
		walked = append(walked, eventIDs(page.Items)...)
		if page.NextCursor == nil {
			break
		}
		cursor = *page.NextCursor
	}
	require.Equal(t, eventIDs(all.Items), walked)

	it := all.Items[1]
	require.Equal(t, "ev-x", it.EventID)
	require.Nil(t, it.TenantID, "matches no transfer: no tenant")
	require.Equal(t, "tenant-a", it.ClaimedTenantID)
	require.Equal(t, "no transfer with this reference", *it.Problem)

	got := f.get(a.ID)
	require.Equal(t, string(bodyA), got.RawBody)
	require.Equal(t, "APPLIED", got.Outcome)
	require.Equal(t, refA, got.WorkflowID)
	require.Equal(t, "tenant-a", *got.TenantID)
	require.Equal(t, []string{"RECEIPT APPLIED", "PARTNER_RETRY DUPLICATE"}, deliveriesOf(got))
	require.Equal(t, "partner:sandbox", got.Deliveries[0].Actor)
	require.Equal(t, 2, got.DeliveryCount)
	require.Equal(t, []string{"RECEIPT SAGA_FINISHED"}, deliveriesOf(f.get(fin.ID)))
	require.Equal(t, []string{"RECEIPT UNMATCHED"}, deliveriesOf(f.get(x.ID)))
	require.Equal(t, "APPLIED", f.get(o.ID).Outcome)
	require.Equal(t, []string{"ev-a"}, f.saga.seen(t, refA).Seen)
	require.Equal(t, 1, f.saga.seen(t, refA).Signals, "the partner's duplicate was not signalled")

	rec = f.root.call(http.MethodGet, "/api/integration/webhooks/999999", nil)
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	require.Equal(t, "NOT_FOUND", errCode(rec))

	for _, q := range []string{"outcome=MAYBE", "from=yesterday", "to=2026-13-01T00:00:00Z", "limit=0", "limit=101", "cursor=abc",
		"cursor=0", "cursor=-1", "partner=a%20b", "partner=", "sort=id", "outcome=APPLIED&outcome=UNMATCHED",
		"from=2026-11-23T10:00:00Z&to=2026-11-23T09:00:00Z"} {
		rec := f.root.hostile(http.MethodGet, "/api/integration/webhooks?"+q, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, "%s: %s", q, rec.Body.String())
		require.Equal(t, "INVALID_REQUEST", errCode(rec), q)
	}
	// The id is a positive int64 (openapi.yaml); any decimal spelling of one names that event, so
	// "01" is event 1, as every client that validates against the document may send it.
	rec = f.root.call(http.MethodGet, "/api/integration/webhooks/0"+strconv.FormatInt(a.ID, 10), nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, a.ID, decode[webhookEventDetailJSON](t, rec).ID)
	for _, id := range []string{"abc", "0", "-1", "1.5", "99999999999999999999"} {
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			path := "/api/integration/webhooks/" + id
			if m == http.MethodPost {
				path += "/replay"
			}
			rec := f.root.hostile(m, path, nil)
			require.Equal(t, http.StatusBadRequest, rec.Code, "%s %s: %s", m, path, rec.Body.String())
			require.Equal(t, "INVALID_REQUEST", errCode(rec))
		}
	}

	// Platform only.
	owner, _ := f.signUp("owner@hooks.example", "BUSINESS")
	rec = owner.call(http.MethodGet, "/api/integration/webhooks", nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, "PLATFORM_ADMIN_REQUIRED", errCode(rec))
	rec = owner.call(http.MethodPost, fmt.Sprintf("/api/integration/webhooks/%d/replay", a.ID), nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, 1, f.saga.seen(t, refA).Signals, "a refused replay signals nothing")
}

// A replay re-delivers the stored event as the same signal: replaying an applied event twice
// leaves the saga having seen it once, and BankWebhookApplied is written once; each replay is
// audited with the admin as actor and recorded as an attempt.
func TestWebhookAdminReplayIsIdempotentAtTheSaga(t *testing.T) {
	t.Parallel()
	f := newHooksFixture(t)
	ref := f.transfer("sandbox", "r", "tenant-a", 5_000, "running")
	rec, _ := f.callback(f.srv, "sandbox", ref, "ev-r", "SETTLED", "tenant-a", 5_000)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	id := decode[callbackAck](t, rec).ID

	for range 2 {
		r := f.replay(id)
		require.Equal(t, "APPLIED", r.Outcome)
		require.Equal(t, "APPLIED", r.EventOutcome)
		require.Equal(t, ref, r.WorkflowID)
	}
	st := f.saga.seen(t, ref)
	require.Equal(t, []string{"ev-r"}, st.Seen, "the saga saw the event once")
	require.Equal(t, 3, st.Signals, "each replay re-delivered the signal; the saga deduped it")
	require.Len(t, f.audits(bankwebhook.ActionApplied), 1)
	require.Equal(t, []string{"tenant-a partner:sandbox SUCCESS"}, f.audits(bankwebhook.ActionApplied))
	replays := f.audits(bankwebhook.ActionReplay)
	require.Len(t, replays, 2)
	for _, r := range replays {
		require.True(t, strings.HasPrefix(r, "tenant-a "), r)
		require.True(t, strings.HasSuffix(r, " SUCCESS"), r)
		require.NotContains(t, r, "partner:", "the admin is the replay's actor")
	}
	got := f.get(id)
	require.Equal(t, []string{"RECEIPT APPLIED", "REPLAY APPLIED", "REPLAY APPLIED"}, deliveriesOf(got))
	require.NotEqual(t, "partner:sandbox", got.Deliveries[1].Actor)

	// The saga closes; a replay then finds it finished, and the event stays APPLIED.
	require.NoError(t, f.saga.tc.TerminateWorkflow(context.Background(), ref, "", "test: the saga is over"))
	r := f.replay(id)
	require.Equal(t, "SAGA_FINISHED", r.Outcome)
	require.Equal(t, "APPLIED", r.EventOutcome)
	require.Equal(t, "APPLIED", f.get(id).Outcome)

	// Unknown id: 404, nothing recorded.
	rec = f.root.call(http.MethodPost, "/api/integration/webhooks/424242/replay", nil)
	require.Equal(t, http.StatusNotFound, rec.Code, rec.Body.String())
	require.Len(t, f.audits(bankwebhook.ActionReplay), 3)
}

// Replaying an UNMATCHED event: with no transfer it stays UNMATCHED; once its saga exists, a
// replay applies it (and the event becomes APPLIED, audited BankWebhookApplied once).
func TestWebhookAdminReplayOfUnmatched(t *testing.T) {
	t.Parallel()
	f := newHooksFixture(t)
	rec, _ := f.callback(f.srv, "sandbox", f.ref("none"), "ev-none", "SETTLED", "tenant-a", 10)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	none := decode[callbackAck](t, rec)
	require.Equal(t, "UNMATCHED", none.Outcome)
	r := f.replay(none.ID)
	require.Equal(t, "UNMATCHED", r.Outcome)
	require.Equal(t, "UNMATCHED", r.EventOutcome)
	require.Equal(t, "no transfer with this reference", *r.Problem)
	require.Nil(t, f.get(none.ID).TenantID)

	// The transfer exists but its saga does not (yet): unmatched, for the transfer's tenant.
	ref := f.transfer("sandbox", "late", "tenant-a", 10, "")
	rec, _ = f.callback(f.srv, "sandbox", ref, "ev-late", "FAILED", "tenant-a", 10)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	late := decode[callbackAck](t, rec)
	require.Equal(t, "UNMATCHED", late.Outcome)
	got := f.get(late.ID)
	require.Equal(t, "tenant-a", *got.TenantID)
	require.Equal(t, "no workflow with this reference", *got.Problem)
	require.Empty(t, f.audits(bankwebhook.ActionApplied))

	f.saga.start(t, ref, false)
	r = f.replay(late.ID)
	require.Equal(t, "APPLIED", r.Outcome)
	require.Equal(t, "APPLIED", r.EventOutcome)
	require.Equal(t, []string{"ev-late"}, f.saga.seen(t, ref).Seen)
	require.Equal(t, []string{"FAILED"}, f.saga.seen(t, ref).Statuses)
	got = f.get(late.ID)
	require.Equal(t, "APPLIED", got.Outcome)
	require.Nil(t, got.Problem)
	require.Equal(t, []string{"RECEIPT UNMATCHED", "REPLAY APPLIED"}, deliveriesOf(got))
	require.Equal(t, []string{"tenant-a partner:sandbox SUCCESS"}, f.audits(bankwebhook.ActionApplied))
}

// Temporal unreachable during a replay: 503, the attempt recorded UNDELIVERED and audited
// FAILED, the event unchanged.
func TestWebhookAdminReplayWithTemporalDown(t *testing.T) {
	t.Parallel()
	f := newHooksFixture(t)
	ref := f.transfer("sandbox", "d", "tenant-a", 10, "")
	rec, _ := f.callback(f.srv, "sandbox", ref, "ev-d", "SETTLED", "tenant-a", 10)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	id := decode[callbackAck](t, rec).ID

	downSrv := f.server(testkit.TemporalDown(t))
	downSrv.webhooks.applier.Timeout = time.Second // a server that is down fails the attempt sooner
	down := newAPIClient(t, downSrv)
	down.cookie = f.root.cookie
	rec = down.call(http.MethodPost, fmt.Sprintf("/api/integration/webhooks/%d/replay", id), nil)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Equal(t, "TEMPORAL_UNAVAILABLE", errCode(rec))
	got := f.get(id)
	require.Equal(t, "UNMATCHED", got.Outcome)
	require.Equal(t, []string{"RECEIPT UNMATCHED", "REPLAY UNDELIVERED"}, deliveriesOf(got))
	replays := f.audits(bankwebhook.ActionReplay)
	require.Len(t, replays, 1)
	require.True(t, strings.HasSuffix(replays[0], " FAILED"), replays[0])

	none := newAPIClient(t, f.server(nil))
	none.cookie = f.root.cookie
	rec = none.call(http.MethodPost, fmt.Sprintf("/api/integration/webhooks/%d/replay", id), nil)
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Equal(t, "NOT_CONFIGURED", errCode(rec))
}

// FuzzWebhookAdminRoutes: whatever reaches the webhook admin routes (any id and query, from a
// platform admin, a business owner or nobody) answers 4xx or success, never 5xx.
func FuzzWebhookAdminRoutes(f *testing.F) {
	fx := newHooksFixture(f)
	ref := fx.transfer("sandbox", "fz", "tenant-a", 10, "running")
	rec, _ := fx.callback(fx.srv, "sandbox", ref, "ev-fz", "SETTLED", "tenant-a", 10)
	require.Equal(f, http.StatusOK, rec.Code, rec.Body.String())
	var ack callbackAck
	require.NoError(f, json.Unmarshal(rec.Body.Bytes(), &ack))
	owner, _ := fx.signUp("owner@fuzz-hooks.example", "BUSINESS")
	routes := fx.srv.webhookAdminRoutes()
	id := strconv.FormatInt(ack.ID, 10)
	f.Add(uint8(0), uint8(0), "", "outcome=APPLIED&partner=sandbox&limit=1")
	f.Add(uint8(0), uint8(0), "", "from=2026-11-23T09:00:00Z&to=2026-11-23T10:00:00%2B03:00")
	f.Add(uint8(0), uint8(0), "", "cursor=99999999999999999999&limit=100")
	f.Add(uint8(0), uint8(0), "", "from=0000-01-01T00:00:00Z&to=9999-12-31T23:59:59Z")
	f.Add(uint8(0), uint8(0), "", "partner=%00&outcome=%ff")
	f.Add(uint8(1), uint8(0), id, "")
	f.Add(uint8(1), uint8(0), "9223372036854775807", "")
	f.Add(uint8(1), uint8(0), "../x", "")
	f.Add(uint8(2), uint8(0), id, "")
	f.Add(uint8(2), uint8(1), id, "")
	f.Add(uint8(2), uint8(2), "1", "")
	f.Fuzz(func(t *testing.T, route, who uint8, id, query string) {
		r := routes[int(route)%len(routes)]
		path := strings.ReplaceAll(r.Path, ":id", id)
		req := httptest.NewRequest(r.Method, "/", nil)
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery = path, "", query
		req.RemoteAddr = "192.0.2.79:40000"
		switch who % 3 {
		case 0:
			req.AddCookie(fx.root.cookie)
		case 1:
			req.AddCookie(owner.cookie)
		}
		rec := httptest.NewRecorder()
		fx.srv.Engine.ServeHTTP(rec, req)
		requireNoServerError(t, rec, fmt.Sprintf("%s %q %q", r.Method, path, query))
	})
}
