// Package api holds the platform's public API description: one OpenAPI 3.1
// document, written by hand as openapi.yaml beside this file, served by the
// edge at /openapi.json and used by every handler test to validate real
// responses.
package api

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
)

// YAML is the OpenAPI document as written.
//
//go:embed openapi.yaml
var YAML []byte

// JSON returns the document as JSON, the form the edge serves.
func JSON() ([]byte, error) {
	js, err := yaml.YAMLToJSON(YAML)
	if err != nil {
		return nil, fmt.Errorf("converting openapi.yaml to JSON: %w", err)
	}
	return js, nil
}

// Schema returns the named component schema (components.schemas.<name>) as
// JSON, for services that publish a schema elsewhere, such as in x402
// discovery metadata.
func Schema(name string) (json.RawMessage, error) {
	js, err := JSON()
	if err != nil {
		return nil, err
	}
	var doc struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		return nil, fmt.Errorf("reading openapi components: %w", err)
	}
	s, ok := doc.Components.Schemas[name]
	if !ok {
		return nil, fmt.Errorf("openapi.yaml has no schema %q", name)
	}
	return s, nil
}

// Example returns the value of the named component example
// (components.examples.<name>.value) as JSON: the example exchanges the
// document shows, which services publish elsewhere too (x402 discovery).
func Example(name string) (json.RawMessage, error) {
	js, err := JSON()
	if err != nil {
		return nil, err
	}
	var doc struct {
		Components struct {
			Examples map[string]struct {
				Value json.RawMessage `json:"value"`
			} `json:"examples"`
		} `json:"components"`
	}
	if err := json.Unmarshal(js, &doc); err != nil {
		return nil, fmt.Errorf("reading openapi components: %w", err)
	}
	e, ok := doc.Components.Examples[name]
	if !ok || len(e.Value) == 0 {
		return nil, fmt.Errorf("openapi.yaml has no example %q with a value", name)
	}
	return e.Value, nil
}

// rulesDocument is the procedural rules text every new case is pinned to.
//
//go:embed rules/pcourt-rules-2026-11.md
var rulesDocument []byte

// RulesVersion names the current procedural rules.
const RulesVersion = "pcourt-rules-2026-11"

// Rules returns the current procedural rules: their version, the SHA-256
// (lowercase hex) of their text, and the text.
func Rules() (version, hash string, text []byte) {
	sum := sha256.Sum256(rulesDocument)
	return RulesVersion, hex.EncodeToString(sum[:]), rulesDocument
}
