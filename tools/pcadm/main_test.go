package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/redistest"
)

type cli struct {
	t    *testing.T
	addr string
}

func (c cli) run(args ...string) (string, error) {
	var out bytes.Buffer
	err := run(context.Background(), args, func(k string) string {
		if k == "REDIS_ADDRS" {
			return c.addr
		}
		return ""
	}, &out)
	return out.String(), err
}

func TestMintListGrantRevoke(t *testing.T) {
	srv := redistest.Start(t)
	c := cli{t, srv.Addr}
	store := auth.NewStore(srv.Client(t), auth.DefaultStoreConfig())
	ctx := context.Background()

	out, err := c.run("mint", "--tenant", "acme", "--env", "sandbox", "--role", "claimant_agent", "--partner", "acme-platform", "--agent", "agent-7", "--label", "ci")
	require.NoError(t, err)
	token := regexp.MustCompile(`token: (pc_sbx_\S+)`).FindStringSubmatch(out)
	require.Len(t, token, 2, out)
	id := regexp.MustCompile(`credential (cred_\w+)`).FindStringSubmatch(out)[1]

	cred, err := store.Authenticate(ctx, token[1])
	require.NoError(t, err, "the printed token works")
	require.Equal(t, id, cred.PublicID)
	require.Equal(t, "agent-7", cred.AgentID)

	out, err = c.run("list", "--tenant", "acme")
	require.NoError(t, err)
	require.Contains(t, out, id)
	require.Contains(t, out, "active")
	require.NotContains(t, out, token[1], "list never shows secrets")

	_, err = c.run("grant", "--resource", "draft:dr_1", "--side", "claimant", "--credential", id)
	require.NoError(t, err)
	out, err = c.run("members", "--resource", "draft:dr_1")
	require.NoError(t, err)
	require.Equal(t, "claimant\tcredential:"+id+"\n", out)
	require.NoError(t, store.AuthorizeSide(ctx, cred, "draft:dr_1", auth.Claimant, ""))

	_, err = c.run("ungrant", "--resource", "draft:dr_1", "--credential", id)
	require.NoError(t, err)
	require.ErrorIs(t, store.AuthorizeSide(ctx, cred, "draft:dr_1", auth.Claimant, ""), auth.ErrForbidden)

	_, err = c.run("revoke", id)
	require.NoError(t, err)
	_, err = auth.NewStore(srv.Client(t), auth.DefaultStoreConfig()).Authenticate(ctx, token[1])
	require.ErrorIs(t, err, auth.ErrInvalidCredential)
	out, err = c.run("list")
	require.NoError(t, err)
	require.Contains(t, out, "revoked")
}

func TestRefusals(t *testing.T) {
	c := cli{t, redistest.Start(t).Addr}
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"mint", "--tenant", "acme", "--role", "judge", "--partner", "p"},
		{"mint", "--tenant", "acme", "--env", "staging", "--role", "claimant_agent", "--partner", "p"},
		{"revoke"},
		{"revoke", "cred_nope"},
		{"grant", "--resource", "draft:dr_1", "--side", "claimant"},
		{"grant", "--resource", "draft:dr_1", "--side", "claimant", "--credential", "cred_nope"},
		{"grant", "--resource", "draft:dr_1", "--side", "plaintiff", "--principal", "org"},
		{"ungrant", "--resource", "draft:dr_1", "--principal", "never-granted"},
	} {
		_, err := c.run(args...)
		require.Error(t, err, strings.Join(args, " "))
	}
}
