package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/nginxtest"
)

// TestDemoWalksACaseToAnAwardThatOutlivesRestarts runs the printed award
// walkthrough (go run ./tools/demo -through award) through a real nginx in
// front of the stack make run starts: the stack's tribunal pool assigns
// the in-process reference adjudicator, whose rubric proposal the demo's
// reviewer signs off, and the demo ends with "award <caseId> <awardHash>".
// The test then fetches the award's artifacts and attestation through
// nginx on its own and verifies them offline against GET /api/awards/keys;
// stops the whole stack (every service, Redis, Kafka) and starts it again
// on its state, and finds the same bytes: the three artifacts and the
// attestation are stored, never re-rendered, and the cases service, which
// made a new ephemeral signing key at its restart, still publishes the one
// that signed the award. After the demo, every service's admin port
// exports the metrics docs/observability.md gives it, and two agents walk
// a case of their own to an award through the MCP server
// (walkAgentsToAnAwardThroughMCP).
func TestDemoWalksACaseToAnAwardThatOutlivesRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every service; skipped with -short")
	}
	if nginxtest.Binary() == "" {
		t.Skip("nginx is not installed (Debian: apt-get install nginx-light); skipping the test behind a real ingress")
	}
	base := stackPorts(t)
	extra := freeBlock(t, 6, 10000)
	dir := t.TempDir()
	up := runStack(t, dir, base, extra)
	t.Cleanup(func() { require.NoError(t, up.stop()) })
	ngx := nginxtest.Start(t, "127.0.0.1:"+strconv.Itoa(base))

	// 1. The demo, as printed, through nginx.
	root, err := findRoot()
	require.NoError(t, err)
	cmd := exec.Command("go", "run", "./tools/demo", "-through", "award", "-env", filepath.Join(dir, "credentials.env"))
	cmd.Dir = root
	cmd.Env = append(goEnv(root), "PCOURT_URL="+ngx.URL)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s\n%s\n%s", out, stderr.String(), ngx.ErrorLog())
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	m := regexp.MustCompile(`^award (cs_[a-z0-9]+) ([0-9a-f]{64})$`).FindStringSubmatch(lines[len(lines)-1])
	require.NotNil(t, m, "the last line is not award <caseId> <awardHash>:\n%s", out)
	caseID, awardHash := m[1], m[2]

	// 1b. Two agents take a case of their own to an award through the MCP
	// server's tools alone (docs/mcp.md); the demo's case stays invisible
	// to them.
	walkAgentsToAnAwardThroughMCP(t, ngx.URL, "http://127.0.0.1:"+strconv.Itoa(base), dir, caseID)
	// Every metric of docs/observability.md is on the admin ports.
	requireMetricsAfterTheDemo(t, base)

	// 2. The artifacts, fetched and verified independently of the demo, by
	// the claimant's partner.
	before := fetchAward(t, ngx.URL, orchestratorToken(t, dir), caseID)
	verified, err := award.Verify(before.json, string(before.attestation), before.keys)
	require.NoError(t, err)
	require.Equal(t, awardHash, verified.AwardHash, "the printed hash is the json artifact's")
	require.Equal(t, awardHash, sha256Hex(before.json))
	require.Equal(t, caseID, verified.Award.CaseID)
	require.Equal(t, "rubric", verified.Award.Tribunal.Configuration.Provider, "the stack's reference adjudicator decided, with its rubric")
	keysBefore := kids(t, before.keys)
	require.Equal(t, []string{verified.KeyID}, keysBefore, "a fresh stack has published one award key, the one that signed")

	// 3. Everything restarts on its state: the services, Redis (its
	// append-only file) and Kafka. The cases service makes a new
	// ephemeral key.
	require.NoError(t, up.stop())
	up = runStack(t, dir, base, extra)
	// The partner's orchestrator of this start sees the case its partner
	// filed (the claimant agent of an earlier start had the case's
	// membership; this start's is another credential).
	after := fetchAward(t, ngx.URL, orchestratorToken(t, dir), caseID)
	for name, pair := range map[string][2][]byte{
		"json": {before.json, after.json}, "html": {before.html, after.html}, "pdf": {before.pdf, after.pdf},
		"attestation": {before.attestation, after.attestation},
	} {
		require.True(t, bytes.Equal(pair[0], pair[1]), "the %s artifact changed across the restart", name)
	}
	keysAfter := kids(t, after.keys)
	require.Len(t, keysAfter, 2, "the restarted cases service publishes its new key beside the old one")
	require.Contains(t, keysAfter, verified.KeyID, "the key that signed the award stays published after it is rotated out")
	again, err := award.Verify(after.json, string(after.attestation), after.keys)
	require.NoError(t, err)
	require.Equal(t, awardHash, again.AwardHash)
	require.Equal(t, verified.KeyID, again.KeyID)
}

// awardFiles are what a holder of an award keeps: its three artifacts, the
// attestation, and the published key set.
type awardFiles struct {
	json, html, pdf, attestation, keys []byte
}

// fetchAward GETs an award's artifacts through the canonical routes and
// the key set, each 200, and checks each artifact's Digest-SHA256 header
// against its bytes.
func fetchAward(t *testing.T, base, token, caseID string) awardFiles {
	t.Helper()
	get := func(path string, artifact bool) []byte {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", path, b)
		require.NotEmpty(t, b, path)
		if artifact {
			require.Equal(t, sha256Hex(b), resp.Header.Get("Digest-SHA256"), "%s: the digest header names the bytes served", path)
		}
		return b
	}
	a := "/api/cases/" + caseID + "/award/artifacts/"
	return awardFiles{
		json: get(a+"json", true), html: get(a+"html", true), pdf: get(a+"pdf", true),
		attestation: get(a+"json/attestation", true), keys: get("/api/awards/keys", false),
	}
}

// kids are the key ids of a JWK set, sorted.
func kids(t *testing.T, jwks []byte) []string {
	t.Helper()
	var set struct {
		Keys []struct {
			KID string `json:"kid"`
		} `json:"keys"`
	}
	require.NoError(t, json.Unmarshal(jwks, &set))
	var out []string
	for _, k := range set.Keys {
		out = append(out, k.KID)
	}
	slices.Sort(out)
	return out
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// credentialsEnv reads one variable of the credentials.env the last start
// of the stack on dir wrote.
func credentialsEnv(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "credentials.env"))
	require.NoError(t, err)
	lines := bufio.NewScanner(bytes.NewReader(b))
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "export "+name+"="); ok {
			return v
		}
	}
	t.Fatalf("no %s in credentials.env:\n%s", name, b)
	return ""
}
