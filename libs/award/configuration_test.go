package award_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
)

var instructions = strings.Repeat("ab", 32)

func valid() award.Configuration {
	return award.Configuration{
		Provider:            award.ProviderOpenAICompatible,
		Model:               "gpt-x",
		ModelVersion:        "gpt-x-2026-01-01",
		InstructionsDigest:  instructions,
		OutputSchemaVersion: award.SchemaProposal,
		TemperatureMilli:    200,
		Tools:               []string{},
	}
}

func TestConfigurationValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*award.Configuration)
		refuse string // "" when valid
	}{
		{"openai-compatible, no tools", func(*award.Configuration) {}, ""},
		{"the rubric", func(c *award.Configuration) { c.Provider = award.ProviderRubric }, ""},
		{"tools named", func(c *award.Configuration) { c.Tools = []string{"record.read"} }, ""},
		{"temperature 0", func(c *award.Configuration) { c.TemperatureMilli = 0 }, ""},
		{"temperature 2", func(c *award.Configuration) { c.TemperatureMilli = 2000 }, ""},
		{"unknown provider", func(c *award.Configuration) { c.Provider = "openai" }, `provider "openai"`},
		{"no provider", func(c *award.Configuration) { c.Provider = "" }, `provider ""`},
		{"no model", func(c *award.Configuration) { c.Model = "" }, "model required"},
		{"no model version", func(c *award.Configuration) { c.ModelVersion = "" }, "modelVersion required"},
		{"digest in upper case", func(c *award.Configuration) { c.InstructionsDigest = strings.ToUpper(instructions) }, "instructionsDigest"},
		{"digest too short", func(c *award.Configuration) { c.InstructionsDigest = instructions[:63] }, "instructionsDigest"},
		{"digest too long", func(c *award.Configuration) { c.InstructionsDigest = instructions + "0" }, "instructionsDigest"},
		{"digest not hex", func(c *award.Configuration) { c.InstructionsDigest = strings.Repeat("g", 64) }, "instructionsDigest"},
		{"another output schema", func(c *award.Configuration) { c.OutputSchemaVersion = award.SchemaAward }, "outputSchemaVersion"},
		{"negative temperature", func(c *award.Configuration) { c.TemperatureMilli = -1 }, "temperatureMilli -1"},
		{"temperature above 2", func(c *award.Configuration) { c.TemperatureMilli = 2001 }, "temperatureMilli 2001"},
		{"no tools list", func(c *award.Configuration) { c.Tools = nil }, "tools required"},
		{"an empty tool name", func(c *award.Configuration) { c.Tools = []string{""} }, "empty name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.change(&c)
			err := c.Validate()
			if tc.refuse == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, award.ErrInvalidConfiguration)
			require.ErrorContains(t, err, tc.refuse)
		})
	}

	err := award.Configuration{}.Validate()
	require.ErrorIs(t, err, award.ErrInvalidConfiguration)
	for _, field := range []string{"provider", "model required", "modelVersion", "instructionsDigest", "outputSchemaVersion", "tools"} {
		require.ErrorContains(t, err, field, "every problem is named at once")
	}
}

func TestConfigurationDigest(t *testing.T) {
	c := award.Configuration{
		Provider:            award.ProviderRubric,
		Model:               "pc-rubric",
		ModelVersion:        "1",
		InstructionsDigest:  instructions,
		OutputSchemaVersion: award.SchemaProposal,
		TemperatureMilli:    0,
	}
	// RFC 8785 by hand: members sorted by name, no whitespace, tools [].
	canonical := `{"instructionsDigest":"` + instructions + `","model":"pc-rubric","modelVersion":"1",` +
		`"outputSchemaVersion":"pc-adjudication-proposal-v1","provider":"rubric","temperatureMilli":0,"tools":[]}`
	sum := sha256.Sum256([]byte(canonical))

	got, err := c.Digest()
	require.NoError(t, err)
	require.Equal(t, hex.EncodeToString(sum[:]), got)
	require.Nil(t, c.Tools, "Digest leaves its receiver's tools as they were")

	c.Tools = []string{}
	empty, err := c.Digest()
	require.NoError(t, err)
	require.Equal(t, got, empty, "no tools, nil or empty, is one digest")

	c.Tools = []string{"record.read"}
	withTool, err := c.Digest()
	require.NoError(t, err)
	require.NotEqual(t, got, withTool)

	c.Tools, c.TemperatureMilli = nil, 1
	warmer, err := c.Digest()
	require.NoError(t, err)
	require.NotEqual(t, got, warmer, "every field is in the digest")
}
