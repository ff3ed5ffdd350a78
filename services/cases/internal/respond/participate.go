// Taking part in the whole case on the hosted page, once joined: messages,
// submissions, the record confirmation and termination. Each is a plain
// form behind guard (origin, session, CSRF) that applies the procedure act
// the API applies, through caseflow.
//
// A form that creates something carries an id the page minted when it
// rendered the form (formID): the procedure takes caller-minted ids, so a
// form sent twice names the same message, submission or termination
// request, and the second copy finds it in the case (step.done) and acts
// no more, as a retried API request replays its journaled answer.

package respond

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// formID mints the id a form's act will carry: the prefix says what it
// names, as the API's ids do.
func formID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

var formIDPattern = regexp.MustCompile(`^[a-z]+_[0-9a-f]{24}$`)

// mintedID reads the form's minted id of the given prefix; it refuses a
// form without one (a form the page did not render).
func (p *page) mintedID(c *gin.Context, id, prefix string) (string, *refusal) {
	v := c.Request.PostForm.Get("formId")
	if !formIDPattern.MatchString(v) || !strings.HasPrefix(v, prefix) {
		return "", &refusal{Status: http.StatusBadRequest, Code: string(procedure.CodeInvalidAct), CaseID: id, Back: p.pagePath(id),
			Title: "The form cannot be sent", Detail: "The form lacks the id the page gives it. Nothing was filed: reload the case and try again."}
	}
	return v, nil
}

// formText reads the form's text as the person typed it (a browser sends
// a textarea's line breaks as CRLF) and checks it as the API does.
func (p *page) formText(c *gin.Context, id, what string) (string, *refusal) {
	text := strings.ReplaceAll(c.Request.PostForm.Get("text"), "\r\n", "\n")
	if err := checkText(text); err != nil {
		return "", &refusal{Status: http.StatusBadRequest, Code: string(procedure.CodeInvalidAct), CaseID: id, Back: p.pagePath(id),
			Title: "The " + what + " cannot be sent", Detail: "The " + what + " " + err.Error() + "."}
	}
	return text, nil
}

// postMessage posts a message to the other side; message_posted tells
// its partners, as when a partner posts through the API.
func (p *page) postMessage(c *gin.Context) {
	id, ok := p.guard(c)
	if !ok {
		return
	}
	msgID, r := p.mintedID(c, id, "msg_")
	if r == nil {
		var text string
		if text, r = p.formText(c, id, "message"); r == nil {
			digest := digestOf(text)
			p.act(c, id, func(_ procedure.Case, pid string) step {
				return step{
					act:  procedure.Act{Kind: procedure.ActPostMessage, ParticipantID: pid, MessageID: msgID, Digest: digest},
					docs: []store.Document{{Digest: digest, Content: []byte(text)}},
					done: func(cs procedure.Case) bool {
						return slices.ContainsFunc(cs.Messages, func(m procedure.Message) bool {
							return m.ID == msgID && m.ParticipantID == pid && m.Digest == digest
						})
					},
				}
			})
			return
		}
	}
	p.refuse(c, *r)
}

// markRead marks the case's messages read for the respondent's side up
// to the last one the page showed. Reading never moves back, so the form
// sent twice changes nothing more.
func (p *page) markRead(c *gin.Context) {
	id, ok := p.guard(c)
	if !ok {
		return
	}
	through := c.Request.PostForm.Get("readThrough")
	p.act(c, id, func(_ procedure.Case, pid string) step {
		return step{act: procedure.Act{Kind: procedure.ActMarkMessagesRead, ParticipantID: pid, MessageID: through}}
	})
}

// fileSubmission files a submission in the open evidence or rebuttal
// round.
func (p *page) fileSubmission(c *gin.Context) {
	id, ok := p.guard(c)
	if !ok {
		return
	}
	subID, r := p.mintedID(c, id, "sub_")
	if r == nil {
		var text string
		if text, r = p.formText(c, id, "submission"); r == nil {
			digest := digestOf(text)
			p.act(c, id, func(_ procedure.Case, pid string) step {
				return step{
					act:  procedure.Act{Kind: procedure.ActFileSubmission, ParticipantID: pid, SubmissionID: subID, Digest: digest},
					docs: []store.Document{{Digest: digest, Content: []byte(text)}},
					done: func(cs procedure.Case) bool {
						return slices.ContainsFunc(cs.Submissions, func(s procedure.Submission) bool {
							return s.ID == subID && s.ParticipantID == pid && s.Digest == digest
						})
					},
				}
			})
			return
		}
	}
	p.refuse(c, *r)
}

// amendSubmission replaces the text of one of the side's submissions of
// the open round. A submission whose text already is the form's is left
// as it is: the form was sent twice, or nothing changed.
func (p *page) amendSubmission(c *gin.Context) {
	id, ok := p.guard(c)
	if !ok {
		return
	}
	subID := c.Param("submissionId")
	text, r := p.formText(c, id, "amended submission")
	if r != nil {
		p.refuse(c, *r)
		return
	}
	digest := digestOf(text)
	p.act(c, id, func(_ procedure.Case, pid string) step {
		return step{
			act:  procedure.Act{Kind: procedure.ActAmendSubmission, ParticipantID: pid, SubmissionID: subID, Digest: digest},
			docs: []store.Document{{Digest: digest, Content: []byte(text)}},
			done: func(cs procedure.Case) bool {
				return slices.ContainsFunc(cs.Submissions, func(s procedure.Submission) bool {
					return s.ID == subID && s.Side == procedure.Respondent && s.Digest == digest
				})
			},
		}
	})
}

// confirmRecord confirms the record for the respondent's side. A side
// that has confirmed already is where the form wants it.
func (p *page) confirmRecord(c *gin.Context) {
	id, ok := p.guard(c)
	if !ok {
		return
	}
	p.act(c, id, func(_ procedure.Case, pid string) step {
		return step{
			act: procedure.Act{Kind: procedure.ActConfirmRecord, ParticipantID: pid},
			done: func(cs procedure.Case) bool {
				_, confirmed := cs.RecordConfirms[procedure.Respondent]
				return confirmed
			},
		}
	})
}

// requestTermination asks to end the case; the claimant's side confirms
// it before its deadline, or the case goes on.
func (p *page) requestTermination(c *gin.Context) {
	id, ok := p.guard(c)
	if !ok {
		return
	}
	termID, r := p.mintedID(c, id, "term_")
	if r != nil {
		p.refuse(c, *r)
		return
	}
	p.act(c, id, func(_ procedure.Case, pid string) step {
		return step{
			act: procedure.Act{Kind: procedure.ActRequestTermination, ParticipantID: pid, TerminationID: termID},
			done: func(cs procedure.Case) bool {
				return cs.Termination != nil && cs.Termination.ID == termID
			},
		}
	})
}

// confirmTermination confirms the claimant's pending request: the case
// ends. A confirmation sent twice finds the case terminated and is
// answered case_closed, which says what happened.
func (p *page) confirmTermination(c *gin.Context) {
	id, ok := p.guard(c)
	if !ok {
		return
	}
	termID := c.Param("requestId")
	p.act(c, id, func(_ procedure.Case, pid string) step {
		return step{act: procedure.Act{Kind: procedure.ActConfirmTermination, ParticipantID: pid, TerminationID: termID}}
	})
}
