package draft_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/jcs"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current code")

// goldenDraft is one pinned digest vector: a preparation with fixed ids,
// rules and instant.
type goldenDraft struct {
	name string
	in   func() draft.PrepareInput
	ids  fixedIDs
	// digest is pinned here and in docs/filings-drafts.md, so a change to
	// the digest definition fails until both are updated on purpose.
	digest string
}

var goldenDrafts = []goldenDraft{
	{
		name: "v2_claimant_initiated_panel",
		in: func() draft.PrepareInput {
			in := twoParty()
			in.ConfirmationMode = draft.ConfirmInitiatorOnly
			in.Claim.AmountInDisputeMinor = 30_000_000
			in.Claim.Summary = "Wholesale order 417 (USD 300,000) was paid and never delivered."
			return in
		},
		ids:    fixedIDs{draftID: "dr_01JC4W8X2ZQ7", caseID: "cs_01JC4W8X30A1", feeID: "fee_01JC4W8X31B2"},
		digest: "ac58d602e387c0221a205701e9daa9c7efb42143ca913ef56945073d42641f70",
	},
	{
		name: "canonical_agent_only_micro",
		in: func() draft.PrepareInput {
			return draft.PrepareInput{
				Canonical:        true,
				ExternalCaseID:   "x402-pay-7f3a9c",
				CaseMode:         draft.CaseModeProceeding,
				IntakeMode:       draft.IntakeBilateralAPI,
				ConfirmationMode: draft.ConfirmAllParticipants,
				Procedure:        draft.Procedure{Profile: draft.ProfileFast},
				Participants: []draft.Participant{
					{ID: "buyer", Side: draft.SideClaimant, PrincipalID: "agent:buyer-3f9", PrincipalKind: draft.PrincipalAutonomousAgent, AgentID: "agt_buyer_3f9", AuthorizationMode: draft.AuthAgentCredential, Initiator: true},
					{ID: "seller", Side: draft.SideRespondent, PartnerID: otherPartner, PrincipalID: "agent:seller-77a", PrincipalKind: draft.PrincipalAutonomousAgent, AgentID: "agt_seller_77a", AuthorizationMode: draft.AuthAgentCredential},
				},
				Claim:                      draft.Claim{AmountInDisputeMinor: 18_000, Remedy: draft.RemedyCorpusAllocation, Summary: "Escrowed payment for dataset \"weather-eu-2026\"; the delivered file was truncated.", MicroTierConsent: true},
				ClaimantAcceptanceIdentity: "acct:ops@buyer.example",
				ExpiresIn:                  24 * time.Hour,
				TenantID:                   tenant,
				Environment:                environment,
				PartnerID:                  partner,
				CreatedBy:                  "cred_agent_buyer",
			}
		},
		ids:    fixedIDs{draftID: "dr_01JC5A0000AG", caseID: "cs_01JC5A0001AG", feeID: "fee_01JC5A0002AG"},
		digest: "e86ef63aa3ac96aa727d125e441161bd0588cf72e5e11d55a544045c5441f0c5",
	},
	{
		name: "v2_evaluation_bundled",
		in: func() draft.PrepareInput {
			return draft.PrepareInput{
				ExternalCaseID:   "acp-eval-2026-0042",
				CaseMode:         draft.CaseModeEvaluation,
				IntakeMode:       draft.IntakeBundledBilateral,
				ConfirmationMode: draft.ConfirmBundledAuthorizations,
				Procedure:        draft.Procedure{Profile: draft.ProfileEvaluation},
				Participants: []draft.Participant{
					{ID: "claimant-1", Side: draft.SideClaimant, PrincipalID: "org:atelier-lumière", PrincipalKind: draft.PrincipalOrganization, AuthorizationMode: draft.AuthPartnerCredential, Initiator: true},
					{ID: "respondent-1", Side: draft.SideRespondent, PartnerID: otherPartner, PrincipalID: "org:dépôt-central", PrincipalKind: draft.PrincipalOrganization, AuthorizationMode: draft.AuthBundledAuthorization},
					{ID: "respondent-2", Side: draft.SideRespondent, PrincipalID: "acct:j.okafor", PrincipalKind: draft.PrincipalIndividual, AgentID: "agt_okafor_1", AuthorizationMode: draft.AuthAgentCredential},
				},
				Claim: draft.Claim{Remedy: draft.RemedyDeclaratory, Summary: "Declare whether lot 12 conforms to the agreed specification."},
				Evaluation: &draft.Evaluation{
					ExternalEvaluationID: "eval-lot-12",
					Question: draft.Question{
						Text:     "Does lot 12 conform to specification S-7 as agreed on 2026-09-14?",
						Criteria: []string{"Moisture content at most 12%", "Grade A sorting, tolerance 2%"},
					},
					AllowedOutcomes: []string{"conforms", "does_not_conform", "not_determinable"},
					EvidencePolicy:  draft.EvidencePartySubmissions,
					ReviewPolicy:    draft.ReviewOnRequest,
				},
				TenantID:    tenant,
				Environment: "live",
				PartnerID:   partner,
				CreatedBy:   orchestrator,
			}
		},
		ids:    fixedIDs{draftID: "dr_01JC5B00EV01", caseID: "cs_01JC5B00EV02", feeID: "fee_01JC5B00EV03"},
		digest: "ec76c1267ca4e55da2ee46f122e6468a99ec27c17aec6e420c526d84a82a125b",
	},
}

// goldenFile is one file of testdata/golden: the digest, its preimage and
// the stored record side by side, for a reviewer to read at once.
type goldenFile struct {
	Now              time.Time       `json:"now"`
	Rules            goldenRules     `json:"rules"`
	DraftDigest      string          `json:"draftDigest"`
	EvaluationDigest string          `json:"evaluationDigest,omitempty"`
	Preimage         string          `json:"preimage"`
	Statements       []string        `json:"statements"`
	Record           json.RawMessage `json:"record"`
}

type goldenRules struct {
	Version string `json:"version"`
	Hash    string `json:"hash"`
}

func (g goldenDraft) prepare(t testing.TB) draft.Draft {
	t.Helper()
	d, err := draft.Prepare(g.in(), testRules, fixedNow, g.ids)
	require.NoError(t, err)
	return d
}

func TestGoldenDigests(t *testing.T) {
	for _, g := range goldenDrafts {
		t.Run(g.name, func(t *testing.T) {
			d := g.prepare(t)
			preimage := d.DigestPreimage()
			require.Equal(t, sha256Text(string(preimage)), d.Digest(), "the digest is the SHA-256 of the preimage")
			again, err := jcs.Canonicalize(json.RawMessage(preimage))
			require.NoError(t, err)
			require.Equal(t, string(preimage), string(again), "the preimage is canonical")

			record, err := json.Marshal(d)
			require.NoError(t, err)
			file := goldenFile{Now: fixedNow, Rules: goldenRules(testRules), DraftDigest: d.Digest(), Preimage: string(preimage), Record: record}
			if _, digest := d.Evaluation(); digest != "" {
				file.EvaluationDigest = digest
			}
			for _, c := range d.Confirmations() {
				file.Statements = append(file.Statements, c.Statement)
			}
			got, err := json.MarshalIndent(file, "", "  ")
			require.NoError(t, err)
			got = append(got, '\n')

			path := filepath.Join("testdata", "golden", g.name+".json")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -update to create the golden file")
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Fatalf("draft differs from %s (-want +got); if the change is deliberate, run go test -update, review the diff, and update the pinned digests here and in docs/filings-drafts.md:\n%s", path, diff)
			}
			require.Equal(t, g.digest, d.Digest(), "pinned digest")
		})
	}
}

func TestGoldenFilesHaveDrafts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	require.NoError(t, err)
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	var want []string
	for _, g := range goldenDrafts {
		want = append(want, g.name)
	}
	slices.Sort(want)
	require.Equal(t, want, names)
}

// TestDocumentationNamesTheVectors keeps docs/filings-drafts.md in step with
// the code: the pinned digests, every refusal code and the schedule.
func TestDocumentationNamesTheVectors(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "filings-drafts.md"))
	require.NoError(t, err)
	text := string(doc)
	for _, g := range goldenDrafts {
		require.Contains(t, text, g.digest, "digest of %s", g.name)
		require.Contains(t, text, g.name)
	}
	d := goldenDrafts[0].prepare(t)
	require.Contains(t, text, string(d.DigestPreimage()), "the first vector's preimage is printed in full")
	require.Contains(t, text, testRules.Hash)
	for _, code := range []draft.RefusalCode{
		draft.CodeDraftNotFound, draft.CodeDraftExpired, draft.CodeDigestMismatch, draft.CodeStatementMismatch,
		draft.CodeActorMismatch, draft.CodePrincipalMismatch, draft.CodeNotAParticipant, draft.CodeNotRequired,
		draft.CodeAlreadyConfirmed, draft.CodeDraftAlreadyOpened, draft.CodeWrongRouteFamily, draft.CodeForbidden,
		draft.CodeInvalidConfirmation, draft.CodeFeeAlreadyPaid,
	} {
		require.Contains(t, text, "`"+string(code)+"`")
	}
}
