// Package apitest checks real HTTP exchanges against the OpenAPI document, so
// the document cannot drift from what the services answer.
//
// The document's schemas are JSON Schema 2020-12 (OpenAPI 3.1), so the
// checks compile them with the JSON Schema validator the event checks use
// (events.go), as pointers into the document: a schema's references
// (#/components/schemas/…) resolve inside it. The operation, status and
// media type an exchange must match are looked up here (document.go).
// The document's own validity as OpenAPI 3.1 is the api package's test
// (api_test.go): this package is imported by the handler tests of every
// service, several of them built with the race detector, and a full
// OpenAPI library would be compiled once more for each of those builds.
package apitest

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Response fails the test unless the exchange is described by the document:
// the path and method exist, the status is documented, the media type is
// one the response declares, the headers it declares match their schemas
// (and the required ones are present), and the body matches its schema.
// body is the response body already read by the test; it is put back on
// resp.
func Response(tb testing.TB, req *http.Request, resp *http.Response, body []byte) {
	tb.Helper()
	d, err := load()
	if err != nil {
		tb.Fatalf("loading openapi.yaml: %v", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if problems := d.check(req, resp, body); len(problems) > 0 {
		tb.Fatalf("%s %s → %d does not match openapi.yaml:\n  - %s\nbody: %s",
			req.Method, req.URL.Path, resp.StatusCode, strings.Join(problems, "\n  - "), body)
	}
}

// Do sends req with client, validates the exchange and returns the response
// with its body read.
func Do(tb testing.TB, client *http.Client, req *http.Request) (*http.Response, []byte) {
	tb.Helper()
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		tb.Fatalf("reading response of %s %s: %v", req.Method, req.URL, err)
	}
	Response(tb, req, resp, body)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, body
}

// Schema fails the test unless payload is valid against the named component
// schema (components.schemas.<name>), for checking values that are not a
// whole HTTP exchange, such as a report computed in a fuzz test.
func Schema(tb testing.TB, name string, payload []byte) {
	tb.Helper()
	d, err := load()
	if err != nil {
		tb.Fatalf("loading openapi.yaml: %v", err)
	}
	if _, ok := d.components("schemas")[name]; !ok {
		tb.Fatalf("openapi.yaml has no schema %q", name)
	}
	value, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
	if err != nil {
		tb.Fatalf("value is not JSON: %v\nvalue: %s", err, payload)
	}
	if err := d.validate("/components/schemas/"+escapePointer(name), value); err != nil {
		tb.Fatalf("value does not match schema %s:\n  - %v\nvalue: %s", name, err, payload)
	}
}
