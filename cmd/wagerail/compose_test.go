package main

import (
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// docker-compose.yml stays in step with the binary: every wagerail service runs a real subcommand
// and sets only environment variables that subcommand reads.
func TestComposeMatchesTheBinary(t *testing.T) {
	b, err := os.ReadFile("../../docker-compose.yml")
	require.NoError(t, err)
	var doc struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Command     []string          `yaml:"command"`
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(b, &doc))

	byName := map[string][]string{}
	for _, c := range commands() {
		byName[c.Name] = c.EnvVars()
	}
	seen := map[string]bool{}
	for name, svc := range doc.Services {
		if svc.Image != "wagerail:dev" {
			continue
		}
		require.NotEmpty(t, svc.Command, name)
		sub := svc.Command[0]
		vars, ok := byName[sub]
		require.True(t, ok, "service %s runs unknown subcommand %q", name, sub)
		seen[sub] = true
		for k := range svc.Environment {
			require.True(t, slices.Contains(vars, k), "service %s sets %s, which `wagerail %s` does not read", name, k, sub)
		}
	}
	for _, sub := range []string{"migrate", "ledger", "gateway", "sandbox", "api", "worker"} {
		require.True(t, seen[sub], "docker-compose.yml has no service running `wagerail %s`", sub)
	}
}
