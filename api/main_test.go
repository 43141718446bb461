package api

import (
	"os"
	"testing"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestMain runs the package's tests on the shared test kit, with cheap password hashes: the
// suite signs thousands of users up and in, and under the race detector each production-cost
// argon2id hash takes seconds (internal/identity pins the production cost). Benchmarks
// (WAGERAIL_BENCH) keep it: api's sign-in figures are about it.
func TestMain(m *testing.M) {
	if os.Getenv("WAGERAIL_BENCH") == "" {
		identity.UseCheapPasswordHashesForTests()
	}
	testkit.Main(m)
}

// soak says whether this is `make soak` (WAGERAIL_SOAK=1): scale tests then run their full size,
// `make test` a smaller variant that exercises the same paths.
func soak() bool { return os.Getenv("WAGERAIL_SOAK") != "" }
