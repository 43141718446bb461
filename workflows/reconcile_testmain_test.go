package workflows

import (
	"io"
	"log/slog"
	"testing"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestMain is the package's (the test kit stops its Postgres and Temporal when tests end). If
// another test file of this package needs one, keep this single definition.
func TestMain(m *testing.M) { testkit.Main(m) }

func testLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
