package employeetransfer_test

import (
	"testing"

	"github.com/wagerail/wagerail/internal/platform/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }
