// Command pcadm administers credentials, membership grants and the tribunal
// pool in Redis: mint (the token is printed once and never stored), list,
// revoke, grant, ungrant, members, and tribunal add, configure, remove and
// list; the compatibility policy through the edge; and the Kafka dead
// letters (dlq list, replay).
//
//	pcadm mint --tenant acme --env sandbox --role claimant_agent --partner acme-platform [--agent agent-7] [--label "CI"]
//	pcadm list [--tenant acme]
//	pcadm revoke cred_…
//	pcadm grant --resource draft:dr_1 --side claimant (--credential cred_… | --partner acme-platform --principal agent-7)
//	pcadm ungrant --resource draft:dr_1 (--credential cred_… | --partner acme-platform --principal agent-7)
//	pcadm members --resource draft:dr_1
//	pcadm tribunal add --tenant acme --env sandbox --role adjudicator|reviewer --partner tribunal-ai-1 [--agent A] [--label L] [--config adjudicator.json]
//	pcadm tribunal configure --credential cred_… --config adjudicator.json
//	pcadm tribunal remove --credential cred_…
//	pcadm tribunal list --tenant acme [--env sandbox]
//	pcadm compat policy|extend|brownout|contact|notices|audit …
//	pcadm dlq list -topic pc.filings.case-opened.v2 [-group cases]
//	pcadm dlq replay -topic pc.filings.case-opened.v2 (-all | -offset 3:17 | -key case_…) [-dry-run]
//
// Redis is found through REDIS_ADDRS and REDIS_PASSWORD, as the services find it.
// The compat commands call the edge's compatibility admin API instead
// (EDGE_ADMIN_URL, EDGE_ADMIN_TOKEN), so that every change is validated and
// audited by the edge. The dlq commands read and replay dead letters
// through the brokers in KAFKA_BROKERS (docs/dead-letters.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/redisclient"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "pcadm: %v\n", err)
		os.Exit(2)
	}
}

const usage = `usage: pcadm <command> [flags]
commands: mint, list, revoke, grant, ungrant, members (pcadm <command> -h for flags),
          tribunal (pcadm tribunal for its commands), compat (pcadm compat for its commands),
          dlq (pcadm dlq for its commands)`

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "compat":
		return compat(ctx, args[1:], getenv, stdout)
	case "dlq":
		return dlq(ctx, args[1:], getenv, stdout)
	}
	env := envconf.New(getenv)
	redisCfg := redisclient.FromEnv(env)
	if err := errors.Join(env.Err(), redisCfg.Validate()); err != nil {
		return err
	}
	rdb := redisclient.New(redisCfg)
	defer rdb.Close()
	store := auth.NewStore(rdb, auth.DefaultStoreConfig())

	cmd, rest := args[0], args[1:]
	switch cmd {
	case "mint":
		return mint(ctx, store, rest, stdout)
	case "list":
		return list(ctx, store, rest, stdout)
	case "revoke":
		if len(rest) != 1 {
			return errors.New("usage: pcadm revoke CREDENTIAL_ID")
		}
		if err := store.Revoke(ctx, rest[0]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s; every replica refuses it within %s\n", rest[0], auth.DefaultStoreConfig().CacheTTL)
		return nil
	case "grant", "ungrant", "members":
		return membership(ctx, store, cmd, rest, stdout)
	case "tribunal":
		return tribunal(ctx, store, rest, stdout)
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

func mint(ctx context.Context, store *auth.Store, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("mint", flag.ContinueOnError)
	var req auth.MintRequest
	var env, role string
	fs.StringVar(&req.Tenant, "tenant", "", "tenant the credential acts for (required)")
	fs.StringVar(&env, "env", "sandbox", "environment: sandbox or live")
	fs.StringVar(&role, "role", "", "platform_orchestrator, claimant_agent or respondent_agent (required)")
	fs.StringVar(&req.PartnerID, "partner", "", "partner id (required)")
	fs.StringVar(&req.AgentID, "agent", "", "immutable agent id, for a credential of one agent")
	fs.StringVar(&req.Label, "label", "", "free text shown by list")
	if err := fs.Parse(args); err != nil {
		return err
	}
	req.Environment, req.Role = auth.Environment(env), auth.Role(role)
	if req.Role.Tribunal() {
		// A tribunal credential outside the pool would be a member no
		// listing shows; tribunal add mints and adds in one command.
		return fmt.Errorf("a %s is minted with pcadm tribunal add, which adds it to the tribunal pool", role)
	}
	token, cred, err := store.Mint(ctx, req)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "credential %s (%s, %s, %s)\ntoken: %s\nThe token is shown once and is not stored; keep it now.\n",
		cred.PublicID, cred.Tenant, cred.Environment, cred.Role, token)
	return nil
}

func list(ctx context.Context, store *auth.Store, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "only this tenant's credentials")
	if err := fs.Parse(args); err != nil {
		return err
	}
	creds, err := store.List(ctx, *tenant)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTENANT\tENV\tROLE\tPARTNER\tAGENT\tCREATED\tSTATUS\tLABEL")
	for _, c := range creds {
		status := "active"
		if !c.Active() {
			status = "revoked " + c.RevokedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.PublicID, c.Tenant, c.Environment, c.Role,
			c.PartnerID, dash(c.AgentID), c.CreatedAt.Format(time.RFC3339), status, c.Label)
	}
	return w.Flush()
}

func membership(ctx context.Context, store *auth.Store, cmd string, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	resource := fs.String("resource", "", "draft:<id> or case:<id> (required)")
	side := fs.String("side", "", "claimant or respondent (grant)")
	credential := fs.String("credential", "", "credential public id")
	principal := fs.String("principal", "", "agent identity: the immutable agent id of the credentials the membership admits (with --partner)")
	partner := fs.String("partner", "", "the partner whose agent --principal names: an agent id is an identity within one partner")
	keep := fs.Duration("keep", 30*24*time.Hour, "grant: how long the resource lives; its memberships expire with it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *resource == "" {
		return errors.New("--resource is required")
	}
	if cmd == "members" {
		members, err := store.Memberships(ctx, *resource)
		if err != nil {
			return err
		}
		sort.Slice(members, func(i, j int) bool { return members[i].Subject < members[j].Subject })
		for _, m := range members {
			fmt.Fprintf(stdout, "%s\t%s\n", m.Side, m.Subject)
		}
		return nil
	}
	var subject auth.Subject
	switch {
	case *credential != "" && *principal == "" && *partner == "":
		subject = auth.CredentialSubject(*credential)
	case *principal != "" && *partner != "" && *credential == "":
		subject = auth.PrincipalSubject(*partner, *principal)
	default:
		return errors.New("name either --credential, or --partner and --principal")
	}
	if cmd == "ungrant" {
		if err := store.RevokeMembership(ctx, *resource, subject); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %s from %s\n", subject, *resource)
		return nil
	}
	if subject.IsCredential() {
		if _, err := store.Get(ctx, *credential); err != nil {
			return err
		}
	}
	if err := store.Grant(ctx, auth.Membership{Resource: *resource, Side: auth.Side(*side), Subject: subject, ExpiresAt: time.Now().Add(*keep)}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "granted %s the %s side of %s\n", subject, *side, *resource)
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
