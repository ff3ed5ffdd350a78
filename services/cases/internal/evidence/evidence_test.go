package evidence_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/evidence"
)

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func filing() evidence.Facts {
	return evidence.Facts{Phase: evidence.PhaseFiling, Limits: evidence.LimitsFor(evidence.DefaultRules),
		Joined: map[string]bool{evidence.Claimant: true, evidence.Respondent: true}}
}

func in(p evidence.Phase) evidence.Facts {
	f := filing()
	f.Phase = p
	return f
}

func pdf(id, sum string, size int64) *evidence.Exhibit {
	return &evidence.Exhibit{ID: id, FileName: id + ".pdf", MediaType: "application/pdf", Size: size,
		SHA256: strings.Repeat(sum, 64), Description: "contract"}
}

func upload(side, id, sum string) evidence.Act {
	return evidence.Act{Kind: evidence.ActUpload, Side: side, ParticipantID: side + "-1", Upload: pdf(id, sum, 1000)}
}

func act(kind evidence.ActKind, side, exhibit string) evidence.Act {
	return evidence.Act{Kind: kind, Side: side, ParticipantID: side + "-1", ExhibitID: exhibit}
}

// must applies acts in order and fails on the first refusal.
func must(t *testing.T, s evidence.State, f evidence.Facts, acts ...evidence.Act) (evidence.State, []evidence.Note) {
	t.Helper()
	var notes []evidence.Note
	for _, a := range acts {
		out, err := evidence.Decide(s, f, a, t0)
		require.NoError(t, err, "%s", a.Kind)
		s, notes = out.State, out.Notes
	}
	return s, notes
}

func refusal(t *testing.T, err error) evidence.RefusalCode {
	t.Helper()
	var r *evidence.RefusalError
	require.True(t, errors.As(err, &r), "want a refusal, got %v", err)
	return r.Code
}

func TestAnUploadIsTheSidesOwnAndQuietUntilDisclosed(t *testing.T) {
	s, notes := must(t, evidence.State{}, filing(), upload(evidence.Claimant, "exh_1", "a"))
	assert.Empty(t, notes, "the other side may not learn an undisclosed exhibit exists")
	assert.Len(t, s.Visible(evidence.Claimant), 1)
	assert.Empty(t, s.Visible(evidence.Respondent))
	assert.Empty(t, s.Record())

	early := act(evidence.ActChallenge, evidence.Respondent, "exh_1")
	early.ChallengeID, early.Text = "ach_1", "forged"
	_, err := evidence.Decide(s, filing(), early, t0)
	assert.Equal(t, evidence.CodeExhibitNotFound, refusal(t, err), "the other side's undisclosed exhibit does not exist for it")

	s, notes = must(t, s, filing(), act(evidence.ActDisclose, evidence.Claimant, "exh_1"))
	require.Len(t, notes, 1)
	assert.Equal(t, evidence.EventDisclosed, notes[0].Type)
	assert.Len(t, s.Visible(evidence.Respondent), 1)
	assert.Equal(t, "exh_1", s.Record()[0].ID)
}

func TestOnlyTheOfferingSideDisclosesOrDescribes(t *testing.T) {
	s, _ := must(t, evidence.State{}, filing(), upload(evidence.Claimant, "exh_1", "a"), act(evidence.ActDisclose, evidence.Claimant, "exh_1"))
	describe := act(evidence.ActDescribe, evidence.Respondent, "exh_1")
	describe.Text = "a forged contract"
	_, err := evidence.Decide(s, filing(), describe, t0)
	assert.Equal(t, evidence.CodeNotOfferingSide, refusal(t, err))
	_, err = evidence.Decide(s, filing(), act(evidence.ActDisclose, evidence.Claimant, "exh_1"), t0)
	assert.Equal(t, evidence.CodeAlreadyDisclosed, refusal(t, err))
}

func TestARetriedUploadOfTheSameBytesIsAReplay(t *testing.T) {
	s, _ := must(t, evidence.State{}, filing(), upload(evidence.Claimant, "exh_1", "a"))
	retry := upload(evidence.Claimant, "exh_2", "a")
	retry.Upload.FileName = "exh_1.pdf"
	out, err := evidence.Decide(s, filing(), retry, t0)
	require.NoError(t, err)
	assert.True(t, out.Replay)
	assert.Equal(t, "exh_1", out.Exhibit.ID)
	assert.Len(t, out.State.Exhibits, 1)

	renamed := upload(evidence.Claimant, "exh_3", "a")
	renamed.Upload.FileName = "other.pdf"
	_, err = evidence.Decide(s, filing(), renamed, t0)
	assert.Equal(t, evidence.CodeDuplicateExhibit, refusal(t, err))

	// The same bytes from the other side are its own exhibit.
	_, err = evidence.Decide(s, filing(), upload(evidence.Respondent, "exh_4", "a"), t0)
	assert.NoError(t, err)
}

func TestTheRulesBoundEachSidesExhibits(t *testing.T) {
	f := filing()
	f.Limits = evidence.Limits{MaxFileBytes: 1500, MaxSideBytes: 2400, MaxSideFiles: 2, MaxTextLength: 100}
	big := upload(evidence.Claimant, "exh_big", "f")
	big.Upload.Size = 1501
	_, err := evidence.Decide(evidence.State{}, f, big, t0)
	assert.Equal(t, evidence.CodeFileTooLarge, refusal(t, err))

	s, _ := must(t, evidence.State{}, f, upload(evidence.Claimant, "exh_1", "a"))
	second := upload(evidence.Claimant, "exh_2", "b")
	second.Upload.Size = 1500
	_, err = evidence.Decide(s, f, second, t0)
	assert.Equal(t, evidence.CodeSideQuotaExceeded, refusal(t, err))

	s, _ = must(t, s, f, upload(evidence.Claimant, "exh_2", "b"))
	third := upload(evidence.Claimant, "exh_3", "c")
	third.Upload.Size = 100
	_, err = evidence.Decide(s, f, third, t0)
	assert.Equal(t, evidence.CodeExhibitLimit, refusal(t, err))
	_, err = evidence.Decide(s, f, upload(evidence.Respondent, "exh_4", "d"), t0)
	assert.NoError(t, err, "the limits are per side")
}

func TestAChallengeIsAnsweredByTheOfferingSideAndResolvedByTheTribunal(t *testing.T) {
	s, _ := must(t, evidence.State{}, filing(), upload(evidence.Claimant, "exh_1", "a"), act(evidence.ActDisclose, evidence.Claimant, "exh_1"))

	own := act(evidence.ActChallenge, evidence.Claimant, "exh_1")
	own.ChallengeID, own.Text = "ach_0", "mine"
	_, err := evidence.Decide(s, filing(), own, t0)
	assert.Equal(t, evidence.CodeOwnExhibit, refusal(t, err))

	ch := act(evidence.ActChallenge, evidence.Respondent, "exh_1")
	ch.ChallengeID, ch.Text = "ach_1", "the signature was pasted in"
	s, notes := must(t, s, filing(), ch)
	assert.Equal(t, evidence.EventChallenged, notes[0].Type)
	assert.Equal(t, evidence.Claimant, notes[0].ActionBy)
	assert.Equal(t, evidence.Challenged, s.Exhibits[0].Authenticity)

	again := ch
	again.ChallengeID = "ach_2"
	_, err = evidence.Decide(s, filing(), again, t0)
	assert.Equal(t, evidence.CodeChallengePending, refusal(t, err))

	resolve := evidence.Act{Kind: evidence.ActResolveChallenge, TribunalMember: "cred_rev", ExhibitID: "exh_1", ChallengeID: "ach_1", Text: "the metadata agree", Uphold: false}
	_, err = evidence.Decide(s, filing(), resolve, t0)
	assert.Equal(t, evidence.CodeEvidenceStage, refusal(t, err), "the tribunal decides once the record is closed")

	ans := act(evidence.ActAnswerChallenge, evidence.Respondent, "exh_1")
	ans.ChallengeID, ans.Text = "ach_1", "no"
	_, err = evidence.Decide(s, filing(), ans, t0)
	assert.Equal(t, evidence.CodeNotOfferingSide, refusal(t, err))
	ans.Side, ans.ParticipantID, ans.Text = evidence.Claimant, "claimant-1", "the original is in our files"
	s, _ = must(t, s, in(evidence.PhaseConfirmation), ans)
	assert.Equal(t, evidence.Answered, s.Exhibits[0].Authenticity)
	_, err = evidence.Decide(s, filing(), ans, t0)
	assert.Equal(t, evidence.CodeChallengeAnswered, refusal(t, err))

	s, notes = must(t, s, in(evidence.PhaseDecision), resolve)
	assert.Equal(t, evidence.EventChallengeResolved, notes[0].Type)
	assert.Equal(t, evidence.Authentic, s.Exhibits[0].Authenticity)
	assert.Equal(t, 0, s.Pending())
	_, err = evidence.Decide(s, in(evidence.PhaseDecision), resolve, t0)
	assert.Equal(t, evidence.CodeChallengeResolved, refusal(t, err))
}

func TestDefectReportsAreResolvedByTheTribunal(t *testing.T) {
	s, _ := must(t, evidence.State{}, filing(), upload(evidence.Claimant, "exh_1", "a"))
	report := act(evidence.ActReportDefect, evidence.Claimant, "exh_1")
	report.DefectID, report.DefectKind, report.Text = "def_1", evidence.DefectPageCount, "the PDF has 12 pages, not 11"
	s, notes := must(t, s, filing(), report)
	assert.Equal(t, evidence.EventDefectReported, notes[0].Type)
	assert.Equal(t, 1, s.Pending())

	resolve := evidence.Act{Kind: evidence.ActResolveDefect, TribunalMember: "cred_rev", ExhibitID: "exh_1", DefectID: "def_1", Resolution: evidence.DefectCorrected, Text: "12 pages"}
	_, err := evidence.Decide(s, in(evidence.PhaseDecision), resolve, t0)
	assert.Equal(t, evidence.CodeExhibitNotFound, refusal(t, err), "the tribunal sees only the record: an undisclosed exhibit is not in it")

	s, _ = must(t, s, filing(), act(evidence.ActDisclose, evidence.Claimant, "exh_1"))
	s, _ = must(t, s, in(evidence.PhaseDecision), resolve)
	assert.True(t, s.Defects[0].Resolved())
	_, err = evidence.Decide(s, in(evidence.PhaseDecision), resolve, t0)
	assert.Equal(t, evidence.CodeDefectResolved, refusal(t, err))
}

func TestNothingChangesOnceTheRecordIsFrozenOrTheCaseEnded(t *testing.T) {
	s, _ := must(t, evidence.State{}, filing(), upload(evidence.Claimant, "exh_1", "a"))
	_, err := evidence.Decide(s, in(evidence.PhaseConfirmation), act(evidence.ActDisclose, evidence.Claimant, "exh_1"), t0)
	assert.Equal(t, evidence.CodeEvidenceStage, refusal(t, err))
	_, err = evidence.Decide(s, in(evidence.PhaseConfirmation), upload(evidence.Claimant, "exh_2", "b"), t0)
	assert.Equal(t, evidence.CodeEvidenceStage, refusal(t, err))
	_, err = evidence.Decide(s, in(evidence.PhaseEnded), act(evidence.ActDisclose, evidence.Claimant, "exh_1"), t0)
	assert.Equal(t, evidence.CodeCaseClosed, refusal(t, err))

	f := filing()
	f.Joined[evidence.Respondent] = false
	_, err = evidence.Decide(s, f, upload(evidence.Respondent, "exh_3", "c"), t0)
	assert.Equal(t, evidence.CodeEvidenceStage, refusal(t, err))
}

func TestInvalidActsAreRefusedFirst(t *testing.T) {
	for name, a := range map[string]evidence.Act{
		"no side":             {Kind: evidence.ActUpload, Upload: pdf("exh_1", "a", 1)},
		"no upload":           {Kind: evidence.ActUpload, Side: evidence.Claimant, ParticipantID: "p"},
		"bad digest":          {Kind: evidence.ActUpload, Side: evidence.Claimant, ParticipantID: "p", Upload: &evidence.Exhibit{ID: "x", FileName: "a", MediaType: "text/plain", Size: 1, SHA256: "ab"}},
		"empty grounds":       {Kind: evidence.ActChallenge, Side: evidence.Respondent, ParticipantID: "p", ExhibitID: "exh_1", ChallengeID: "c"},
		"unknown defect kind": {Kind: evidence.ActReportDefect, Side: evidence.Respondent, ParticipantID: "p", ExhibitID: "exh_1", DefectID: "d", DefectKind: "font", Text: "x"},
		"unknown act":         {Kind: "delete_exhibit", Side: evidence.Claimant, ParticipantID: "p", ExhibitID: "exh_1"},
		"long description":    {Kind: evidence.ActDescribe, Side: evidence.Claimant, ParticipantID: "p", ExhibitID: "exh_1", Text: strings.Repeat("x", 4001)},
	} {
		_, err := evidence.Decide(evidence.State{}, filing(), a, t0)
		assert.Equal(t, evidence.CodeInvalidAct, refusal(t, err), name)
	}
}
