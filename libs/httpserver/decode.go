package httpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

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

// DecodeStrict is DecodeJSON's rule set over bytes already read. A member
// name that appears twice in one object, at any depth, is refused:
// encoding/json would keep the last one while another parser (a partner's
// signer, a log pipeline) keeps the first, so the two would act on
// different requests.
func DecodeStrict(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return problem.New(problem.EmptyBody, "The request body must be a JSON value.")
	}
	if path, ok := duplicateMember(body); ok {
		return problem.Newf(problem.DuplicateMember, "Member %s appears more than once.", problem.Clip(path))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeProblem(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return problem.New(problem.TrailingData, "The request body must hold exactly one JSON value.")
	}
	return nil
}

func decodeProblem(err error) *problem.Error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return problem.Newf(problem.MalformedJSON, "The request body is not valid JSON (at byte %d).", syntax.Offset).Wrap(err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return problem.New(problem.MalformedJSON, "The request body ends in the middle of a JSON value.").Wrap(err)
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return problem.Newf(problem.InvalidFieldType, "The request body must be a JSON %s.", jsonKind(typ.Type.Kind().String())).Wrap(err)
		}
		return problem.Newf(problem.InvalidFieldType, "Field %q must not be a JSON %s.", problem.Clip(field), typ.Value).Wrap(err)
	}
	// encoding/json reports an unknown field only as text.
	const unknown = "json: unknown field "
	if msg := err.Error(); len(msg) > len(unknown) && msg[:len(unknown)] == unknown {
		return problem.Newf(problem.UnknownField, "Field %s is not part of this request.", problem.Clip(msg[len(unknown):])).Wrap(err)
	}
	return problem.New(problem.MalformedJSON, problem.Clip(fmt.Sprintf("The request body could not be decoded: %v.", err))).Wrap(err)
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
