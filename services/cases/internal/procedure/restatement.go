package procedure

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The restatement is the tribunal's summary of the record, entry by entry
// (the shape of the AAA-ICDR AI arbitrator's case summary that the sides
// review). Here it is a deterministic extraction, not a model's writing:
// the answer's and each submission's first sentence, cut at
// RestatementMaxChars characters, and each disclosed exhibit's
// description, each beside the digest of what it summarises. The same
// record and texts always give the same restatement.

// RestatementMaxChars bounds an entry's summary, in characters.
const RestatementMaxChars = 280

// ErrRestatementText means a text the record refers to by digest was not
// given: a restatement never summarises what it cannot read.
var ErrRestatementText = errors.New("record text missing for the restatement")

// RestatementEntry is one record entry restated.
type RestatementEntry struct {
	EntryID string `json:"entryId"`
	Kind    string `json:"kind"` // answer, submission or exhibit
	Side    string `json:"side"`
	// Digest is the entry's text digest (answer, submission) or its
	// file's SHA-256 (exhibit): what the summary was taken from.
	Digest  string `json:"digest"`
	Summary string `json:"summary"`
}

// Restatement is the record restated, in the order of [Case.RecordSummary]
// (answer, submissions as filed, exhibits as disclosed), with the digest of
// the record it restates.
type Restatement struct {
	RecordDigest string             `json:"recordDigest"`
	Entries      []RestatementEntry `json:"entries"`
}

// Restate restates c's record. texts holds the answer's and submissions'
// texts by digest (the store keeps them beside the case); a missing one
// is ErrRestatementText.
func Restate(c Case, texts map[string]string) (Restatement, error) {
	s := c.RecordSummary()
	r := Restatement{RecordDigest: c.RecordDigest(), Entries: []RestatementEntry{}}
	text := func(e SummaryEntry) (string, error) {
		t, ok := texts[e.Digest]
		if !ok {
			return "", fmt.Errorf("%w: entry %s (digest %s)", ErrRestatementText, e.ID, e.Digest)
		}
		return FirstSentence(t), nil
	}
	entries := s.Submissions
	kinds := make([]string, len(entries))
	for i := range kinds {
		kinds[i] = "submission"
	}
	if s.Answer != nil {
		entries = append([]SummaryEntry{*s.Answer}, entries...)
		kinds = append([]string{"answer"}, kinds...)
	}
	for i, e := range entries {
		sum, err := text(e)
		if err != nil {
			return Restatement{}, err
		}
		r.Entries = append(r.Entries, RestatementEntry{EntryID: e.ID, Kind: kinds[i], Side: e.Side, Digest: e.Digest, Summary: sum})
	}
	for _, x := range s.Exhibits {
		r.Entries = append(r.Entries, RestatementEntry{EntryID: x.ID, Kind: "exhibit", Side: x.Side, Digest: x.SHA256, Summary: clip(collapse(x.Description))})
	}
	return r, nil
}

// FirstSentence returns the first sentence of text, its white space
// collapsed: up to and including the first '.', '!' or '?' that ends the
// text or is followed by white space, cut at RestatementMaxChars
// characters when longer (or when there is no such end).
func FirstSentence(text string) string {
	t := collapse(text)
	for i, r := range t {
		if r != '.' && r != '!' && r != '?' {
			continue
		}
		next := i + utf8.RuneLen(r)
		if next == len(t) || t[next] == ' ' {
			return clip(t[:next])
		}
	}
	return clip(t)
}

// collapse trims text and turns every run of white space into one space.
func collapse(text string) string {
	return strings.Join(strings.FieldsFunc(text, unicode.IsSpace), " ")
}

// clip cuts s to RestatementMaxChars characters, never inside one.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= RestatementMaxChars {
		return s
	}
	return string([]rune(s)[:RestatementMaxChars])
}
