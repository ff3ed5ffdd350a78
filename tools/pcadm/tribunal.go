package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/award"
)

const tribunalUsage = `usage: pcadm tribunal <command> [flags]
commands:
  add       --tenant T --env sandbox|live --role adjudicator|reviewer --partner P [--agent A] [--label L] [--config file.json]
            mints a tribunal credential (the token is printed once) and adds it to the tenant's and environment's pool;
            an adjudicator needs --config (an award.Configuration), a reviewer takes none
  configure --credential ID --config file.json   an adjudicator's new configuration, for cases assigned from now on
  remove    --credential ID                      takes a member out of the pool (pcadm revoke ends its access)
  list      --tenant T [--env sandbox|live]      the pool's active members`

// tribunal runs the tribunal pool's commands.
func tribunal(ctx context.Context, store *auth.Store, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(tribunalUsage)
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "add":
		return tribunalAdd(ctx, store, rest, stdout)
	case "configure":
		return tribunalConfigure(ctx, store, rest, stdout)
	case "remove":
		return tribunalRemove(ctx, store, rest, stdout)
	case "list":
		return tribunalList(ctx, store, rest, stdout)
	}
	return fmt.Errorf("unknown tribunal command %q\n%s", cmd, tribunalUsage)
}

func tribunalAdd(ctx context.Context, store *auth.Store, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("tribunal add", flag.ContinueOnError)
	var req auth.MintRequest
	var env, role, configPath string
	fs.StringVar(&req.Tenant, "tenant", "", "tenant whose pool the member joins (required)")
	fs.StringVar(&env, "env", "sandbox", "environment: sandbox or live")
	fs.StringVar(&role, "role", "", "adjudicator or reviewer (required)")
	fs.StringVar(&req.PartnerID, "partner", "", "the member's own partner id, never a party's (required)")
	fs.StringVar(&req.AgentID, "agent", "", "immutable agent id, for an adjudicator agent")
	fs.StringVar(&req.Label, "label", "", "free text shown by list")
	fs.StringVar(&configPath, "config", "", "adjudicator: its configuration, a JSON award.Configuration (required for an adjudicator)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	req.Environment, req.Role = auth.Environment(env), auth.Role(role)
	if !req.Role.Tribunal() {
		return fmt.Errorf("--role %q is not adjudicator or reviewer (party credentials: pcadm mint)", role)
	}
	// Everything is checked before the credential exists, so a refusal
	// leaves nothing behind.
	var configuration []byte
	var digest string
	switch {
	case req.Role == auth.RoleAdjudicator && configPath == "":
		return errors.New("an adjudicator needs --config: its configuration, a JSON award.Configuration")
	case req.Role == auth.RoleReviewer && configPath != "":
		return errors.New("a reviewer has no configuration; drop --config")
	case configPath != "":
		var err error
		if configuration, digest, err = readConfiguration(configPath); err != nil {
			return err
		}
	}
	if err := req.Validate(); err != nil {
		return err
	}

	token, cred, err := store.Mint(ctx, req)
	if err != nil {
		return err
	}
	if err := store.AddTribunalMember(ctx, cred.PublicID, configuration); err != nil {
		// A tribunal credential outside the pool is one no tribunal
		// listing shows: it does not outlive the failed command.
		if rerr := store.Revoke(ctx, cred.PublicID); rerr != nil {
			return fmt.Errorf("%w; revoking %s failed too, revoke it: %w", err, cred.PublicID, rerr)
		}
		return fmt.Errorf("%w; credential %s revoked", err, cred.PublicID)
	}
	fmt.Fprintf(stdout, "credential %s (%s, %s, %s, partner %s) added to the tribunal pool\n", cred.PublicID, cred.Tenant, cred.Environment, cred.Role, cred.PartnerID)
	if digest != "" {
		fmt.Fprintf(stdout, "configuration %s\n", digest)
	}
	fmt.Fprintf(stdout, "token: %s\nThe token is shown once and is not stored; keep it now.\n", token)
	return nil
}

func tribunalConfigure(ctx context.Context, store *auth.Store, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("tribunal configure", flag.ContinueOnError)
	id := fs.String("credential", "", "the adjudicator's credential public id (required)")
	configPath := fs.String("config", "", "its new configuration, a JSON award.Configuration (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *id == "" || *configPath == "" {
		return errors.New("--credential and --config are required")
	}
	configuration, digest, err := readConfiguration(*configPath)
	if err != nil {
		return err
	}
	if err := store.ConfigureTribunalMember(ctx, *id, configuration); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "configured %s: configuration %s, for cases assigned from now on; assigned cases keep the one they pinned\n", *id, digest)
	return nil
}

func tribunalRemove(ctx context.Context, store *auth.Store, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("tribunal remove", flag.ContinueOnError)
	id := fs.String("credential", "", "the member's credential public id (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *id == "" {
		return errors.New("--credential is required")
	}
	if err := store.RemoveTribunalMember(ctx, *id); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed %s from the tribunal pool: no case is assigned to it from now on; pcadm revoke %s ends its access\n", *id, *id)
	return nil
}

func tribunalList(ctx context.Context, store *auth.Store, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("tribunal list", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the pool's tenant (required)")
	env := fs.String("env", "sandbox", "the pool's environment: sandbox or live")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tenant == "" {
		return errors.New("--tenant is required")
	}
	members, err := store.TribunalPool(ctx, *tenant, auth.Environment(*env))
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tROLE\tPARTNER\tAGENT\tLABEL\tCONFIG")
	for _, m := range members {
		c := m.Credential
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", c.PublicID, c.Role, c.PartnerID, orDash(c.AgentID), orDash(c.Label), configDigest(m.Configuration))
	}
	return w.Flush()
}

// configDigest names a member's stored configuration by its digest, or —
// for a member without one.
func configDigest(stored []byte) string {
	if len(stored) == 0 {
		return "—"
	}
	c, err := decodeConfiguration(stored)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	d, err := c.Digest()
	if err != nil {
		return "unreadable: " + err.Error()
	}
	return d
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// readConfiguration reads an adjudicator's configuration from path,
// strictly, checks it (award.Configuration.Validate) and returns its
// canonical bytes, which the pool stores, and its digest.
func readConfiguration(path string) ([]byte, string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("reading the configuration: %w", err)
	}
	c, err := decodeConfiguration(raw)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	canonical, err := award.Canonical(c)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	digest, err := c.Digest()
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return canonical, digest, nil
}

// decodeConfiguration decodes exactly one JSON object into an
// award.Configuration: member names matched exactly, unknown and repeated
// members refused, every value of its member's type. A configuration is
// pinned to cases and shown to both sides, so what the file says must be
// what is stored, with nothing ignored.
func decodeConfiguration(b []byte) (award.Configuration, error) {
	var c award.Configuration
	err := jsonv2.Unmarshal(b, &c, jsonv2.RejectUnknownMembers(true), jsontext.AllowDuplicateNames(false))
	if err != nil {
		return award.Configuration{}, fmt.Errorf("not an adjudicator configuration: %w", err)
	}
	return c, nil
}
