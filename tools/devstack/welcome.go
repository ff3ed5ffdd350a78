package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
	"github.com/pcourt/pcourt/tools/adjudicator/agent"
)

// devCredential is a sandbox credential minted for this run of the stack.
type devCredential struct {
	envName string
	role    auth.Role
	token   string
	cred    auth.Credential
}

// The dev tenant and environment, and the partners of the credentials make
// run mints: the parties' partner, and the tribunal members' own (a
// tribunal member's partner id is never a party's).
const (
	devTenant             = "tenant-dev"
	devPartner            = "partner-dev"
	devAdjudicatorPartner = "tribunal-ai-dev"
	devReviewerPartner    = "tribunal-reviewer-dev"
	devLabel              = "devstack"
)

// devCredentials are the credentials mintCredentials returns, by role.
type devCredentials struct {
	all                                []devCredential
	orchestrator, claimant, respondent devCredential
	adjudicator, reviewer              devCredential
}

// mintCredentials mints one sandbox credential per party role for the dev
// tenant, and a tribunal: the reference adjudicator, with the rubric's
// configuration, and a reviewer, both added to the dev tenant's sandbox
// tribunal pool. It writes the tokens to <dir>/credentials.env for scripts
// and the demos.
//
// Every start mints new credentials (a token is never stored, so an
// earlier start's cannot be used again). The tribunal members of earlier
// starts are taken out of the pool first, so that the cases of this start
// are assigned to the members whose tokens it printed; cases assigned
// before keep their members.
func mintCredentials(ctx context.Context, dev *devRedis, cfg config) (devCredentials, error) {
	rdb := dev.client()
	defer rdb.Close()
	store := auth.NewStore(rdb, auth.DefaultStoreConfig())
	if err := retireTribunal(ctx, store); err != nil {
		return devCredentials{}, err
	}
	configuration, err := award.Canonical(agent.RubricConfiguration())
	if err != nil {
		return devCredentials{}, err
	}
	var out devCredentials
	wanted := []struct {
		envName   string
		role      auth.Role
		partnerID string
		agentID   string
		into      *devCredential
	}{
		{"PCOURT_ORCHESTRATOR_TOKEN", auth.RolePlatformOrchestrator, devPartner, "", &out.orchestrator},
		{"PCOURT_CLAIMANT_TOKEN", auth.RoleClaimantAgent, devPartner, "agent-claimant-dev", &out.claimant},
		{"PCOURT_RESPONDENT_TOKEN", auth.RoleRespondentAgent, devPartner, "agent-respondent-dev", &out.respondent},
		{"PCOURT_ADJUDICATOR_TOKEN", auth.RoleAdjudicator, devAdjudicatorPartner, "adjudicator-rubric-dev", &out.adjudicator},
		{"PCOURT_REVIEWER_TOKEN", auth.RoleReviewer, devReviewerPartner, "", &out.reviewer},
	}
	// The demo's execution walk settles its purchase at the facilitator.
	env := fmt.Sprintf("export PCOURT_URL=http://127.0.0.1:%d\nexport PCOURT_FACILITATOR_URL=http://127.0.0.1:%d\n", cfg.EdgePort, cfg.facilitatorPort())
	for _, w := range wanted {
		token, cred, err := store.Mint(ctx, auth.MintRequest{
			Tenant: devTenant, Environment: auth.Sandbox, Role: w.role,
			PartnerID: w.partnerID, AgentID: w.agentID, Label: devLabel,
		})
		if err != nil {
			return devCredentials{}, fmt.Errorf("minting the %s credential: %w", w.role, err)
		}
		if w.role.Tribunal() {
			var c []byte
			if w.role == auth.RoleAdjudicator {
				c = configuration
			}
			if err := store.AddTribunalMember(ctx, cred.PublicID, c); err != nil {
				return devCredentials{}, fmt.Errorf("adding the %s to the tribunal pool: %w", w.role, err)
			}
		}
		*w.into = devCredential{envName: w.envName, role: w.role, token: token, cred: cred}
		out.all = append(out.all, *w.into)
		env += fmt.Sprintf("export %s=%s\n", w.envName, token)
	}
	if err := os.WriteFile(filepath.Join(cfg.Dir, "credentials.env"), []byte(env), 0o600); err != nil {
		return devCredentials{}, err
	}
	return out, nil
}

// retireTribunal takes the tribunal members an earlier start of the stack
// minted out of the dev tenant's sandbox pool. The pool assigns its first
// eligible member, so a member left from an earlier start, whose token is
// gone, would take every new case.
func retireTribunal(ctx context.Context, store *auth.Store) error {
	pool, err := store.TribunalPool(ctx, devTenant, auth.Sandbox)
	if err != nil {
		return err
	}
	for _, m := range pool {
		c := m.Credential
		if c.Label != devLabel || (c.PartnerID != devAdjudicatorPartner && c.PartnerID != devReviewerPartner) {
			continue
		}
		if err := store.RemoveTribunalMember(ctx, c.PublicID); err != nil {
			return fmt.Errorf("retiring an earlier start's %s %s: %w", c.Role, c.PublicID, err)
		}
	}
	return nil
}

func printWelcome(w io.Writer, cfg config, creds devCredentials, receiverURL, adjudicatorURL, adjudicatorEndpoint string) {
	base := fmt.Sprintf("http://127.0.0.1:%d", cfg.EdgePort)
	envFile := filepath.Join(cfg.Dir, "credentials.env")
	fmt.Fprintf(w, "\npcourt dev stack is up: %s\n\n", base)
	fmt.Fprintln(w, "Sandbox credentials (tenant-dev), also in "+envFile+":")
	for _, c := range creds.all {
		fmt.Fprintf(w, "  %-22s %-21s %s  %s\n", c.role, c.cred.PartnerID, c.cred.PublicID, c.token)
	}
	fmt.Fprintln(w, "\nTry:")
	fmt.Fprintf(w, "  curl -fsS %s/readyz\n", base)
	fmt.Fprintf(w, "  curl -fsS -o /dev/null -w '%%{http_code} %%{content_type}\\n' %s/openapi.json\n", base)
	fmt.Fprintf(w, "  curl -fsS -H 'Authorization: Bearer %s' %s/api/v2/integration\n", creds.claimant.token, base)
	// The accounts service's OAuth 2.1 authorization server (docs/accounts.md),
	// its issuer the edge's URL.
	fmt.Fprintf(w, "  curl -fsS %s/.well-known/oauth-authorization-server\n", base)
	// The MCP server's protected resource metadata (docs/mcp.md): where an
	// agent's MCP client finds the authorization server.
	fmt.Fprintf(w, "  curl -fsS %s/.well-known/oauth-protected-resource/mcp\n", base)
	payer := localfacilitator.DevAccounts()[0]
	fmt.Fprintf(w, "\nPay USD 0.010000 for a dispute-readiness report over x402 (Anvil account 0, a PUBLIC test key,\nfunded with 1000 test USDC by the local facilitator; payments go to %s):\n", devPayTo().Hex())
	fmt.Fprintf(w, "  go run ./tools/x402pay -key %s -d @docs/examples/readiness-request.json %s/api/x402/dispute-readiness\n",
		hexutil.Encode(crypto.FromECDSA(payer.Key)), base)
	fmt.Fprintf(w, "\nWalk a case draft from preparation to an opened case (docs/filings-walkthrough.md):\n")
	fmt.Fprintf(w, "  go run ./tools/demo -env %s\n", envFile)
	fmt.Fprintf(w, "\nThe tribunal of tenant-dev's sandbox pool: the reference adjudicator (tools/adjudicator, provider \"rubric\":\n"+
		"no model; PCOURT_ADJUDICATOR_TOKEN) hears adjudication_requested at %s\n"+
		"(endpoint %s), files its proposals and prints \"adjudicator | ...\" lines here;\n"+
		"the reviewer is you, with PCOURT_REVIEWER_TOKEN. Walk a case on to a signed award, verified offline:\n", adjudicatorURL, adjudicatorEndpoint)
	fmt.Fprintf(w, "  go run ./tools/demo -through award -env %s\n", envFile)
	fmt.Fprintf(w, "\nAward executions in the x402r mode refund the original payer from %s (Anvil account 9,\n"+
		"a PUBLIC test key funded with 1000 test USDC by the local facilitator) on %s (docs/executions.md).\n"+
		"Walk a purchase paid over x402 on to its final award and the refund of that payment:\n",
		devRefundOperator().Address.Hex(), strings.Join(x402.DefaultNetworks(x402.EnvironmentSandbox), ", "))
	fmt.Fprintf(w, "  go run ./tools/demo -through execution -env %s\n", envFile)
	fmt.Fprintf(w, "\nSigned case events for partner-dev are delivered to %s, verified\nagainst %s/api/webhooks/keys and printed here as \"webhook  | ...\" lines.\n", receiverURL, base)
	if len(cfg.Compat) > 0 {
		fmt.Fprintf(w, "\nCompatibility policy, from your environment, at the edge: %s\n(earlier routes such as %s/api/v2/cases/<id> answer with Deprecation, Sunset and Link; guide at %s/docs/migration)\n",
			strings.Join(cfg.Compat, " "), base, base)
	} else {
		fmt.Fprintf(w, "\nCompatibility announcements are off; to see them on earlier routes:\n  SERVICE_API_CANONICAL_ROUTES=true SERVICE_API_V2_CASES_GA=2026-01-15 make run\n")
	}
	fmt.Fprintf(w, "\nLogs: %s   Ctrl-C stops everything.\n", filepath.Join(cfg.Dir, "logs"))
}

// devRefundOperator pays the refunds of award executions in the x402r
// mode: Anvil account 9, which no payer of the stack uses, funded like
// every development account by the facilitator at each start
// (localfacilitator.FundDevAccounts, devFunding). Its key is public: the
// cases service refuses it on a main network.
func devRefundOperator() localfacilitator.DevAccount { return localfacilitator.DevAccounts()[9] }

// devPayTo receives the stack's readiness payments: Anvil account 1, so the
// payer (account 0) and the payee are both visible in the ledger.
func devPayTo() common.Address { return localfacilitator.DevAccounts()[1].Address }
