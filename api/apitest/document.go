package apitest

import (
	"bytes"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pcourt/pcourt/api"
)

// documentURL names the OpenAPI document as a JSON Schema resource: every
// schema checked is a JSON pointer into it.
const documentURL = "https://pcourt.dev/openapi.json"

// document is the OpenAPI document read once per test binary, with the
// schemas compiled as the checks first need them.
type document struct {
	root  map[string]any
	paths []pathTemplate // the most literal segments first

	mu       sync.Mutex // the compiler is not safe for concurrent use
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema // by JSON pointer
}

// pathTemplate is one key of the document's paths, split into segments;
// a segment with a {parameter} is a pattern.
type pathTemplate struct {
	key      string
	segments []segment
	literals int
}

type segment struct {
	literal string
	pattern *regexp.Regexp // nil for a literal segment
}

var (
	loadOnce  sync.Once
	loaded    *document
	loadError error
)

func load() (*document, error) {
	loadOnce.Do(func() { loaded, loadError = parse() })
	return loaded, loadError
}

func parse() (*document, error) {
	js, err := api.JSON()
	if err != nil {
		return nil, err
	}
	value, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return nil, err
	}
	root, ok := value.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the document is not a JSON object")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// format is an assertion here, not an annotation: a date-time field
	// that is not RFC 3339 fails the exchange.
	c.AssertFormat()
	if err := c.AddResource(documentURL, value); err != nil {
		return nil, err
	}
	d := &document{root: root, compiler: c, compiled: map[string]*jsonschema.Schema{}}
	paths, _ := root["paths"].(map[string]any)
	for key := range paths {
		t, err := parseTemplate(key)
		if err != nil {
			return nil, err
		}
		d.paths = append(d.paths, t)
	}
	// OpenAPI: a concrete path matches before a templated one of the same
	// shape (/cases/search before /cases/{caseId}).
	sort.Slice(d.paths, func(i, j int) bool {
		if d.paths[i].literals != d.paths[j].literals {
			return d.paths[i].literals > d.paths[j].literals
		}
		return d.paths[i].key < d.paths[j].key
	})
	return d, nil
}

var parameter = regexp.MustCompile(`\{[^{}/]+\}`)

func parseTemplate(key string) (pathTemplate, error) {
	t := pathTemplate{key: key}
	for _, s := range strings.Split(key, "/") {
		if !strings.Contains(s, "{") {
			t.segments = append(t.segments, segment{literal: s})
			t.literals++
			continue
		}
		var expr strings.Builder
		expr.WriteString("^")
		rest := s
		for _, loc := range parameter.FindAllStringIndex(s, -1) {
			expr.WriteString(regexp.QuoteMeta(s[len(s)-len(rest) : loc[0]]))
			expr.WriteString(`[^/]+`)
			rest = s[loc[1]:]
		}
		expr.WriteString(regexp.QuoteMeta(rest) + "$")
		re, err := regexp.Compile(expr.String())
		if err != nil {
			return t, fmt.Errorf("path %s: %w", key, err)
		}
		t.segments = append(t.segments, segment{pattern: re})
	}
	return t, nil
}

func (t pathTemplate) matches(parts []string) bool {
	if len(parts) != len(t.segments) {
		return false
	}
	for i, s := range t.segments {
		if s.pattern == nil && s.literal != parts[i] || s.pattern != nil && !s.pattern.MatchString(parts[i]) {
			return false
		}
	}
	return true
}

// check lists what in the exchange the document does not describe.
func (d *document) check(req *http.Request, resp *http.Response, body []byte) []string {
	parts := strings.Split(req.URL.EscapedPath(), "/")
	i := slices.IndexFunc(d.paths, func(t pathTemplate) bool { return t.matches(parts) })
	if i < 0 {
		return []string{fmt.Sprintf("no path of the document matches %s", req.URL.Path)}
	}
	key := d.paths[i].key
	item, _ := d.root["paths"].(map[string]any)[key].(map[string]any)
	method := strings.ToLower(req.Method)
	op, ok := item[method].(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s has no %s operation", key, req.Method)}
	}
	responses, _ := op["responses"].(map[string]any)
	status, ok := statusKey(responses, resp.StatusCode)
	if !ok {
		return []string{fmt.Sprintf("status %d is not documented for %s %s (documented: %s)",
			resp.StatusCode, req.Method, key, strings.Join(sortedKeys(responses), ", "))}
	}
	response, at, err := d.resolve(responses[status], "/paths/"+escapePointer(key)+"/"+method+"/responses/"+escapePointer(status))
	if err != nil {
		return []string{err.Error()}
	}
	problems := d.checkHeaders(response, at, resp.Header)
	if req.Method != http.MethodHead {
		problems = append(problems, d.checkContent(response, at, resp.Header.Get("Content-Type"), body)...)
	}
	return problems
}

// statusKey is the responses key that documents status: the code itself,
// then its class (4XX), then default.
func statusKey(responses map[string]any, status int) (string, bool) {
	code := strconv.Itoa(status)
	for _, key := range []string{code, code[:1] + "XX", "default"} {
		if _, ok := responses[key]; ok {
			return key, true
		}
	}
	return "", false
}

func (d *document) checkHeaders(response map[string]any, at string, h http.Header) []string {
	var problems []string
	headers, _ := response["headers"].(map[string]any)
	for _, name := range sortedKeys(headers) {
		header, hat, err := d.resolve(headers[name], at+"/headers/"+escapePointer(name))
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		values := h.Values(name)
		if len(values) == 0 {
			if required, _ := header["required"].(bool); required {
				problems = append(problems, fmt.Sprintf("the required header %s is missing", name))
			}
			continue
		}
		schema, ok := header["schema"].(map[string]any)
		if !ok {
			continue
		}
		for _, v := range values {
			value, err := headerValue(schema, v)
			if err == nil {
				err = d.validate(hat+"/schema", value)
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("header %s: %v", name, err))
			}
		}
	}
	return problems
}

// headerValue is a header's text as the JSON value its schema describes:
// a string, or the number or boolean it spells.
func headerValue(schema map[string]any, text string) (any, error) {
	switch schema["type"] {
	case "integer", "number", "boolean":
		v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
		if err != nil {
			return nil, fmt.Errorf("%q is not a %s", text, schema["type"])
		}
		return v, nil
	}
	return text, nil
}

func (d *document) checkContent(response map[string]any, at, contentType string, body []byte) []string {
	content, _ := response["content"].(map[string]any)
	if len(content) == 0 {
		if len(body) > 0 {
			return []string{fmt.Sprintf("the document describes no body for this response, and a %q one came", contentType)}
		}
		return nil
	}
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return []string{fmt.Sprintf("Content-Type %q is not a media type (documented: %s)", contentType, strings.Join(sortedKeys(content), ", "))}
	}
	key, ok := mediaKey(content, mediaType)
	if !ok {
		return []string{fmt.Sprintf("Content-Type %s is not documented (documented: %s)", mediaType, strings.Join(sortedKeys(content), ", "))}
	}
	media, _ := content[key].(map[string]any)
	if _, ok := media["schema"]; !ok || !isJSON(mediaType) {
		return nil
	}
	value, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return []string{fmt.Sprintf("the %s body is not JSON: %v", mediaType, err)}
	}
	if err := d.validate(at+"/content/"+escapePointer(key)+"/schema", value); err != nil {
		return []string{err.Error()}
	}
	return nil
}

// mediaKey is the content key that documents mediaType: itself, then its
// type's wildcard (application/*), then */*.
func mediaKey(content map[string]any, mediaType string) (string, bool) {
	kind, _, _ := strings.Cut(mediaType, "/")
	for _, key := range []string{mediaType, kind + "/*", "*/*"} {
		if _, ok := content[key]; ok {
			return key, true
		}
	}
	return "", false
}

func isJSON(mediaType string) bool {
	return mediaType == "application/json" || strings.HasSuffix(mediaType, "+json")
}

// resolve follows a local $ref (a response or header of components) to
// the object it names, and says where that object is.
func (d *document) resolve(v any, at string) (map[string]any, string, error) {
	for range 8 {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, at, fmt.Errorf("%s is not an object", at)
		}
		ref, ok := obj["$ref"].(string)
		if !ok {
			return obj, at, nil
		}
		target, ok := strings.CutPrefix(ref, "#")
		if !ok {
			return nil, at, fmt.Errorf("%s refers outside the document (%s)", at, ref)
		}
		if v, ok = d.lookup(target); !ok {
			return nil, at, fmt.Errorf("%s refers to %s, which the document does not have", at, ref)
		}
		at = target
	}
	return nil, at, fmt.Errorf("%s: too many references in a row", at)
}

// lookup reads the value at a JSON pointer into the document.
func (d *document) lookup(pointer string) (any, bool) {
	var v any = d.root
	for _, token := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		token = strings.ReplaceAll(strings.ReplaceAll(token, "~1", "/"), "~0", "~")
		if v, ok = obj[token]; !ok {
			return nil, false
		}
	}
	return v, true
}

func (d *document) components(kind string) map[string]any {
	components, _ := d.root["components"].(map[string]any)
	m, _ := components[kind].(map[string]any)
	return m
}

// validate checks value against the schema at pointer, compiling it the
// first time.
func (d *document) validate(pointer string, value any) error {
	d.mu.Lock()
	schema, ok := d.compiled[pointer]
	if !ok {
		var err error
		schema, err = d.compiler.Compile(documentURL + "#" + (&url.URL{Fragment: pointer}).EscapedFragment())
		if err != nil {
			d.mu.Unlock()
			return fmt.Errorf("compiling the schema at %s: %w", pointer, err)
		}
		d.compiled[pointer] = schema
	}
	d.mu.Unlock()
	if err := schema.Validate(value); err != nil {
		return fmt.Errorf("%s", strings.ReplaceAll(err.Error(), documentURL, "openapi.yaml"))
	}
	return nil
}

// escapePointer escapes a key as a JSON pointer token (RFC 6901).
func escapePointer(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }
