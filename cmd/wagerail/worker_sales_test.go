package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/demorequests"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/outbox"
)

// salesSubs are the sales consumer's rows of the worker's table of consumers.
func salesSubs(t *testing.T, d workerDeps) []outbox.Subscription {
	t.Helper()
	subs, err := d.consumers()
	require.NoError(t, err)
	var out []outbox.Subscription
	for _, s := range subs {
		if s.Consumer.Name() == demorequests.SalesConsumerName {
			out = append(out, s)
		}
	}
	return out
}

// No sales address, no sales consumer: the wiring registers none (rather than one that takes the
// events and drops them) and says so in one log line. With an address, the consumer is in the
// table once, for demo_request.received.v1 alone, and the log names the address masked.
func TestWorkerSalesConsumerIsRegisteredOnlyWithAnAddress(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))

	n, err := newSalesNotifier(log, nil, &notify.Memory{}, "")
	require.NoError(t, err)
	require.Nil(t, n)
	require.Equal(t, 1, strings.Count(logs.String(), "\n"), logs.String())
	require.Contains(t, logs.String(), "SALES_NOTIFY_EMAIL is not set")
	d := workerDeps{Log: slog.New(slog.DiscardHandler), Sales: n}
	require.Empty(t, salesSubs(t, d))

	logs.Reset()
	n, err = newSalesNotifier(log, nil, &notify.Memory{}, "sales@example.org")
	require.NoError(t, err)
	require.NotNil(t, n)
	require.Equal(t, "sales@example.org", n.To)
	require.NotContains(t, logs.String(), "sales@example.org", "the address is masked in the log")
	require.Contains(t, logs.String(), "****.org")
	d.Sales = n
	found := salesSubs(t, d)
	require.Len(t, found, 1)
	require.Equal(t, demorequests.EventReceived, found[0].EventType)

	_, err = newSalesNotifier(log, nil, &notify.Memory{}, "Sales <sales@example.org>")
	require.Error(t, err)
}

// SALES_NOTIFY_EMAIL (or --sales-notify-email) is read into the worker's settings and checked at
// start, before the worker connects to anything: one bare address, fed by the relay, mailed
// through SMTP (or the developer inbox under `wagerail dev`).
func TestWorkerSalesSettingIsChecked(t *testing.T) {
	t.Setenv("SALES_NOTIFY_EMAIL", "sales@example.org")
	cfg := defaultWorkerConfig()
	require.NoError(t, workerFlags(&cfg).Parse(nil, io.Discard))
	require.Equal(t, "sales@example.org", cfg.SalesNotifyEmail)
	cfg = defaultWorkerConfig()
	require.NoError(t, workerFlags(&cfg).Parse([]string{"--sales-notify-email", "team@example.org"}, io.Discard))
	require.Equal(t, "team@example.org", cfg.SalesNotifyEmail, "the flag beats the variable")

	base := func() workerConfig {
		c := defaultWorkerConfig()
		c.OutboxRelay, c.DatabasePlatformURL = true, "postgres://wagerail_platform:x@127.0.0.1:1/wagerail"
		c.SalesNotifyEmail = "sales@example.org"
		c.Senders = senderSettings{Addr: "smtp.example.org:587", From: "Wagerail <no-reply@example.org>", TLS: "starttls"}
		return c
	}
	for name, tc := range map[string]struct {
		edit func(*workerConfig)
		err  string
	}{
		"smtp":                {func(*workerConfig) {}, ""},
		"dev inbox":           {func(c *workerConfig) { c.Senders, c.DevDataDir = senderSettings{}, t.TempDir() }, ""},
		"no address":          {func(c *workerConfig) { c.SalesNotifyEmail, c.Senders = "", senderSettings{} }, ""},
		"not an address":      {func(c *workerConfig) { c.SalesNotifyEmail = "sales" }, "SALES_NOTIFY_EMAIL"},
		"a display name":      {func(c *workerConfig) { c.SalesNotifyEmail = "Sales <sales@example.org>" }, "SALES_NOTIFY_EMAIL"},
		"two addresses":       {func(c *workerConfig) { c.SalesNotifyEmail = "a@example.org,b@example.org" }, "SALES_NOTIFY_EMAIL"},
		"a header smuggled":   {func(c *workerConfig) { c.SalesNotifyEmail = "a@example.org\r\nBcc: b@example.org" }, "SALES_NOTIFY_EMAIL"},
		"no relay":            {func(c *workerConfig) { c.OutboxRelay = false }, "OUTBOX_PUBLISHER_ENABLED"},
		"no smtp outside dev": {func(c *workerConfig) { c.Senders = senderSettings{} }, "SMTP_ADDR"},
		"smtp without from":   {func(c *workerConfig) { c.Senders.From = "" }, "SMTP_"},
	} {
		c := base()
		tc.edit(&c)
		runs, err := c.check()
		require.False(t, runs, name)
		if tc.err == "" {
			require.NoError(t, err, name)
			continue
		}
		require.ErrorContains(t, err, tc.err, name)
	}

	// runWorker refuses it before it dials anything.
	c := defaultWorkerConfig()
	c.DatabaseURL = "postgres://wagerail_app:x@127.0.0.1:1/wagerail"
	c.SalesNotifyEmail = "sales@example.org"
	err := runWorker(context.Background(), slog.New(slog.DiscardHandler), c, func() { t.Error("ready") })
	require.ErrorContains(t, err, "OUTBOX_PUBLISHER_ENABLED")
}
