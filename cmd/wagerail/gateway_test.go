package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/wagerail/wagerail/gateway"
)

// The national ID registry is configured by --registry-name / GATEWAY_REGISTRY_NAME and
// --registry-url / GATEWAY_REGISTRY_URL; without a URL it is the sandbox the bank partner uses,
// which is how `make run` (devComponents sets only the sandbox URL) gets a working registry.
func TestGatewayRegistryConfig(t *testing.T) {
	var cfg gatewayConfig
	require.NoError(t, gatewayFlags(&cfg).Parse(nil, io.Discard))
	require.Equal(t, gateway.SandboxRegistry, cfg.RegistryName)
	require.Equal(t, "http://127.0.0.1:8090", cfg.registryURL(), "default: the sandbox URL")

	cfg = gatewayConfig{}
	require.NoError(t, gatewayFlags(&cfg).Parse([]string{"--sandbox-url", "http://127.0.0.1:18090"}, io.Discard))
	require.Equal(t, "http://127.0.0.1:18090", cfg.registryURL(), "the registry follows the sandbox URL")

	t.Setenv("GATEWAY_REGISTRY_URL", "http://registry:8090")
	t.Setenv("GATEWAY_REGISTRY_NAME", "fayda-test")
	cfg = gatewayConfig{}
	require.NoError(t, gatewayFlags(&cfg).Parse(nil, io.Discard))
	require.Equal(t, "http://registry:8090", cfg.registryURL())
	require.Equal(t, "fayda-test", cfg.RegistryName)

	ok := func(mut func(*gatewayConfig)) gatewayConfig {
		c := defaultGatewayConfig()
		c.DatabaseURL = "postgres://wagerail_app:x@127.0.0.1:1/wagerail"
		mut(&c)
		return c
	}
	require.NoError(t, ok(func(*gatewayConfig) {}).validate())
	for name, c := range map[string]struct {
		cfg  gatewayConfig
		want string
	}{
		"registry url without scheme": {ok(func(c *gatewayConfig) { c.RegistryURL = "registry:8090" }), "GATEWAY_REGISTRY_URL"},
		"registry url ftp":            {ok(func(c *gatewayConfig) { c.RegistryURL = "ftp://registry/" }), "GATEWAY_REGISTRY_URL"},
		"empty registry name":         {ok(func(c *gatewayConfig) { c.RegistryName = "" }), "GATEWAY_REGISTRY_NAME"},
		"registry name with a space":  {ok(func(c *gatewayConfig) { c.RegistryName = "fay da" }), "GATEWAY_REGISTRY_NAME"},
	} {
		err := c.cfg.validate()
		require.ErrorContains(t, err, c.want, name)
	}
}
