package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	sdklog "go.temporal.io/sdk/log"

	"github.com/wagerail/wagerail/internal/platform/cli"
	"github.com/wagerail/wagerail/internal/platform/logging"
	"github.com/wagerail/wagerail/internal/platform/rpcclient"
)

func addLogLevel(c *cli.Command, p *string) {
	c.String(p, "log-level", "LOG_LEVEL", "info", "debug, info, warn or error")
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToLower(s))); err != nil {
		return 0, fmt.Errorf("log level %q: use debug, info, warn or error", s)
	}
	return l, nil
}

func newLogger(level, process string) (*slog.Logger, error) {
	l, err := parseLevel(level)
	if err != nil {
		return nil, err
	}
	return logging.New(os.Stderr, l, process), nil
}

// sdkLogger routes the Temporal SDK's logs through the redacting handler, at warn and above: its
// info lines (worker started, poller counts) are noise in ours.
func sdkLogger(log *slog.Logger) sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(minLevel{log.Handler(), slog.LevelWarn}))
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(a), m.min}
}

func (m minLevel) WithGroup(n string) slog.Handler { return minLevel{m.Handler.WithGroup(n), m.min} }

// clientBreaker is the breaker of a service client (client names it in the log) as the binary
// runs it: the defaults, each state change logged — warn when it opens (every call then fails at
// once with nothing sent, and the log says why), info when it half-opens or closes again.
func clientBreaker(log *slog.Logger, client string) rpcclient.BreakerOptions {
	return rpcclient.BreakerOptions{OnStateChange: func(from, to string) {
		level := slog.LevelInfo
		if to == "open" {
			level = slog.LevelWarn
		}
		log.Log(context.Background(), level, "service client circuit breaker changed state", "client", client, "from", from, "to", to)
	}}
}
