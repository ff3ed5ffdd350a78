// Command accounts is the accounts service: the autonomous-agent accounts
// an operator registers and verifies, their OAuth clients, and the OAuth
// 2.1 authorization server that issues account tokens (docs/accounts.md).
// The edge routes /api/accounts, /oauth/ and the authorization server's
// metadata here; the tokens it issues live in the credential store every
// service authenticates from, so no service calls this one to check one.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/services/accounts/internal/agents"
	"github.com/pcourt/pcourt/services/accounts/internal/httpapi"
	"github.com/pcourt/pcourt/services/accounts/internal/oauth"
	"github.com/pcourt/pcourt/services/accounts/internal/store"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Getenv, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "accounts: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, getenv func(string) string, stdout io.Writer) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	base, err := service.Start(ctx, service.Options{
		Name: "accounts", Version: version, Config: cfg.Service, FullConfig: cfg, Getenv: getenv, Stdout: stdout,
	})
	if err != nil {
		return err
	}
	defer base.Close()

	journal, err := idempotency.NewJournal(base.Redis, idempotency.DefaultConfig("pc:acct"), base.Logger)
	if err != nil {
		return err
	}
	credentials := base.Credentials()
	uc := agents.New(store.New(base.Redis), credentials, base.Logger, nil)
	srv := base.Server(httpapi.Problem)
	httpapi.Register(srv.Router(), httpapi.Deps{
		Credentials: credentials,
		Agents:      uc,
		OAuth:       oauth.New(cfg.OAuth, uc, base.Logger),
		Journal:     journal,
	})

	return lifecycle.Run(ctx, base.Logger, lifecycle.Component{Name: "http", Run: srv.Run})
}
