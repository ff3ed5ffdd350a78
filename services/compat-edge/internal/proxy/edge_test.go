package proxy_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/services/compat-edge/internal/proxy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/usage"
)

// serveEdge runs an edge as its main does: the edge's own routes on the
// gin engine of an httpserver.Server with cfg and deps, the proxy path on
// proxy.Server as its public server, on a port of its own (no admin
// listener). It returns the edge's URL.
func serveEdge(t testing.TB, cfg httpserver.Config, deps httpserver.Deps, forward *proxy.Proxy, routes proxy.Config, doc []byte) string {
	t.Helper()
	cfg.Addr, cfg.AdminAddr = "127.0.0.1:0", "off"
	srv := httpserver.New(cfg, deps)
	srv.Router().Use(proxy.NormalizePath) // as the edge installs it
	proxy.Register(srv.Router(), forward, doc)
	srv.SetPublic(proxy.NewServer(proxy.ServerDeps{
		Platform: srv.Platform(), Proxy: forward, Routes: routes,
		Own: srv.Router(), OwnPaths: []string{usage.Path},
	}))
	addr, err := srv.Listen()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	return "http://" + addr.String()
}
