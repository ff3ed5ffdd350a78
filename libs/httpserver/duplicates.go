package httpserver

import (
	"bytes"
	"errors"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// duplicateMember returns the path of the first member name that repeats
// within one object, such as "claim.amountInDisputeMinor" or "items[2].sku".
// A body that is not valid JSON reports no duplicate; the decoder then says
// what is wrong with it.
//
// jsontext (encoding/json/v2's token layer, stable in the standard library
// from Go 1.27) refuses duplicate names itself while it skips the value,
// without building a token per member: the scan used to cost more than
// decoding the body. Invalid UTF-8 is let through here as encoding/json lets
// it through, so that it cannot hide a duplicate behind a syntax error this
// pass would stop at.
func duplicateMember(body []byte) (string, bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowInvalidUTF8(true))
	var syntactic *jsontext.SyntacticError
	if err := dec.SkipValue(); !errors.As(err, &syntactic) || !errors.Is(syntactic.Err, jsontext.ErrDuplicateName) {
		return "", false
	}
	// The pointer names one token per level; the decoder's stack, where it
	// stopped, says which levels are arrays (an index) and which objects.
	var path strings.Builder
	level := 1
	for tok := range syntactic.JSONPointer.Tokens() {
		kind, _ := dec.StackIndex(level)
		level++
		if kind == '[' {
			if _, err := strconv.Atoi(tok); err == nil {
				path.WriteString("[" + tok + "]")
				continue
			}
		}
		if path.Len() > 0 {
			path.WriteByte('.')
		}
		path.WriteString(tok)
	}
	return path.String(), true
}
