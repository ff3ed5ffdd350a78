package helmcheck

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// UndeclaredKeys returns the path of every key of the values file at
// valuesPath that the chart's values.schema.json at schemaPath does not
// declare, sorted. Helm's own validation already refuses such a key where
// the schema says additionalProperties false; this also finds a key the
// schema lets through unnamed, so a value added to values.yaml without its
// schema (as when branches that each add values are merged) fails a test
// instead of going unvalidated.
//
// A key is declared by its object's properties, or, for a map of free
// keys (labels, env), by an additionalProperties schema; an object schema
// that names no key at all takes any. Local $ref
// ("#/$defs/…") are followed; the properties beside a $ref and those of
// its target both count.
func UndeclaredKeys(schemaPath, valuesPath string) ([]string, error) {
	rawSchema, err := os.ReadFile(schemaPath)
	if err != nil {
		return nil, err
	}
	var schema map[string]any
	if err := json.Unmarshal(rawSchema, &schema); err != nil {
		return nil, fmt.Errorf("%s: %w", schemaPath, err)
	}
	rawValues, err := os.ReadFile(valuesPath)
	if err != nil {
		return nil, err
	}
	var values any
	if err := yaml.Unmarshal(rawValues, &values); err != nil {
		return nil, fmt.Errorf("%s: %w", valuesPath, err)
	}
	w := walker{root: schema}
	w.walk("", schema, values)
	slices.Sort(w.undeclared)
	return w.undeclared, w.err
}

type walker struct {
	root       map[string]any
	undeclared []string
	err        error
}

func (w *walker) walk(path string, schema map[string]any, value any) {
	switch v := value.(type) {
	case map[string]any:
		for key, child := range v {
			at := strings.TrimPrefix(path+"."+key, ".")
			sub, ok := w.property(schema, key)
			if !ok {
				w.undeclared = append(w.undeclared, at)
				continue
			}
			w.walk(at, sub, child)
		}
	case []any:
		items := w.lookup(schema, "items")
		if items == nil {
			return
		}
		for i, child := range v {
			w.walk(fmt.Sprintf("%s[%d]", path, i), items, child)
		}
	}
}

// property finds the schema of key in an object schema: its properties,
// its $ref target's, or an additionalProperties schema.
func (w *walker) property(schema map[string]any, key string) (map[string]any, bool) {
	for s := range w.chain(schema) {
		if props, ok := s["properties"].(map[string]any); ok {
			if p, ok := props[key].(map[string]any); ok {
				return p, true
			}
		}
	}
	declaresKeys := false
	for s := range w.chain(schema) {
		switch ap := s["additionalProperties"].(type) {
		case map[string]any:
			return ap, true
		case bool:
			if ap {
				return map[string]any{}, true
			}
			declaresKeys = true
		}
		if _, ok := s["properties"]; ok {
			declaresKeys = true
		}
	}
	// An object schema that names no keys at all (tolerations, Helm's
	// global) takes any.
	return map[string]any{}, !declaresKeys
}

// lookup returns the first schema under name along schema's $ref chain.
func (w *walker) lookup(schema map[string]any, name string) map[string]any {
	for s := range w.chain(schema) {
		if v, ok := s[name].(map[string]any); ok {
			return v
		}
	}
	return nil
}

// chain yields schema, then the schemas its $ref leads to.
func (w *walker) chain(schema map[string]any) func(func(map[string]any) bool) {
	return func(yield func(map[string]any) bool) {
		for s, hops := schema, 0; s != nil && hops < 16; hops++ {
			if !yield(s) {
				return
			}
			ref, _ := s["$ref"].(string)
			if ref == "" {
				return
			}
			s = w.resolve(ref)
		}
	}
}

func (w *walker) resolve(ref string) map[string]any {
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok {
		if w.err == nil {
			w.err = fmt.Errorf("schema: $ref %q is not a local #/$defs/ reference", ref)
		}
		return nil
	}
	defs, _ := w.root["$defs"].(map[string]any)
	s, _ := defs[name].(map[string]any)
	if s == nil && w.err == nil {
		w.err = fmt.Errorf("schema: $ref %q names no definition", ref)
	}
	return s
}
