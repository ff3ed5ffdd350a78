package award

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The providers an adjudicator's configuration may name.
const (
	// ProviderOpenAICompatible is a model behind the chat completions
	// protocol.
	ProviderOpenAICompatible = "openai-compatible"
	// ProviderRubric is the documented deterministic rubric of
	// tools/adjudicator: no model.
	ProviderRubric = "rubric"
)

// Providers are the values Configuration.Provider may take.
var Providers = []string{ProviderOpenAICompatible, ProviderRubric}

// MaxTemperatureMilli is the highest TemperatureMilli (a temperature of 2).
const MaxTemperatureMilli = 2000

// ErrInvalidConfiguration is wrapped by every refusal of Validate.
var ErrInvalidConfiguration = errors.New("invalid adjudicator configuration")

var lowerHex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// Validate reports every field of c that a case could not pin as it is:
// an unknown provider, an empty model or model version, an instructions
// digest that is not a lowercase hex SHA-256, an output schema other than
// SchemaProposal, a temperature outside 0 to MaxTemperatureMilli, and a
// missing tools list (an empty one says "no tools"; an absent one says
// nothing) or an empty tool name.
func (c Configuration) Validate() error {
	var problems []string
	if !slices.Contains(Providers, c.Provider) {
		problems = append(problems, fmt.Sprintf("provider %q is not one of %s", c.Provider, strings.Join(Providers, ", ")))
	}
	if c.Model == "" {
		problems = append(problems, "model required")
	}
	if c.ModelVersion == "" {
		problems = append(problems, "modelVersion required")
	}
	if !lowerHex64.MatchString(c.InstructionsDigest) {
		problems = append(problems, "instructionsDigest must be a SHA-256 in 64 lowercase hex digits")
	}
	if c.OutputSchemaVersion != SchemaProposal {
		problems = append(problems, fmt.Sprintf("outputSchemaVersion %q is not %s", c.OutputSchemaVersion, SchemaProposal))
	}
	if c.TemperatureMilli < 0 || c.TemperatureMilli > MaxTemperatureMilli {
		problems = append(problems, fmt.Sprintf("temperatureMilli %d is outside 0 to %d", c.TemperatureMilli, MaxTemperatureMilli))
	}
	if c.Tools == nil {
		problems = append(problems, "tools required (an empty list for none)")
	}
	if slices.Contains(c.Tools, "") {
		problems = append(problems, "tools holds an empty name")
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidConfiguration, strings.Join(problems, "; "))
	}
	return nil
}

// Digest returns the configuration's digest, the SHA-256 (lowercase hex)
// of its RFC 8785 canonical bytes: what a run's configurationDigest names.
// Tools nil is written as [], so a configuration that names no tools has
// one digest however it was built.
func (c Configuration) Digest() (string, error) {
	if c.Tools == nil {
		c.Tools = []string{}
	}
	b, err := Canonical(c)
	if err != nil {
		return "", fmt.Errorf("canonicalizing the adjudicator configuration: %w", err)
	}
	return Hash(b), nil
}
