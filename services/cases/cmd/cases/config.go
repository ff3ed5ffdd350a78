package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/idempotency"
	"github.com/pcourt/pcourt/libs/objectstore"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/cases/internal/archiveflow"
	"github.com/pcourt/pcourt/services/cases/internal/awardkeys"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/respond"
)

// config is everything the service reads from its environment.
type config struct {
	Service service.Config

	// Shards is how many hash tags cases are spread over (CASES_SHARDS,
	// 1..1024): part of the data layout, changed only by
	// `cases reshard` (docs/redis.md).
	Shards int

	// CaseOpenedGroup is the consumer group reading pc.filings.case-opened.v2.
	CaseOpenedGroup string
	Scheduler       caseflow.SchedulerConfig
	// Idempotency is the journal of the case commands.
	Idempotency idempotency.Config
	// Respond is the hosted respondent page.
	Respond respond.Config
	// AwardKeys says where the award signing keys come from.
	AwardKeys awardkeys.Config
	// Evidence is where exhibits' files are kept (a bucket, or a local
	// directory in development), and SpoolDir where an upload is held
	// while it is checked, before it reaches the store.
	Evidence objectstore.Config
	SpoolDir string
	// Refunds is the x402r refund rail of award executions (rails.go);
	// off unless X402R_OPERATOR_KEY is set.
	Refunds refundRailConfig
	// AppealFees collects appeal fees with x402 (fees.go); invoiced
	// unless FEES_PAY_TO is set.
	AppealFees appealFeeConfig
	// PublicBase is the public origin an appeal fee's 402 challenge names
	// its resource with (PUBLIC_BASE_URL, as the hosted page's links).
	PublicBase x402.PublicBase
	// Archive is when and how closed cases leave Redis for the object
	// store (docs/archiving.md).
	Archive archiveflow.Config
}

func loadConfig(getenv func(string) string) (config, error) {
	r := envconf.New(getenv)
	def := caseflow.DefaultSchedulerConfig()
	idem := idempotency.DefaultConfig("pc:cases")
	page := respond.DefaultConfig()
	publicBase := r.String("PUBLIC_BASE_URL", page.PublicBaseURL)
	cfg := config{
		Service:         service.ConfigFromEnv(r, ":8083"),
		Shards:          r.Int("CASES_SHARDS", outbox.DefaultShards),
		CaseOpenedGroup: r.String("CASES_CASE_OPENED_GROUP", "cases-case-opened"),
		Scheduler: caseflow.SchedulerConfig{
			Interval: r.Duration("CASES_SCHEDULER_INTERVAL", def.Interval),
			Lease:    r.Duration("CASES_SCHEDULER_LEASE", def.Lease),
			Batch:    r.Int("CASES_SCHEDULER_BATCH", def.Batch),
		},
		Idempotency: idempotency.Config{
			Prefix:    idem.Prefix,
			Retention: r.Duration("CASES_IDEMPOTENCY_RETENTION", idem.Retention),
			Lease:     r.Duration("CASES_IDEMPOTENCY_LEASE", idem.Lease),
		},
		Respond: respond.Config{
			PublicBaseURL: publicBase,
			// Production serves the page over https: the cookie is Secure
			// unless the public address is plain http (development).
			SecureCookie: r.Bool("RESPOND_SECURE_COOKIE", !strings.HasPrefix(strings.ToLower(publicBase), "http://")),
			SessionTTL:   r.Duration("RESPOND_SESSION_TTL", page.SessionTTL),
		},
		AwardKeys: awardkeys.Config{
			Dir:          r.String("AWARD_SIGNING_KEYS_DIR", ""),
			DevEphemeral: r.Bool("AWARD_DEV_EPHEMERAL_KEY", false),
		},
		Evidence:   objectstore.FromEnv(r),
		SpoolDir:   r.String("EVIDENCE_SPOOL_DIR", os.TempDir()),
		Refunds:    refundRailFromEnv(r),
		AppealFees: appealFeesFromEnv(r),
		Archive:    archiveFromEnv(r, getenv),
	}
	base, err := x402.ParsePublicBase(publicBase)
	cfg.PublicBase = base
	errs := []error{r.Err(), cfg.Service.Validate(), cfg.Scheduler.Validate(), cfg.Idempotency.Validate(), cfg.Respond.Validate(), cfg.Evidence.Validate(), cfg.Refunds.Validate(), cfg.AppealFees.Validate(), cfg.Archive.Validate()}
	if err != nil {
		errs = append(errs, fmt.Errorf("PUBLIC_BASE_URL: %w", err))
	}
	if cfg.AwardKeys.Dir == "" && !cfg.AwardKeys.DevEphemeral {
		errs = append(errs, errors.New("AWARD_SIGNING_KEYS_DIR is required (or AWARD_DEV_EPHEMERAL_KEY=true in development)"))
	}
	if cfg.Shards < 1 || cfg.Shards > 1024 {
		errs = append(errs, fmt.Errorf("CASES_SHARDS must be in 1..1024, got %d", cfg.Shards))
	}
	if cfg.CaseOpenedGroup == "" {
		errs = append(errs, errors.New("CASES_CASE_OPENED_GROUP must not be empty"))
	}
	if err := errors.Join(errs...); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}

// archiveFromEnv reads the archiver's settings: CASES_ARCHIVE_AFTER is a
// duration (2160h, the default, is 90 days), and "off" or 0 switches
// archiving off.
func archiveFromEnv(r *envconf.Reader, getenv func(string) string) archiveflow.Config {
	def := archiveflow.DefaultConfig()
	cfg := archiveflow.Config{
		After:    def.After,
		Interval: r.Duration("CASES_ARCHIVE_INTERVAL", def.Interval),
		Batch:    r.Int("CASES_ARCHIVE_BATCH", def.Batch),
		Lease:    r.Duration("CASES_ARCHIVE_LEASE", def.Lease),
	}
	if strings.EqualFold(strings.TrimSpace(getenv("CASES_ARCHIVE_AFTER")), "off") {
		cfg.After = 0
	} else {
		cfg.After = r.Duration("CASES_ARCHIVE_AFTER", def.After)
	}
	return cfg
}
