package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/wagerail/wagerail/activities"
	"github.com/wagerail/wagerail/api"
	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/platform/cli"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/rpcclient"
	"github.com/wagerail/wagerail/internal/uploads"
	"github.com/wagerail/wagerail/ledger"
	gatewayv1 "github.com/wagerail/wagerail/schema/proto/gateway/v1"
	ledgerv1 "github.com/wagerail/wagerail/schema/proto/ledger/v1"
	"github.com/wagerail/wagerail/workflows"
)

type apiConfig struct {
	Addr        string
	DatabaseURL string
	// DatabasePlatformURL is the cross-tenant role (wagerail_platform): bank callbacks resolve
	// their tenant through it. Empty: callbacks answer 503 NOT_CONFIGURED.
	DatabasePlatformURL string
	TemporalAddress     string
	TemporalNamespace   string
	// TaskQueue is where the API starts sagas (the worker's --task-queue); DisburseWait bounds a
	// saga call's wait for the saga's acceptance (a disburse: the gates and transfer initiation).
	TaskQueue      string
	DisburseWait   time.Duration
	LedgerAddr     string
	GatewayAddr    string
	WebhookSecrets string // partner=secret[,partner=secret…]
	LogLevel       string
	// Zero values take the api package's defaults, so `wagerail dev` and tests that build an
	// apiConfig by hand still serve with every bound.
	Timeouts api.Timeouts
	// ShutdownTimeout bounds the requests in flight at shutdown (0: shutdownBudget, derived from
	// the write timeout; `wagerail dev` sets a short one so Ctrl-C stops it at once).
	ShutdownTimeout time.Duration
	MaxBodyBytes    int
	// PublicURL is the portal's base URL, the start of every link the API sends (verification,
	// reset, magic link, set-up, invitation); "" means the API's own URL.
	PublicURL string
	// SMTP delivers e-mail when its Addr is set (SMTP_*); see notify.FromEnv.
	Senders senderSettings
	// TrustedProxies (comma-separated IPs or CIDRs) may set X-Forwarded-For; none by default.
	TrustedProxies string
	// KycValidity is how long a KYC approval holds.
	KycValidity time.Duration
	// EqubMoneyMovement is the master switch of equb money movement (EQUB_MONEY_MOVEMENT_ENABLED;
	// off by default, on in `wagerail dev`): off, the equb money routes answer 503
	// EQUB_MONEY_MOVEMENT_DISABLED before anything is written.
	EqubMoneyMovement bool
	// EqubEscrowRecon is the switch of the equb escrow reconciliation (EQUB_ESCROW_RECON_ENABLED;
	// off by default, on in `wagerail dev`): off, its operator route answers 503
	// EQUB_ESCROW_RECON_DISABLED and starts nothing.
	EqubEscrowRecon bool
	// NationalIDRegistry is the registry (by the gateway's name for it) reviewers' KYC lookups go
	// to (KYC_NATIONAL_ID_REGISTRY); empty: POST /api/kyc/<id>/registry-check answers 503.
	NationalIDRegistry string
	// AdjustmentKey signs dispute adjustments for the ledger (the ledger's LEDGER_ADJUSTMENT_KEY);
	// AdjustmentKeyPrevious, during a rotation, still verifies approvals signed before it.
	AdjustmentKey, AdjustmentKeyPrevious string
	// DisputeHolidaysFile replaces the built-in Ethiopian public holidays of the dispute SLA's
	// business-day calendar (internal/disputes/holidays_et.json's format; "": the built-in one).
	DisputeHolidaysFile string
	// UploadDir is where uploaded files are stored ("" : the upload routes answer 503);
	// MaxUploadBytes bounds one file (0: the api package's default, 10 MiB).
	UploadDir      string
	MaxUploadBytes int
	// DevDataDir is set by `wagerail dev` alone: e-mails (unless SMTP is set) and texts then go to
	// the developer inbox under it, where the links and codes can be read back.
	DevDataDir string
}

// defaultPublicURL is the API of `make run`, where links point when PUBLIC_URL is not set.
const defaultPublicURL = "http://127.0.0.1:8080"

// senderSettings are the SMTP_* and SMS_HTTP_* variables notify.FromEnv reads, bound to flags so
// that --help lists them and a compose file is checked against them.
type senderSettings struct {
	Addr, From, Username, Password, TLS string
	SMSURL, SMSToken, SMSSender         string
}

func addSenderFlags(c *cli.Command, s *senderSettings) {
	c.String(&s.Addr, "smtp-addr", "SMTP_ADDR", "", "host:port of the SMTP submission server that sends e-mails (empty: the dev inbox under `wagerail dev`, else a log line and no delivery)")
	c.String(&s.From, "smtp-from", "SMTP_FROM", "", "sender of the e-mails, e.g. \"Wagerail <no-reply@example.org>\" (required with --smtp-addr)")
	c.String(&s.Username, "smtp-username", "SMTP_USERNAME", "", "SMTP AUTH user name (empty: no AUTH)")
	c.String(&s.Password, "smtp-password", "SMTP_PASSWORD", "", "SMTP AUTH password (sent only over TLS, or to localhost)")
	c.String(&s.TLS, "smtp-tls", "SMTP_TLS", string(notify.StartTLS), "starttls, tls (implicit TLS, port 465) or none (a mail catcher)")
	c.String(&s.SMSURL, "sms-http-url", "SMS_HTTP_URL", "", "an SMS gateway's HTTP send endpoint (https; http only to localhost) that sends the text messages (empty: the dev inbox under `wagerail dev`, else a log line and no delivery)")
	c.String(&s.SMSToken, "sms-http-token", "SMS_HTTP_TOKEN", "", "bearer token of the SMS gateway (empty: none)")
	c.String(&s.SMSSender, "sms-http-sender", "SMS_HTTP_SENDER", "", "sender id the SMS gateway shows (1 to 11 letters and digits; empty: the gateway's default)")
}

// getenv answers notify.FromEnv from the parsed flags.
func (s senderSettings) getenv(name string) string {
	return map[string]string{"SMTP_ADDR": s.Addr, "SMTP_FROM": s.From, "SMTP_USERNAME": s.Username, "SMTP_PASSWORD": s.Password, "SMTP_TLS": s.TLS,
		"SMS_HTTP_URL": s.SMSURL, "SMS_HTTP_TOKEN": s.SMSToken, "SMS_HTTP_SENDER": s.SMSSender}[name]
}

// parsePublicURL checks a PUBLIC_URL: "" (the default applies), or an absolute http(s) URL
// without credentials, query or fragment, returned without its trailing slash so links append a
// path to it.
func parsePublicURL(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" {
		return "", errors.New("--public-url / PUBLIC_URL must be an absolute http(s) URL without query or fragment, like https://portal.example.org")
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// defaultNationalIDRegistry is the gateway's name for the sandbox's simulated national ID
// registry, the one `make run` has.
const defaultNationalIDRegistry = "sandbox"

// ownURL is the API's own URL on the address it listens on (loopback for a wildcard address).
func ownURL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return defaultPublicURL
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

func apiCommand() *cli.Command {
	var cfg apiConfig
	c := apiFlags(&cfg)
	c.Run = func(ctx context.Context, _ []string) error {
		log, err := newLogger(cfg.LogLevel, "api")
		if err != nil {
			return err
		}
		private := cfg.DatabaseURL == ""
		if cfg.DatabaseURL, err = resolveDatabaseURL("api", cfg.DatabaseURL, db.AppRole); err != nil {
			return err
		}
		if private && cfg.DatabasePlatformURL == "" {
			// Beside `make run`, the private cluster's platform role too; optional otherwise.
			cfg.DatabasePlatformURL, _ = resolveDatabaseURL("api", "", db.PlatformRole)
		}
		return runAPI(ctx, log, cfg, func() {})
	}
	return c
}

// apiFlags binds the API's flags and environment variables to cfg.
func apiFlags(cfg *apiConfig) *cli.Command {
	c := cli.New("api", "wagerail api [flags]", "Serve the HTTP API (Gin, every route under /api).")
	c.String(&cfg.Addr, "addr", "API_ADDR", ":8080", "listen address")
	c.String(&cfg.DatabaseURL, "database-url", "DATABASE_URL", "", "Postgres URL of the runtime role wagerail_app (default: the private Postgres of `make run` in this directory)")
	c.String(&cfg.DatabasePlatformURL, "database-platform-url", "DATABASE_PLATFORM_URL", "", "Postgres URL of the cross-tenant role wagerail_platform (bank callbacks, platform routes)")
	c.String(&cfg.TemporalAddress, "temporal-address", "TEMPORAL_ADDRESS", "127.0.0.1:7233", "Temporal frontend host:port")
	c.String(&cfg.TemporalNamespace, "temporal-namespace", "TEMPORAL_NAMESPACE", "default", "Temporal namespace")
	c.String(&cfg.TaskQueue, "task-queue", "TEMPORAL_TASK_QUEUE", workflows.DefaultTaskQueue, "task queue the sagas are started on (the worker's --task-queue)")
	c.Duration(&cfg.DisburseWait, "disburse-wait", "API_DISBURSE_WAIT", api.DefaultSagaWait, "how long a disburse call waits for the gates and the transfer initiation before answering 202 DISBURSING")
	c.String(&cfg.LedgerAddr, "ledger-addr", "LEDGER_ADDR", "127.0.0.1:50052", "ledger gRPC host:port")
	c.String(&cfg.GatewayAddr, "gateway-addr", "GATEWAY_ADDR", "127.0.0.1:50051", "gateway gRPC host:port")
	c.String(&cfg.WebhookSecrets, "webhook-secrets", "WEBHOOK_SECRETS", "", "partner callback signing secrets: partner=secret[,partner=secret…]")
	def := api.DefaultTimeouts()
	c.Duration(&cfg.Timeouts.ReadHeader, "read-header-timeout", "API_READ_HEADER_TIMEOUT", def.ReadHeader, "time a client has to send the request line and headers")
	c.Duration(&cfg.Timeouts.Read, "read-timeout", "API_READ_TIMEOUT", def.Read, "time a client has to send the whole request, body included")
	c.Duration(&cfg.Timeouts.Write, "write-timeout", "API_WRITE_TIMEOUT", def.Write, "time from the end of the request headers to the end of the response")
	c.Duration(&cfg.Timeouts.Idle, "idle-timeout", "API_IDLE_TIMEOUT", def.Idle, "how long a kept-alive connection may wait for its next request")
	c.Int(&cfg.MaxBodyBytes, "max-body-bytes", "API_MAX_BODY_BYTES", int(api.DefaultMaxBodyBytes), "largest request body on any route; larger gets 413 PAYLOAD_TOO_LARGE")
	c.String(&cfg.PublicURL, "public-url", "PUBLIC_URL", "", "the portal's base URL, where the links in e-mails point (default: this API's own URL)")
	c.String(&cfg.UploadDir, "upload-dir", "UPLOAD_DIR", ".data/uploads", "directory of uploaded files (created, mode 0700, when missing)")
	c.Int(&cfg.MaxUploadBytes, "upload-max-bytes", "UPLOAD_MAX_BYTES", int(uploads.DefaultMaxBytes), "largest uploaded file; larger gets 413 UPLOAD_TOO_LARGE")
	addSenderFlags(c, &cfg.Senders)
	c.Duration(&cfg.KycValidity, "kyc-validity", "KYC_VALIDITY", kyc.DefaultValidity, "how long a KYC approval holds before it expires")
	c.String(&cfg.AdjustmentKey, "adjustment-key", "LEDGER_ADJUSTMENT_KEY", "", "the ledger's adjustment key: signs dispute adjustment approvals and the PostAdjustment requests (empty: adjustments answer 503)")
	c.String(&cfg.AdjustmentKeyPrevious, "adjustment-key-previous", "LEDGER_ADJUSTMENT_KEY_PREVIOUS", "", "the adjustment key before a rotation: verifies approvals it signed until they expire (24 h)")
	c.String(&cfg.DisputeHolidaysFile, "dispute-holidays-file", "DISPUTE_HOLIDAYS_FILE", "", "a JSON file of the public holidays dispute SLAs count business days around (the format of internal/disputes/holidays_et.json; empty: the built-in Ethiopian calendar)")
	c.Bool(&cfg.EqubMoneyMovement, "equb-money-movement", "EQUB_MONEY_MOVEMENT_ENABLED", false, "let equb contributions and payouts move money (the master kill switch; off: 503 EQUB_MONEY_MOVEMENT_DISABLED)")
	c.String(&cfg.NationalIDRegistry, "national-id-registry", "KYC_NATIONAL_ID_REGISTRY", defaultNationalIDRegistry, "the national ID registry KYC submissions are looked up in, by the gateway's name for it (empty: reviewers cannot ask for a lookup)")
	c.Bool(&cfg.EqubEscrowRecon, "equb-escrow-recon", "EQUB_ESCROW_RECON_ENABLED", false, "let platform admins run the equb escrow reconciliation (escrow statements against the ledger's pool mirror; off: 503 EQUB_ESCROW_RECON_DISABLED)")
	c.String(&cfg.TrustedProxies, "trusted-proxies", "TRUSTED_PROXIES", "", "IPs or CIDRs of the load balancers whose X-Forwarded-For names the client (default none: the peer address is the client)")
	addLogLevel(c, &cfg.LogLevel)
	return c
}

// writeTimeout is the HTTP server's write timeout: the setting, or the api package's default.
func (cfg apiConfig) writeTimeout() time.Duration {
	if cfg.Timeouts.Write > 0 {
		return cfg.Timeouts.Write
	}
	return api.DefaultTimeouts().Write
}

// disburseWait is how long a saga call waits for its saga: the setting, or the api's default.
func (cfg apiConfig) disburseWait() time.Duration {
	if cfg.DisburseWait > 0 {
		return cfg.DisburseWait
	}
	return api.DefaultSagaWait
}

// shutdownBudget is how long requests in flight at shutdown may finish: no request outlives the
// write timeout, so a request accepted just before the signal gets all of its time (a disburse
// waiting up to its disburse wait for the saga), plus a margin for mails being sent.
func (cfg apiConfig) shutdownBudget() time.Duration {
	if cfg.ShutdownTimeout > 0 {
		return cfg.ShutdownTimeout
	}
	return cfg.writeTimeout() + 5*time.Second
}

// apiChecked is what check derives from the settings.
type apiChecked struct {
	secrets   map[string][]byte
	publicURL string
	proxies   []string
}

// check is every start-time check of the settings that needs nothing running: a misconfigured
// API stops here, in one line, before it listens or connects.
func (cfg apiConfig) check() (apiChecked, error) {
	var out apiChecked
	if cfg.DatabaseURL == "" {
		return out, errors.New("api: set --database-url or DATABASE_URL (the wagerail_app role)")
	}
	var err error
	if out.secrets, err = parseSecrets(cfg.WebhookSecrets); err != nil {
		return out, err
	}
	if cfg.MaxBodyBytes < 0 {
		return out, errors.New("api: --max-body-bytes / API_MAX_BODY_BYTES must not be negative")
	}
	if cfg.MaxUploadBytes < 0 {
		return out, errors.New("api: --upload-max-bytes / UPLOAD_MAX_BYTES must not be negative")
	}
	for _, d := range []time.Duration{cfg.Timeouts.ReadHeader, cfg.Timeouts.Read, cfg.Timeouts.Write, cfg.Timeouts.Idle} {
		if d < 0 {
			return out, errors.New("api: HTTP timeouts must not be negative")
		}
	}
	// A disburse answers within its wait (202 DISBURSING after it), so the wait must end before
	// the write timeout does, or the client gets a dropped connection instead of the answer.
	if cfg.DisburseWait < 0 {
		return out, errors.New("api: --disburse-wait / API_DISBURSE_WAIT must not be negative")
	}
	if wait, write := cfg.disburseWait(), cfg.writeTimeout(); wait >= write {
		return out, fmt.Errorf("api: --disburse-wait / API_DISBURSE_WAIT (%s) must be less than --write-timeout / API_WRITE_TIMEOUT (%s)", wait, write)
	}
	// The ledger refuses a key shorter than this at its start; the API would only find out at
	// the first dispute adjustment.
	for _, k := range []struct{ value, setting string }{
		{cfg.AdjustmentKey, "--adjustment-key / LEDGER_ADJUSTMENT_KEY"},
		{cfg.AdjustmentKeyPrevious, "--adjustment-key-previous / LEDGER_ADJUSTMENT_KEY_PREVIOUS"},
	} {
		if k.value != "" && len(k.value) < ledger.MinAdjustmentKeyBytes {
			return out, fmt.Errorf("api: %s must be at least %d bytes (the ledger's key)", k.setting, ledger.MinAdjustmentKeyBytes)
		}
	}
	if out.publicURL, err = parsePublicURL(cfg.PublicURL); err != nil {
		return out, fmt.Errorf("api: %w", err)
	}
	if cfg.KycValidity < 0 {
		return out, errors.New("api: --kyc-validity / KYC_VALIDITY must not be negative")
	}
	if out.proxies, err = api.ParseTrustedProxies(cfg.TrustedProxies); err != nil {
		return out, fmt.Errorf("api: --trusted-proxies / TRUSTED_PROXIES: %w", err)
	}
	// A dry run, silently, so a bad SMTP setting is the one line a misconfigured start prints;
	// the senders are made (and their choice logged) once the API can start.
	if _, _, err := notify.FromEnv(cfg.Senders.getenv, slog.New(slog.DiscardHandler), cfg.DevDataDir, cfg.DevDataDir != ""); err != nil {
		return out, fmt.Errorf("api: %w (check --smtp-* / SMTP_*)", err)
	}
	return out, nil
}

// runAPI serves until ctx ends. Dependencies are probed, not required at start: an API that comes
// up before the ledger reports not-ready instead of crash-looping.
func runAPI(ctx context.Context, log *slog.Logger, cfg apiConfig, ready func()) error {
	checked, err := cfg.check()
	if err != nil {
		return err
	}
	secrets, publicURL, proxies := checked.secrets, checked.publicURL, checked.proxies
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("api: listen %s: %w (choose another --addr / API_ADDR)", cfg.Addr, err)
	}
	if publicURL == "" {
		publicURL = ownURL(ln.Addr())
	}
	pool, err := openRuntimeDB(ctx, "api", cfg.DatabaseURL, 20)
	if err != nil {
		ln.Close()
		return err
	}
	defer pool.Close()
	var platform *pgxpool.Pool
	if cfg.DatabasePlatformURL != "" {
		if platform, err = openRuntimeDB(ctx, "api", cfg.DatabasePlatformURL, 5); err != nil {
			ln.Close()
			return err
		}
		defer platform.Close()
	} else {
		log.Warn("no DATABASE_PLATFORM_URL: bank callbacks will answer 503 NOT_CONFIGURED")
	}
	tc, err := client.NewLazyClient(client.Options{
		HostPort: cfg.TemporalAddress, Namespace: cfg.TemporalNamespace, Logger: sdkLogger(log),
		ConnectionOptions: temporalConnection(cfg.TemporalAddress),
	})
	if err != nil {
		ln.Close()
		return fmt.Errorf("api: temporal client: %w", err)
	}
	defer tc.Close()
	ledgerConn, err := rpcclient.Dial("ledger", cfg.LedgerAddr)
	if err != nil {
		ln.Close()
		return fmt.Errorf("api: ledger address: %w", err)
	}
	defer ledgerConn.Close()
	gatewayConn, err := rpcclient.Dial("gateway", cfg.GatewayAddr)
	if err != nil {
		ln.Close()
		return fmt.Errorf("api: gateway address: %w", err)
	}
	defer gatewayConn.Close()
	mailer, texter, err := notify.FromEnv(cfg.Senders.getenv, log, cfg.DevDataDir, cfg.DevDataDir != "")
	if err != nil {
		ln.Close()
		return fmt.Errorf("api: %w (check --smtp-* / SMTP_*)", err)
	}
	var calendar *disputes.Calendar // nil: the built-in Ethiopian calendar
	if cfg.DisputeHolidaysFile != "" {
		b, err := os.ReadFile(cfg.DisputeHolidaysFile)
		if err == nil {
			calendar, err = disputes.ParseCalendar(b)
		}
		if err != nil {
			ln.Close()
			return fmt.Errorf("api: --dispute-holidays-file / DISPUTE_HOLIDAYS_FILE: %w", err)
		}
	}
	// Opened once the rest is known to work, so a start that fails earlier creates no directory.
	var store uploads.Store // nil, not a nil *FS: the routes answer 503 without a directory
	if cfg.UploadDir != "" {
		fs, err := uploads.NewFS(cfg.UploadDir)
		if err != nil {
			ln.Close()
			return fmt.Errorf("api: --upload-dir / UPLOAD_DIR: %w", err)
		}
		defer fs.Close()
		store = fs
	} else {
		log.Warn("no UPLOAD_DIR: the upload routes will answer 503 NOT_CONFIGURED")
	}

	gc := gateway.NewClient(gatewayv1.NewGatewayServiceClient(gatewayConn), gateway.ClientOptions{Breaker: clientBreaker(log, "gateway")})
	var registry kyc.Registry
	if cfg.NationalIDRegistry != "" {
		// A client of its own on the same connection: a registry outage opens its breaker, never
		// the one account lookups and disbursements go through.
		registry = activities.NationalIDRegistry{Registry: cfg.NationalIDRegistry,
			Gateway: gateway.NewClient(gatewayv1.NewGatewayServiceClient(gatewayConn), gateway.ClientOptions{Breaker: clientBreaker(log, "national-id registry")})}
	}
	srv := api.New(api.Deps{
		Log:          log,
		DB:           pool,
		Platform:     platform,
		Temporal:     tc,
		TaskQueue:    cfg.TaskQueue,
		DisburseWait: cfg.DisburseWait,
		// One connection per service serves both its client and its readiness probe.
		Ledger:             ledger.NewClient(ledgerv1.NewLedgerServiceClient(ledgerConn), ledger.ClientOptions{Breaker: clientBreaker(log, "ledger")}),
		Gateway:            gc,
		NationalIDRegistry: registry,
		WebhookSecrets:     secrets,
		MaxBodyBytes:       int64(cfg.MaxBodyBytes),
		Mailer:             mailer,
		Texter:             texter,
		PublicURL:          publicURL,
		TrustedProxies:     proxies,
		KycValidity:        cfg.KycValidity,
		EqubMoneyMovement:  cfg.EqubMoneyMovement,
		EqubEscrowRecon:    cfg.EqubEscrowRecon,
		AdjustmentKeys:     adjustmentKeys(cfg.AdjustmentKey, cfg.AdjustmentKeyPrevious),
		DisputeCalendar:    calendar,
		Uploads:            store,
		MaxUploadBytes:     int64(cfg.MaxUploadBytes),
		// An advance is limited to what the next payroll can recover within the protection
		// policy (issue 23); loan quotes default to the same projection.
		EwaRecoverable: api.EwaRecoverableFromPayroll,
		// Limiter stays nil: api.New builds it on DB with its metrics.
		Probes: []api.Probe{
			databaseProbe(pool),
			{Name: "temporal", Check: func(ctx context.Context) error {
				_, err := tc.CheckHealth(ctx, &client.CheckHealthRequest{})
				return err
			}},
			grpcProbe("ledger", ledgerConn),
			grpcProbe("gateway", gatewayConn),
		},
	})
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go srv.WatchDependencies(wctx)
	go srv.SweepGatheredCallbacks(wctx)

	hs := srv.HTTPServer(cfg.Timeouts)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	log.Info("serving", "service", "api", "addr", ln.Addr().String())
	ready()
	select {
	case <-ctx.Done():
	case err := <-errc:
		return fmt.Errorf("api: %w", err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownBudget())
	defer cancel()
	err = hs.Shutdown(sctx)
	if derr := srv.Drain(sctx); derr != nil {
		log.Warn("mails still being sent at shutdown were abandoned", "error", derr)
	}
	return err
}

func databaseProbe(pool *pgxpool.Pool) api.Probe {
	return api.Probe{Name: "database", Check: func(ctx context.Context) error {
		var one int
		return pool.QueryRow(ctx, "SELECT 1").Scan(&one)
	}}
}

// grpcProbe asks the standard gRPC health service; NOT_SERVING counts as down.
func grpcProbe(name string, conn *grpc.ClientConn) api.Probe {
	hc := healthpb.NewHealthClient(conn)
	return api.Probe{Name: name, Check: func(ctx context.Context) error {
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			return err
		}
		if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			return fmt.Errorf("%s health: %s", name, resp.GetStatus())
		}
		return nil
	}}
}

// parseSecrets reads "partner=secret,partner=secret". Secrets shorter than 16 bytes are refused:
// an HMAC key is only as strong as its secret.
func parseSecrets(s string) (map[string][]byte, error) {
	out := map[string][]byte{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, pair := range strings.Split(s, ",") {
		name, secret, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || name == "" || secret == "" {
			return nil, errors.New("api: WEBHOOK_SECRETS must look like partner=secret[,partner=secret]")
		}
		if len(secret) < 16 {
			return nil, fmt.Errorf("api: webhook secret for %s is shorter than 16 characters", name)
		}
		out[name] = []byte(secret)
	}
	return out, nil
}

// adjustmentKeys is the API's adjustment keys, the current one first.
func adjustmentKeys(current, previous string) [][]byte {
	var keys [][]byte
	for _, k := range []string{current, previous} {
		if k != "" {
			keys = append(keys, []byte(k))
		}
	}
	return keys
}
