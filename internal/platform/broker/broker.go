// Package broker is the outbox's broker producer (the spec's: dormant, and built only when a
// broker address is configured): one more outbox consumer, subscribed to every event type, that
// publishes each committed event to a NATS JetStream stream for systems outside Wagerail to read
// (a data warehouse, a partner integration), so none of them reads app.outbox.
//
// Delivery is the relay's: at least once, with this consumer's own delivery state, retries and
// dead letters (a broker that is down holds back no other consumer). Each event is published
// with its id as the message id (Nats-Msg-Id), so a redelivery within the stream's duplicate
// window is stored once; past it a reader de-duplicates by the event id, as every consumer of
// the outbox does. A publish counts once the stream acknowledged it (the message is stored).
//
// The message: subject <prefix>.<event type> (wagerail.events.ewa.disbursed.v1 — an event type is
// lower-case words and digits joined by dots, so every type is a subject of plain tokens), the
// event as the outbox holds it as JSON ({id, type, occurredAt, tenantId, payload}), and headers
// Nats-Msg-Id, Wagerail-Event-Type and Wagerail-Tenant. The stream is the operator's to shape
// (retention, replicas); when it does not exist the producer creates it on file storage with
// DuplicateWindow, and it refuses to start on a stream that does not take <prefix>.>.
//
// What it must not do: log an event's payload (it names people's money), or hold the relay
// longer than Config.Timeout per event.
package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wagerail/wagerail/internal/platform/outbox"
)

// ConsumerName is the producer's name in the relay (its delivery state, retries and dead
// letters, and the consumer label of svc_outbox_consumer_failures_total).
const ConsumerName = "broker"

// Defaults of Config.
const (
	DefaultStream        = "WAGERAIL_EVENTS"
	DefaultSubjectPrefix = "wagerail.events"
	DefaultTimeout       = 10 * time.Second
	// DuplicateWindow is the duplicate window of a stream the producer creates: a redelivery of an
	// event within it (the relay's retries come within minutes) is stored once.
	DuplicateWindow = time.Hour
)

// Headers set on every message besides Nats-Msg-Id.
const (
	HeaderEventType = "Wagerail-Event-Type"
	HeaderTenant    = "Wagerail-Tenant"
)

// Config is where the producer publishes.
type Config struct {
	// URL is the NATS server: nats://host:port or tls://host:port (OUTBOX_BROKER_URL), with user
	// and password in it when the server asks for them.
	URL string
	// Stream is the JetStream stream (OUTBOX_BROKER_STREAM; DefaultStream when empty).
	Stream string
	// SubjectPrefix prefixes every subject (OUTBOX_BROKER_SUBJECT_PREFIX; DefaultSubjectPrefix
	// when empty).
	SubjectPrefix string
	// Timeout bounds one publish and its acknowledgement (DefaultTimeout when 0).
	Timeout time.Duration
}

var (
	streamName    = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	subjectPrefix = regexp.MustCompile(`^[a-z0-9_-]+(\.[a-z0-9_-]+)*$`)
)

// withDefaults is c with its defaults filled in, checked: a scheme NATS speaks, a stream name and
// a prefix of plain subject tokens.
func (c Config) withDefaults() (Config, error) {
	if c.Stream == "" {
		c.Stream = DefaultStream
	}
	if c.SubjectPrefix == "" {
		c.SubjectPrefix = DefaultSubjectPrefix
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	u, err := url.Parse(c.URL)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "nats" && u.Scheme != "tls"):
		return c, errors.New("broker: the URL must be nats://host:port or tls://host:port")
	case !streamName.MatchString(c.Stream):
		return c, errors.New("broker: the stream name must be 1 to 64 of letters, digits, '_' and '-'")
	case len(c.SubjectPrefix) > 128 || !subjectPrefix.MatchString(c.SubjectPrefix):
		return c, errors.New("broker: the subject prefix must be dot-separated tokens of a-z, 0-9, '_' and '-' (at most 128 bytes)")
	case c.Timeout < 0:
		return c, errors.New("broker: the timeout must not be negative")
	}
	return c, nil
}

// Producer publishes the outbox's events to the stream (an outbox.Consumer).
type Producer struct {
	cfg Config
	nc  *nats.Conn
	js  jetstream.JetStream
}

// Connect reaches the server, makes sure the stream takes the producer's subjects (creating it
// when it does not exist) and answers the producer. The connection reconnects on its own for as
// long as the producer lives; a publish while it is down fails, and the relay retries the event.
func Connect(ctx context.Context, log *slog.Logger, cfg Config) (*Producer, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	nc, err := nats.Connect(cfg.URL, nats.Name("wagerail-outbox"), nats.MaxReconnects(-1), nats.Timeout(cfg.Timeout),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			log.Warn("broker: disconnected", "error", err)
		}),
		nats.ReconnectHandler(func(*nats.Conn) { log.Info("broker: reconnected") }))
	if err != nil {
		return nil, fmt.Errorf("broker: connect: %w", err)
	}
	p := &Producer{cfg: cfg, nc: nc}
	if p.js, err = jetstream.New(nc); err == nil {
		err = p.ensureStream(ctx)
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	return p, nil
}

// ensureStream checks that the stream exists and takes <prefix>.>, and creates it when it does
// not exist.
func (p *Producer) ensureStream(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	want := p.cfg.SubjectPrefix + ".>"
	s, err := p.js.Stream(ctx, p.cfg.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = p.js.CreateStream(ctx, jetstream.StreamConfig{Name: p.cfg.Stream, Subjects: []string{want},
			Storage: jetstream.FileStorage, Duplicates: DuplicateWindow,
			Description: "Wagerail's committed events, published from the outbox"})
		if err != nil {
			return fmt.Errorf("broker: create stream %s: %w", p.cfg.Stream, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("broker: stream %s: %w", p.cfg.Stream, err)
	}
	if !slices.Contains(s.CachedInfo().Config.Subjects, want) {
		return fmt.Errorf("broker: stream %s does not take %s (its subjects: %v)", p.cfg.Stream, want, s.CachedInfo().Config.Subjects)
	}
	return nil
}

// Name is ConsumerName.
func (p *Producer) Name() string { return ConsumerName }

// Subject is the subject an event of type typ is published on.
func (p *Producer) Subject(typ string) string { return p.cfg.SubjectPrefix + "." + typ }

// Consume publishes e and waits for the stream to store it (or to say it has it already: a
// duplicate within the window). An error leaves the event to the relay's retry.
func (p *Producer) Consume(ctx context.Context, e outbox.Event) error {
	if outbox.ValidType(e.Type) != nil {
		// Write admits no such type; one here did not come from the outbox.
		return fmt.Errorf("broker: event %s: not an event type", e.ID)
	}
	data, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("broker: event %s: %w", e.ID, err)
	}
	m := nats.NewMsg(p.Subject(e.Type))
	m.Data = data
	m.Header.Set(HeaderEventType, e.Type)
	m.Header.Set(HeaderTenant, e.TenantID)
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	if _, err := p.js.PublishMsg(ctx, m, jetstream.WithMsgID(e.ID), jetstream.WithExpectStream(p.cfg.Stream)); err != nil {
		return fmt.Errorf("broker: publish event %s (%s): %w", e.ID, e.Type, err)
	}
	return nil
}

// Connected reports whether the connection to the server is up now (a publish may still fail:
// the stream may refuse it).
func (p *Producer) Connected() bool { return p.nc.IsConnected() }

// UpMetric is svc_dependency_up{dependency="broker"}: 1 while the connection is up, else 0, read
// at each scrape — the worker's registry holds it beside the relay's metrics.
func (p *Producer) UpMetric() prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "svc_dependency_up",
		Help:        "1 when the dependency answered its last probe, else 0.",
		ConstLabels: prometheus.Labels{"dependency": "broker"}}, func() float64 {
		if p.Connected() {
			return 1
		}
		return 0
	})
}

// Close drains nothing (every publish waited for its acknowledgement) and closes the connection.
func (p *Producer) Close() { p.nc.Close() }
