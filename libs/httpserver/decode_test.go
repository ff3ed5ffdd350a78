package httpserver_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
)

func TestDecodeStrictRefusesDuplicateMembers(t *testing.T) {
	type claim struct {
		AmountInDisputeMinor int64 `json:"amountInDisputeMinor"`
	}
	type line struct {
		SKU string `json:"sku"`
	}
	type body struct {
		Claim claim          `json:"claim"`
		Items []line         `json:"items"`
		Tags  map[string]int `json:"tags"`
		Note  string         `json:"note"`
	}
	tests := []struct {
		name string
		body string
		path string // "" when the body is accepted
	}{
		{"distinct members", `{"claim":{"amountInDisputeMinor":5},"items":[{"sku":"a"},{"sku":"b"}],"note":"x"}`, ""},
		{"same name in sibling objects", `{"items":[{"sku":"a"},{"sku":"a"}],"tags":{"sku":1}}`, ""},
		{"top level", `{"note":"a","note":"b"}`, "note"},
		{"nested amount", `{"claim":{"amountInDisputeMinor":5,"amountInDisputeMinor":5000000}}`, "claim.amountInDisputeMinor"},
		{"inside an array element", `{"items":[{"sku":"a"},{"sku":"b","sku":"c"}]}`, "items[1].sku"},
		{"in a map", `{"tags":{"a":1,"b":2,"a":3}}`, "tags.a"},
		{"after nested values", `{"items":[[1,[2]],{"x":{}}],"claim":{},"claim":{}}`, "claim"},
		{"escaped spelling of the same name", `{"note":"a","n\u006fte":"b"}`, "note"},
		{"behind invalid UTF-8, which encoding/json accepts", "{\"note\":\"\xff\",\"note\":\"b\"}", "note"},
		{"a name a JSON pointer escapes", `{"tags":{"a/b~c":1,"a/b~c":2}}`, "tags.a/b~c"},
		{"in nested arrays", `{"items":[[{"sku":"a","sku":"b"}]]}`, "items[0][0].sku"},
		{"a numeric name in a map", `{"tags":{"0":1,"0":2}}`, "tags.0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var dst body
			err := httpserver.DecodeStrict([]byte(tc.body), &dst)
			if tc.path == "" {
				if err != nil {
					var p *problem.Error
					require.True(t, errors.As(err, &p))
					require.NotEqual(t, problem.DuplicateMember, p.Code, err)
				}
				return
			}
			var p *problem.Error
			require.True(t, errors.As(err, &p), "want a problem, got %v", err)
			require.Equal(t, problem.DuplicateMember, p.Code)
			require.Contains(t, p.Detail, tc.path)
		})
	}
}

func TestDecodeStrictClipsEchoedInput(t *testing.T) {
	type body struct {
		Note string `json:"note"`
	}
	long := strings.Repeat("k", 10_000)
	for name, in := range map[string]string{
		"unknown field":  `{"` + long + `":1}`,
		"duplicate name": `{"` + long + `":1,"` + long + `":2}`,
	} {
		t.Run(name, func(t *testing.T) {
			var p *problem.Error
			require.True(t, errors.As(httpserver.DecodeStrict([]byte(in), &body{}), &p))
			require.Less(t, len(p.Detail), problem.EchoLimit+100)
		})
	}
}

func TestDecodeStrictSaysWhichRuleTheBodyBroke(t *testing.T) {
	type line struct {
		SKU string `json:"sku"`
	}
	type body struct {
		Note  string `json:"note"`
		Count int    `json:"count"`
		Items []line `json:"items"`
	}
	tests := []struct {
		name, body string
		code       problem.Code
		detail     string
	}{
		{"an unknown member", `{"note":"a","colour":"red"}`, problem.UnknownField, `Field "colour" is not part of this request.`},
		{"a member spelled in another case is unknown", `{"Note":"a"}`, problem.UnknownField, `Field "Note" is not part of this request.`},
		{"an unknown member of an element", `{"items":[{"sku":"a"},{"sku":"b","qty":1}]}`, problem.UnknownField, `Field "items.1.qty" is not part of this request.`},
		{"a string for a number", `{"count":"two"}`, problem.InvalidFieldType, `Field "count" must not be a JSON string.`},
		{"a fraction for an integer", `{"count":1.5}`, problem.InvalidFieldType, `Field "count" must not be a JSON number.`},
		{"a nested wrong type", `{"items":[{"sku":5}]}`, problem.InvalidFieldType, `Field "items.0.sku" must not be a JSON number.`},
		{"not an object", `[1,2]`, problem.InvalidFieldType, "The request body must be a JSON object."},
		{"a second value", `{"note":"a"} {"note":"b"}`, problem.TrailingData, "The request body must hold exactly one JSON value."},
		{"garbage after the value", `{"note":"a"}x`, problem.TrailingData, "The request body must hold exactly one JSON value."},
		{"cut short", `{"note":"a",`, problem.MalformedJSON, "The request body ends in the middle of a JSON value."},
		{"cut short after an unknown name: the syntax first", `{"colour":`, problem.MalformedJSON, "The request body ends in the middle of a JSON value."},
		{"a type error before a syntax error: the syntax first", `{"count":"two",}`, problem.MalformedJSON, "The request body is not valid JSON (at byte 14)."},
		{"a syntax error", `{"note" "a"}`, problem.MalformedJSON, "The request body is not valid JSON (at byte 8)."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p *problem.Error
			require.True(t, errors.As(httpserver.DecodeStrict([]byte(tc.body), &body{}), &p))
			require.Equal(t, tc.code, p.Code)
			require.Equal(t, tc.detail, p.Detail)
		})
	}

	var dst body
	require.NoError(t, httpserver.DecodeStrict([]byte("{\"note\":\"\xff\",\"count\":2,\"items\":null}"), &dst),
		"invalid UTF-8 inside a string is let through, as encoding/json lets it through")
	require.Equal(t, body{Note: "\ufffd", Count: 2}, dst)
}
