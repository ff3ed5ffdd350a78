package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/webhook/signature"
)

// Config is everything an Agent needs. The zero value of a field marked
// optional takes its default (withDefaults); Validate names every field
// that is missing or wrong.
type Config struct {
	// APIURL is the pcourt API's base URL (PCOURT_API_URL), such as
	// http://127.0.0.1:8080.
	APIURL string
	// Token is the adjudicator's bearer token (ADJUDICATOR_TOKEN): a
	// tribunal credential of role adjudicator.
	Token envconf.Secret
	// EndpointID is the id of the webhook endpoint this agent serves
	// (ADJUDICATOR_ENDPOINT_ID, we_…): deliveries signed for another
	// endpoint are refused.
	EndpointID string
	// JWKSURL is where the webhook verification keys are published;
	// optional, APIURL + /api/webhooks/keys by default.
	JWKSURL string
	// Environment, when set, accepts only webhook keys of that environment
	// (sandbox or live); optional.
	Environment signature.Environment
	// Listen is the address Run serves the callbacks on
	// (ADJUDICATOR_LISTEN); optional, 127.0.0.1:8089 by default.
	Listen string

	// Model is the model the agent drafts with; with no Model.URL it
	// drafts with the deterministic rubric instead.
	Model ModelConfig
	// Instructions are the system instructions given to the model;
	// optional, DefaultInstructions by default. Their SHA-256 is the
	// configuration's instructionsDigest. The rubric takes none.
	Instructions string

	// Attempts bounds the tries of one step (reading the review package,
	// one model call, filing) on a network error or a 5xx; optional, 4 by
	// default.
	Attempts int
	// Backoff is the wait before the second try, doubled before each
	// further one up to MaxBackoff; optional, 1 s and 30 s by default.
	Backoff    time.Duration
	MaxBackoff time.Duration

	// HTTPClient calls the pcourt API and fetches the key set; optional,
	// a client with a 30 s timeout by default.
	HTTPClient *http.Client
	// Logger is optional; lines are discarded by default.
	Logger *slog.Logger
	// Now is the clock; optional, time.Now by default.
	Now func() time.Time
}

// ModelConfig is a model behind the OpenAI-compatible chat completions
// protocol.
type ModelConfig struct {
	// URL is the server's base URL (MODEL_URL), without /v1: requests go
	// to URL + /v1/chat/completions. Empty means no model: the rubric.
	URL string
	// Name is the model to ask for (MODEL_NAME), the request's model.
	Name string
	// Version is the exact build or revision (MODEL_VERSION), the
	// configuration's modelVersion. main fills it with ProbeModelVersion
	// when the operator leaves it unset.
	Version string
	// VersionFromServer says Version is the model field the server
	// answered, not the operator's word: every answer must then name it
	// again, or the agent asks for human attention rather than file what
	// another model wrote.
	VersionFromServer bool
	// Key is sent as a bearer token when set (MODEL_KEY).
	Key envconf.Secret
	// TemperatureMilli is the sampling temperature in thousandths
	// (MODEL_TEMPERATURE_MILLI), 0 to 2000.
	TemperatureMilli int
	// Timeout bounds one model call; optional, 2 minutes by default.
	Timeout time.Duration
}

// DefaultListen is the address Run serves on when Config.Listen is empty.
const DefaultListen = "127.0.0.1:8089"

func (c Config) withDefaults() Config {
	c.APIURL = strings.TrimRight(c.APIURL, "/")
	c.Model.URL = strings.TrimRight(c.Model.URL, "/")
	if c.JWKSURL == "" && c.APIURL != "" {
		c.JWKSURL = c.APIURL + "/api/webhooks/keys"
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Instructions == "" && c.Model.URL != "" {
		c.Instructions = DefaultInstructions
	}
	if c.Attempts <= 0 {
		c.Attempts = 4
	}
	if c.Backoff <= 0 {
		c.Backoff = time.Second
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 30 * time.Second
	}
	if c.Model.Timeout <= 0 {
		c.Model.Timeout = 2 * time.Minute
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Validate reports every missing or invalid setting, by its variable name.
func (c Config) Validate() error {
	var errs []error
	if err := httpURL(c.APIURL); err != nil {
		errs = append(errs, fmt.Errorf("PCOURT_API_URL: %w", err))
	}
	if c.Token.Reveal() == "" {
		errs = append(errs, errors.New("ADJUDICATOR_TOKEN is required: the adjudicator credential's bearer token"))
	}
	if !signature.ValidID(c.EndpointID) {
		errs = append(errs, fmt.Errorf("ADJUDICATOR_ENDPOINT_ID=%q: want the id registration returned for the agent's webhook endpoint (we_…)", c.EndpointID))
	}
	if c.JWKSURL != "" {
		if err := httpURL(c.JWKSURL); err != nil {
			errs = append(errs, fmt.Errorf("JWKS URL: %w", err))
		}
	}
	if c.Environment != "" && !c.Environment.Valid() {
		errs = append(errs, fmt.Errorf("environment %q: want sandbox or live", c.Environment))
	}
	errs = append(errs, c.ValidateConfiguration())
	return errors.Join(errs...)
}

// ValidateConfiguration checks the settings the configuration is made of:
// the model's, or that none is set when the rubric decides.
func (c Config) ValidateConfiguration() error {
	m, instructions := c.Model, c.Instructions
	if m.URL == "" {
		var set []string
		if m.Name != "" {
			set = append(set, "MODEL_NAME")
		}
		if m.Version != "" {
			set = append(set, "MODEL_VERSION")
		}
		if m.Key.Reveal() != "" {
			set = append(set, "MODEL_KEY")
		}
		if m.TemperatureMilli != 0 {
			set = append(set, "MODEL_TEMPERATURE_MILLI")
		}
		if instructions != "" {
			set = append(set, "ADJUDICATOR_INSTRUCTIONS_FILE")
		}
		if len(set) > 0 {
			return fmt.Errorf("%s set without MODEL_URL: with no model the deterministic rubric decides, and it takes no model settings", strings.Join(set, ", "))
		}
		return nil
	}
	var errs []error
	if err := httpURL(m.URL); err != nil {
		errs = append(errs, fmt.Errorf("MODEL_URL: %w", err))
	}
	if m.Name == "" {
		errs = append(errs, errors.New("MODEL_NAME is required with MODEL_URL"))
	}
	if m.Version == "" && m.Name != "" {
		errs = append(errs, errors.New("MODEL_VERSION is required with MODEL_URL (the adjudicator command asks the server when it is unset)"))
	}
	if m.TemperatureMilli < 0 || m.TemperatureMilli > 2000 {
		errs = append(errs, fmt.Errorf("MODEL_TEMPERATURE_MILLI=%d: want 0 to 2000", m.TemperatureMilli))
	}
	return errors.Join(errs...)
}

func httpURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q: want an http or https URL", s)
	}
	return nil
}

// LogValue is what a start-up line shows: the settings, secrets masked,
// the instructions by digest.
func (c Config) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.String("api_url", c.APIURL),
		slog.Any("token", c.Token),
		slog.String("endpoint_id", c.EndpointID),
		slog.String("jwks_url", c.JWKSURL),
		slog.String("listen", c.Listen),
	}
	if c.Model.URL == "" {
		return slog.GroupValue(append(attrs, slog.String("drafter", "rubric"))...)
	}
	return slog.GroupValue(append(attrs,
		slog.String("drafter", "model"),
		slog.String("model_url", c.Model.URL),
		slog.String("model", c.Model.Name),
		slog.String("model_version", c.Model.Version),
		slog.Bool("model_version_from_server", c.Model.VersionFromServer),
		slog.Any("model_key", c.Model.Key),
		slog.Int("temperature_milli", c.Model.TemperatureMilli),
	)...)
}
