// Command temporalserver runs one embedded Temporal server (internal/platform/devtemporal) for a
// test binary, as a process of its own: devtemporaltest builds it with testkit.Command, without
// the race detector the tests run under (instrumented, in the test binary, it made api's tests
// take a fifth more CPU: 940 s against 741 s, measured alone). It reads a launch.Request from its
// standard input, prints launch.Ready once the server answers, and stops the server when its
// standard input ends: when the test binary closes it or exits, however it exits.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/wagerail/wagerail/internal/platform/devtemporal"
	"github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest/launch"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "temporalserver:", err)
		os.Exit(1)
	}
}

func run(stdin io.Reader, stdout io.Writer) error {
	in := bufio.NewReader(stdin)
	line, err := in.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("read request: %w", err)
	}
	var req launch.Request
	if err := json.Unmarshal(line, &req); err != nil {
		return fmt.Errorf("request: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := devtemporal.Config{WorkflowTaskTimeout: req.WorkflowTaskTimeout}
	if req.Postgres != nil {
		pg := devtemporal.PostgresConfig(*req.Postgres)
		if pg.User == "" {
			pg.User = devtemporal.PostgresUser
		}
		if err := devtemporal.ProvisionPostgres(ctx, req.SuperDSN, pg); err != nil {
			return err
		}
		cfg.Postgres = &pg
	}
	srv, err := devtemporal.Start(ctx, cfg)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(stdout, launch.Ready(srv.HostPort(), srv.Namespace())); err != nil {
		_ = srv.Stop()
		return err
	}
	_, _ = io.Copy(io.Discard, in) // until the test binary is done with the server
	// A stop that stalls is left to the process's exit: what the server wrote is committed.
	_ = srv.Stop()
	return nil
}
