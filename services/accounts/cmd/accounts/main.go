// Command accounts is the accounts service: the autonomous-agent accounts
// an operator registers and verifies, their OAuth clients, the OAuth 2.1
// authorization server that issues account tokens, and people's accounts
// with their passkey and e-mail-code sign-in pages (docs/accounts.md).
// The edge routes /api/accounts, /account, /oauth/ and the authorization
// server's metadata here; the tokens it issues live in the credential
// store every service authenticates from, so no service calls this one
// to check one.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/lifecycle"
	"github.com/pcourt/pcourt/libs/mail"
	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/services/accounts/internal/agents"
	"github.com/pcourt/pcourt/services/accounts/internal/grants"
	"github.com/pcourt/pcourt/services/accounts/internal/httpapi"
	"github.com/pcourt/pcourt/services/accounts/internal/oauth"
	"github.com/pcourt/pcourt/services/accounts/internal/organizations"
	"github.com/pcourt/pcourt/services/accounts/internal/people"
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
	accounts := store.New(base.Redis)
	uc := agents.New(accounts, credentials, base.Logger, nil)
	authServer := oauth.New(cfg.OAuth, uc, base.Logger)
	codeGrant := grants.New(accounts, credentials, base.Logger, nil)
	if cfg.People.Enabled() {
		// The code grant needs a person to sign in and consent: it is on
		// where people's pages are.
		authServer.WithCodeGrant(codeGrant)
	}
	srv := base.Server(httpapi.Problem)
	httpapi.Register(srv.Router(), httpapi.Deps{
		Credentials:         credentials,
		Agents:              uc,
		OAuth:               authServer,
		Journal:             journal,
		RegistrationLimiter: ratelimit.New(base.Redis, "pc:acct:register"),
	})
	components := []lifecycle.Component{{Name: "http", Run: srv.Run}}

	if cfg.People.Enabled() {
		site, _ := webpage.NewSite(cfg.People.PublicBaseURL, cfg.People.SecureCookie) // Validate checked it
		var mailer people.Mailer
		if cfg.People.Mail.Enabled() {
			mailer = mail.New(cfg.People.Mail, time.Now)
		} else {
			base.Logger.Warn("sign-in codes off: PEOPLE_SMTP_HOST is not set, people sign in with passkeys only")
		}
		ppl, err := people.New(people.Config{
			Tenant: cfg.People.Tenant, Environment: cfg.People.Environment, Origin: site.Origin, RPName: cfg.People.RPName,
			SessionTTL: cfg.People.SessionTTL, CodeURL: cfg.People.PublicBaseURL + "/account/signin",
			AccountURL: cfg.People.PublicBaseURL + "/account/",
		}, accounts, credentials, mailer, base.Logger, nil)
		if err != nil {
			return err
		}
		orgs := organizations.New(organizations.Config{Tenant: cfg.People.Tenant, Environment: cfg.People.Environment,
			PagesURL: cfg.People.PublicBaseURL}, accounts, credentials, mailer, base.Logger, nil)
		httpapi.RegisterPeople(srv.Router(), httpapi.PeopleDeps{People: ppl, Site: site, Logger: base.Logger, Organizations: orgs,
			OAuth: authServer, Grants: codeGrant})
		// Stopped after the server has drained, as a relay is.
		components = append(components, lifecycle.Component{Name: "code-mail", Run: ppl.RunMail})
	} else {
		base.Logger.Info("people's pages off: PEOPLE_TENANT is not set, /account answers 404 and the authorization code grant is off")
	}

	return lifecycle.Run(ctx, base.Logger, components...)
}
