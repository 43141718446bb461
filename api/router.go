package api

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uptrace/bun"
	"go.temporal.io/sdk/client"
	"gopkg.in/yaml.v3"

	"github.com/wagerail/wagerail/gateway"
	"github.com/wagerail/wagerail/internal/bankwebhook"
	"github.com/wagerail/wagerail/internal/disputes"
	"github.com/wagerail/wagerail/internal/ewa"
	"github.com/wagerail/wagerail/internal/kyc"
	"github.com/wagerail/wagerail/internal/lending"
	"github.com/wagerail/wagerail/internal/notify"
	"github.com/wagerail/wagerail/internal/orgs"
	"github.com/wagerail/wagerail/internal/platform/buildinfo"
	"github.com/wagerail/wagerail/internal/platform/db"
	"github.com/wagerail/wagerail/internal/platform/idempotency"
	"github.com/wagerail/wagerail/internal/platform/ratelimit"
	"github.com/wagerail/wagerail/internal/uploads"
	"github.com/wagerail/wagerail/ledger"
)

// Auth is the access level a route requires (the spec's "Auth" column).
type Auth string

const (
	Public Auth = "Public"
	// PublicSigned routes skip session guards; the caller proves identity with a signature.
	PublicSigned Auth = "Public+signature"
	// Session routes need any signed-in user.
	Session Auth = "Session"
	// Org routes need an ACTIVE member of the route's organization with at least Route.Role (and
	// Route.Permission when set); a platform admin passes.
	Org Auth = "Org"
	// Platform routes need a platform admin (AdminProfile with checkType PLATFORM).
	Platform Auth = "Platform"
	// Operator routes need a platform operator (the spec's platform support: dispute decisions,
	// BNPL restructure; granted by a platform admin) or a platform admin.
	Operator Auth = "Operator"
)

// Route is one row of the route table.
type Route struct {
	Method  string
	Path    string // Gin syntax (:id); the OpenAPI document uses {id}
	Auth    Auth
	Summary string
	Handler gin.HandlerFunc
	// Role is an Org route's minimum member role.
	Role orgs.MemberRole
	// Tenant names the path parameter that carries an Org route's organization; "" means the
	// session's active organization.
	Tenant string
	// Permission is the module.action an Org route also requires (zero: none).
	Permission orgs.Permission
	// TwoFactorChallenge lets a session that still owes its second factor through (only the
	// two-factor verification routes).
	TwoFactorChallenge bool
	// Idem marks a money-moving route (the spec's "Idem"): it requires an Idempotency-Key, and
	// the idempotency middleware (api/idempotency.go) answers retries with the stored result.
	Idem bool
	// MaxBodyBytes replaces Deps.MaxBodyBytes for this route (0: the global limit): the upload
	// and CSV import routes carry files.
	MaxBodyBytes int64
	// Resolve, when set, runs after the access guards and before the idempotency gate: an
	// Operator route that acts on one organization's row finds that organization from the path
	// (cl.Tenant and the context's tenant; api/lending_servicing.go). It has answered when it
	// aborts.
	Resolve gin.HandlerFunc
	// Body is what the request body must be (api/bind.go); the zero value follows the method.
	// openapi.yaml's requestBody says the same (TestRouteBodiesMatchDocument).
	Body Body
}

// Deps are what the HTTP edge needs from the process that hosts it.
type Deps struct {
	Log *slog.Logger
	DB  *pgxpool.Pool // runtime role; RLS applies
	// Platform is the cross-tenant role's pool (internal/platform/crosstenant): bank-callback tenant
	// resolution and platform-admin routes. Nil: those paths answer 503 NOT_CONFIGURED.
	Platform *pgxpool.Pool
	// FindTransfer resolves a bank callback's reference to our transfer (gateway.FindTransfer);
	// nil means gateway.FindTransfer.
	FindTransfer bankwebhook.TransferFinder
	// Temporal starts, signals and queries the sagas (with workflows.StartOptions); Ledger and
	// Gateway are the services' Go clients, each with per-call deadlines, a circuit breaker and
	// typed errors. Handlers that need one and find it nil answer 503.
	Temporal client.Client
	// TaskQueue is where the API starts sagas ("" means workflows.DefaultTaskQueue);
	// DisburseWait bounds a saga call's wait for the saga's acceptance (api/saga.go; 0:
	// DefaultSagaWait).
	TaskQueue    string
	DisburseWait time.Duration
	Ledger       *ledger.Client
	Gateway      *gateway.Client
	Probes       []Probe
	Registry     *prometheus.Registry // nil: a fresh one
	// WebhookSecrets holds each partner's callback signing secret, by partner name.
	WebhookSecrets map[string][]byte
	// Now is the clock (tests move it); nil means time.Now.
	Now func() time.Time
	// MaxBodyBytes bounds every request body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Limiter counts the auth routes' attempts; nil means one on DB.
	Limiter *ratelimit.Limiter
	// Mailer and Texter send e-mails (verification, reset, magic link, set-up, invitation) and
	// OTP texts; nil means internal/notify's log sender (a redacted line, nothing delivered).
	Mailer notify.Mailer
	Texter notify.Texter
	// KycValidity is how long a KYC approval holds; 0 means kyc.DefaultValidity.
	KycValidity time.Duration
	// TrustedProxies are the CIDRs of the load balancers in front of the API whose
	// X-Forwarded-For may name the client; nil trusts none, so the client address (which the
	// per-IP rate limits key on) is the connection's peer and a caller cannot choose it.
	TrustedProxies []string
	// PublicURL is where users reach the portal (links in e-mails); "" means http://127.0.0.1:8080.
	PublicURL string
	// Uploads keeps uploaded files (internal/uploads); nil: the upload routes answer 503
	// NOT_CONFIGURED. MaxUploadBytes bounds one file; 0 means uploads.DefaultMaxBytes.
	Uploads        uploads.Store
	MaxUploadBytes int64
	// LoanProjection projects an employee's next payroll run for a loan quote; nil means the
	// payroll calculator's projection of the clock's month on the inputs stored now
	// (payroll.Project).
	LoanProjection lending.ProjectFunc
	// EqubMoneyMovement is the master switch of equb money movement (EQUB_MONEY_MOVEMENT_ENABLED):
	// off, the equb money routes answer 503 EQUB_MONEY_MOVEMENT_DISABLED before anything is
	// written (api/equb_money.go).
	EqubMoneyMovement bool
	// EqubEscrowRecon is the switch of the equb escrow reconciliation (EQUB_ESCROW_RECON_ENABLED):
	// off, its operator route answers 503 EQUB_ESCROW_RECON_DISABLED and starts nothing
	// (api/equb_escrow_recon.go).
	EqubEscrowRecon bool
	// EwaRecoverable limits an EWA advance to what the next payroll can recover within the
	// protection policy (the payroll calculator's projection); nil: the EWA settings' limits only.
	EwaRecoverable ewa.RecoverableFunc
	// NationalIDRegistry looks KYC submissions' national ids up (POST /api/kyc/<id>/registry-check);
	// nil: that route answers 503 NOT_CONFIGURED.
	NationalIDRegistry kyc.Registry
	// DisputeCalendar counts disputes' SLA deadlines in business days; nil means
	// disputes.Ethiopia() (the built-in Ethiopian public holidays).
	DisputeCalendar *disputes.Calendar
	// AdjustmentKeys sign dispute adjustments (LEDGER_ADJUSTMENT_KEY, the ledger's key, then
	// LEDGER_ADJUSTMENT_KEY_PREVIOUS while a rotation is under way): the first signs the ledger
	// request and the approvals; each verifies an approval it signed. None: adjustments are refused
	// (api/disputes_decide.go).
	AdjustmentKeys [][]byte
}

// Server is the HTTP API.
type Server struct {
	Engine   *gin.Engine
	deps     Deps
	ready    *readiness
	reg      *prometheus.Registry
	webhooks *webhooks
	access   *orgs.AccessCache
	limiter  *ratelimit.Limiter
	// bun and platformBun are the domain stores' query layer over Deps.DB and Deps.Platform
	// (internal/platform/db.NewBun; nil when the pool is).
	bun, platformBun *bun.DB
	// background counts work that runs after the answer (the mails of forget-password and
	// magic-link sign-in, which must not show in the response time; api/auth_extra.go).
	background sync.WaitGroup
	// payrollHealthCache shares one read of the payroll jobs' schedules (api/payroll_health.go).
	payrollHealthCache payrollHealthCache
	// passkeys is the WebAuthn relying party of PUBLIC_URL (api/auth_passkey.go); nil when
	// PUBLIC_URL is no absolute URL (the passkey routes answer 503).
	passkeys *webauthn.WebAuthn
	// guards are the route table's rows by "METHOD path": a dashboard section is shown to whom
	// its route's guard admits (api/dashboards.go).
	guards map[string]Route
}

//go:embed openapi.yaml
var openapiYAML []byte

// New builds the engine with every route of routes() mounted under /api.
func New(d Deps) *Server {
	gin.SetMode(gin.ReleaseMode)
	if d.Registry == nil {
		d.Registry = prometheus.NewRegistry()
		d.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	if d.MaxBodyBytes <= 0 {
		d.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if d.MaxUploadBytes <= 0 {
		d.MaxUploadBytes = uploads.DefaultMaxBytes
	}
	if d.Limiter == nil && d.DB != nil {
		opts := []ratelimit.Option{ratelimit.WithMetrics(ratelimit.NewMetrics(d.Registry, allRateLimits...))}
		if d.Now != nil {
			opts = append(opts, ratelimit.WithClock(d.Now))
		}
		d.Limiter = ratelimit.New(d.DB, opts...)
	}
	if d.Mailer == nil || d.Texter == nil {
		l := notify.NewLog(d.Log)
		if d.Mailer == nil {
			d.Mailer = l
		}
		if d.Texter == nil {
			d.Texter = l
		}
	}
	if d.PublicURL == "" {
		d.PublicURL = "http://127.0.0.1:8080"
	}
	if d.DisputeCalendar == nil {
		d.DisputeCalendar = disputes.Ethiopia()
	}
	// When the dispute deadlines' holiday data ends: an alert asks for new data before then.
	d.Registry.MustRegister(disputes.NewCalendarMetric(d.DisputeCalendar))
	s := &Server{deps: d, reg: d.Registry, access: orgs.NewAccessCache(d.Now, 0), limiter: d.Limiter}
	if d.DB != nil {
		s.bun = db.NewBun(d.DB)
		if s.deps.LoanProjection == nil {
			s.deps.LoanProjection = s.loanProjection
		}
	}
	if d.Platform != nil {
		s.platformBun = db.NewBun(d.Platform)
	}
	if rp, err := passkeyParty(d.PublicURL); err == nil {
		s.passkeys = rp
	} else {
		d.Log.Warn("passkeys disabled", "error", err)
	}
	s.ready = newReadiness(d.Probes, d.Registry)
	s.webhooks = newWebhooks(d)
	e := gin.New()
	e.HandleMethodNotAllowed = false
	// An API answers what was asked: no redirect to a path with or without a trailing slash (a
	// client would replay the request there), a JSON 404 instead.
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	// A path parameter is one segment as the client escaped it: "%2F" in a segment is data, not a
	// separator (RFC 3986), so "/api/x/a%2Fb" is the route of "/api/x/{id}" with id "a/b", as the
	// document's router reads it, and its handler refuses the value.
	e.UseRawPath = true
	e.UnescapePathValues = true
	if err := e.SetTrustedProxies(d.TrustedProxies); err != nil {
		panic("api: trusted proxies: " + err.Error()) // validated by the caller (ParseTrustedProxies)
	}
	e.ContextWithFallback = true
	routes := s.routes()
	e.Use(securityHeaders(), withRequestID(), accessLog(d.Log), recoverPanics(d.Log), limitBodies(d.MaxBodyBytes, bodyLimits(routes)))
	idem := newIdempotencyGate(d, idempotency.Config{})
	s.guards = make(map[string]Route, len(routes))
	for _, r := range routes {
		s.guards[r.Method+" "+r.Path] = r
		// The body's shape is checked first: a refusal there reads no session and writes nothing.
		h := append([]gin.HandlerFunc{checkBody(r)}, s.pipeline(r)...)
		if r.Resolve != nil {
			h = append(h, r.Resolve)
		}
		if r.Idem {
			h = append(h, idem.middleware(r))
		}
		e.Handle(r.Method, r.Path, append(h, r.Handler)...)
	}
	e.NoRoute(func(c *gin.Context) {
		writeError(c, NewError(http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("no route %s %s", c.Request.Method, c.Request.URL.Path)))
	})
	s.Engine = e
	return s
}

// ParseTrustedProxies checks a comma-separated list of IPs or CIDRs ("" is none).
func ParseTrustedProxies(raw string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(raw, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if _, err := netip.ParsePrefix(p); err != nil {
			if _, err := netip.ParseAddr(p); err != nil {
				return nil, fmt.Errorf("trusted proxy %q is not an IP address or CIDR", p)
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// Drain waits, until ctx ends, for the work that runs after an answer (the mails of
// forget-password and magic links): call it after the HTTP server has shut down.
func (s *Server) Drain(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.background.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WatchDependencies keeps svc_dependency_up fresh until ctx ends.
func (s *Server) WatchDependencies(ctx context.Context) { s.ready.watch(ctx, defaultWatchInterval) }

// SweepGatheredCallbacks delivers, once a minute until ctx ends, the gathered bank callbacks
// (bulk-disbursement items) that a process stopped before flushing (internal/bankwebhook); a
// receipt flushes its own within a fraction of a second.
func (s *Server) SweepGatheredCallbacks(ctx context.Context) {
	if s.webhooks.applier == nil || !s.webhooks.applier.Configured() {
		return
	}
	s.webhooks.applier.SweepGathered(ctx, time.Minute)
}

// routes is the map of the API: every route, its auth level and handler. openapi.yaml must name
// exactly these (TestOpenAPIMatchesRoutes).
func (s *Server) routes() []Route {
	rs := []Route{
		{Method: http.MethodGet, Path: "/api", Auth: Public, Summary: "Service banner", Handler: s.banner},
		{Method: http.MethodGet, Path: "/api/healthz", Auth: Public, Summary: "Liveness", Handler: s.healthz},
		{Method: http.MethodGet, Path: "/api/readyz", Auth: Public, Summary: "Readiness of every dependency", Handler: s.readyz},
		{Method: http.MethodGet, Path: "/api/health/payroll", Auth: Public, Summary: "The payroll jobs' schedules", Handler: s.payrollHealth},
		{Method: http.MethodGet, Path: "/api/metrics", Auth: Public, Summary: "Prometheus metrics", Handler: gin.WrapH(promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))},
		{Method: http.MethodGet, Path: "/api/openapi.json", Auth: Public, Summary: "This API's OpenAPI 3 document", Handler: s.openapi},
		// The callback checks its own body, after the signature (api/webhook.go), so that every
		// refusal is counted in its metrics.
		{Method: http.MethodPost, Path: "/api/integration/bank-callback/:partner", Auth: PublicSigned, Summary: "Partner-bank transfer callback", Handler: s.bankCallback, Body: BodyOwn},
	}
	for _, area := range [][]Route{s.authRoutes(), s.authExtraRoutes(), s.passkeyRoutes(), s.sessionRoutes(), s.orgAuthRoutes(), s.memberRoutes(), s.businessRoutes(), s.teamRoutes(), s.securityPolicyRoutes(),
		s.employeeRoutes(), s.employeeTransferRoutes(), s.catalogRoutes(), s.catalogAssignmentRoutes(), s.uploadRoutes(), s.kycRoutes(), s.sanctionsRoutes(),
		s.ewaRoutes(), s.webhookAdminRoutes(),
		s.payrollSettingsRoutes(),
		s.lendingRoutes(),
		s.loanRoutes(),
		s.loanMoneyRoutes(),
		s.loanServicingRoutes(),
		s.loanMoneyReadRoutes(),
		s.bnplRoutes(),
		s.payrollEarningRoutes(),
		s.payrollMandateRoutes(),
		s.payrollProjectionRoutes(),
		s.payrollRunRoutes(), s.payrollDisburseRoutes(),
		s.payrollReportRoutes(), s.payrollCourtOrderRoutes(), s.businessReportRoutes(), s.businessBillRoutes(),
		s.equbRoutes(), s.equbMoneyRoutes(), s.equbEscrowReconRoutes(),
		s.payslipRoutes(),
		s.disputeRoutes(),
		s.walletRoutes(), s.walletTransferRoutes(),
		s.savingsRoutes(),
		s.deadLetterRoutes(), s.operatorRoutes(), s.notificationRoutes(), s.auditLogRoutes(), s.dashboardRoutes(), s.demoRequestRoutes(), s.adminUserRoutes(), s.adminOrgRoutes(), s.adminPayrollRoutes(), s.adminBnplRoutes(), s.adminEqubRoutes(), s.adminLoanRoutes(), s.adminEwaRoutes(), s.employeeBudgetRoutes(), s.employeeOnboardingRoutes(), s.adminInFlightRoutes(), s.adminComplianceRoutes(), s.settingsPageRoutes(), s.myMandateRoutes(), s.employeeSettingsRoutes(), s.employeeHelpRoutes(), s.fiLoanRequestRoutes()} {
		rs = append(rs, area...)
	}
	return rs
}

func (s *Server) banner(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"name": "wagerail", "version": buildinfo.Version})
}

func (s *Server) healthz(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) }

func (s *Server) readyz(c *gin.Context) {
	res, ok := s.ready.check(c.Request.Context())
	if ok {
		c.JSON(http.StatusOK, gin.H{"status": "ready", "dependencies": res})
		return
	}
	var down []string
	for _, p := range s.deps.Probes {
		if res[p.Name].Status != "up" {
			down = append(down, p.Name)
		}
	}
	e := NewError(http.StatusServiceUnavailable, "NOT_READY", "dependencies down: "+strings.Join(down, ", "))
	e.Details = res
	writeError(c, e)
}

func (s *Server) openapi(c *gin.Context) {
	doc, err := openapiJSON()
	if err != nil {
		writeError(c, err)
		return
	}
	c.Data(http.StatusOK, "application/json; charset=utf-8", doc)
}

// openapiJSON is openapi.yaml as JSON, converted once: the document is built into the binary, and
// a public route that parsed the YAML on every request spent milliseconds of CPU per anonymous
// caller.
var openapiJSON = sync.OnceValues(func() ([]byte, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(openapiYAML, &doc); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	return b, nil
})

// OpenAPIDocument returns openapi.yaml as a JSON-ready value (every nested map with string keys),
// a copy of its own.
func OpenAPIDocument() (map[string]any, error) {
	b, err := openapiJSON()
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, json.Unmarshal(b, &out)
}
