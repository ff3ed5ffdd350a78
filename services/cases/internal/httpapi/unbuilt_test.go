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

// Every restricted control answers 403 operator_only in the website
// envelope, naming the route and what a partner does instead, on every
// method, and changes nothing; without a credential it is 401.
func TestRestrictedControlsAnswer403NamingTheRoute(t *testing.T) {
	s := newStack(t)
	c := s.joined(t)
	for _, rr := range httpapi.Restricted {
		path := strings.ReplaceAll(rr.Route, "{id}", c.id)
		for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPatch} {
			for _, token := range []string{s.claimant, s.respondent, s.adjudicator} {
				s.unchanged(t, func() {
					rep := s.doUndocumented(t, method, path, token)
					require.Equal(t, http.StatusForbidden, rep.status, "%s %s: %s", method, path, rep.body)
					require.Equal(t, "operator_only", rep.code, "%s %s", method, path)
					var body struct {
						OK    *bool
						Error struct{ Message string }
					}
					require.NoError(t, json.Unmarshal(rep.body, &body))
					require.NotNil(t, body.OK, "website envelope: %s", rep.body)
					require.Contains(t, body.Error.Message, method+" "+rr.Route)
					require.Contains(t, body.Error.Message, rr.Instead)
				})
			}
			rep := s.doUndocumented(t, method, path, "")
			require.Equal(t, http.StatusUnauthorized, rep.status, "%s %s without a credential", method, path)
		}
	}
}

// docs/cases-routes.md lists exactly the restricted controls, in order,
// each with what a partner does instead.
func TestTheRestrictedControlsAreDocumented(t *testing.T) {
	b, err := os.ReadFile("../../../../docs/cases-routes.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(b), "\n## Restricted controls")
	require.True(t, ok, "docs/cases-routes.md has a Restricted controls section")
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `(/api[^`]*)` \\| (.*) \\|$")
	var documented, code []string
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		documented = append(documented, m[1]+" → "+m[2])
	}
	for _, rr := range httpapi.Restricted {
		code = append(code, rr.Route+" → "+rr.Instead)
	}
	require.Equal(t, code, documented)
}
