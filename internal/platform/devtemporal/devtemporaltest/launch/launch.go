// Package launch is what devtemporaltest and its server process (devtemporaltest/temporalserver)
// say to each other: the request the test binary writes to the process's standard input, one JSON
// line, and the line the process prints on standard output once its server answers. It imports
// nothing of the Temporal server, so the test binaries do not link it.
package launch

import (
	"errors"
	"strings"
	"time"
)

// Package is the server process's import path (testkit.Command builds it).
const Package = "github.com/wagerail/wagerail/internal/platform/devtemporal/devtemporaltest/temporalserver"

// Request is the server a test binary asks for.
type Request struct {
	// WorkflowTaskTimeout as devtemporal.Config's (0: Temporal's default).
	WorkflowTaskTimeout time.Duration
	// Postgres, when set, keeps the server's state in Postgres instead of SQLite in memory, after
	// provisioning its role and databases as SuperDSN's superuser (devtemporal.ProvisionPostgres).
	Postgres *Postgres
	SuperDSN string
}

// Postgres has devtemporal.PostgresConfig's fields, which temporalserver converts it to (a
// conversion that stops compiling if the two part); an empty User is devtemporal.PostgresUser.
// It is a copy so that the test binaries, which import this package, link no Temporal server.
type Postgres struct {
	Host               string
	Port               int
	User               string
	Password           string
	Database           string
	VisibilityDatabase string
}

// readyPrefix starts the ready line.
const readyPrefix = "ready "

// Ready is the line the process prints once its frontend answers.
func Ready(hostPort, namespace string) string {
	return readyPrefix + hostPort + " " + namespace + "\n"
}

// ParseReady reads a ready line back.
func ParseReady(line string) (hostPort, namespace string, err error) {
	fields := strings.Fields(strings.TrimPrefix(line, readyPrefix))
	if !strings.HasPrefix(line, readyPrefix) || len(fields) != 2 {
		return "", "", errors.New("launch: not a ready line: " + strings.TrimSpace(line))
	}
	return fields[0], fields[1], nil
}
