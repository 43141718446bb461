// Package devtemporal runs a real Temporal server (frontend, history, matching, worker) inside the
// wagerail process, with SQLite persistence (or, with Config.Postgres, on a Postgres server), plus
// the Temporal Web UI. It is what `wagerail dev` and
// the test kit use so that no external cluster is needed; production points TEMPORAL_ADDRESS at a
// real cluster instead and never starts this.
package devtemporal

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	tlog "go.temporal.io/server/common/log"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/schema/sqlite"
	"go.temporal.io/server/temporal"
	tsql "go.temporal.io/server/tools/sql"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"

	"github.com/wagerail/wagerail/internal/platform/freeport"
)

// SearchAttributes are the custom search attributes every Wagerail namespace carries: workflows are
// found in the UI by tenant and by the business key (payroll run id, EWA request id, …).
var SearchAttributes = map[string]enumspb.IndexedValueType{
	"TenantId":    enumspb.INDEXED_VALUE_TYPE_KEYWORD,
	"BusinessKey": enumspb.INDEXED_VALUE_TYPE_KEYWORD,
}

// Config says where the embedded server keeps its state and where it listens.
type Config struct {
	// DatabaseFile is the SQLite file; empty means in-memory (state dies with the process).
	DatabaseFile string
	// Postgres, when set, keeps the server's state in Postgres instead of SQLite (DatabaseFile must
	// then be empty): both the default and the visibility store, in two databases.
	Postgres *PostgresConfig
	// IP the frontend and UI bind to; default 127.0.0.1.
	IP string
	// FrontendPort of the gRPC frontend; 0 picks a free port.
	FrontendPort int
	// UIPort of the Web UI; 0 disables the UI.
	UIPort int
	// Namespace registered at start; default "default".
	Namespace string
	// Logger receives the server's own logs; nil discards them.
	Logger tlog.Logger
	// WorkflowTaskTimeout is how long a workflow task a worker took may run before the server
	// hands it to another worker, for workflows started without a timeout of their own
	// (Wagerail's are); 0 keeps Temporal's default, 10 s. A worker that dies mid-task holds its
	// workflow that long.
	WorkflowTaskTimeout time.Duration
}

// Server is a running embedded Temporal server.
type Server struct {
	cfg      Config
	srv      temporal.Server
	ui       *uiserver.Server
	hostPort string
}

// Start creates the schema on first use (SQLite, or the Postgres databases brought to the latest
// schema version), registers the namespace and the search attributes, and starts the server and
// (when UIPort is set) the Web UI. It returns once the frontend answers and resolves the search
// attributes.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.IP == "" {
		cfg.IP = "127.0.0.1"
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if cfg.Logger == nil {
		cfg.Logger = tlog.NewNoopLogger()
	}
	if cfg.FrontendPort == 0 {
		p, err := freeport.One()
		if err != nil {
			return nil, err
		}
		cfg.FrontendPort = p
	} else if err := portFree(cfg.IP, cfg.FrontendPort); err != nil {
		return nil, fmt.Errorf("temporal frontend: %w (set --temporal-port or TEMPORAL_ADDRESS)", err)
	}
	if cfg.UIPort != 0 {
		if err := portFree(cfg.IP, cfg.UIPort); err != nil {
			return nil, fmt.Errorf("temporal ui: %w (set --temporal-ui-port)", err)
		}
	}

	var stores persistenceStores
	if cfg.Postgres != nil {
		if cfg.DatabaseFile != "" {
			return nil, errors.New("devtemporal: DatabaseFile and Postgres are exclusive")
		}
		pg := cfg.Postgres.withDefaults()
		cfg.Postgres = &pg
		def, vis, err := setupPostgres(ctx, pg, cfg.Logger)
		if err != nil {
			return nil, err
		}
		stores = persistenceStores{defaultName: "postgres", defaultSQL: def, visibilityName: "postgres-visibility", visibilitySQL: vis}
	} else {
		sqlCfg, err := setupSQLite(cfg)
		if err != nil {
			return nil, err
		}
		stores = persistenceStores{defaultName: sqliteplugin.PluginName, defaultSQL: sqlCfg}
	}

	if cfg.Postgres != nil || cfg.DatabaseFile != "" {
		if err := forgetMembers(stores.defaultSQL, cfg.Logger); err != nil {
			return nil, err
		}
	}

	serverCfg, err := serverConfig(cfg, stores)
	if err != nil {
		return nil, err
	}
	authorizer, err := authorization.GetAuthorizerFromConfig(&serverCfg.Global.Authorization)
	if err != nil {
		return nil, fmt.Errorf("temporal authorizer: %w", err)
	}
	claimMapper, err := authorization.GetClaimMapperFromConfig(&serverCfg.Global.Authorization, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("temporal claim mapper: %w", err)
	}
	dyn := dynamicconfig.StaticClient{
		// ForceSearchAttributesCacheRefreshOnRead stays off (Temporal's CLI dev server turns it
		// on): with it, every read of the search-attribute types (a start that carries search
		// attributes, each visibility write) reloads the cluster metadata from the store, about
		// 1 ms of CPU per saga here. The types need no refresh: SQL visibility keeps custom
		// attributes in predefined columns whose types are in the cluster metadata from the
		// first start, and a namespace's attribute names are its aliases, which the SQLite path
		// writes before the server starts and the Postgres path registers and probes (Start
		// returns once a query by them is accepted).
		// One partition per task queue: with the default four, a task written to one partition
		// while the worker polls another waits to be forwarded, which costs every workflow and
		// activity task tens of milliseconds on a single-node server with one worker.
		dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():  []dynamicconfig.ConstrainedValue{{Value: 1}},
		dynamicconfig.MatchingNumTaskqueueWritePartitions.Key(): []dynamicconfig.ConstrainedValue{{Value: 1}},
		// The history service reads its task queues (transfer: a new workflow or activity task
		// to hand to matching; timer; visibility; outbound) at most MaxPollRPS times a second per
		// shard, 20 by default. A production cluster spreads its workflows over hundreds of
		// shards; this server has one, so the default made every task wait up to 50 ms for the
		// next read, about 25 ms on average, in every saga step that needs one.
		dynamicconfig.TransferProcessorMaxPollRPS.Key():   []dynamicconfig.ConstrainedValue{{Value: shardPollRPS}},
		dynamicconfig.TimerProcessorMaxPollRPS.Key():      []dynamicconfig.ConstrainedValue{{Value: shardPollRPS}},
		dynamicconfig.VisibilityProcessorMaxPollRPS.Key(): []dynamicconfig.ConstrainedValue{{Value: shardPollRPS}},
		dynamicconfig.OutboundProcessorMaxPollRPS.Key():   []dynamicconfig.ConstrainedValue{{Value: shardPollRPS}},
	}
	if cfg.WorkflowTaskTimeout > 0 {
		dyn[dynamicconfig.DefaultWorkflowTaskTimeout.Key()] = []dynamicconfig.ConstrainedValue{{Value: cfg.WorkflowTaskTimeout}}
	}
	srv, err := temporal.NewServer(
		temporal.WithConfig(serverCfg),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithLogger(cfg.Logger),
		temporal.WithAuthorizer(authorizer),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return claimMapper }),
		temporal.WithDynamicConfigClient(dyn),
	)
	if err != nil {
		return nil, fmt.Errorf("temporal server: %w", err)
	}
	if err := srv.Start(); err != nil {
		return nil, fmt.Errorf("temporal server start: %w", err)
	}
	s := &Server{cfg: cfg, srv: srv, hostPort: net.JoinHostPort(cfg.IP, strconv.Itoa(cfg.FrontendPort))}
	ready := s.waitReady
	if cfg.Postgres != nil {
		ready = s.registerNamespace
	}
	if err := ready(ctx); err != nil {
		_ = srv.Stop()
		return nil, err
	}
	if cfg.UIPort != 0 {
		s.startUI()
	}
	return s, nil
}

// setupSQLite makes the SQLite store: the schema on first use of a file, and the namespace with
// the search attributes written straight into it.
func setupSQLite(cfg Config) (*config.SQL, error) {
	sqlCfg := &config.SQL{PluginName: sqliteplugin.PluginName, ConnectAttributes: map[string]string{}}
	if cfg.DatabaseFile == "" {
		sqlCfg.ConnectAttributes["mode"] = "memory"
		sqlCfg.ConnectAttributes["cache"] = "shared"
		// The SQLite plugin creates the schema itself when it opens an in-memory database.
		sqlCfg.DatabaseName = fmt.Sprintf("wagerail-%d-%d", os.Getpid(), time.Now().UnixNano())
	} else {
		sqlCfg.ConnectAttributes["mode"] = "rwc"
		// Unknown attributes become SQLite pragmas: WAL so readers do not block the writer, and
		// synchronous=FULL so a committed workflow step survives power loss, not just a crash.
		sqlCfg.ConnectAttributes["journal_mode"] = "wal"
		sqlCfg.ConnectAttributes["synchronous"] = "2"
		sqlCfg.DatabaseName = cfg.DatabaseFile
		if err := os.MkdirAll(filepath.Dir(cfg.DatabaseFile), 0o755); err != nil {
			return nil, fmt.Errorf("temporal state dir: %w", err)
		}
		if _, err := os.Stat(cfg.DatabaseFile); errors.Is(err, os.ErrNotExist) {
			if err := sqlite.SetupSchema(sqlCfg); err != nil {
				return nil, fmt.Errorf("temporal sqlite schema: %w", err)
			}
		}
	}

	nsCfg, err := sqlite.NewNamespaceConfig("active", cfg.Namespace, false, SearchAttributes)
	if err != nil {
		return nil, fmt.Errorf("temporal namespace config: %w", err)
	}
	if err := sqlite.CreateNamespaces(sqlCfg, nsCfg); err != nil {
		return nil, fmt.Errorf("temporal namespace: %w", err)
	}

	return sqlCfg, nil
}

// forgetMembers deletes the cluster membership a previous run left in the store. The embedded
// server is the only member of its cluster, so every row there names the services of a process that
// is gone; left in place, the new services keep trying those addresses and the first workflow after
// a restart waits about a minute for them to time out. (So two processes must never share a store.)
func forgetMembers(sqlCfg *config.SQL, logger tlog.Logger) error {
	c := *sqlCfg
	conn, err := tsql.NewConnection(&c, logger)
	if err != nil {
		return fmt.Errorf("temporal store: %w", err)
	}
	defer conn.Close()
	if err := conn.Exec("DELETE FROM cluster_membership"); err != nil {
		return fmt.Errorf("temporal store: clear membership: %w", err)
	}
	return nil
}

// HostPort is the frontend address clients dial.
func (s *Server) HostPort() string { return s.hostPort }

// Namespace is the registered namespace.
func (s *Server) Namespace() string { return s.cfg.Namespace }

// UIURL is the Web UI address, or "" when the UI is off.
func (s *Server) UIURL() string {
	if s.cfg.UIPort == 0 {
		return ""
	}
	return fmt.Sprintf("http://%s", net.JoinHostPort(s.cfg.IP, strconv.Itoa(s.cfg.UIPort)))
}

// stopWait bounds how long Stop waits for the server's own shutdown, which now and then stalls
// on internal RPC retries between its services.
const stopWait = 3 * time.Second

// Stop stops the UI and the server. If the server has not finished stopping after stopWait, Stop
// returns an error and leaves it to process exit: every write Temporal made is already committed
// to SQLite, so this is no worse than the crash Temporal is built to survive.
func (s *Server) Stop() error {
	if s.ui != nil {
		s.ui.Stop()
	}
	done := make(chan error, 1)
	go func() { done <- s.srv.Stop() }()
	select {
	case err := <-done:
		return err
	case <-time.After(stopWait):
		return fmt.Errorf("temporal server still stopping after %s; leaving it to process exit", stopWait)
	}
}

func (s *Server) startUI() {
	ui := uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		Host:                s.cfg.IP,
		Port:                s.cfg.UIPort,
		TemporalGRPCAddress: s.hostPort,
		EnableUI:            true,
		DefaultNamespace:    s.cfg.Namespace,
		DisableNewsFetch:    true, // no internet access is assumed
		HideLogs:            true,
		CORS:                uiconfig.CORS{CookieInsecure: true},
	}))
	s.ui = ui
	go func() { _ = ui.Start() }()
}

// waitReady dials the frontend and checks that the namespace carries the search attributes.
func (s *Server) waitReady(ctx context.Context) error {
	return s.poll(ctx, "frontend "+s.hostPort, func() error {
		c, err := client.Dial(client.Options{HostPort: s.hostPort, Namespace: s.cfg.Namespace, Logger: quietLogger{}})
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: s.cfg.Namespace})
		return err
	})
}

// readyWait bounds each wait of the start for the server to answer.
const readyWait = 30 * time.Second

// poll calls fn until it succeeds, ctx ends or readyWait has passed.
func (s *Server) poll(ctx context.Context, what string, fn func() error) error {
	deadline := time.Now().Add(readyWait)
	for {
		err := fn()
		if err == nil {
			return nil
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("temporal %s not ready: %w", what, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// persistenceStores names the server's default and visibility stores; visibilityName empty means
// the default store holds visibility too.
type persistenceStores struct {
	defaultName    string
	defaultSQL     *config.SQL
	visibilityName string
	visibilitySQL  *config.SQL
}

func serverConfig(cfg Config, st persistenceStores) (*config.Config, error) {
	// Temporal binds these itself, by number: a port lost to a race makes its service fail hard.
	ports, err := freeport.Take(7)
	if err != nil {
		return nil, err
	}
	persistence := config.Persistence{
		DefaultStore:     st.defaultName,
		VisibilityStore:  st.defaultName,
		NumHistoryShards: 1,
		DataStores:       map[string]config.DataStore{st.defaultName: {SQL: st.defaultSQL}},
	}
	if st.visibilityName != "" {
		persistence.VisibilityStore = st.visibilityName
		persistence.DataStores[st.visibilityName] = config.DataStore{SQL: st.visibilitySQL}
	}
	svc := func(grpcPort, membershipPort int) config.Service {
		return config.Service{RPC: config.RPC{GRPCPort: grpcPort, MembershipPort: membershipPort, BindOnIP: cfg.IP}}
	}
	return &config.Config{
		Global: config.Global{
			Membership: config.Membership{MaxJoinDuration: 30 * time.Second, BroadcastAddress: cfg.IP},
		},
		Persistence: persistence,
		ClusterMetadata: &cluster.Config{
			EnableGlobalNamespace:    false,
			FailoverVersionIncrement: 10,
			MasterClusterName:        "active",
			CurrentClusterName:       "active",
			ClusterInformation: map[string]cluster.ClusterInformation{
				"active": {Enabled: true, InitialFailoverVersion: 1, RPCAddress: net.JoinHostPort(cfg.IP, strconv.Itoa(cfg.FrontendPort))},
			},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		Services: map[string]config.Service{
			"frontend": svc(cfg.FrontendPort, ports[0]),
			"history":  svc(ports[1], ports[2]),
			"matching": svc(ports[3], ports[4]),
			"worker":   svc(ports[5], ports[6]),
		},
		Archival: config.Archival{
			History:    config.HistoryArchival{State: "disabled"},
			Visibility: config.VisibilityArchival{State: "disabled"},
		},
		NamespaceDefaults: config.NamespaceDefaults{Archival: config.ArchivalNamespaceDefaults{
			History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
			Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
		}},
		PublicClient: config.PublicClient{HostPort: net.JoinHostPort(cfg.IP, strconv.Itoa(cfg.FrontendPort))},
	}, nil
}

func portFree(ip string, port int) error {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		return fmt.Errorf("port %d on %s is in use", port, ip)
	}
	return l.Close()
}

// quietLogger keeps the SDK's readiness-probe dials out of the logs.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}

func splitHostPort(hp string) (string, int, error) {
	h, p, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	return h, n, err
}

// shardPollRPS bounds how often the one history shard reads each of its task queues: high enough
// that a task is read as soon as it is written (the reader is notified of new tasks and otherwise
// idles), as on a many-shard cluster.
const shardPollRPS = 2000
