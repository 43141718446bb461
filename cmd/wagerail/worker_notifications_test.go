package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/notifications"
	"github.com/wagerail/wagerail/internal/platform/outbox"
)

// The notification consumer is in the relay's table only when enabled, for every event type (it
// picks its own), and never without the relay that feeds it.
func TestWorkerNotificationConsumerIsRegisteredWhenEnabled(t *testing.T) {
	d := workerDeps{Log: slog.New(slog.DiscardHandler)}
	subs, err := d.consumers()
	require.NoError(t, err)
	for _, s := range subs {
		require.NotEqual(t, notifications.ConsumerName, s.Consumer.Name())
	}
	d.Notifications = &notifications.Consumer{}
	subs, err = d.consumers()
	require.NoError(t, err)
	var found []outbox.Subscription
	for _, s := range subs {
		if s.Consumer.Name() == notifications.ConsumerName {
			found = append(found, s)
		}
	}
	require.Len(t, found, 1)
	require.Equal(t, outbox.AllEvents, found[0].EventType)

	cfg := defaultWorkerConfig()
	cfg.DatabaseURL = "postgres://wagerail_app:x@127.0.0.1:1/wagerail"
	cfg.Notifications = true
	err = runWorker(context.Background(), slog.New(slog.DiscardHandler), cfg, func() { t.Error("ready") })
	require.ErrorContains(t, err, "OUTBOX_PUBLISHER_ENABLED")
}
