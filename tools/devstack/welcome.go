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
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
)

// devCredential is a sandbox credential minted for this run of the stack.
type devCredential struct {
	envName string
	role    auth.Role
	token   string
	cred    auth.Credential
}

// mintCredentials mints one sandbox credential per role for the dev tenant
// and writes them to <dir>/credentials.env for scripts and the demos.
func mintCredentials(ctx context.Context, dev *devRedis, cfg config) ([]devCredential, error) {
	rdb := dev.client()
	defer rdb.Close()
	store := auth.NewStore(rdb, auth.DefaultStoreConfig())
	wanted := []struct {
		envName string
		role    auth.Role
		agentID string
	}{
		{"PCOURT_ORCHESTRATOR_TOKEN", auth.RolePlatformOrchestrator, ""},
		{"PCOURT_CLAIMANT_TOKEN", auth.RoleClaimantAgent, "agent-claimant-dev"},
		{"PCOURT_RESPONDENT_TOKEN", auth.RoleRespondentAgent, "agent-respondent-dev"},
	}
	var out []devCredential
	env := fmt.Sprintf("export PCOURT_URL=http://127.0.0.1:%d\n", cfg.EdgePort)
	for _, w := range wanted {
		token, cred, err := store.Mint(ctx, auth.MintRequest{
			Tenant: "tenant-dev", Environment: auth.Sandbox, Role: w.role,
			PartnerID: "partner-dev", AgentID: w.agentID, Label: "devstack",
		})
		if err != nil {
			return nil, fmt.Errorf("minting the %s credential: %w", w.role, err)
		}
		out = append(out, devCredential{envName: w.envName, role: w.role, token: token, cred: cred})
		env += fmt.Sprintf("export %s=%s\n", w.envName, token)
	}
	if err := os.WriteFile(filepath.Join(cfg.Dir, "credentials.env"), []byte(env), 0o600); err != nil {
		return nil, err
	}
	return out, nil
}

func printWelcome(w io.Writer, cfg config, creds []devCredential, receiverURL string) {
	base := fmt.Sprintf("http://127.0.0.1:%d", cfg.EdgePort)
	fmt.Fprintf(w, "\npcourt dev stack is up: %s\n\n", base)
	fmt.Fprintln(w, "Sandbox credentials (tenant-dev, partner-dev), also in "+filepath.Join(cfg.Dir, "credentials.env")+":")
	for _, c := range creds {
		fmt.Fprintf(w, "  %-22s %s  %s\n", c.role, c.cred.PublicID, c.token)
	}
	fmt.Fprintln(w, "\nTry:")
	fmt.Fprintf(w, "  curl -fsS %s/readyz\n", base)
	fmt.Fprintf(w, "  curl -fsS -o /dev/null -w '%%{http_code} %%{content_type}\\n' %s/openapi.json\n", base)
	fmt.Fprintf(w, "  curl -fsS -H 'Authorization: Bearer %s' %s/api/v2/integration\n", creds[1].token, base)
	payer := localfacilitator.DevAccounts()[0]
	fmt.Fprintf(w, "\nPay USD 0.010000 for a dispute-readiness report over x402 (Anvil account 0, a PUBLIC test key,\nfunded with 1000 test USDC by the local facilitator; payments go to %s):\n", devPayTo().Hex())
	fmt.Fprintf(w, "  go run ./tools/x402pay -key %s -d @docs/examples/readiness-request.json %s/api/x402/dispute-readiness\n",
		hexutil.Encode(crypto.FromECDSA(payer.Key)), base)
	fmt.Fprintf(w, "\nWalk a case draft from preparation to an opened case (docs/filings-walkthrough.md):\n")
	fmt.Fprintf(w, "  go run ./tools/demo -env %s\n", filepath.Join(cfg.Dir, "credentials.env"))
	fmt.Fprintf(w, "\nSigned case events for partner-dev are delivered to %s, verified\nagainst %s/api/webhooks/keys and printed here as \"webhook  | ...\" lines.\n", receiverURL, base)
	if len(cfg.Compat) > 0 {
		fmt.Fprintf(w, "\nCompatibility policy, from your environment, at the edge: %s\n(earlier routes such as %s/api/v2/cases/<id> answer with Deprecation, Sunset and Link; guide at %s/docs/migration)\n",
			strings.Join(cfg.Compat, " "), base, base)
	} else {
		fmt.Fprintf(w, "\nCompatibility announcements are off; to see them on earlier routes:\n  SERVICE_API_CANONICAL_ROUTES=true SERVICE_API_V2_CASES_GA=2026-01-15 make run\n")
	}
	fmt.Fprintf(w, "\nLogs: %s   Ctrl-C stops everything.\n", filepath.Join(cfg.Dir, "logs"))
}

// devPayTo receives the stack's readiness payments: Anvil account 1, so the
// payer (account 0) and the payee are both visible in the ledger.
func devPayTo() common.Address { return localfacilitator.DevAccounts()[1].Address }
