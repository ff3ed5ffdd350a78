package tribunal_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

func stageCell(s tribunal.Stage) string {
	if s == tribunal.StageUnassigned {
		return "`unassigned`"
	}
	return "`" + string(s) + "`"
}

func nextCell(next string) string {
	if next == tribunal.Same {
		return next
	}
	return "`" + next + "`"
}

func eventsCell(events []tribunal.EventType) string {
	if len(events) == 0 {
		return "—"
	}
	var out []string
	for _, e := range events {
		out = append(out, "`"+string(e)+"`")
	}
	return strings.Join(out, ", ")
}

// decisionRows renders the decision's state table as
// docs/cases-procedure.md writes it: every act's rows, with the stages
// it is open in and who takes it, then Tick's rows.
func decisionRows() []string {
	var rows []string
	for _, r := range tribunal.ActRows {
		var stages []string
		for _, s := range tribunal.OpenIn(r.Act) {
			stages = append(stages, stageCell(s))
		}
		rows = append(rows, fmt.Sprintf("| %s | `%s` | %s | %s | %s | %s | %s |",
			strings.Join(stages, ", "), r.Act, tribunal.Actor(r.Act), r.Condition, r.Records, nextCell(r.Next), eventsCell(r.Events)))
	}
	for _, r := range tribunal.TickRows {
		rows = append(rows, fmt.Sprintf("| %s | `tick` | scheduler | %s | %s | %s | %s |",
			stageCell(r.From), r.Condition, r.Records, nextCell(r.Next), eventsCell(r.Events)))
	}
	return rows
}

// docs/cases-procedure.md's decision table is the tribunal package's data,
// row by row.
func TestTheDecisionTableIsDocumented(t *testing.T) {
	want := decisionRows()
	got := docTable(t, "../../../../docs/cases-procedure.md", "| stages | act | who | condition | records | next | events |")
	require.Equal(t, want, got, "the rows, to paste:\n%s", strings.Join(want, "\n"))
}

// Every act has its rows, in the order of tribunal.Acts, and every row's
// events are the decision's.
func TestEveryActHasItsRows(t *testing.T) {
	var order []tribunal.ActKind
	for _, r := range tribunal.ActRows {
		if len(order) == 0 || order[len(order)-1] != r.Act {
			order = append(order, r.Act)
		}
		require.NotEmpty(t, tribunal.Actor(r.Act), r.Act)
		for _, e := range r.Events {
			require.True(t, slices.ContainsFunc(tribunal.EventSpecs, func(s tribunal.EventSpec) bool { return s.Type == e }), "%s: %s", r.Act, e)
		}
	}
	require.Equal(t, tribunal.Acts, order)
}

// requireActRow fails unless an accepted act's outcome is one of the act's
// rows: its events (award_issued once) and the stage it led to.
func requireActRow(t testing.TB, before tribunal.State, kind tribunal.ActKind, out tribunal.Outcome) {
	t.Helper()
	events := slices.Compact(types(out.Notes))
	for _, r := range tribunal.ActRows {
		if r.Act == kind && slices.Equal(r.Events, events) && leadsTo(r.Next, before, out) {
			return
		}
	}
	t.Fatalf("%s from %s to %s with events %v matches none of its rows in tribunal.ActRows", kind, stageCell(before.Stage), stageCell(out.State.Stage), events)
}

// requireTickRow is requireActRow for Tick.
func requireTickRow(t testing.TB, before tribunal.State, out tribunal.Outcome) {
	t.Helper()
	events := slices.Compact(types(out.Notes))
	for _, r := range tribunal.TickRows {
		if r.From == before.Stage && slices.Equal(r.Events, events) && leadsTo(r.Next, before, out) {
			return
		}
	}
	t.Fatalf("a tick from %s to %s with events %v matches none of tribunal.TickRows", stageCell(before.Stage), stageCell(out.State.Stage), events)
}

func leadsTo(next string, before tribunal.State, out tribunal.Outcome) bool {
	if next == tribunal.Same {
		return out.State.Stage == before.Stage
	}
	return string(out.State.Stage) == next
}
