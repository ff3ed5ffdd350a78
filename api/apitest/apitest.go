// Package apitest checks real HTTP exchanges against the OpenAPI document, so
// the document cannot drift from what the services answer.
package apitest

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"

	"github.com/pcourt/pcourt/api"
)

var (
	once     sync.Once
	shared   validator.Validator
	buildErr []error
)

func load() (validator.Validator, []error) {
	once.Do(func() {
		doc, err := libopenapi.NewDocument(api.YAML)
		if err != nil {
			buildErr = []error{err}
			return
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			buildErr = errs
			return
		}
		shared = v
	})
	return shared, buildErr
}

// Response fails the test unless the exchange is described by the document:
// the path and method exist, the status is documented, and the body matches
// its schema. body is the response body already read by the test; it is put
// back on resp for the validator.
func Response(tb testing.TB, req *http.Request, resp *http.Response, body []byte) {
	tb.Helper()
	v, errs := load()
	if len(errs) > 0 {
		tb.Fatalf("loading openapi.yaml: %v", errs)
	}
	// The validator reads the request and response bodies itself.
	resp.Body = io.NopCloser(bytes.NewReader(body))
	r := req.Clone(req.Context())
	if req.GetBody != nil {
		if b, err := req.GetBody(); err == nil {
			r.Body = b
		}
	}
	ok, verrs := v.ValidateHttpResponse(r, resp)
	if !ok {
		var msg strings.Builder
		for _, e := range verrs {
			msg.WriteString("\n  - " + e.Message + ": " + e.Reason)
			for _, se := range e.SchemaValidationErrors {
				msg.WriteString("\n      " + se.FieldPath + ": " + se.Reason)
			}
		}
		tb.Fatalf("%s %s → %d does not match openapi.yaml:%s\nbody: %s", req.Method, req.URL.Path, resp.StatusCode, msg.String(), body)
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

var (
	modelOnce sync.Once
	model     *libopenapi.DocumentModel[v3.Document]
	modelErr  error
)

// Schema fails the test unless payload is valid against the named component
// schema (components.schemas.<name>), for checking values that are not a
// whole HTTP exchange, such as a report computed in a fuzz test.
func Schema(tb testing.TB, name string, payload []byte) {
	tb.Helper()
	modelOnce.Do(func() {
		doc, err := libopenapi.NewDocument(api.YAML)
		if err != nil {
			modelErr = err
			return
		}
		m, err := doc.BuildV3Model()
		if err != nil {
			modelErr = err
			return
		}
		model = m
	})
	if modelErr != nil {
		tb.Fatalf("loading openapi.yaml: %v", modelErr)
	}
	proxy, ok := model.Model.Components.Schemas.Get(name)
	if !ok {
		tb.Fatalf("openapi.yaml has no schema %q", name)
	}
	valid, errs := schema_validation.NewSchemaValidator().ValidateSchemaBytes(proxy.Schema(), payload)
	if !valid {
		var msg strings.Builder
		for _, e := range errs {
			msg.WriteString("\n  - " + e.Message + ": " + e.Reason)
			for _, se := range e.SchemaValidationErrors {
				msg.WriteString("\n      " + se.FieldPath + ": " + se.Reason)
			}
		}
		tb.Fatalf("value does not match schema %s:%s\nvalue: %s", name, msg.String(), payload)
	}
}
