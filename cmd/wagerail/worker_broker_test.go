package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/platform/broker"
)

// OUTBOX_BROKER_* (or --outbox-broker-*) are read into the worker's settings, the stream and
// subject prefix defaulting to the broker's; a broker URL without the relay (whose consumer the
// producer is) is refused at start, before the worker connects to anything.
func TestWorkerBrokerSettings(t *testing.T) {
	cfg := defaultWorkerConfig()
	require.NoError(t, workerFlags(&cfg).Parse(nil, io.Discard))
	require.Equal(t, broker.Config{Stream: broker.DefaultStream, SubjectPrefix: broker.DefaultSubjectPrefix}, cfg.Broker, "no URL: no producer")

	t.Setenv("OUTBOX_BROKER_URL", "nats://nats:4222")
	t.Setenv("OUTBOX_BROKER_STREAM", "EVENTS")
	cfg = defaultWorkerConfig()
	require.NoError(t, workerFlags(&cfg).Parse([]string{"--outbox-broker-subject-prefix", "acme.events"}, io.Discard))
	require.Equal(t, broker.Config{URL: "nats://nats:4222", Stream: "EVENTS", SubjectPrefix: "acme.events"}, cfg.Broker)

	_, err := cfg.check()
	require.ErrorContains(t, err, "OUTBOX_PUBLISHER_ENABLED")
	cfg.OutboxRelay, cfg.DatabasePlatformURL = true, "postgres://wagerail_platform:x@127.0.0.1:1/wagerail"
	_, err = cfg.check()
	require.NoError(t, err)
}
