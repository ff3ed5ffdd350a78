package respond_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/services/cases/internal/awarddoc"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// claimantActs takes an act of the claimant's side through the flow, as
// its partner's API call does.
func (s *stack) claimantActs(t testing.TB, id string, act procedure.Act, docs ...store.Document) {
	t.Helper()
	act.ParticipantID = "p-claimant"
	_, err := caseflow.New(s.cases, nil).Act(context.Background(), id, act, docs...)
	require.NoError(t, err)
}

// joinAndAnswer signs in, joins and files the answer on the page: the case
// is in its evidence round.
func (s *stack) joinAndAnswer(t testing.TB, o opened) string {
	t.Helper()
	session := s.signIn(t, o)
	require.Equal(t, http.StatusSeeOther, s.post(t, "/respond/"+o.id+"/join", session, url.Values{"csrf": {s.csrf(t, o, session)}}, sameOrigin...).status)
	r := s.post(t, "/respond/"+o.id+"/answer", session, url.Values{"csrf": {s.csrf(t, o, session)}, "text": {"Our answer."}}, sameOrigin...)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	return session
}

// formOf reads the hidden fields of the case page's form with the given
// id: its CSRF token, participant and minted id.
func (s *stack) formOf(t testing.TB, o opened, session, form string) url.Values {
	t.Helper()
	page := s.get(t, "/respond/"+o.id, session)
	require.Equal(t, http.StatusOK, page.status)
	m := regexp.MustCompile(`(?s)<form id="` + form + `"[^>]*>(.*?)</form>`).FindStringSubmatch(page.body)
	require.NotNil(t, m, "the case page offers the form %s", form)
	v := url.Values{}
	for _, f := range regexp.MustCompile(`<input type="hidden" name="([a-zA-Z]+)" value="([^"]*)">`).FindAllStringSubmatch(m[1], -1) {
		v.Set(f[1], f[2])
	}
	return v
}

func with(v url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = vs
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Set(kv[i], kv[i+1])
	}
	return out
}

// The whole case on the page: the respondent reads the claimant's message
// and marks it read, posts one, files and amends a submission, confirms
// the record, and reads the award. Each form sent twice acts once.
func TestTheRespondentTakesPartInTheWholeCase(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	session := s.joinAndAnswer(t, o)
	base := "/respond/" + o.id

	s.claimantActs(t, o.id, procedure.Act{Kind: procedure.ActPostMessage, MessageID: "msg_claimant1", Digest: digest("Please send the tracking record.")},
		store.Document{Digest: digest("Please send the tracking record."), Content: []byte("Please send the tracking record.")})
	page := s.get(t, base, session)
	require.Contains(t, page.body, "Please send the tracking record.")
	require.Contains(t, page.body, `class="unread"`)
	r := s.post(t, base+"/messages/read", session, s.formOf(t, o, session, "mark-read"), sameOrigin...)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.NotContains(t, s.get(t, base, session).body, `class="unread"`)

	msg := with(s.formOf(t, o, session, "message"), "text", "Attached below.\r\nRegards")
	for range 2 { // a double click
		r = s.post(t, base+"/messages", session, msg, sameOrigin...)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
	}
	require.Contains(t, s.get(t, base, session).body, "Attached below.\nRegards")

	sub := with(s.formOf(t, o, session, "submission"), "text", "Exhibit list: the tracking record.")
	for range 2 {
		r = s.post(t, base+"/submissions", session, sub, sameOrigin...)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
	}
	subID := regexp.MustCompile(`data-submission="(sub_[0-9a-f]+)" data-side="respondent"`).FindStringSubmatch(s.get(t, base, session).body)
	require.NotNil(t, subID)
	amend := url.Values{"csrf": {s.csrf(t, o, session)}, "participantId": {"p-respondent"}, "text": {"Exhibit list: the tracking record, page 2."}}
	for range 2 {
		r = s.post(t, base+"/submissions/"+subID[1]+"/amend", session, amend, sameOrigin...)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
	}
	require.Contains(t, s.get(t, base, session).body, "the tracking record, page 2.")
	require.Equal(t, []string{"opened", "respondent_joined", "stage_opened", "answer_filed", "stage_opened",
		"message_posted", "message_posted", "submission_filed", "submission_amended"}, s.docket(t, o.id))

	// The claimant files its submission: the round is complete and the
	// record awaits confirmation.
	s.claimantActs(t, o.id, procedure.Act{Kind: procedure.ActFileSubmission, SubmissionID: "sub_claimant1", Digest: digest("Invoice.")},
		store.Document{Digest: digest("Invoice."), Content: []byte("Invoice.")})
	page = s.get(t, base, session)
	require.Contains(t, page.body, `id="record"`)
	require.Contains(t, page.body, "Invoice.", "the other side's submission")
	require.NotContains(t, page.body, `id="submission"`, "the round is closed")
	confirm := s.formOf(t, o, session, "confirm-record")
	for range 2 {
		r = s.post(t, base+"/record/confirm", session, confirm, sameOrigin...)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
	}
	s.claimantActs(t, o.id, procedure.Act{Kind: procedure.ActConfirmRecord})
	docket := s.docket(t, o.id)
	require.Equal(t, []string{"submission_filed", "record_confirmation_requested", "record_confirmation_given", "record_confirmed",
		"evidence_export_ready", "evidence_export_ready"}, docket[len(docket)-6:])
	require.Contains(t, s.get(t, base, session).body, `data-side="respondent">The respondent side confirmed`)

	// No award yet: its artifacts are not there.
	require.Equal(t, "award_not_issued", s.get(t, base+"/award/json", session).refusal)
	issueAward(t, s, o.id)
	page = s.get(t, base, session)
	require.Contains(t, page.body, `id="award-outcome">claim_upheld<`)
	html := string(awardPage(t, o.id))
	for kind, want := range map[string]string{"json": `{"award":"test"}`, "html": html, "pdf": "%PDF-1.7", "attestation": "eyJ.sig"} {
		r := s.get(t, base+"/award/"+kind, session)
		require.Equal(t, http.StatusOK, r.status, kind)
		require.Equal(t, want, r.body, kind)
		require.Equal(t, http.StatusForbidden, s.get(t, base+"/award/"+kind, "").status, "no session, no award")
	}
	// The html artifact is a document of its own: a policy that admits its
	// one style element by hash, and nothing else.
	_, rest, _ := strings.Cut(html, "<style>")
	css, _, _ := strings.Cut(rest, "</style>")
	sum := sha256.Sum256([]byte(css))
	require.Equal(t, "default-src 'none'; style-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'; sandbox",
		s.get(t, base+"/award/html", session).header.Get("Content-Security-Policy"))
	require.Equal(t, webpage.ContentSecurityPolicy, s.get(t, base+"/award/json", session).header.Get("Content-Security-Policy"), "the others keep the page's")
}

// awardPage is the html artifact of an award of case id, as awarddoc
// renders every award's: a claim upheld with a payment, in the sandbox.
func awardPage(t testing.TB, id string) []byte {
	t.Helper()
	d := award.Document{
		SchemaVersion: award.SchemaAward, AwardID: "award_1", CaseID: id, ExternalCaseID: "ext-" + id, Environment: "sandbox", CaseMode: "proceeding",
		Rules: award.Rules{Version: "pcourt-rules-2026-11", Hash: digest("rules")},
		Parties: []award.Party{{Side: "claimant", ParticipantID: "p-claimant", PrincipalID: "org-alpha"},
			{Side: "respondent", ParticipantID: "p-respondent", PrincipalID: "org-beta"}},
		Outcome:   award.OutcomeClaimUpheld,
		Remedies:  []award.Remedy{{Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant", AmountMinor: 12000, Currency: "USD", DueBy: "2026-12-10T00:00:00.000Z"}},
		Reasons:   "The parcel was never delivered: the carrier's log ends at the depot.\n\nThe respondent shall refund the price.",
		Citations: []award.Citation{{ItemID: "answer", Digest: digest("answer"), Pinpoint: "paragraph 1"}},
		Tribunal: award.Tribunal{
			Adjudicator: award.Member{MemberID: "mbr_adjudicator_1", Kind: "autonomous_agent"},
			Configuration: award.Configuration{Provider: "rubric", Model: "rubric-1", ModelVersion: "2026-08-01", InstructionsDigest: digest("instructions"),
				OutputSchemaVersion: award.SchemaProposal, Tools: []string{}},
			Runs:            []award.Run{{RunID: "run_1", ConfigurationDigest: digest("configuration"), InputDigest: digest("record"), OutputDigest: digest("proposal"), Status: "completed"}},
			Reviewer:        award.Member{MemberID: "mbr_reviewer_1", Kind: "individual"},
			ReviewerOpinion: "agree",
		},
		IssuedAt: "2026-11-10T12:30:45.123Z",
	}
	b, err := award.Canonical(d)
	require.NoError(t, err)
	page, err := awarddoc.HTML(d, award.Hash(b))
	require.NoError(t, err)
	return page
}

// issueAward records an issued award with its artifacts, as the
// tribunal's issuing step does.
func issueAward(t testing.TB, s *stack, id string) {
	t.Helper()
	docs := map[string]string{"json": `{"award":"test"}`, "html": string(awardPage(t, id)), "pdf": "%PDF-1.7", "attestation": "eyJ.sig"}
	var stored []store.Document
	for _, body := range docs {
		stored = append(stored, store.Document{Digest: digest(body), Content: []byte(body)})
	}
	_, err := caseflow.New(s.cases, nil).Change(context.Background(), id, func(c procedure.Case) (procedure.Outcome, error) {
		c.Tribunal.Stage = tribunal.StageAwarded // the store keeps a tribunal state that has started
		c.Tribunal.Award = &tribunal.Issued{AwardID: "award_1", AwardHash: digest(docs["json"]), IssuedAt: time.Now().UTC(), Outcome: "claim_upheld",
			HTMLDigest: digest(docs["html"]), PDFDigest: digest(docs["pdf"]), AttestationDigest: digest(docs["attestation"]), KeyID: "key-1"}
		return procedure.Outcome{Case: c, Quiet: true}, nil
	}, stored...)
	require.NoError(t, err)
}

// A termination the claimant asks for is confirmed on the page; one the
// respondent asks for, sent twice, is asked once.
func TestTerminationOnThePage(t *testing.T) {
	s := newStack(t)

	o := s.open(t)
	session := s.joinAndAnswer(t, o)
	request := s.formOf(t, o, session, "request-termination")
	for range 2 {
		r := s.post(t, "/respond/"+o.id+"/termination", session, request, sameOrigin...)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
	}
	require.Equal(t, "termination_requested", last(s.docket(t, o.id)))
	require.Contains(t, s.get(t, "/respond/"+o.id, session).body, "You asked to end the case")

	o = s.open(t)
	session = s.joinAndAnswer(t, o)
	s.claimantActs(t, o.id, procedure.Act{Kind: procedure.ActRequestTermination, TerminationID: "term_claimant1"})
	page := s.get(t, "/respond/"+o.id, session)
	require.Contains(t, page.body, "The claimant side asked to end the case")
	r := s.post(t, "/respond/"+o.id+"/termination/term_claimant1/confirm", session, s.formOf(t, o, session, "confirm-termination"), sameOrigin...)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	require.Equal(t, "terminated", last(s.docket(t, o.id)))
	page = s.get(t, "/respond/"+o.id, session)
	require.Contains(t, page.body, "The case has ended.")
	require.NotContains(t, page.body, `id="message"`, "a terminated case takes no messages")
}

func last(s []string) string { return s[len(s)-1] }

// Every refused act of taking part answers a page with its status and
// code, and changes nothing.
func TestRefusedActsOfTakingPartChangeNothing(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	session := s.joinAndAnswer(t, o)
	msg := with(s.formOf(t, o, session, "message"), "text", "Hello.")
	sub := with(s.formOf(t, o, session, "submission"), "text", "A submission.")
	csrf := msg.Get("csrf")
	other := s.open(t)
	otherSession := s.joinAndAnswer(t, other)
	otherCSRF := s.csrf(t, other, otherSession)
	fresh := s.open(t) // joined, not answered: no round open
	freshSession := s.signIn(t, fresh)
	require.Equal(t, http.StatusSeeOther, s.post(t, "/respond/"+fresh.id+"/join", freshSession, url.Values{"csrf": {s.csrf(t, fresh, freshSession)}}, sameOrigin...).status)
	freshCSRF := s.csrf(t, fresh, freshSession)

	base := "/respond/" + o.id
	for _, tc := range []struct {
		name    string
		path    string
		session string
		form    url.Values
		headers []string
		status  int
		refusal string
	}{
		{"a message without a session", base + "/messages", "", msg, sameOrigin, http.StatusForbidden, "no_session"},
		{"a message with another case's session", base + "/messages", otherSession, with(msg, "csrf", otherCSRF), sameOrigin, http.StatusForbidden, "no_session"},
		{"a message with a wrong CSRF token", base + "/messages", session, with(msg, "csrf", otherCSRF), sameOrigin, http.StatusForbidden, "csrf_mismatch"},
		{"a message from another site", base + "/messages", session, msg, []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"}, http.StatusForbidden, "cross_origin"},
		{"a message without the form's id", base + "/messages", session, with(msg, "formId", ""), sameOrigin, http.StatusBadRequest, "invalid_act"},
		{"an empty message", base + "/messages", session, with(msg, "text", " "), sameOrigin, http.StatusBadRequest, "invalid_act"},
		{"a message for the claimant", base + "/messages", session, with(msg, "participantId", "p-claimant"), sameOrigin, http.StatusForbidden, "forbidden"},
		{"marking read a message the case lacks", base + "/messages/read", session, url.Values{"csrf": {csrf}, "readThrough": {"msg_nothere"}}, sameOrigin, http.StatusNotFound, "message_not_found"},
		{"a submission with another case's session", base + "/submissions", otherSession, with(sub, "csrf", otherCSRF), sameOrigin, http.StatusForbidden, "no_session"},
		{"a submission with a wrong CSRF token", base + "/submissions", session, with(sub, "csrf", "x"), sameOrigin, http.StatusForbidden, "csrf_mismatch"},
		{"a submission before the round opens", "/respond/" + fresh.id + "/submissions", freshSession, with(sub, "csrf", freshCSRF), sameOrigin, http.StatusConflict, "stage_closed"},
		{"amending a submission the side lacks", base + "/submissions/sub_nothere/amend", session, url.Values{"csrf": {csrf}, "text": {"New."}}, sameOrigin, http.StatusNotFound, "submission_not_found"},
		{"confirming the record before its stage", base + "/record/confirm", session, url.Values{"csrf": {csrf}}, sameOrigin, http.StatusConflict, "stage_closed"},
		{"confirming the record with a wrong CSRF token", base + "/record/confirm", session, url.Values{"csrf": {"x"}}, sameOrigin, http.StatusForbidden, "csrf_mismatch"},
		{"a termination without the form's id", base + "/termination", session, url.Values{"csrf": {csrf}}, sameOrigin, http.StatusBadRequest, "invalid_act"},
		{"a termination with another case's session", base + "/termination", otherSession, url.Values{"csrf": {otherCSRF}, "formId": {"term_0123456789abcdef01234567"}}, sameOrigin, http.StatusForbidden, "no_session"},
		{"confirming a termination nobody asked for", base + "/termination/term_nothere/confirm", session, url.Values{"csrf": {csrf}}, sameOrigin, http.StatusNotFound, "termination_request_not_found"},
		{"an award artifact of an unknown kind", base + "/award/exe", session, url.Values{}, sameOrigin, http.StatusNotFound, "not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.unchanged(t, func() {
				var r reply
				if strings.Contains(tc.path, "/award/") {
					r = s.get(t, tc.path, tc.session)
				} else {
					r = s.post(t, tc.path, tc.session, tc.form, tc.headers...)
				}
				require.Equal(t, tc.status, r.status, r.body)
				require.Equal(t, tc.refusal, r.refusal, r.body)
				requirePolicyHeaders(t, r)
			})
		})
	}
}

// A message to a terminated case is refused: the stage is closed for it.
func TestATerminatedCaseRefusesMessages(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	session := s.joinAndAnswer(t, o)
	msg := with(s.formOf(t, o, session, "message"), "text", "Hello.")
	s.claimantActs(t, o.id, procedure.Act{Kind: procedure.ActRequestTermination, TerminationID: "term_c1"})
	_, err := caseflow.New(s.cases, nil).Act(context.Background(), o.id, procedure.Act{Kind: procedure.ActConfirmTermination, ParticipantID: "p-respondent", TerminationID: "term_c1"})
	require.NoError(t, err)
	s.unchanged(t, func() {
		r := s.post(t, "/respond/"+o.id+"/messages", session, msg, sameOrigin...)
		require.Equal(t, http.StatusConflict, r.status, r.body)
		require.Equal(t, "case_closed", r.refusal)
		require.Contains(t, r.body, "Back to the case")
	})
}

// The docket is paged: the latest page first, with a link to older ones.
func TestTheDocketIsPaged(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	session := s.joinAndAnswer(t, o)
	for i := range 55 {
		text := "note " + strings.Repeat("x", i+1)
		s.claimantActs(t, o.id, procedure.Act{Kind: procedure.ActPostMessage, MessageID: "msg_c" + strings.Repeat("x", i+1), Digest: digest(text)},
			store.Document{Digest: digest(text), Content: []byte(text)})
	}
	page := s.get(t, "/respond/"+o.id, session)
	require.Contains(t, page.body, "Events 11–60")
	require.Contains(t, page.body, `id="docket-older" href="/respond/`+o.id+`?docket=1#docket"`)
	older := s.get(t, "/respond/"+o.id+"?docket=1", session)
	require.Contains(t, older.body, "Events 1–50")
	require.Contains(t, older.body, `<li data-type="opened" value="1">`)
	require.Contains(t, older.body, `id="docket-newer"`)
}

func digest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}
