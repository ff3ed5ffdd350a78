// Command webhook-keys rotates and lists the webhook signing keys in the
// key directory the webhooks service reads (WEBHOOK_SIGNING_KEYS_DIR, a
// mounted Secret). It lives beside the service, not in pcadm, because the
// rotation states and the grace derived from the retry schedule are the
// service's own rules (internal/keys, internal/dispatch).
//
//	webhook-keys rotate --dir DIR --env live|sandbox [--lead 48h]
//	webhook-keys list --dir DIR [--lead 48h] [--grace 146h]
//
// rotate writes a new Ed25519 key as <kid>.pem (PKCS#8, mode 0600), its kid
// naming its environment and UTC day. The running service publishes it at
// its next reload (WEBHOOK_KEY_RELOAD, 30 s) and signs with it from its day
// plus the lead time; the key it replaces stays published for the grace and
// its file may be removed after. Private keys are never printed.
package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/services/webhooks/internal/dispatch"
	"github.com/pcourt/pcourt/services/webhooks/internal/keys"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, time.Now, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "webhook-keys: %v\n", err)
		os.Exit(2)
	}
}

const usage = `usage: webhook-keys rotate --dir DIR --env live|sandbox [--lead 48h]
       webhook-keys list --dir DIR [--lead 48h] [--grace D]`

func run(_ context.Context, args []string, getenv func(string) string, now func() time.Time, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	defaults := keys.DefaultConfig(dispatch.DefaultConfig().RetryHorizon())
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", getenv("WEBHOOK_SIGNING_KEYS_DIR"), "the key directory (default $WEBHOOK_SIGNING_KEYS_DIR)")
	env := fs.String("env", "", "rotate: live or sandbox")
	lead := fs.Duration("lead", defaults.LeadTime, "the service's WEBHOOK_KEY_LEAD_TIME")
	grace := fs.Duration("grace", defaults.RetiredGrace, "the service's WEBHOOK_KEY_RETIRED_GRACE (derived from the retry schedule)")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%w\n%s", err, usage)
	}
	if *dir == "" {
		return errors.New("--dir (or WEBHOOK_SIGNING_KEYS_DIR) is required")
	}
	cfg := keys.Config{LeadTime: *lead, RetiredGrace: *grace}
	switch args[0] {
	case "rotate":
		return rotate(cfg, *dir, signature.Environment(*env), now(), stdout)
	case "list":
		return list(cfg, *dir, now(), stdout)
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], usage)
}

func rotate(cfg keys.Config, dir string, env signature.Environment, now time.Time, stdout io.Writer) error {
	if !env.Valid() {
		return errors.New("--env must be live or sandbox")
	}
	var current []keys.Timeline
	if existing, err := keys.LoadDir(cfg, dir); err == nil {
		ring, err := keys.New(cfg, existing...)
		if err != nil {
			return err
		}
		current = ring.Timelines(env)
	} else if !errors.Is(err, os.ErrNotExist) && !isEmpty(dir) {
		return fmt.Errorf("the directory does not load as the service would load it: %w", err)
	}
	day := now.UTC().Format(time.DateOnly)
	for _, k := range current {
		if id, _ := signature.ParseKeyID(k.ID); id.Created.Format(time.DateOnly) == day {
			return fmt.Errorf("key %s was made today already; one key per environment and day", k.ID)
		}
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	kid, err := signature.NewKeyID(env, now, pub)
	if err != nil {
		return err
	}
	body, err := keys.MarshalPEM(priv)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	path := filepath.Join(dir, kid+".pem")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(body); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	k, err := keys.LoadDir(cfg, dir)
	if err != nil {
		return fmt.Errorf("the new key does not load: %w", err)
	}
	ring, err := keys.New(cfg, k...)
	if err != nil {
		return err
	}
	activates := ring.Timelines(env)[len(ring.Timelines(env))-1].ActivatesAt
	fmt.Fprintf(stdout, "wrote %s\nkid %s: published at the service's next reload, signs from %s\n", path, kid, activates.Format(time.RFC3339))
	for _, tl := range ring.Timelines(env) {
		if tl.ID != kid && !tl.ExpiresAt.IsZero() && tl.ExpiresAt.After(now) {
			fmt.Fprintf(stdout, "%s stops signing at %s; remove its file after %s\n", tl.ID, tl.RetiredAt.Format(time.RFC3339), tl.ExpiresAt.Format(time.RFC3339))
		}
	}
	fmt.Fprintf(stdout, "Kubernetes: kubectl create secret generic webhook-signing-keys --from-file=%s --dry-run=client -o yaml | kubectl apply -f -\n", dir)
	return nil
}

func isEmpty(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) == 0
}

func list(cfg keys.Config, dir string, now time.Time, stdout io.Writer) error {
	ks, err := keys.LoadDir(cfg, dir)
	if err != nil {
		return err
	}
	ring, err := keys.New(cfg, ks...)
	if err != nil {
		return err
	}
	states := map[string]keys.State{}
	for _, env := range []signature.Environment{signature.Live, signature.Sandbox} {
		for _, s := range ring.States(env, now) {
			states[s.ID] = s.State
		}
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KID\tENV\tSTATE\tSIGNS FROM\tSTOPS SIGNING\tREMOVE FILE AFTER")
	for _, tl := range ring.Timelines("") {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", tl.ID, tl.Environment, states[tl.ID], tl.ActivatesAt.Format(time.RFC3339), stamp(tl.RetiredAt), stamp(tl.ExpiresAt))
	}
	return w.Flush()
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format(time.RFC3339)
}
