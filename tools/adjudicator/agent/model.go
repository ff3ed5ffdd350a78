package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/pcourt/pcourt/libs/award"
)

// SchemaName is the name of the response format's JSON schema in a chat
// completions request.
const SchemaName = "pc_adjudication_proposal_v1"

// chatMessage is one message of a chat completions conversation.
type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// chatRequest is the body of POST /v1/chat/completions.
type chatRequest struct {
	Model          string          `json:"model"`
	Temperature    float64         `json:"temperature"`
	Messages       []chatMessage   `json:"messages"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
}

type responseFormat struct {
	Type       string     `json:"type"`
	JSONSchema jsonSchema `json:"json_schema"`
}

type jsonSchema struct {
	Name   string         `json:"name"`
	Strict bool           `json:"strict"`
	Schema map[string]any `json:"schema"`
}

// chatResponse is what the agent reads of an answer; the rest is ignored.
type chatResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// modelError is an answer of the model server other than a 2xx.
type modelError struct {
	Status int
	Body   string
}

func (e *modelError) Error() string {
	return fmt.Sprintf("the model server answered %d: %s", e.Status, e.Body)
}

// Temporary reports whether a later try may succeed: a 5xx or a 429.
func (e *modelError) Temporary() bool {
	return e.Status >= 500 || e.Status == http.StatusTooManyRequests
}

// modelClient speaks chat completions to one server.
type modelClient struct {
	cfg    ModelConfig
	client *http.Client
}

// complete sends req and returns the answer.
func (c modelClient) complete(ctx context.Context, req chatRequest) (chatResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	body, err := json.Marshal(req)
	if err != nil {
		return chatResponse{}, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return chatResponse{}, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	if key := c.cfg.Key.Reveal(); key != "" {
		hreq.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := c.client.Do(hreq)
	if err != nil {
		return chatResponse{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes))
	if err != nil {
		return chatResponse{}, fmt.Errorf("reading the model's answer: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return chatResponse{}, &modelError{Status: resp.StatusCode, Body: truncate(string(bytes.TrimSpace(data)), 300)}
	}
	var out chatResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return chatResponse{}, &modelError{Status: resp.StatusCode, Body: "not a chat completion: " + err.Error()}
	}
	return out, nil
}

// ProbeModelVersion asks the model server for one token and returns the
// model field it answers: the exact model it serves, for a configuration
// whose operator left MODEL_VERSION unset.
func ProbeModelVersion(ctx context.Context, m ModelConfig, client *http.Client) (string, error) {
	if m.Timeout <= 0 {
		m.Timeout = 2 * time.Minute
	}
	if client == nil {
		client = &http.Client{}
	}
	resp, err := modelClient{cfg: m, client: client}.complete(ctx, chatRequest{
		Model:     m.Name,
		Messages:  []chatMessage{{Role: "user", Content: "Answer with the single word: ok"}},
		MaxTokens: 1,
	})
	if err != nil {
		return "", fmt.Errorf("asking %s which model it serves: %w", m.URL, err)
	}
	if resp.Model == "" {
		return "", fmt.Errorf("asking %s which model it serves: the answer has no model field; set MODEL_VERSION", m.URL)
	}
	return resp.Model, nil
}

// modelDrafter drafts with a model.
type modelDrafter struct {
	model        modelClient
	instructions string
	now          func() time.Time
	retry        func(ctx context.Context, what string, log *slog.Logger, step func(context.Context) error) error
}

// draft asks the model, checks its answer against the package, and asks
// once more with the refusal when the answer fails the checks. A second
// bad answer, a model that cannot be reached, or one that answers as
// another model, is a needHuman: never an unchecked proposal.
func (d modelDrafter) draft(ctx context.Context, pkg reviewPackage, _ time.Time, log *slog.Logger) (award.Proposal, error) {
	user, err := caseMessage(pkg, d.now())
	if err != nil {
		return award.Proposal{}, err
	}
	req := chatRequest{
		Model:       d.model.cfg.Name,
		Temperature: float64(d.model.cfg.TemperatureMilli) / 1000,
		Messages: []chatMessage{
			{Role: "system", Content: d.instructions},
			{Role: "user", Content: user},
		},
		ResponseFormat: &responseFormat{Type: "json_schema", JSONSchema: jsonSchema{Name: SchemaName, Strict: true, Schema: proposalSchema(pkg)}},
	}
	const tries = 2
	for try := 1; ; try++ {
		var resp chatResponse
		err := d.retry(ctx, "model call", log, func(ctx context.Context) error {
			var err error
			resp, err = d.model.complete(ctx, req)
			return err
		})
		if err != nil {
			if ctx.Err() != nil {
				return award.Proposal{}, err
			}
			return award.Proposal{}, needHuman("the model could not draft a proposal: " + err.Error())
		}
		if d.model.cfg.VersionFromServer && resp.Model != d.model.cfg.Version {
			return award.Proposal{}, needHuman(fmt.Sprintf("the model server answered as model %q, but this adjudicator's pinned configuration names modelVersion %q: it does not file what another model wrote", resp.Model, d.model.cfg.Version))
		}
		content, p, err := d.read(resp, pkg)
		if err == nil {
			return p, nil
		}
		if try == tries {
			return award.Proposal{}, needHuman(fmt.Sprintf("the model's answer failed the checks twice; last: %v", err))
		}
		log.Warn("model answer refused, asking again", slog.Int("try", try), slog.Any("err", err))
		req.Messages = append(req.Messages,
			chatMessage{Role: "assistant", Content: content},
			chatMessage{Role: "user", Content: "Your answer was refused: " + err.Error() +
				". Answer again with one JSON object in the pc-adjudication-proposal-v1 schema that fixes this, citing only items of the record with their exact digests."})
	}
}

// read takes the proposal out of an answer and checks it.
func (d modelDrafter) read(resp chatResponse, pkg reviewPackage) (string, award.Proposal, error) {
	if len(resp.Choices) == 0 {
		return "", award.Proposal{}, fmt.Errorf("%w: the answer has no choice", errProposal)
	}
	msg := resp.Choices[0].Message
	if msg.Refusal != nil && *msg.Refusal != "" {
		return *msg.Refusal, award.Proposal{}, fmt.Errorf("%w: the model refused: %s", errProposal, truncate(*msg.Refusal, 300))
	}
	if msg.Content == nil {
		return "", award.Proposal{}, fmt.Errorf("%w: the answer has no content", errProposal)
	}
	content := *msg.Content
	if resp.Choices[0].FinishReason == "length" {
		return content, award.Proposal{}, fmt.Errorf("%w: the answer was cut off at the token limit", errProposal)
	}
	p, err := parseProposal(content)
	if err == nil {
		err = checkProposal(p, pkg, d.now())
	}
	return content, p, err
}

// caseView is the user message: the case as the model reads it.
type caseView struct {
	Task            string      `json:"task"`
	Now             string      `json:"now"`
	CaseID          string      `json:"caseId"`
	ExternalCaseID  string      `json:"externalCaseId"`
	CaseMode        string      `json:"caseMode"`
	Claim           claim       `json:"claim"`
	Evaluation      *evaluation `json:"evaluation,omitempty"`
	AllowedOutcomes []string    `json:"allowedOutcomes"`
	Parties         []party     `json:"parties"`
	Record          record      `json:"record"`
	RunInstructions string      `json:"runInstructions"`
}

func caseMessage(pkg reviewPackage, now time.Time) (string, error) {
	v := caseView{
		Task:            "Propose an opinion for this case: one JSON object in the " + award.SchemaProposal + " schema.",
		Now:             now.UTC().Format(dueByLayout),
		CaseID:          pkg.CaseID,
		ExternalCaseID:  pkg.ExternalCaseID,
		CaseMode:        pkg.CaseMode,
		Claim:           pkg.Claim,
		Evaluation:      pkg.Evaluation,
		AllowedOutcomes: pkg.outcomes(),
		Parties:         pkg.Parties,
		Record:          pkg.Record,
	}
	if pkg.Run != nil {
		v.RunInstructions = pkg.Run.Instructions
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "", fmt.Errorf("writing the case message: %w", err)
	}
	return string(b), nil
}

// proposalSchema is the JSON schema of award.Proposal for strict structured
// output, narrowed to the case: outcome one of its outcomes, itemId one of
// its record's ids. Strict mode wants every property required, so the
// optional ones take null.
func proposalSchema(pkg reviewPackage) map[string]any {
	ids := make([]string, len(pkg.Record.Items))
	for i, it := range pkg.Record.Items {
		ids[i] = it.ItemID
	}
	str := map[string]any{"type": "string"}
	optional := func(t string) map[string]any { return map[string]any{"type": []string{t, "null"}} }
	object := func(props map[string]any, required ...string) map[string]any {
		return map[string]any{"type": "object", "additionalProperties": false, "properties": props, "required": required}
	}
	remedy := object(map[string]any{
		"kind":        map[string]any{"type": "string", "enum": []string{award.RemedyPayment, award.RemedyPerformance}},
		"payer":       optional("string"),
		"payee":       optional("string"),
		"amountMinor": optional("integer"),
		"currency":    optional("string"),
		"obligor":     optional("string"),
		"description": optional("string"),
		"dueBy":       str,
	}, "kind", "payer", "payee", "amountMinor", "currency", "obligor", "description", "dueBy")
	citation := object(map[string]any{
		"itemId":   map[string]any{"type": "string", "enum": ids},
		"digest":   str,
		"pinpoint": optional("string"),
	}, "itemId", "digest", "pinpoint")
	return object(map[string]any{
		"outcome":   map[string]any{"type": "string", "enum": pkg.outcomes()},
		"remedies":  map[string]any{"type": "array", "items": remedy},
		"reasons":   str,
		"citations": map[string]any{"type": "array", "items": citation},
	}, "outcome", "remedies", "reasons", "citations")
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
