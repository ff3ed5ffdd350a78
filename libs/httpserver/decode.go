package httpserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
)

// ReadBody reads the whole request body under the size limit that applies
// to the route (the server's default or the route's BodyLimit), so that the
// bytes can be fingerprinted, hashed or decoded. A body over the limit is
// body_too_large naming that limit, refused before reading when its
// Content-Length says so.
func ReadBody(c *gin.Context) ([]byte, error) {
	if c.Request.Body == nil {
		return nil, nil
	}
	limit := bodyLimit(c)
	if limit > 0 && c.Request.ContentLength > limit {
		return nil, tooLarge(limit)
	}
	b, err := io.ReadAll(c.Request.Body)
	if err != nil {
		var maxBytes *http.MaxBytesError
		if errors.As(err, &maxBytes) {
			if limit == 0 || maxBytes.Limit < limit {
				limit = maxBytes.Limit
			}
			return nil, tooLarge(limit)
		}
		return nil, problem.New(problem.InvalidRequest, "The request body could not be read.").Wrap(err)
	}
	return b, nil
}

// DecodeJSON reads the request body strictly into dst: the media type must be
// JSON, the body must fit the limit, and unknown fields, wrong types and
// anything after the JSON value are refused. The error is a *problem.Error
// that says which rule the body broke.
func DecodeJSON(c *gin.Context, dst any) error {
	if ct := c.GetHeader("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !hasJSONSuffix(mt)) {
			return problem.Newf(problem.UnsupportedMediaType, "Content-Type must be application/json, not %q.", problem.Clip(ct))
		}
	}
	body, err := ReadBody(c)
	if err != nil {
		return err
	}
	// Handlers that fingerprint the body read it again.
	c.Request.Body = io.NopCloser(bytes.NewReader(body))
	return DecodeStrict(body, dst)
}

// DecodeStrict is DecodeJSON's rule set over bytes already read: exactly
// one JSON value, every member known to dst (matched by its exact name),
// every value of its member's type. A member name that appears twice in one
// object, at any depth, is refused: encoding/json would keep the last one
// while another parser (a partner's signer, a log pipeline) keeps the
// first, so the two would act on different requests.
//
// The body is decoded in one pass by go-json-experiment/json, the
// encoding/json/v2 candidate, which refuses duplicate names and unknown
// members as it goes; encoding/json needed a separate scan for duplicates
// and its Decoder, about three times the time of this pass. Invalid UTF-8
// inside strings is let through as encoding/json lets it through (it
// becomes U+FFFD), so that it cannot hide a duplicate behind a syntax
// error.
func DecodeStrict(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return problem.New(problem.EmptyBody, "The request body must be a JSON value.")
	}
	if err := jsonv2.Unmarshal(body, dst, strictOptions); err != nil {
		return decodeProblem(body, err)
	}
	return nil
}

var strictOptions = jsonv2.JoinOptions(
	jsonv2.RejectUnknownMembers(true),
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(true),
)

// decodeProblem says which rule the body broke, in the order the rules
// are checked: a duplicate member anywhere, then the body's syntax, then
// the members' names and types. The decoder stops at the first error it
// meets in one pass, so the first two are checked again here, on the
// error path only.
func decodeProblem(body []byte, err error) *problem.Error {
	if path, ok := duplicateMember(body); ok {
		return problem.Newf(problem.DuplicateMember, "Member %s appears more than once.", problem.Clip(path)).Wrap(err)
	}
	if p := syntaxProblem(body); p != nil {
		return p.Wrap(err)
	}
	var semantic *jsonv2.SemanticError
	switch {
	case errors.Is(err, jsonv2.ErrUnknownName) && errors.As(err, &semantic):
		return problem.Newf(problem.UnknownField, "Field %q is not part of this request.", problem.Clip(memberPath(semantic.JSONPointer))).Wrap(err)
	case errors.As(err, &semantic) && semantic.JSONKind != 0:
		if semantic.JSONPointer == "" {
			kind := "value"
			if semantic.GoType != nil {
				kind = jsonKind(semantic.GoType.Kind().String())
			}
			return problem.Newf(problem.InvalidFieldType, "The request body must be a JSON %s.", kind).Wrap(err)
		}
		return problem.Newf(problem.InvalidFieldType, "Field %q must not be a JSON %s.", problem.Clip(memberPath(semantic.JSONPointer)), jsonKindName(semantic.JSONKind)).Wrap(err)
	}
	return problem.New(problem.MalformedJSON, problem.Clip(fmt.Sprintf("The request body could not be decoded: %v.", err))).Wrap(err)
}

// syntaxProblem reports a body that is not exactly one JSON value; nil
// when it is one.
func syntaxProblem(body []byte) *problem.Error {
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	err := dec.SkipValue()
	var syntactic *jsontext.SyntacticError
	switch {
	case err == nil:
		// A decoder reads a stream of values: anything but the end of
		// the body after the first one is trailing data.
		if _, err := dec.ReadToken(); err != io.EOF {
			return problem.New(problem.TrailingData, "The request body must hold exactly one JSON value.")
		}
		return nil
	case errors.Is(err, io.ErrUnexpectedEOF):
		return problem.New(problem.MalformedJSON, "The request body ends in the middle of a JSON value.")
	case errors.As(err, &syntactic):
		return problem.Newf(problem.MalformedJSON, "The request body is not valid JSON (at byte %d).", syntactic.ByteOffset)
	}
	return problem.New(problem.MalformedJSON, "The request body is not valid JSON.")
}

// memberPath spells a JSON pointer as the problem details do:
// "claim.amountInDisputeMinor", "items.1.sku".
func memberPath(p jsontext.Pointer) string {
	return strings.Join(slices.Collect(p.Tokens()), ".")
}

// jsonKindName names a JSON value's kind as JSON does.
func jsonKindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}

func jsonKind(goKind string) string {
	switch goKind {
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "array"
	}
	return goKind
}

func hasJSONSuffix(mt string) bool {
	return len(mt) > 5 && mt[len(mt)-5:] == "+json"
}
