package api

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/wagerail/wagerail/internal/identity"
	"github.com/wagerail/wagerail/internal/platform/testkit"
)

// TestMain runs the package's tests on the shared test kit, with cheap password hashes: the
// suite signs thousands of users up and in, and under the race detector each production-cost
// argon2id hash takes seconds (internal/identity pins the production cost). Benchmarks
// (WAGERAIL_BENCH) keep it: api's sign-in figures are about it.
//
// Its parallel tests run twice GOMAXPROCS at a time unless -parallel says otherwise: they wait on
// Postgres, Temporal and the sandbox far more than they compute (a test's stack and its sagas
// keep a core about a third busy), and this package is the suite's longest. Only this package:
// raising -parallel for every package oversubscribed the cores and made the suite slower.
func TestMain(m *testing.M) {
	if os.Getenv("WAGERAIL_BENCH") == "" {
		identity.UseCheapPasswordHashesForTests()
	}
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		if err := flag.Set("test.parallel", strconv.Itoa(2*runtime.GOMAXPROCS(0))); err != nil {
			panic(err)
		}
	}
	testkit.Main(m)
}

// soak says whether this is `make soak` (WAGERAIL_SOAK=1): scale tests then run their full size,
// `make test` a smaller variant that exercises the same paths.
func soak() bool { return os.Getenv("WAGERAIL_SOAK") != "" }
