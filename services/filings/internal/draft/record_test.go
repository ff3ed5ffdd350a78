package draft_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

// drafts in every state the store will keep.
func recordSamples(t *testing.T) map[string]draft.Draft {
	samples := map[string]draft.Draft{}
	for _, g := range goldenDrafts {
		samples[g.name] = g.prepare(t)
	}
	three := mustPrepare(t, threeParty())
	samples["one confirmation"] = confirm(t, three, "p-respondent", fixedNow.Add(time.Minute)).Draft
	opened := confirm(t, samples["one confirmation"], "p-claimant", fixedNow.Add(2*time.Minute)).Draft
	samples["opened"] = confirm(t, opened, "p-carrier", fixedNow.Add(3*time.Minute)).Draft

	consented, err := func() draft.Draft { return mustPrepare(t, bundled()) }().WithConsent("p-respondent", orchestratorOf(otherPartner), fixedNow, "consent_01JC5")
	require.NoError(t, err)
	samples["recorded consent"] = consented.Draft

	ready := confirm(t, collectFirst(t), "p-claimant", fixedNow).Draft
	ready = confirm(t, ready, "p-respondent", fixedNow).Draft
	samples["ready to open"] = ready
	paid, err := ready.WithFeePaid(fixedNow.Add(time.Hour))
	require.NoError(t, err)
	samples["opened after payment"] = paid.Draft

	legacy := threeParty()
	legacy.Legacy = true
	samples["legacy"] = mustPrepare(t, legacy)
	return samples
}

func TestRecordRoundTrips(t *testing.T) {
	for name, d := range recordSamples(t) {
		t.Run(name, func(t *testing.T) {
			got, err := roundTrip(d)
			require.NoError(t, err)
			if diff := cmp.Diff(d, got); diff != "" {
				t.Fatalf("round trip changed the draft (-want +got):\n%s", diff)
			}
			// Every getter, not only the encoding, survives.
			require.Equal(t, d.ID(), got.ID())
			require.Equal(t, d.ReservedCaseID(), got.ReservedCaseID())
			require.Equal(t, d.ExternalCaseID(), got.ExternalCaseID())
			require.Equal(t, d.Status(), got.Status())
			require.Equal(t, d.Digest(), got.Digest())
			require.True(t, d.CreatedAt().Equal(got.CreatedAt()))
			require.True(t, d.ExpiresAt().Equal(got.ExpiresAt()))
			require.True(t, d.OpenedAt().Equal(got.OpenedAt()))
			require.Equal(t, d.CreatedBy(), got.CreatedBy())
			require.Equal(t, d.Rules(), got.Rules())
			require.Equal(t, d.Fee().AmountMinor, got.Fee().AmountMinor)
			require.True(t, d.Fee().PaidAt.Equal(got.Fee().PaidAt))
			require.Equal(t, d.Fee().Status, got.Fee().Status)
			require.Equal(t, d.CaseMode(), got.CaseMode())
			require.Equal(t, d.IntakeMode(), got.IntakeMode())
			require.Equal(t, d.ConfirmationMode(), got.ConfirmationMode())
			require.Equal(t, d.Procedure(), got.Procedure())
			require.Equal(t, d.Participants(), got.Participants())
			require.Equal(t, d.Claim(), got.Claim())
			require.Equal(t, d.ClaimantAcceptanceIdentity(), got.ClaimantAcceptanceIdentity())
			require.Equal(t, d.TenantID(), got.TenantID())
			require.Equal(t, d.Environment(), got.Environment())
			require.Equal(t, d.PartnerID(), got.PartnerID())
			require.Equal(t, d.PreparedVia(), got.PreparedVia())
			wantEval, wantDigest := d.Evaluation()
			gotEval, gotDigest := got.Evaluation()
			require.Equal(t, wantEval, gotEval)
			require.Equal(t, wantDigest, gotDigest)
			require.Len(t, got.Confirmations(), len(d.Confirmations()))
			for i, c := range d.Confirmations() {
				g := got.Confirmations()[i]
				require.True(t, c.ConfirmedAt.Equal(g.ConfirmedAt))
				c.ConfirmedAt, g.ConfirmedAt = time.Time{}, time.Time{}
				require.Equal(t, c, g)
			}
			a, err := json.Marshal(d)
			require.NoError(t, err)
			b, err := json.Marshal(got)
			require.NoError(t, err)
			require.Equal(t, string(a), string(b), "byte-identical after a round trip")
		})
	}
}

func TestRecordRefusesCorruption(t *testing.T) {
	samples := recordSamples(t)
	edit := func(d draft.Draft, f func(map[string]any)) []byte {
		t.Helper()
		b, err := json.Marshal(d)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		f(m)
		b, err = json.Marshal(m)
		require.NoError(t, err)
		return b
	}
	fresh := samples["v2_claimant_initiated_panel"]
	opened := samples["opened"]
	evaluation := samples["v2_evaluation_bundled"]
	participant := func(m map[string]any, i int) map[string]any { return m["participants"].([]any)[i].(map[string]any) }
	confirmation := func(m map[string]any, i int) map[string]any { return m["confirmations"].([]any)[i].(map[string]any) }
	tests := map[string][]byte{
		"not JSON":         []byte("{"),
		"trailing data":    append(edit(fresh, func(map[string]any) {}), []byte(" {}")...),
		"unknown field":    edit(fresh, func(m map[string]any) { m["extra"] = true }),
		"duplicate member": append([]byte(`{"status":"opened",`), edit(fresh, func(map[string]any) {})[1:]...),
		"name in another case": edit(fresh, func(m map[string]any) {
			m["DraftID"] = m["draftId"]
			delete(m, "draftId")
		}),
		"other record version":  edit(fresh, func(m map[string]any) { m["recordVersion"] = 2 }),
		"other schema":          edit(fresh, func(m map[string]any) { m["schemaVersion"] = "case-draft-v3" }),
		"digest altered":        edit(fresh, func(m map[string]any) { m["draftDigest"] = strings.Repeat("0", 64) }),
		"term altered":          edit(fresh, func(m map[string]any) { participant(m, 1)["principalId"] = "org:someone-else" }),
		"amount altered":        edit(fresh, func(m map[string]any) { m["claim"].(map[string]any)["amountInDisputeMinor"] = 1 }),
		"fee altered":           edit(fresh, func(m map[string]any) { m["fee"].(map[string]any)["amountMinor"] = 1 }),
		"bad time":              edit(fresh, func(m map[string]any) { m["createdAt"] = "yesterday" }),
		"missing time":          edit(fresh, func(m map[string]any) { delete(m, "expiresAt") }),
		"unknown status":        edit(fresh, func(m map[string]any) { m["status"] = "closed" }),
		"unknown route":         edit(fresh, func(m map[string]any) { m["preparedVia"] = "v3" }),
		"status not implied":    edit(fresh, func(m map[string]any) { m["status"] = "ready_to_open" }),
		"opened without a time": edit(opened, func(m map[string]any) { delete(m, "openedAt") }),
		"time without opening":  edit(fresh, func(m map[string]any) { m["openedAt"] = "2026-11-02T10:00:00.000Z" }),
		"paid without a time":   edit(fresh, func(m map[string]any) { m["fee"].(map[string]any)["status"] = "paid" }),
		"confirmation missing":  edit(fresh, func(m map[string]any) { m["confirmations"] = m["confirmations"].([]any)[:1] }),
		"confirmation of someone else": edit(fresh, func(m map[string]any) {
			confirmation(m, 0)["participantId"] = "p-respondent"
		}),
		"required flag flipped": edit(fresh, func(m map[string]any) {
			confirmation(m, 1)["required"] = true
			confirmation(m, 1)["status"] = "pending"
		}),
		"confirmed without a record": edit(fresh, func(m map[string]any) { confirmation(m, 0)["status"] = "confirmed" }),
		"pending with a record": edit(opened, func(m map[string]any) {
			confirmation(m, 0)["status"] = "pending"
		}),
		"evaluation digest altered": edit(evaluation, func(m map[string]any) {
			m["evaluation"].(map[string]any)["evaluationDigest"] = strings.Repeat("1", 64)
		}),
		"evaluation altered": edit(evaluation, func(m map[string]any) {
			m["evaluation"].(map[string]any)["allowedOutcomes"] = []string{"yes", "no"}
		}),
	}
	for name, record := range tests {
		t.Run(name, func(t *testing.T) {
			var d draft.Draft
			require.ErrorIs(t, d.UnmarshalJSON(record), draft.ErrCorruptRecord)
			require.True(t, d.Equal(draft.Draft{}), "a refused record leaves the target alone")
		})
	}
}

func TestEqual(t *testing.T) {
	a := mustPrepare(t, twoParty())
	b := mustPrepare(t, twoParty())
	require.True(t, a.Equal(b))
	c := confirm(t, a, "p-claimant", fixedNow).Draft
	require.False(t, a.Equal(c))
	require.True(t, cmp.Equal(a, b))
}
