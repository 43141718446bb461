// Package rpcserve runs a gRPC service the way every Wagerail gRPC process does: the standard gRPC
// health service and server reflection (so grpcurl works), panic recovery, and a separate HTTP
// listener for Prometheus metrics and /healthz. Services register their own handlers and metrics.
package rpcserve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
)

// Server is a gRPC server plus its metrics/health listener.
type Server struct {
	Name     string
	GRPC     *grpc.Server
	Health   *health.Server
	Registry *prometheus.Registry
	// StopTimeout is how long Serve lets in-flight calls finish once its context ends before it
	// cuts them off (0: DefaultStopTimeout). A service whose calls may legitimately run longer
	// (the gateway's bank calls) sets it above its longest call deadline, so a rolling restart
	// does not turn a bank call into an unknown outcome; the process's termination grace period
	// must cover it.
	StopTimeout time.Duration
	log         *slog.Logger
}

// DefaultStopTimeout is Serve's graceful stop budget when Server.StopTimeout is not set.
const DefaultStopTimeout = 5 * time.Second

// New builds the server. extra interceptors run inside panic recovery.
func New(name string, log *slog.Logger, extra ...grpc.UnaryServerInterceptor) *Server {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	chain := append([]grpc.UnaryServerInterceptor{recoverUnary(log), malformedUnary}, extra...)
	g := grpc.NewServer(serverCodec(), grpc.ChainUnaryInterceptor(chain...), grpc.ChainStreamInterceptor(malformedStream),
		grpc.MaxRecvMsgSize(64<<20))
	h := health.NewServer()
	healthpb.RegisterHealthServer(g, h)
	reflection.Register(g)
	return &Server{Name: name, GRPC: g, Health: h, Registry: reg, log: log}
}

// Listen binds both listeners now, so a port in use is reported before anything starts.
func Listen(grpcAddr, metricsAddr string) (net.Listener, net.Listener, error) {
	gl, err := net.Listen("tcp", grpcAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("grpc listen %s: %w", grpcAddr, err)
	}
	ml, err := net.Listen("tcp", metricsAddr)
	if err != nil {
		gl.Close()
		return nil, nil, fmt.Errorf("metrics listen %s: %w", metricsAddr, err)
	}
	return gl, ml, nil
}

// Serve serves until ctx is done, then stops gracefully: in-flight calls get up to StopTimeout.
func (s *Server) Serve(ctx context.Context, grpcL, metricsL net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		resp, err := s.Health.Check(r.Context(), &healthpb.HealthCheckRequest{})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			http.Error(w, `{"status":"not serving"}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	})
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 2)
	go func() { errc <- s.GRPC.Serve(grpcL) }()
	go func() {
		if err := hs.Serve(metricsL); !errors.Is(err, http.ErrServerClosed) {
			errc <- err
			return
		}
		errc <- nil
	}()
	s.Health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.log.Info("serving", "service", s.Name, "grpc", grpcL.Addr().String(), "metrics", metricsL.Addr().String())

	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	s.Health.Shutdown()
	budget := s.StopTimeout
	if budget <= 0 {
		budget = DefaultStopTimeout
	}
	stopped := make(chan struct{})
	go func() { s.GRPC.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(budget):
		s.log.Warn("in-flight calls cut off at shutdown", "service", s.Name, "stop_timeout", budget)
		s.GRPC.Stop()
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = hs.Shutdown(sctx)
	return err
}

func recoverUnary(log *slog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("panic in rpc", "method", info.FullMethod, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = status.Error(codes.Internal, "internal error")
			}
		}()
		return handler(ctx, req)
	}
}
