package jcs_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/jcs"
)

// FuzzCanonicalize feeds arbitrary bytes to Canonicalize. Whatever it
// accepts must be JSON to encoding/json too, and its output must be JSON
// that decodes to the same value, with object members in UTF-16 order, and
// be its own canonical form. What it refuses as invalid JSON must be
// invalid to encoding/json as well.
func FuzzCanonicalize(f *testing.F) {
	for _, seed := range []string{
		`{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`,
		`{"\ufb33":1,"\ud83d\ude02":2,"\u00f6":3,"":[],"a":{"b":{}}}`,
		`[0,-0,1e21,1e-7,5e-324,1.7976931348623157e308,-0.0000033333333333333333]`,
		`"\b\f\n\r\t\u0000\u001f\u007f\u2028"`,
		`{"a":1,"a":2}`,
		`"\ud800"`,
		"\"\xff\"",
		`1e400`,
		` [ true , false , null ] `,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := jcs.Canonicalize(json.RawMessage(in))
		if err != nil {
			switch {
			case errors.Is(err, jcs.ErrInvalidJSON):
				require.False(t, json.Valid(in), "refused as invalid JSON, but encoding/json accepts %q: %v", in, err)
			case errors.Is(err, jcs.ErrNotIJSON):
			default:
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		require.True(t, json.Valid(in), "accepted %q, which is not JSON", in)
		require.True(t, json.Valid(out), "output %q is not JSON", out)

		var before, after any
		require.NoError(t, json.Unmarshal(in, &before))
		require.NoError(t, json.Unmarshal(out, &after))
		require.True(t, reflect.DeepEqual(before, after), "value changed: %q -> %q", in, out)

		again, err := jcs.Canonicalize(json.RawMessage(out))
		require.NoError(t, err)
		require.Equal(t, string(out), string(again), "not idempotent")

		requireSortedMembers(t, out)
	})
}

// requireSortedMembers walks the JSON tokens of canonical output and checks
// that every object's names are strictly increasing in UTF-16 code units.
func requireSortedMembers(t *testing.T, out []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(out))
	type frame struct {
		object   bool
		wantName bool
		last     []uint16
		first    bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantName {
			if name, ok := tok.(string); ok {
				top := stack[n-1]
				units := utf16.Encode([]rune(name))
				if !top.first {
					require.Negative(t, slices.Compare(top.last, units), "member %q out of order in %q", name, out)
				}
				top.last, top.first, top.wantName = units, false, false
				continue
			}
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantName = true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, wantName: true, first: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].wantName = true
			}
		}
	}
}
