// Command adjudicator is the reference AI adjudicator of pcourt (package
// agent): a tribunal member that receives signed case events, reads the
// review package of each case whose adjudication is requested, drafts a
// proposed opinion with a model behind the OpenAI-compatible chat
// completions protocol (MODEL_URL), or with the documented deterministic
// rubric when no model is configured, checks it against the record and
// files it, or asks for human attention. docs/tribunal-adjudicator.md is
// its manual.
//
//	adjudicator -print-configuration   # the configuration a case pins: pcadm tribunal add -role adjudicator -config <(adjudicator -print-configuration)
//	adjudicator -print-rubric          # the rubric's rules
//	PCOURT_API_URL=http://127.0.0.1:8080 ADJUDICATOR_TOKEN=… ADJUDICATOR_ENDPOINT_ID=we_… adjudicator
//
// Settings come from the environment; a flag of the same meaning wins.
// Secrets (ADJUDICATOR_TOKEN, MODEL_KEY) are read from the environment
// only, so they never show in a process listing.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/logging"
	"github.com/pcourt/pcourt/tools/adjudicator/agent"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "adjudicator: %v\n", err)
		os.Exit(1)
	}
}

// options are what the command reads besides agent.Config.
type options struct {
	printConfiguration bool
	printRubric        bool
	instructionsFile   string
	logLevel           string
}

func parse(args []string, getenv func(string) string, stderr io.Writer) (agent.Config, options, error) {
	r := envconf.New(getenv)
	var cfg agent.Config
	var opt options
	fs := flag.NewFlagSet("adjudicator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&opt.printConfiguration, "print-configuration", false, "print the configuration JSON (RFC 8785) a case pins for this adjudicator, and exit")
	fs.BoolVar(&opt.printRubric, "print-rubric", false, "print the deterministic rubric's rules, and exit")
	fs.StringVar(&cfg.APIURL, "api", r.String("PCOURT_API_URL", ""), "pcourt API base URL (PCOURT_API_URL)")
	fs.StringVar(&cfg.EndpointID, "endpoint", r.String("ADJUDICATOR_ENDPOINT_ID", ""), "id of the webhook endpoint this adjudicator serves, we_… (ADJUDICATOR_ENDPOINT_ID)")
	fs.StringVar(&cfg.Listen, "listen", r.String("ADJUDICATOR_LISTEN", agent.DefaultListen), "address to receive case events on (ADJUDICATOR_LISTEN)")
	fs.StringVar(&cfg.Model.URL, "model-url", r.String("MODEL_URL", ""), "base URL of an OpenAI-compatible server, without /v1; empty drafts with the rubric (MODEL_URL)")
	fs.StringVar(&cfg.Model.Name, "model", r.String("MODEL_NAME", ""), "model to ask for (MODEL_NAME)")
	fs.StringVar(&cfg.Model.Version, "model-version", r.String("MODEL_VERSION", ""), "exact model build or revision; empty asks the server (MODEL_VERSION)")
	fs.IntVar(&cfg.Model.TemperatureMilli, "temperature-milli", r.Int("MODEL_TEMPERATURE_MILLI", 0), "sampling temperature in thousandths, 0 to 2000 (MODEL_TEMPERATURE_MILLI)")
	fs.StringVar(&opt.instructionsFile, "instructions", r.String("ADJUDICATOR_INSTRUCTIONS_FILE", ""), "file of system instructions replacing the built-in ones (ADJUDICATOR_INSTRUCTIONS_FILE)")
	fs.StringVar(&opt.logLevel, "log-level", r.String("LOG_LEVEL", "info"), "debug, info, warn or error (LOG_LEVEL)")
	if err := fs.Parse(args); err != nil {
		return cfg, opt, err
	}
	if fs.NArg() > 0 {
		return cfg, opt, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	cfg.Token = r.Secret("ADJUDICATOR_TOKEN")
	cfg.Model.Key = r.Secret("MODEL_KEY")
	if err := r.Err(); err != nil {
		return cfg, opt, err
	}
	if opt.instructionsFile != "" {
		b, err := os.ReadFile(opt.instructionsFile)
		if err != nil {
			return cfg, opt, fmt.Errorf("ADJUDICATOR_INSTRUCTIONS_FILE: %w", err)
		}
		if len(b) == 0 {
			return cfg, opt, fmt.Errorf("ADJUDICATOR_INSTRUCTIONS_FILE %s is empty", opt.instructionsFile)
		}
		cfg.Instructions = string(b)
	}
	return cfg, opt, nil
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, opt, err := parse(args, getenv, os.Stderr)
	if err != nil {
		return err
	}
	if opt.printRubric {
		_, err := fmt.Fprintln(stdout, agent.Rubric)
		return err
	}
	if cfg.Model.URL != "" && cfg.Model.Version == "" && cfg.Model.Name != "" {
		// The operator did not say which build the server runs: the
		// server's answer says, and every later answer must say the same.
		probeCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		version, err := agent.ProbeModelVersion(probeCtx, cfg.Model, nil)
		cancel()
		if err != nil {
			return err
		}
		cfg.Model.Version, cfg.Model.VersionFromServer = version, true
	}
	if opt.printConfiguration {
		if err := cfg.ValidateConfiguration(); err != nil {
			return fmt.Errorf("adjudicator configuration: %w", err)
		}
		b, err := agent.CanonicalConfiguration(agent.ConfigurationOf(cfg))
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}

	cfg.Logger = logging.New(stdout, "adjudicator", logging.ParseLevel(opt.logLevel))
	a, err := agent.New(cfg)
	if err != nil {
		return err
	}
	return a.Run(ctx)
}
