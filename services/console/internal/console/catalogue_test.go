package console_test

import (
	"html"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/services/console/internal/console"
)

// exampleOf reads the signed example request of type typ from the
// catalogue page: its headers and exact body.
func exampleOf(t *testing.T, page, typ string) (http.Header, []byte) {
	t.Helper()
	start := strings.Index(page, `<section class="example" id="ex-`+typ+`"`)
	require.GreaterOrEqual(t, start, 0, typ)
	section := page[start : start+strings.Index(page[start:], "</section>")]
	h := http.Header{}
	for _, m := range regexp.MustCompile(`<span class="h" data-name="([^"]+)">[^:]+: ([^<]*)</span>`).FindAllStringSubmatch(section, -1) {
		h.Set(m[1], html.UnescapeString(m[2]))
	}
	body := regexp.MustCompile(`<span class="b">([^<]*)</span>`).FindStringSubmatch(section)
	require.NotNil(t, body, typ)
	return h, []byte(html.UnescapeString(body[1]))
}

// Every type of the published schema has an example: a body valid against
// the schema and headers that verify with the conformance key A at the
// signing time, and that fail at the key id step against the deployment's
// own keys. No private key material is on the page.
func TestTheEventCatalogueHasASignedExampleOfEveryType(t *testing.T) {
	s := newStack(t)
	bearer, _ := s.partner(t, "acme")
	b := s.browser(t)
	b.open(s.mint(t, bearer, "view").Data.URL)
	resp, page := b.get("/console/events")
	require.Equal(t, http.StatusOK, resp.StatusCode, page)

	v := loadVectors(t)
	vectorKeys, err := signature.ParseJWKS(v.JWKS)
	require.NoError(t, err)
	status, live := s.hookAPI(t, http.MethodGet, "/api/webhooks/keys?environment=sandbox", bearer, nil)
	require.Equal(t, http.StatusOK, status)
	require.NotEmpty(t, live["keys"])
	liveRaw, _ := jsonOf(live)
	liveKeys, err := signature.ParseJWKS(liveRaw)
	require.NoError(t, err)

	raw, err := os.ReadFile("../../../../api/events/case-event-v2.schema.json")
	require.NoError(t, err)
	types := regexp.MustCompile(`"enum": \[([^\]]*)\]`).FindStringSubmatch(string(raw))
	require.NotNil(t, types)
	for _, q := range regexp.MustCompile(`"([a-z_]+)"`).FindAllStringSubmatch(types[1], -1) {
		typ := q[1]
		h, body := exampleOf(t, page, typ)
		apitest.Event(t, "case-event-v2.schema.json", body)
		require.Contains(t, string(body), `"type":"`+typ+`"`)
		got, err := signature.Verify(h, body, console.ExampleEndpointID, vectorKeys.Lookup, console.ExampleSignedAt, 300e9)
		require.NoError(t, err, typ)
		require.Equal(t, "conformance-key-a.seed-is-public.not-a-real-key", got.KeyID, "conformance key A")
		_, err = signature.Verify(h, body, console.ExampleEndpointID, liveKeys.Lookup, console.ExampleSignedAt, 300e9)
		require.Equal(t, signature.Reason("unknown_key"), signature.ReasonOf(err), "never a live signature")
		require.Equal(t, "application/json", h.Get("Content-Type"))
	}
	for _, secret := range []string{`"d"`, "c990870201a586c23b37e2e7b8de81cd592aa534fd172ee4b52a8ef5a67a5b12", "PRIVATE"} {
		require.NotContains(t, page, secret, "no private key material")
	}
	require.Contains(t, page, `id="example-key"`)
}

// The catalogue's words are the cases service's event tables, as
// docs/cases-procedure.md (the procedure's), docs/tribunal.md (the
// decision's), docs/evidence.md (the evidence's), docs/after-award.md and
// docs/settlement.md state them.
func TestTheEventCatalogueIsTheProcedureTable(t *testing.T) {
	require.Equal(t, tableRows(t, "cases-procedure.md", "| type | when | recipients | actionRequired | deadlineAt |"), console.EventTableRows())
}

func TestTheDecisionEventsAreTheTribunalTable(t *testing.T) {
	require.Equal(t, tableRows(t, "tribunal.md", "| type | when | audience | actionRequired |"), console.DecisionTableRows())
}

func TestTheEvidenceEventsAreTheEvidenceTable(t *testing.T) {
	require.Equal(t, tableRows(t, "evidence.md", "| type | when | actionRequired |"), console.EvidenceTableRows())
}

func TestTheAfterAwardEventsAreTheAfterAwardTable(t *testing.T) {
	require.Equal(t, tableRows(t, "after-award.md", "| type | when | to | actionRequired |"), console.AfterAwardTableRows())
}

func TestTheSettlementEventsAreTheSettlementTable(t *testing.T) {
	require.Equal(t, tableRows(t, "settlement.md", "| type | when | to | actionRequired |"), console.SettlementTableRows())
}

// tableRows are the rows of the event table under header in docs/page.
func tableRows(t *testing.T, page, header string) []string {
	t.Helper()
	raw, err := os.ReadFile("../../../../docs/" + page)
	require.NoError(t, err)
	doc := string(raw)
	start := strings.Index(doc, header)
	require.GreaterOrEqual(t, start, 0, page)
	var rows []string
	for _, line := range strings.Split(doc[start:], "\n")[2:] {
		if !strings.HasPrefix(line, "| `") {
			break
		}
		rows = append(rows, line)
	}
	return rows
}
