package respond_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// lane is a stage of the timeline as the page draws it: its data
// attributes, "" for an instant it has not.
type lane struct {
	Stage, Round, State, Opened, Deadline, Closed string
}

var (
	laneGroup = regexp.MustCompile(`<g data-stage="([a-z_]+)" data-round="(\d+)" data-state="([a-z_]+)" data-opened="([^"]+)" data-deadline="([^"]+)"(?: data-closed="([^"]+)")?>`)
	markGroup = regexp.MustCompile(`<g data-mark="([a-z_]+)" data-at="([^"]+)">`)
	todayLine = regexp.MustCompile(`<line class="today" data-today="([^"]+)"`)
)

// drawn reads the timeline of a case page: its lanes, its milestones by
// key, and today.
func drawn(t testing.TB, page string) ([]lane, map[string]string, time.Time) {
	t.Helper()
	var lanes []lane
	for _, m := range laneGroup.FindAllStringSubmatch(page, -1) {
		lanes = append(lanes, lane{m[1], m[2], m[3], m[4], m[5], m[6]})
	}
	marks := map[string]string{}
	for _, m := range markGroup.FindAllStringSubmatch(page, -1) {
		marks[m[1]] = m[2]
	}
	m := todayLine.FindStringSubmatch(page)
	require.NotNil(t, m, "the timeline marks today")
	today, err := time.Parse(time.RFC3339Nano, m[1])
	require.NoError(t, err)
	return lanes, marks, today
}

// apiCase is what the claimant's partner reads of the case through the
// API: the case, the deadline windows it is pinned to, and the deadline
// each event of its docket carried, by type, in order.
type apiCase struct {
	OpenedAt, ClosedAt string
	Stage              struct{ Kind, OpenedAt, DeadlineAt string }
	Participants       []struct {
		ParticipantID, JoinedAt string
	}
	Answer  *struct{ FiledAt string }
	Windows map[string]int64
	Told    map[string][]string
}

func (s *stack) apiRead(t testing.TB, path string, out any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.url+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.claimant)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, path)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&struct{ Data any }{out}))
}

func (s *stack) apiCase(t testing.TB, id string) apiCase {
	t.Helper()
	var c apiCase
	s.apiRead(t, "/api/cases/"+id, &c)
	var rules struct{ Windows map[string]int64 }
	s.apiRead(t, "/api/disputes/"+id+"/rules", &rules) // the rules a case is pinned to are read on the website route
	c.Windows = rules.Windows
	var docket struct {
		Events []struct{ Type, DeadlineAt string }
	}
	s.apiRead(t, "/api/cases/"+id+"/events", &docket)
	c.Told = map[string][]string{}
	for _, e := range docket.Events {
		c.Told[e.Type] = append(c.Told[e.Type], e.DeadlineAt)
	}
	return c
}

// after is at plus a window of the case's rules, as an instant is written.
func (c apiCase) after(t testing.TB, at, window string) string {
	t.Helper()
	from, err := time.Parse(time.RFC3339Nano, at)
	require.NoError(t, err)
	secs, ok := c.Windows[window+"Seconds"]
	require.True(t, ok, window)
	return procedure.Timestamp(from.Add(time.Duration(secs) * time.Second))
}

// The case page's timeline draws the case's own stages and deadlines, as
// the API tells them to the claimant's partner: the deadline each stage's
// entry event carried (opened, stage_opened, record_confirmation_requested),
// the open stage's deadline, the instants the respondent joined and
// answered as the closings, the stages to come projected window after
// window from the open stage's deadline by the rules the case is pinned
// to; and the record closing and the award as milestones. Today is the
// page's own clock. Every lane is the procedure's own timeline of the
// stored case, and the table under the chart says the same dates.
func TestTheTimelineDrawsTheCasesOwnDeadlines(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	session := s.signIn(t, o)

	before := time.Now().UTC()
	page := s.get(t, "/respond/"+o.id, session)
	after := time.Now().UTC()
	require.Equal(t, http.StatusOK, page.status)
	lanes, marks, today := drawn(t, page.body)
	c := s.apiCase(t, o.id)
	join := c.Stage.DeadlineAt
	require.Equal(t, []string{join}, c.Told["opened"], "the opened event carried the joining deadline")
	answerDue := c.after(t, join, "answer")
	roundDue := c.after(t, answerDue, "evidenceRound")
	require.Equal(t, []lane{
		{"respondent_joining", "0", "open", c.OpenedAt, join, ""},
		{"answer", "0", "to_come", join, answerDue, ""},
		{"evidence", "1", "to_come", answerDue, roundDue, ""},
		{"record_confirmation", "0", "to_come", roundDue, c.after(t, roundDue, "recordConfirmation"), ""},
	}, lanes, "awaiting the respondent")
	require.Equal(t, map[string]string{"opened": c.OpenedAt}, marks)
	require.False(t, today.Before(before.Truncate(time.Millisecond)) || today.After(after), "today is the page's clock: %s", today)
	s.sameAsTheProcedure(t, o.id, lanes)
	require.Contains(t, page.body, "to come only if the respondent joins by the joining deadline", "the answer stage needs the join")
	requireRow(t, page.body, "respondent_joining", join, "open now, until")

	require.Equal(t, http.StatusSeeOther, s.post(t, "/respond/"+o.id+"/join", session, url.Values{"csrf": {s.csrf(t, o, session)}}, sameOrigin...).status)
	r := s.post(t, "/respond/"+o.id+"/answer", session, url.Values{"csrf": {s.csrf(t, o, session)}, "text": {"Our answer."}}, sameOrigin...)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	page = s.get(t, "/respond/"+o.id, session)
	lanes, marks, _ = drawn(t, page.body)
	c = s.apiCase(t, o.id)
	require.Equal(t, map[string]string{"opened": c.OpenedAt}, marks, "joining and answering are no milestones")
	var joined string
	for _, p := range c.Participants {
		if p.ParticipantID == "p-respondent" {
			joined = p.JoinedAt
		}
	}
	require.NotEmpty(t, joined)
	require.NotNil(t, c.Answer)
	require.Equal(t, "evidence", c.Stage.Kind)
	require.Equal(t, []string{c.after(t, joined, "answer"), c.Stage.DeadlineAt}, c.Told["stage_opened"], "the answer's and the round's deadlines, as told")
	require.Equal(t, []lane{
		{"respondent_joining", "0", "past", c.OpenedAt, join, joined},
		{"answer", "0", "past", joined, c.Told["stage_opened"][0], c.Answer.FiledAt},
		{"evidence", "1", "open", c.Answer.FiledAt, c.Told["stage_opened"][1], ""},
		{"record_confirmation", "0", "to_come", c.Stage.DeadlineAt, c.after(t, c.Stage.DeadlineAt, "recordConfirmation"), ""},
	}, lanes, "in the evidence round")
	require.Equal(t, c.Stage.OpenedAt, c.Answer.FiledAt, "the round opened as the answer was filed")
	s.sameAsTheProcedure(t, o.id, lanes)
	requireRow(t, page.body, "answer", c.Told["stage_opened"][0], "done")

	// Both sides file and confirm the record; the award is issued.
	r = s.post(t, "/respond/"+o.id+"/submissions", session, with(s.formOf(t, o, session, "submission"), "text", "Our evidence."), sameOrigin...)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	s.claimantActs(t, o.id, procedure.Act{Kind: procedure.ActFileSubmission, SubmissionID: "sub_claimant1", Digest: digest("The invoice.")},
		store.Document{Digest: digest("The invoice."), Content: []byte("The invoice.")})
	r = s.post(t, "/respond/"+o.id+"/record/confirm", session, s.formOf(t, o, session, "confirm-record"), sameOrigin...)
	require.Equal(t, http.StatusSeeOther, r.status, r.body)
	s.claimantActs(t, o.id, procedure.Act{Kind: procedure.ActConfirmRecord})
	issueAward(t, s, o.id)
	page = s.get(t, "/respond/"+o.id, session)
	lanes, marks, _ = drawn(t, page.body)
	c = s.apiCase(t, o.id)
	require.Len(t, lanes, 4)
	var deadlines []string
	for i, l := range lanes {
		require.Equal(t, "past", l.State, l.Stage)
		deadlines = append(deadlines, l.Deadline)
		if i > 0 {
			require.Equal(t, lanes[i-1].Closed, l.Opened, "%s opened as the stage before closed", l.Stage)
		}
	}
	told := append(append(c.Told["opened"], c.Told["stage_opened"]...), c.Told["record_confirmation_requested"]...)
	require.Equal(t, told, deadlines, "every stage's deadline is the one its entry event carried")
	require.Equal(t, c.ClosedAt, lanes[3].Closed, "the record closed with its stage")
	loaded, err := s.cases.Load(context.Background(), o.id)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"opened": c.OpenedAt, "record_closed": c.ClosedAt,
		"award_issued": procedure.Timestamp(loaded.Case.Tribunal.Award.IssuedAt)}, marks)
	s.sameAsTheProcedure(t, o.id, lanes)
	requireRow(t, page.body, "record_confirmation", lanes[3].Deadline, "done")
}

// sameAsTheProcedure requires lanes to be the procedure's timeline of the
// stored case.
func (s *stack) sameAsTheProcedure(t testing.TB, id string, lanes []lane) {
	t.Helper()
	l, err := s.cases.Load(context.Background(), id)
	require.NoError(t, err)
	var want []lane
	for _, st := range l.Case.Timeline() {
		closed := ""
		if !st.ClosedAt.IsZero() {
			closed = procedure.Timestamp(st.ClosedAt)
		}
		want = append(want, lane{string(st.Kind), strconv.Itoa(st.Round), string(st.State), procedure.Timestamp(st.OpenedAt), procedure.Timestamp(st.DeadlineAt), closed})
	}
	require.Equal(t, want, lanes, "the page draws the procedure's timeline of the stored case")
}

// requireRow requires the timeline's table to give the stage its deadline,
// in words, and to say where it stands.
func requireRow(t testing.TB, page, stage, deadline, standing string) {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, deadline)
	require.NoError(t, err)
	row := regexp.MustCompile(`<tr data-stage="` + stage + `" data-round="\d+">(.*?)</tr>`).FindStringSubmatch(page)
	require.NotNil(t, row, "the table has a row for %s", stage)
	require.Contains(t, row[1], "<td>"+at.UTC().Format("2 January 2006, 15:04 UTC")+"</td>", "the row says the deadline drawn")
	require.Contains(t, row[1], standing)
}
