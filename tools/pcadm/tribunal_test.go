package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/redistest"
)

var digest64 = strings.Repeat("0a", 32)

func rubricConfig(version string) string {
	return `{
  "provider": "rubric",
  "model": "pc-rubric",
  "modelVersion": "` + version + `",
  "instructionsDigest": "` + digest64 + `",
  "outputSchemaVersion": "pc-adjudication-proposal-v1",
  "temperatureMilli": 0,
  "tools": []
}`
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

func digestOf(t *testing.T, version string) string {
	t.Helper()
	d, err := award.Configuration{Provider: award.ProviderRubric, Model: "pc-rubric", ModelVersion: version,
		InstructionsDigest: digest64, OutputSchemaVersion: award.SchemaProposal}.Digest()
	require.NoError(t, err)
	return d
}

func TestTribunalAddConfigureListRemove(t *testing.T) {
	srv := redistest.Start(t)
	c := cli{t, srv.Addr}
	store := auth.NewStore(srv.Client(t), auth.DefaultStoreConfig())
	ctx := context.Background()

	out, err := c.run("tribunal", "add", "-tenant", "acme", "-env", "sandbox", "-role", "adjudicator", "-partner", "tribunal-ai-1",
		"-agent", "adjudicator-1", "-label", "rubric v1", "-config", writeFile(t, rubricConfig("1")))
	require.NoError(t, err)
	token := regexp.MustCompile(`token: (pc_sbx_\S+)`).FindStringSubmatch(out)
	require.Len(t, token, 2, out)
	adjudicator := regexp.MustCompile(`credential (cred_\w+)`).FindStringSubmatch(out)[1]
	require.Contains(t, out, "configuration "+digestOf(t, "1"))
	cred, err := store.Authenticate(ctx, token[1])
	require.NoError(t, err, "the printed token works")
	require.Equal(t, adjudicator, cred.PublicID)
	require.Equal(t, auth.RoleAdjudicator, cred.Role)
	require.Equal(t, "tribunal-ai-1", cred.PartnerID)
	require.Equal(t, "adjudicator-1", cred.AgentID)

	out, err = c.run("tribunal", "add", "-tenant", "acme", "-role", "reviewer", "-partner", "tribunal-reviewer-1")
	require.NoError(t, err)
	reviewer := regexp.MustCompile(`credential (cred_\w+)`).FindStringSubmatch(out)[1]

	pool, err := store.TribunalPool(ctx, "acme", auth.Sandbox)
	require.NoError(t, err)
	require.Len(t, pool, 2)
	for _, m := range pool {
		if m.Credential.PublicID == adjudicator {
			var want []byte
			want, err = award.Canonical(award.Configuration{Provider: award.ProviderRubric, Model: "pc-rubric", ModelVersion: "1",
				InstructionsDigest: digest64, OutputSchemaVersion: award.SchemaProposal, Tools: []string{}})
			require.NoError(t, err)
			require.Equal(t, string(want), string(m.Configuration), "the pool keeps the configuration's canonical bytes")
		} else {
			require.Equal(t, reviewer, m.Credential.PublicID)
			require.Nil(t, m.Configuration)
		}
	}

	out, err = c.run("tribunal", "list", "-tenant", "acme", "-env", "sandbox")
	require.NoError(t, err)
	require.NotContains(t, out, token[1], "list never shows secrets")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, out)
	require.Equal(t, []string{"ID", "ROLE", "PARTNER", "AGENT", "LABEL", "CONFIG"}, strings.Fields(lines[0]))
	rows := map[string]string{}
	for _, l := range lines[1:] {
		rows[strings.Fields(l)[0]] = l
	}
	require.Regexp(t, `^`+adjudicator+` +adjudicator +tribunal-ai-1 +adjudicator-1 +rubric v1 +`+digestOf(t, "1")+`$`, rows[adjudicator])
	require.Regexp(t, `^`+reviewer+` +reviewer +tribunal-reviewer-1 +— +— +—$`, rows[reviewer])

	out, err = c.run("tribunal", "configure", "-credential", adjudicator, "-config", writeFile(t, rubricConfig("2")))
	require.NoError(t, err)
	require.Contains(t, out, digestOf(t, "2"))
	out, err = c.run("tribunal", "list", "-tenant", "acme")
	require.NoError(t, err)
	require.Contains(t, out, digestOf(t, "2"))
	require.NotContains(t, out, digestOf(t, "1"))

	_, err = c.run("tribunal", "remove", "-credential", reviewer)
	require.NoError(t, err)
	out, err = c.run("tribunal", "list", "-tenant", "acme")
	require.NoError(t, err)
	require.NotContains(t, out, reviewer)
	require.Contains(t, out, adjudicator)

	// A revoked member is no longer listed.
	_, err = c.run("revoke", adjudicator)
	require.NoError(t, err)
	out, err = c.run("tribunal", "list", "-tenant", "acme")
	require.NoError(t, err)
	require.NotContains(t, out, adjudicator)

	out, err = c.run("tribunal", "list", "-tenant", "acme", "-env", "live")
	require.NoError(t, err)
	require.Equal(t, "ID  ROLE  PARTNER  AGENT  LABEL  CONFIG\n", out)
}

// Every tribunal credential is in the pool: mint refuses the tribunal
// roles and points at tribunal add.
func TestMintRefusesTribunalRoles(t *testing.T) {
	srv := redistest.Start(t)
	c := cli{t, srv.Addr}
	for _, role := range []string{"adjudicator", "reviewer"} {
		redistest.Unchanged(t, srv.Client(t), nil, func() {
			_, err := c.run("mint", "-tenant", "acme", "-role", role, "-partner", "tribunal-1")
			require.ErrorContains(t, err, "pcadm tribunal add")
		})
	}
}

// Every refusal stores nothing: no credential is minted, the pool is
// unchanged.
func TestTribunalRefusals(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c := cli{t, srv.Addr}
	out, err := c.run("mint", "-tenant", "acme", "-role", "platform_orchestrator", "-partner", "acme-platform")
	require.NoError(t, err)
	orchestrator := regexp.MustCompile(`credential (cred_\w+)`).FindStringSubmatch(out)[1]
	out, err = c.run("tribunal", "add", "-tenant", "acme", "-role", "reviewer", "-partner", "tribunal-reviewer-1")
	require.NoError(t, err)
	reviewer := regexp.MustCompile(`credential (cred_\w+)`).FindStringSubmatch(out)[1]
	out, err = c.run("tribunal", "add", "-tenant", "acme", "-role", "adjudicator", "-partner", "tribunal-ai-1", "-config", writeFile(t, rubricConfig("1")))
	require.NoError(t, err)
	adjudicator := regexp.MustCompile(`credential (cred_\w+)`).FindStringSubmatch(out)[1]

	good := writeFile(t, rubricConfig("1"))
	add := func(extra ...string) []string {
		return append([]string{"tribunal", "add", "-tenant", "acme", "-role", "adjudicator", "-partner", "tribunal-ai-2"}, extra...)
	}
	for _, tc := range []struct {
		name string
		args []string
		says string
	}{
		{"no tribunal command", []string{"tribunal"}, "usage"},
		{"unknown tribunal command", []string{"tribunal", "promote"}, "unknown tribunal command"},
		{"add a party role", []string{"tribunal", "add", "-tenant", "acme", "-role", "platform_orchestrator", "-partner", "x"}, "not adjudicator or reviewer"},
		{"add without a role", []string{"tribunal", "add", "-tenant", "acme", "-partner", "x"}, "not adjudicator or reviewer"},
		{"add without a tenant", []string{"tribunal", "add", "-role", "reviewer", "-partner", "x"}, "tenant required"},
		{"add without a partner", []string{"tribunal", "add", "-tenant", "acme", "-role", "reviewer"}, "partner id required"},
		{"add in another environment", []string{"tribunal", "add", "-tenant", "acme", "-env", "staging", "-role", "reviewer", "-partner", "x"}, "not sandbox or live"},
		{"add under a party's partner id", []string{"tribunal", "add", "-tenant", "acme", "-role", "reviewer", "-partner", "acme-platform"}, "party"},
		{"add a reviewer with a configuration", []string{"tribunal", "add", "-tenant", "acme", "-role", "reviewer", "-partner", "x", "-config", good}, "a reviewer has no configuration"},
		{"add an adjudicator without a configuration", add(), "needs --config"},
		{"a configuration file that is not there", add("-config", filepath.Join(t.TempDir(), "none.json")), "reading the configuration"},
		{"an unknown member", add("-config", writeFile(t, strings.Replace(rubricConfig("1"), `"tools"`, `"seed": 7, "tools"`, 1))), "seed"},
		{"a member in another case", add("-config", writeFile(t, strings.Replace(rubricConfig("1"), `"model"`, `"Model"`, 1))), "Model"},
		{"a member twice", add("-config", writeFile(t, strings.Replace(rubricConfig("1"), `"model"`, `"model": "other", "model"`, 1))), "duplicate"},
		{"a value of the wrong type", add("-config", writeFile(t, strings.Replace(rubricConfig("1"), `"temperatureMilli": 0`, `"temperatureMilli": 0.5`, 1))), "temperatureMilli"},
		{"trailing data", add("-config", writeFile(t, rubricConfig("1")+"{}")), "not an adjudicator configuration"},
		{"not an object", add("-config", writeFile(t, `[]`)), "not an adjudicator configuration"},
		{"no tools list", add("-config", writeFile(t, strings.Replace(rubricConfig("1"), `,
  "tools": []`, "", 1))), "tools required"},
		{"an invalid configuration", add("-config", writeFile(t, strings.Replace(rubricConfig("1"), `"rubric"`, `"openai"`, 1))), `provider "openai"`},
		{"an instructions digest in upper case", add("-config", writeFile(t, strings.ReplaceAll(rubricConfig("1"), "0a", "0A"))), "instructionsDigest"},
		{"configure a reviewer", []string{"tribunal", "configure", "-credential", reviewer, "-config", good}, "no configuration"},
		{"configure an orchestrator", []string{"tribunal", "configure", "-credential", orchestrator, "-config", good}, "not a tribunal role"},
		{"configure an unknown credential", []string{"tribunal", "configure", "-credential", "cred_nope", "-config", good}, "not found"},
		{"configure without a configuration", []string{"tribunal", "configure", "-credential", adjudicator}, "required"},
		{"configure with an invalid configuration", []string{"tribunal", "configure", "-credential", adjudicator, "-config", writeFile(t, `{}`)}, "invalid adjudicator configuration"},
		{"remove without a credential", []string{"tribunal", "remove"}, "required"},
		{"remove a credential outside the pool", []string{"tribunal", "remove", "-credential", orchestrator}, "not a member"},
		{"remove an unknown credential", []string{"tribunal", "remove", "-credential", "cred_nope"}, "not found"},
		{"list without a tenant", []string{"tribunal", "list"}, "required"},
		{"list another environment", []string{"tribunal", "list", "-tenant", "acme", "-env", "staging"}, "sandbox or live"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			redistest.Unchanged(t, rdb, nil, func() {
				_, err := c.run(tc.args...)
				require.ErrorContains(t, err, tc.says)
			})
		})
	}
}
