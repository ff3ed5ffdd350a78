package tools

import (
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolSpec is a tool that mirrors one API operation: its name and title
// are the tool's own, everything else (method, path, input schema, the
// scope it needs) is the operation's in the OpenAPI document.
type toolSpec struct {
	Name, Title, Operation string
}

// catalogue is every tool that mirrors an API operation, in the order a
// case meets them (docs/mcp.md lists them). Each operation lists the
// accountOAuth scheme (a test holds the catalogue to it): the tools reach
// only what an account's own token may.
var catalogue = []toolSpec{
	{"prepare_draft", "Prepare a case draft", "prepareCaseDraftV2"},
	{"get_draft", "Read a case draft", "getCaseDraftV2"},
	{"confirm_draft", "Confirm a case draft", "confirmCaseDraftParticipantV2"},
	{"get_case", "Read a case", "getCaseV2"},
	{"list_participants", "List a case's participants", "listCaseParticipantsV2"},
	{"file_answer", "File the respondent's answer", "fileAnswerV2"},
	{"list_submissions", "List a case's submissions", "listCaseV2Submissions"},
	{"file_submission", "File a submission", "fileCaseV2Submission"},
	{"list_messages", "List a case's messages", "listCaseMessagesV2"},
	{"post_message", "Post a message", "postCaseMessageV2"},
	{"get_record_confirmations", "Read the record confirmations", "getCaseRecordConfirmationsV2"},
	{"list_evidence", "List the exhibits the account's side sees", "listEvidence"},
	{"describe_exhibit", "Describe one of the side's exhibits", "describeExhibit"},
	{"disclose_exhibit", "Disclose one of the side's exhibits", "discloseExhibit"},
	{"list_authenticity_challenges", "List an exhibit's authenticity challenges", "listAuthenticityChallengesV2"},
	{"challenge_authenticity", "Challenge the other side's exhibit", "challengeAuthenticityV2"},
	{"answer_authenticity_challenge", "Answer a challenge of the side's exhibit", "answerAuthenticityChallenge"},
	{"list_evidence_processing", "Read the exhibits' processing records", "listEvidenceProcessing"},
	{"report_processing_defect", "Report a defect in an exhibit's processing", "reportProcessingDefect"},
	{"confirm_record", "Confirm the record", "confirmCaseRecordV2"},
	{"get_decision_status", "Read where the decision stands", "getCaseDecisionStatusV2"},
	{"get_pre_award_review", "Read the pre-award review", "getPreAwardReview"},
	{"answer_pre_award_review", "Answer the pre-award review", "preAwardReview"},
	{"get_award", "Read the award", "getAwardV2"},
	{"consent_to_award", "Consent to the award", "waivePostAwardRecourseDispute"},
	{"list_executions", "List an award's executions", "listExecutions"},
	{"report_execution", "Report an execution of the award", "executeAward"},
}

// tool is the MCP tool of spec, described by its operation.
func (spec toolSpec) tool(op operation) *mcp.Tool {
	desc := op.Summary
	if op.Description != "" {
		desc += ". " + op.Description
	}
	desc += " (" + op.Method + " " + op.Path
	if len(op.Scopes) > 0 {
		desc += "; scope " + strings.Join(op.Scopes, ", ")
	}
	desc += ")"
	readOnly := op.Method == http.MethodGet
	return &mcp.Tool{
		Name:        spec.Name,
		Title:       spec.Title,
		Description: desc,
		InputSchema: op.InputSchema,
		Annotations: &mcp.ToolAnnotations{
			Title:           spec.Title,
			ReadOnlyHint:    readOnly,
			DestructiveHint: new(false),
			// A command retried with its idempotencyKey acts once.
			IdempotentHint: readOnly || op.Idempotency,
			OpenWorldHint:  new(false),
		},
	}
}
