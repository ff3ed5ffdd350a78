// Package api holds the platform's public API description: one OpenAPI 3.1
// document, written by hand as openapi.yaml beside this file, served by the
// edge at /openapi.json and used by every handler test to validate real
// responses.
package api

import (
	_ "embed"
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
