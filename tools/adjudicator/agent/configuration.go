package agent

import (
	"fmt"

	"github.com/pcourt/pcourt/libs/award"
)

// Provider names of the configurations this agent runs under.
const (
	ProviderOpenAICompatible = "openai-compatible"
	ProviderRubric           = "rubric"
)

// The rubric's model and version, as its configuration names them. A change
// of the rubric's text is a new version: the configuration's digest changes
// with the text anyway, and the version tells a reader so.
const (
	RubricModel   = "pcourt-rubric"
	RubricVersion = "1"
)

// RubricConfiguration is the configuration of the deterministic rubric:
// no model, its instructions digest the SHA-256 of the Rubric text.
func RubricConfiguration() award.Configuration {
	return award.Configuration{
		Provider:            ProviderRubric,
		Model:               RubricModel,
		ModelVersion:        RubricVersion,
		InstructionsDigest:  award.Hash([]byte(Rubric)),
		OutputSchemaVersion: award.SchemaProposal,
		TemperatureMilli:    0,
		Tools:               []string{},
	}
}

// ModelConfiguration is the configuration of m given instructions: the
// one a case pins for an agent that drafts with m.
func ModelConfiguration(m ModelConfig, instructions string) award.Configuration {
	return award.Configuration{
		Provider:            ProviderOpenAICompatible,
		Model:               m.Name,
		ModelVersion:        m.Version,
		InstructionsDigest:  award.Hash([]byte(instructions)),
		OutputSchemaVersion: award.SchemaProposal,
		TemperatureMilli:    m.TemperatureMilli,
		Tools:               []string{},
	}
}

// ConfigurationOf is the configuration an agent of c runs under: its
// model's, or the rubric's when c has no model.
func ConfigurationOf(c Config) award.Configuration {
	c = c.withDefaults()
	if c.Model.URL == "" {
		return RubricConfiguration()
	}
	return ModelConfiguration(c.Model, c.Instructions)
}

// CanonicalConfiguration returns c's RFC 8785 bytes, Tools [] when nil:
// what `adjudicator -print-configuration` prints and what the case's
// configurationDigest is the SHA-256 of.
func CanonicalConfiguration(c award.Configuration) ([]byte, error) {
	if c.Tools == nil {
		c.Tools = []string{}
	}
	b, err := award.Canonical(c)
	if err != nil {
		return nil, fmt.Errorf("canonical configuration: %w", err)
	}
	return b, nil
}

// ConfigurationDigest is the SHA-256 (lowercase hex) of c's canonical
// bytes, as a case pins it.
func ConfigurationDigest(c award.Configuration) (string, error) {
	b, err := CanonicalConfiguration(c)
	if err != nil {
		return "", err
	}
	return award.Hash(b), nil
}
