package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/broker"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// natsServer is a real NATS server with JetStream, in-process, on a free port, its store in a
// directory of the test's.
func natsServer(t *testing.T) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	require.NoError(t, err)
	go s.Start()
	require.True(t, s.ReadyForConnections(10*time.Second), "the NATS server starts")
	t.Cleanup(s.Shutdown)
	return s
}

// stored is every message of the stream, in order.
func stored(t *testing.T, url, stream string) []*jetstream.RawStreamMsg {
	t.Helper()
	ctx := context.Background()
	nc, err := nats.Connect(url)
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	s, err := js.Stream(ctx, stream)
	require.NoError(t, err)
	info, err := s.Info(ctx)
	require.NoError(t, err)
	var out []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		require.NoError(t, err)
		out = append(out, m)
	}
	return out
}

func event(typ, tenant string, payload string) outbox.Event {
	return outbox.Event{ID: uuid.NewString(), Type: typ, OccurredAt: time.Now().UTC().Truncate(time.Microsecond), TenantID: tenant,
		Payload: json.RawMessage(payload)}
}

// Each event is stored once, on its type's subject, as the outbox holds it, with its id as the
// message id; a redelivery (the relay's retry after a lost acknowledgement) stores nothing more.
// The stream is created when it does not exist.
func TestProducerPublishesEachEventOnce(t *testing.T) {
	s := natsServer(t)
	ctx := context.Background()
	p, err := broker.Connect(ctx, quiet, broker.Config{URL: s.ClientURL()})
	require.NoError(t, err)
	defer p.Close()
	require.Equal(t, broker.ConsumerName, p.Name())

	a := event("ewa.disbursed.v1", "org_a", `{"requestId":"ewa_1","principalSantim":150000}`)
	b := event("payroll.bank_transfer_settled.v1", "org_b", `{"domain":"PAYROLL","amountSantim":9223372036854775807}`)
	for _, e := range []outbox.Event{a, a, b, a} {
		require.NoError(t, p.Consume(ctx, e))
	}
	msgs := stored(t, s.ClientURL(), broker.DefaultStream)
	require.Len(t, msgs, 2, "one message per event")
	for i, want := range []outbox.Event{a, b} {
		m := msgs[i]
		require.Equal(t, "wagerail.events."+want.Type, m.Subject)
		require.Equal(t, want.ID, m.Header.Get(jetstream.MsgIDHeader))
		require.Equal(t, want.Type, m.Header.Get(broker.HeaderEventType))
		require.Equal(t, want.TenantID, m.Header.Get(broker.HeaderTenant))
		var got outbox.Event
		d := json.NewDecoder(bytes.NewReader(m.Data))
		d.UseNumber()
		require.NoError(t, d.Decode(&got))
		require.Equal(t, want.ID, got.ID)
		require.Equal(t, want.Type, got.Type)
		require.Equal(t, want.TenantID, got.TenantID)
		require.True(t, want.OccurredAt.Equal(got.OccurredAt))
		require.JSONEq(t, string(want.Payload), string(got.Payload), "the payload as written, santim exact")
	}
}

// A stream the operator made that does not take the producer's subjects is refused at start, not
// found out one failed publish at a time; bad settings are refused before anything is dialled.
func TestProducerRefusesBadSettings(t *testing.T) {
	s := natsServer(t)
	ctx := context.Background()
	p, err := broker.Connect(ctx, quiet, broker.Config{URL: s.ClientURL(), Stream: "OTHER", SubjectPrefix: "other"})
	require.NoError(t, err, "a stream of its own for prefix other")
	p.Close()
	_, err = broker.Connect(ctx, quiet, broker.Config{URL: s.ClientURL(), Stream: "OTHER"})
	require.ErrorContains(t, err, "does not take wagerail.events.>")

	for name, cfg := range map[string]broker.Config{
		"http scheme":           {URL: "http://127.0.0.1:4222"},
		"no host":               {URL: "nats://"},
		"stream with a dot":     {URL: s.ClientURL(), Stream: "a.b"},
		"prefix with wildcard":  {URL: s.ClientURL(), SubjectPrefix: "wagerail.*"},
		"prefix ending in dot":  {URL: s.ClientURL(), SubjectPrefix: "wagerail."},
		"prefix with space":     {URL: s.ClientURL(), SubjectPrefix: "wage rail"},
		"negative timeout":      {URL: s.ClientURL(), Timeout: -time.Second},
		"control char in strm":  {URL: s.ClientURL(), Stream: "A\x00B"},
		"invalid UTF-8 in pref": {URL: s.ClientURL(), SubjectPrefix: "a\xffb"},
	} {
		_, err := broker.Connect(ctx, quiet, cfg)
		require.Error(t, err, name)
	}
}

// A server that goes away fails the publish within the timeout (the relay retries the event
// for this consumer alone); back, the same event is published.
func TestProducerFailsWhileTheServerIsDown(t *testing.T) {
	dir := t.TempDir()
	opts := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true}
	s, err := server.NewServer(opts)
	require.NoError(t, err)
	go s.Start()
	require.True(t, s.ReadyForConnections(10*time.Second))
	addr := s.Addr().(*net.TCPAddr)
	ctx := context.Background()
	p, err := broker.Connect(ctx, quiet, broker.Config{URL: "nats://" + addr.String(), Timeout: 500 * time.Millisecond})
	require.NoError(t, err)
	defer p.Close()
	e := event("kyc.approved.v1", "org_a", `{"submissionId":"kyc_1"}`)

	upMetric := p.UpMetric()
	up := func() float64 { return testutil.ToFloat64(upMetric) }
	require.Equal(t, 1.0, up())
	s.Shutdown()
	s.WaitForShutdown()
	require.Eventually(t, func() bool { return up() == 0 }, 10*time.Second, 20*time.Millisecond, "svc_dependency_up{dependency=broker} falls")
	start := time.Now()
	require.Error(t, p.Consume(ctx, e))
	require.Less(t, time.Since(start), 5*time.Second, "bounded by the timeout, not hanging the relay")

	opts.Port = addr.Port // the same address and store: the producer's connection finds it again
	s2, err := server.NewServer(opts)
	require.NoError(t, err)
	go s2.Start()
	require.True(t, s2.ReadyForConnections(10*time.Second))
	t.Cleanup(s2.Shutdown)
	require.Eventually(t, func() bool { return p.Consume(ctx, e) == nil }, 20*time.Second, 100*time.Millisecond, "published once back")
	require.Equal(t, 1.0, up())
	require.Len(t, stored(t, s2.ClientURL(), broker.DefaultStream), 1)
}

// Through the real relay on a real Postgres: the producer subscribed to every type publishes the
// committed events, each once, and the relay marks them published.
func TestRelayPublishesCommittedEventsToTheStream(t *testing.T) {
	s := natsServer(t)
	d := testkit.NewDB(t)
	ctx := context.Background()
	p, err := broker.Connect(ctx, quiet, broker.Config{URL: s.ClientURL()})
	require.NoError(t, err)
	defer p.Close()
	r, err := outbox.NewRelay(outbox.Config{Platform: d.Platform(t), Registerer: prometheus.NewRegistry(), Lease: time.Minute})
	require.NoError(t, err)
	require.NoError(t, r.Register(outbox.AllEvents, p))

	var written []outbox.Event
	for i, typ := range []string{"ewa.disbursed.v1", "loan.disbursed.v1", "dispute.decided.v1"} {
		tctx := tenancy.With(ctx, tenancy.Scope{TenantID: []string{"org_a", "org_b", "org_a"}[i], Actor: "user-1"})
		require.NoError(t, tenancy.InTx(tctx, d.App, func(tx pgx.Tx) error {
			e, err := outbox.Write(tctx, tx, typ, map[string]any{"n": i})
			written = append(written, e)
			return err
		}))
	}
	res, err := r.Poll(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, res.Published)
	res, err = r.Poll(ctx)
	require.NoError(t, err)
	require.Zero(t, res.Claimed, "nothing left")
	msgs := stored(t, s.ClientURL(), broker.DefaultStream)
	require.Len(t, msgs, 3)
	for i, e := range written {
		require.Equal(t, e.ID, msgs[i].Header.Get(jetstream.MsgIDHeader), "in commit order")
		require.Equal(t, "wagerail.events."+e.Type, msgs[i].Subject)
	}
}
