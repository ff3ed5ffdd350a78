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
