package httpapi_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/httpapi"
)

// Every route of the inventory the cases service has not built answers 501
// not_available naming the route, on every method, never a 404 or a
// placeholder success; website routes in their envelope.
func TestUnbuiltRoutesAnswer501NamingTheRoute(t *testing.T) {
	s := newStack(t)
	param := regexp.MustCompile(`\{[A-Za-z]+\}`)
	for _, u := range httpapi.Unbuilt {
		path := param.ReplaceAllString(u.Route, "x1")
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPatch} {
			rep := s.doUndocumented(t, method, path, s.claimant)
			require.Equal(t, http.StatusNotImplemented, rep.status, "%s %s: %s", method, path, rep.body)
			require.Equal(t, "not_available", rep.code, "%s %s", method, path)
			require.Equal(t, "no-store", rep.header.Get("Cache-Control"))
			var body struct {
				Detail string
				OK     *bool
				Error  struct{ Message string }
			}
			require.NoError(t, json.Unmarshal(rep.body, &body))
			detail := body.Detail
			if u.Website {
				require.NotNil(t, body.OK, "website envelope: %s", rep.body)
				require.False(t, *body.OK)
				detail = body.Error.Message
			}
			require.Contains(t, detail, method+" "+u.Route)
		}
	}
}

// docs/cases-routes.md lists exactly the routes that answer 501, in order.
func TestTheUnbuiltRoutesAreDocumented(t *testing.T) {
	f, err := os.Open("../../../../docs/cases-routes.md")
	require.NoError(t, err)
	defer f.Close()
	var documented []string
	inSection := false
	row := regexp.MustCompile("^\\| `(/api[^`]*)` \\|")
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			inSection = strings.HasPrefix(line, "## Not built")
		}
		if m := row.FindStringSubmatch(line); inSection && m != nil {
			documented = append(documented, m[1])
		}
	}
	require.NoError(t, sc.Err())
	var unbuilt []string
	for _, u := range httpapi.Unbuilt {
		unbuilt = append(unbuilt, u.Route)
	}
	require.Equal(t, unbuilt, documented)
}
