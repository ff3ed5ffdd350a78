package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// An operation is one API operation as the OpenAPI document describes it,
// read by its operationId: what a tool mirroring it sends, and the tool's
// input schema, made from the operation's own parameters and body schema
// so a tool takes exactly what the API takes.
type operation struct {
	ID, Method, Path string
	Summary          string
	Description      string
	// PathParams are the operation's path parameters, by the name the
	// path gives them; argName maps each to the tool's argument.
	PathParams []string
	// QueryParams are its query parameters.
	QueryParams []string
	// Idempotency says the operation takes an Idempotency-Key header, and
	// IdempotencyRequired that it requires one.
	Idempotency, IdempotencyRequired bool
	// Body says it takes a JSON body, BodyRequired that it requires one.
	Body, BodyRequired bool
	// Scopes are the account scopes the operation lists under the
	// accountOAuth scheme; none when it takes no account token.
	Scopes []string
	// InputSchema is the tool's input schema (JSON Schema 2020-12, the
	// dialect of OpenAPI 3.1), the body's schema and every component it
	// refers to under $defs.
	InputSchema map[string]any
}

// argName is the tool argument a path parameter is given as: every {id}
// of the catalogue's paths is a case's (a test holds the catalogue to
// it), named as the canonical routes name it, so each tool of a case
// takes caseId.
func argName(param string) string {
	if param == "id" {
		return "caseId"
	}
	return param
}

// The arguments every tool of an operation may take besides its path and
// query parameters.
const (
	argIdempotencyKey = "idempotencyKey"
	argBody           = "body"
)

// document is the part of the OpenAPI document the operations are read
// from.
type document struct {
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Schemas    map[string]json.RawMessage `json:"schemas"`
		Parameters map[string]parameter       `json:"parameters"`
	} `json:"components"`
}

type parameter struct {
	Ref         string          `json:"$ref"`
	Name        string          `json:"name"`
	In          string          `json:"in"`
	Required    bool            `json:"required"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}

type rawOperation struct {
	OperationID string                `json:"operationId"`
	Summary     string                `json:"summary"`
	Description string                `json:"description"`
	Parameters  []parameter           `json:"parameters"`
	Security    []map[string][]string `json:"security"`
	RequestBody *struct {
		Required bool `json:"required"`
		Content  map[string]struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"content"`
	} `json:"requestBody"`
}

// readOperations finds each of ids in the document (JSON).
func readOperations(doc []byte, ids []string) (map[string]operation, error) {
	var d document
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("reading the OpenAPI document: %w", err)
	}
	byID := map[string]operation{}
	for _, path := range slices.Sorted(maps.Keys(d.Paths)) {
		for method, raw := range d.Paths[path] {
			if !slices.Contains([]string{"get", "post", "put", "patch", "delete"}, method) {
				continue
			}
			var ro rawOperation
			if err := json.Unmarshal(raw, &ro); err != nil {
				return nil, fmt.Errorf("reading %s %s: %w", method, path, err)
			}
			if !slices.Contains(ids, ro.OperationID) {
				continue
			}
			op, err := d.operation(strings.ToUpper(method), path, ro)
			if err != nil {
				return nil, fmt.Errorf("operation %s: %w", ro.OperationID, err)
			}
			byID[op.ID] = op
		}
	}
	for _, id := range ids {
		if _, ok := byID[id]; !ok {
			return nil, fmt.Errorf("the OpenAPI document has no operation %s", id)
		}
	}
	return byID, nil
}

func (d document) operation(method, path string, ro rawOperation) (operation, error) {
	op := operation{ID: ro.OperationID, Method: method, Path: path, Summary: ro.Summary, Description: ro.Description}
	for _, req := range ro.Security {
		if scopes, ok := req["accountOAuth"]; ok {
			op.Scopes = scopes
		}
	}
	properties := map[string]any{}
	var required []string
	for _, p := range ro.Parameters {
		if p.Ref != "" {
			name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/")
			resolved, found := d.Components.Parameters[name]
			if !ok || !found {
				return operation{}, fmt.Errorf("unresolvable parameter %s", p.Ref)
			}
			p = resolved
		}
		var schema map[string]any
		if len(p.Schema) > 0 {
			if err := json.Unmarshal(p.Schema, &schema); err != nil {
				return operation{}, fmt.Errorf("parameter %s: %w", p.Name, err)
			}
		}
		if schema == nil {
			schema = map[string]any{"type": "string"}
		}
		if p.Description != "" {
			schema["description"] = p.Description
		}
		switch {
		case p.In == "path":
			op.PathParams = append(op.PathParams, p.Name)
			schema["pattern"] = idPattern
			properties[argName(p.Name)] = schema
			required = append(required, argName(p.Name))
		case p.In == "query":
			op.QueryParams = append(op.QueryParams, p.Name)
			properties[p.Name] = schema
			if p.Required {
				required = append(required, p.Name)
			}
		case p.In == "header" && strings.EqualFold(p.Name, "Idempotency-Key"):
			op.Idempotency, op.IdempotencyRequired = true, p.Required
			properties[argIdempotencyKey] = schema
			if p.Required {
				required = append(required, argIdempotencyKey)
			}
		}
		// Other headers (the request id, a case capability) are not the
		// account's to send: the MCP server sends its own request id, and
		// an account acts through its membership, never a capability.
	}
	defs := map[string]any{}
	if rb := ro.RequestBody; rb != nil {
		media, ok := rb.Content["application/json"]
		if !ok {
			return operation{}, fmt.Errorf("its body is not application/json")
		}
		body, err := d.inline(media.Schema, defs)
		if err != nil {
			return operation{}, err
		}
		op.Body, op.BodyRequired = true, rb.Required
		properties[argBody] = body
		if rb.Required {
			required = append(required, argBody)
		}
	}
	slices.Sort(required)
	op.InputSchema = map[string]any{
		"type":                 "object",
		"properties":           properties,
		"additionalProperties": false,
	}
	if len(required) > 0 {
		op.InputSchema["required"] = required
	}
	if len(defs) > 0 {
		op.InputSchema["$defs"] = defs
	}
	return op, nil
}

// idPattern is the alphabet and length of every platform id, the form a
// path argument must have: an id is put into the path as it is, so a
// slash or a dot-dot segment never reaches the API as a path.
const idPattern = `^[A-Za-z0-9._:-]{1,160}$`

// inline returns schema with every reference to a component schema
// rewritten to #/$defs/<name>, and adds those components (and theirs) to
// defs.
func (d document) inline(schema json.RawMessage, defs map[string]any) (any, error) {
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		return nil, err
	}
	var pending []string
	v = rewriteRefs(v, &pending)
	for len(pending) > 0 {
		name := pending[0]
		pending = pending[1:]
		if _, done := defs[name]; done {
			continue
		}
		raw, ok := d.Components.Schemas[name]
		if !ok {
			return nil, fmt.Errorf("unresolvable schema #/components/schemas/%s", name)
		}
		var c any
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, err
		}
		defs[name] = rewriteRefs(c, &pending)
	}
	return v, nil
}

func rewriteRefs(v any, pending *[]string) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if ref, ok := x.(string); ok && k == "$ref" {
				if name, ok := strings.CutPrefix(ref, "#/components/schemas/"); ok {
					t[k] = "#/$defs/" + name
					*pending = append(*pending, name)
				}
				continue
			}
			t[k] = rewriteRefs(x, pending)
		}
	case []any:
		for i, x := range t {
			t[i] = rewriteRefs(x, pending)
		}
	}
	return v
}
