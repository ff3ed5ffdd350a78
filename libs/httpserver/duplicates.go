package httpserver

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// duplicateMember walks body token by token and returns the path of the
// first member name that repeats within one object, such as
// "claim.amountInDisputeMinor" or "items[2].sku". A body that is not valid
// JSON reports no duplicate; the decoder then says what is wrong with it.
func duplicateMember(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers stay text; nothing is converted on this pass
	type frame struct {
		object bool
		names  map[string]struct{}
		path   string // path of this container
		index  int    // next element index, in an array
		key    string // member name whose value comes next, in an object
	}
	var stack []*frame
	// child returns the path of the value about to be read in the top frame.
	child := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		if f.object {
			if f.path == "" {
				return f.key
			}
			return f.path + "." + f.key
		}
		p := f.path + "[" + strconv.Itoa(f.index) + "]"
		f.index++
		return p
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		// Inside an object, Token alternates names and values; a name is a
		// string read where a name is expected.
		if top != nil && top.object && top.key == "" {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return "", false
				}
				continue
			}
			name, _ := tok.(string)
			if _, seen := top.names[name]; seen {
				top.key = name
				return child(), true
			}
			top.names[name] = struct{}{}
			top.key = name
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, names: map[string]struct{}{}, path: child()})
			if top != nil && top.object {
				top.key = ""
			}
			continue
		case json.Delim('['):
			stack = append(stack, &frame{path: child()})
			if top != nil && top.object {
				top.key = ""
			}
			continue
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return "", false
			}
			continue
		}
		// A scalar value.
		if top == nil {
			return "", false
		}
		if top.object {
			top.key = ""
		} else {
			top.index++
		}
	}
}
