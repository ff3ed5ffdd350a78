package jcs_test

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/jcs"
)

// TestCanonicalizeVectors holds the examples of RFC 8785 (section 3.2.2,
// the sorting example of section 3.2.3) and small cases for each rule.
func TestCanonicalizeVectors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			"RFC 8785 3.2.2 serialization example",
			`{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`,
			`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
		},
		{
			"RFC 8785 3.2.3 sorting example",
			`{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`,
			"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\uFB33\":\"Hebrew Letter Dalet With Dagesh\"}",
		},
		{
			// A supplementary character sorts by its high surrogate (D83D),
			// before U+FB33, although its code point is larger.
			"UTF-16 order, not code point order",
			`{"\ufb33":1,"\ud83d\ude02":2,"\u00f6":3}`,
			"{\"ö\":3,\"😂\":2,\"\uFB33\":1}",
		},
		{"nested objects sort at every level", `{"b":{"z":1,"a":[{"y":2,"x":1}]},"a":0}`, `{"a":0,"b":{"a":[{"x":1,"y":2}],"z":1}}`},
		{"arrays keep order", `[3, 1, {"b": null, "a": true}, []]`, `[3,1,{"a":true,"b":null},[]]`},
		{"empty members", `{ "": "empty", "a": { }, "A": [ ] }`, `{"":"empty","A":[],"a":{}}`},
		{"sort ignores locale", `{"sin":4,"pêche":3,"péché":2,"peach":1}`, `{"peach":1,"péché":2,"pêche":3,"sin":4}`},
		{"digits sort as text", `{"10":1,"1":2,"111":3,"2":4}`, `{"1":2,"10":1,"111":3,"2":4}`},
		{"no Unicode normalization", `{"k":"A\u030a"}`, "{\"k\":\"A\u030a\"}"},
		{"short escapes", `"\b\f\n\r\t"`, `"\b\f\n\r\t"`},
		{"other controls as lowercase \\u00xx", `"\u0000\u001F\u000b"`, `"\u0000\u001f\u000b"`},
		{"DEL, slash and HTML stay literal", `"\u007f\/<>&"`, "\"\u007f/<>&\""},
		{"line separators stay literal", `"\u2028\u2029"`, "\"\u2028\u2029\""},
		{"escaped letters are unescaped", `"\u0041\u00e9\uD834\uDD1E"`, "\"Aé𝄞\""},
		{"integers", `[0, -0, 1, -1, 9007199254740991, 100, 1e2]`, `[0,0,1,-1,9007199254740991,100,100]`},
		{"fractions", `[0.1, -0.5, 1.50, 123.456e1]`, `[0.1,-0.5,1.5,1234.56]`},
		{"exponent boundaries", `[1e21, 1e20, 1e-6, 1e-7, 123e-20]`, `[1e+21,100000000000000000000,0.000001,1e-7,1.23e-18]`},
		{"underflow reads as zero", `1e-400`, `0`},
		{"whitespace around scalars", " \t\r\n true \n", `true`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := jcs.Canonicalize(json.RawMessage(tt.in))
			require.NoError(t, err)
			require.Equal(t, tt.want, string(got))
			again, err := jcs.Canonicalize(json.RawMessage(got))
			require.NoError(t, err)
			require.Equal(t, string(got), string(again), "canonical form must be a fixed point")
		})
	}
}

// TestCanonicalizeRFCBytes checks the UTF-8 bytes of the RFC 8785 section
// 3.2.4 example, as the RFC lists them.
func TestCanonicalizeRFCBytes(t *testing.T) {
	got, err := jcs.Canonicalize(json.RawMessage(`{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`))
	require.NoError(t, err)
	want := strings.Join(strings.Fields(`
7b 22 6c 69 74 65 72 61 6c 73 22 3a 5b 6e 75 6c 6c 2c 74 72
75 65 2c 66 61 6c 73 65 5d 2c 22 6e 75 6d 62 65 72 73 22 3a
5b 33 33 33 33 33 33 33 33 33 2e 33 33 33 33 33 33 33 2c 31
65 2b 33 30 2c 34 2e 35 2c 30 2e 30 30 32 2c 31 65 2d 32 37
5d 2c 22 73 74 72 69 6e 67 22 3a 22 e2 82 ac 24 5c 75 30 30
30 66 5c 6e 41 27 42 5c 22 5c 5c 5c 5c 5c 22 2f 22 7d`), "")
	require.Equal(t, want, hex.EncodeToString(got))
}

// TestCanonicalizeNumbers holds RFC 8785 Appendix B: IEEE 754 bit patterns
// and their serialization.
func TestCanonicalizeNumbers(t *testing.T) {
	tests := []struct{ bits, want string }{
		{"0000000000000000", "0"},
		{"8000000000000000", "0"},
		{"0000000000000001", "5e-324"},
		{"8000000000000001", "-5e-324"},
		{"7fefffffffffffff", "1.7976931348623157e+308"},
		{"ffefffffffffffff", "-1.7976931348623157e+308"},
		{"4340000000000000", "9007199254740992"},
		{"c340000000000000", "-9007199254740992"},
		{"4430000000000000", "295147905179352830000"},
		{"44b52d02c7e14af5", "9.999999999999997e+22"},
		{"44b52d02c7e14af6", "1e+23"},
		{"44b52d02c7e14af7", "1.0000000000000001e+23"},
		{"444b1ae4d6e2ef4e", "999999999999999700000"},
		{"444b1ae4d6e2ef4f", "999999999999999900000"},
		{"444b1ae4d6e2ef50", "1e+21"},
		{"3eb0c6f7a0b5ed8c", "9.999999999999997e-7"},
		{"3eb0c6f7a0b5ed8d", "0.000001"},
		{"41b3de4355555553", "333333333.3333332"},
		{"41b3de4355555554", "333333333.33333325"},
		{"41b3de4355555555", "333333333.3333333"},
		{"41b3de4355555556", "333333333.3333334"},
		{"41b3de4355555557", "333333333.33333343"},
		{"becbf647612f3696", "-0.0000033333333333333333"},
		{"43143ff3c1cb0959", "1424953923781206.2"},
	}
	for _, tt := range tests {
		t.Run(tt.bits, func(t *testing.T) {
			raw, err := hex.DecodeString(tt.bits)
			require.NoError(t, err)
			f := math.Float64frombits(binary.BigEndian.Uint64(raw))
			// Any text that reads back as the double will do as input.
			in := strconv.FormatFloat(f, 'g', -1, 64)
			got, err := jcs.Canonicalize(json.RawMessage(in))
			require.NoError(t, err)
			require.Equal(t, tt.want, string(got))
			// And a Go float64 encoded through encoding/json gives the same.
			got, err = jcs.Canonicalize([]float64{f})
			require.NoError(t, err)
			require.Equal(t, "["+tt.want+"]", string(got))
		})
	}
}

func TestCanonicalizeRefuses(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"empty", ``, jcs.ErrInvalidJSON},
		{"trailing data", `{} {}`, jcs.ErrInvalidJSON},
		{"trailing comma", `[1,]`, jcs.ErrInvalidJSON},
		{"single quotes", `{'a':1}`, jcs.ErrInvalidJSON},
		{"leading zero", `01`, jcs.ErrInvalidJSON},
		{"bare fraction", `.5`, jcs.ErrInvalidJSON},
		{"NaN", `NaN`, jcs.ErrInvalidJSON},
		{"raw control character", "\"a\x01\"", jcs.ErrInvalidJSON},
		{"bad escape", `"\x41"`, jcs.ErrInvalidJSON},
		{"short unicode escape", `"\u12"`, jcs.ErrInvalidJSON},
		{"unterminated string", `"abc`, jcs.ErrInvalidJSON},
		{"duplicate member", `{"a":1,"b":2,"a":3}`, jcs.ErrNotIJSON},
		{"duplicate member spelled differently", `{"a":1,"\u0061":2}`, jcs.ErrNotIJSON},
		{"lone high surrogate", `"\ud800"`, jcs.ErrNotIJSON},
		{"lone low surrogate", `"\udc00x"`, jcs.ErrNotIJSON},
		{"high surrogate then a letter escape", `"\ud800\u0041"`, jcs.ErrNotIJSON},
		{"invalid UTF-8", "\"\xff\"", jcs.ErrNotIJSON},
		{"overlong UTF-8", "\"\xc0\xaf\"", jcs.ErrNotIJSON},
		{"number overflow", `1e400`, jcs.ErrNotIJSON},
		{"negative overflow", `[-1.8e308]`, jcs.ErrNotIJSON},
		{"nesting too deep", strings.Repeat("[", 1001) + strings.Repeat("]", 1001), jcs.ErrNotIJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jcs.Canonicalize(json.RawMessage(tt.in))
			require.ErrorIs(t, err, tt.want)
		})
	}
	t.Run("nesting at the limit", func(t *testing.T) {
		_, err := jcs.Canonicalize(json.RawMessage(strings.Repeat("[", 1000) + strings.Repeat("]", 1000)))
		require.NoError(t, err)
	})
}

func TestCanonicalizeOfGoValues(t *testing.T) {
	type inner struct {
		Z int    `json:"z"`
		A string `json:"a"`
	}
	got, err := jcs.Canonicalize(struct {
		B     []inner        `json:"b"`
		A     map[string]any `json:"a"`
		HTML  string         `json:"html"`
		Empty []string       `json:"empty"`
	}{
		B:     []inner{{Z: 2, A: "x"}},
		A:     map[string]any{"k": 1.5, "j": int64(1_000_000_000)},
		HTML:  "<a&b>",
		Empty: []string{},
	})
	require.NoError(t, err)
	require.Equal(t, `{"a":{"j":1000000000,"k":1.5},"b":[{"a":"x","z":2}],"empty":[],"html":"<a&b>"}`, string(got))

	_, err = jcs.Canonicalize(math.Inf(1))
	require.Error(t, err, "encoding/json refuses infinities")
}
