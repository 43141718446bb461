package uploads_test

import (
	"testing"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestMain is the package's (the test kit stops its Postgres when the tests end).
func TestMain(m *testing.M) { testkit.Main(m) }
