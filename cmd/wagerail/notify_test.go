package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/notifications"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/crosstenant"
	"github.com/wagerail/wagerail/internal/platform/freeport"
	"github.com/wagerail/wagerail/internal/platform/outbox"
	"github.com/wagerail/wagerail/internal/platform/tenancy"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// `wagerail notify` on real Postgres: it serves /healthz and /metrics on its own port, registers
// its relay group before it says it is ready, and delivers a notification event written after
// that (the in-app message lands in the user's inbox) in its own group — the worker's group still
// owes the event, untouched.
func TestNotifyRunsTheNotificationConsumerAsItsOwnProcess(t *testing.T) {
	d := testkit.NewDB(t)
	port, err := freeport.One()
	require.NoError(t, err)
	cfg := defaultNotifyConfig()
	cfg.DatabaseURL, cfg.DatabasePlatformURL, cfg.MetricsAddr = d.AppDSN, d.PlatformDSN, "127.0.0.1:"+strconv.Itoa(port)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() { done <- runNotify(ctx, slog.New(slog.DiscardHandler), cfg, func() { close(ready) }) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("notify stopped: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("notify not ready")
	}
	base := "http://" + cfg.MetricsAddr
	status, body := get(base + "/healthz")
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, `{"status":"ok"}`, body)

	tenant := orgs.NewOrganizationID()
	tctx := tenancy.With(context.Background(), tenancy.Scope{TenantID: tenant, Actor: "user-1"})
	var userID, eventID string
	require.NoError(t, tenancy.InTx(tctx, d.App, func(tx pgx.Tx) error {
		u, err := identity.CreateUser(tctx, tx, identity.NewUser{Email: strings.ToLower(tenant) + "@example.org", Name: "Almaz Tesfaye", PasswordHash: "x"})
		if err != nil {
			return err
		}
		if _, _, err = orgs.Create(tctx, tx, orgs.NewOrganization{ID: tenant, Name: "Org " + tenant, Kind: orgs.Business}, u.ID); err != nil {
			return err
		}
		userID = u.ID
		ev, err := outbox.Write(tctx, tx, notifications.EventKycMoreInfoRequested, map[string]any{
			"submissionId": "kyc_1", "subjectType": "USER", "subjectId": u.ID, "status": "PENDING", "note": "back of the ID"})
		eventID = ev.ID
		return err
	}))
	var inbox []notifications.Notification
	deadline := time.Now().Add(time.Minute)
	for len(inbox) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		require.NoError(t, tenancy.InTx(tctx, d.App, func(tx pgx.Tx) error {
			var err error
			inbox, err = notifications.Inbox(tctx, tx, tenant, userID, "", false, 10)
			return err
		}))
	}
	require.Len(t, inbox, 1, "the in-app message was delivered")
	require.Equal(t, "More information is needed to verify your identity", inbox[0].Title)

	// Done in the notify group; still owed to the worker's (default) group, which notify never
	// touches.
	plat := d.Platform(t)
	sys := tenancy.WithActor(context.Background(), "system:test")
	var notifyDone, defaultDone bool
	deadline = time.Now().Add(30 * time.Second)
	for !notifyDone && time.Now().Before(deadline) {
		require.NoError(t, crosstenant.Tx(sys, plat, "test: read delivery state", func(tx pgx.Tx) error {
			return tx.QueryRow(sys, `SELECT s.published_at IS NOT NULL, o.published_at IS NOT NULL
				FROM app.outbox o JOIN app.outbox_group_state s ON s.outbox_id = o.id AND s.relay_group = $2
				WHERE o.event_id = $1`, eventID, NotifyRelayGroup).Scan(&notifyDone, &defaultDone)
		}))
		time.Sleep(50 * time.Millisecond)
	}
	require.True(t, notifyDone, "published for the notify group")
	require.False(t, defaultDone, "the worker's group still owes it")

	status, body = get(base + "/metrics")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `svc_outbox_consumer_failures_total{consumer="notifications"} 0`)
	require.Contains(t, body, "svc_outbox_events_published_total 1")
	require.Contains(t, body, "go_goroutines")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("notify did not stop")
	}
	_, err = net.Dial("tcp", cfg.MetricsAddr)
	require.Error(t, err, "the metrics port is released on stop")
}

// notify needs the cross-tenant role, and says so in one line; a port in use is one line too.
func TestNotifyConfigErrorsAreOneLine(t *testing.T) {
	cfg := defaultNotifyConfig()
	cfg.DatabaseURL = "postgres://wagerail_app:x@127.0.0.1:1/wagerail"
	err := runNotify(context.Background(), slog.New(slog.DiscardHandler), cfg, func() { t.Error("ready") })
	require.ErrorContains(t, err, "DATABASE_PLATFORM_URL")

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer busy.Close()
	cfg.DatabasePlatformURL = "postgres://wagerail_platform:x@127.0.0.1:1/wagerail"
	cfg.MetricsAddr = busy.Addr().String()
	err = runNotify(context.Background(), slog.New(slog.DiscardHandler), cfg, func() { t.Error("ready") })
	require.ErrorContains(t, err, "--metrics-addr")
	require.NotContains(t, err.Error(), "\n")
}

// With NOTIFICATIONS_SEPARATE_PROCESS the worker leaves the notification consumer to `wagerail
// notify` (and then needs no relay for it); without it, an enabled consumer needs the relay.
func TestWorkerLeavesNotificationsToTheNotifyProcess(t *testing.T) {
	cfg := defaultWorkerConfig()
	cfg.Notifications = true
	_, err := cfg.runsNotifications()
	require.ErrorContains(t, err, "OUTBOX_PUBLISHER_ENABLED")
	cfg.OutboxRelay = true
	runs, err := cfg.runsNotifications()
	require.NoError(t, err)
	require.True(t, runs)
	cfg.NotificationsSeparate = true
	runs, err = cfg.runsNotifications()
	require.NoError(t, err)
	require.False(t, runs)
	cfg.OutboxRelay = false
	runs, err = cfg.runsNotifications()
	require.NoError(t, err)
	require.False(t, runs, "no relay needed for a consumer the worker does not run")

	require.Contains(t, workerCommand().EnvVars(), "NOTIFICATIONS_SEPARATE_PROCESS")
}
