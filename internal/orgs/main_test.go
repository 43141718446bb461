package orgs_test

import (
	"testing"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestMain is the package's (the test kit stops its Postgres when the tests end). Other test files
// of this package share this single definition.
func TestMain(m *testing.M) { testkit.Main(m) }
