package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/envconf"
)

// Case modes of a review package.
const (
	modeProceeding = "proceeding"
	modeEvaluation = "evaluation"
)

// Sides of a case.
const (
	sideClaimant   = "claimant"
	sideRespondent = "respondent"
)

// runOpen is the status of a run that waits for its adjudicator.
const runOpen = "open"

// reviewPackage is the data of GET /api/disputes/{id}/review-package: what
// the adjudicator reads. Members the agent does not use are ignored, so a
// server that adds some does not break it.
type reviewPackage struct {
	CaseID              string          `json:"caseId"`
	ExternalCaseID      string          `json:"externalCaseId"`
	CaseMode            string          `json:"caseMode"`
	Stage               string          `json:"stage"`
	Claim               claim           `json:"claim"`
	Evaluation          *evaluation     `json:"evaluation,omitempty"`
	Parties             []party         `json:"parties"`
	Record              record          `json:"record"`
	ConfigurationDigest string          `json:"configurationDigest"`
	Run                 *run            `json:"run,omitempty"`
	Proposal            json.RawMessage `json:"proposal,omitempty"`
}

type claim struct {
	AmountMinor int64  `json:"amountMinor"`
	Currency    string `json:"currency"`
	Remedy      string `json:"remedy"`
	Summary     string `json:"summary"`
}

type evaluation struct {
	Question        string   `json:"question"`
	Criteria        []string `json:"criteria"`
	AllowedOutcomes []string `json:"allowedOutcomes"`
}

type party struct {
	Side          string `json:"side"`
	ParticipantID string `json:"participantId"`
	PrincipalID   string `json:"principalId"`
}

type record struct {
	Digest string       `json:"digest"`
	Items  []recordItem `json:"items"`
}

type recordItem struct {
	ItemID string `json:"itemId"`
	Side   string `json:"side"`
	Kind   string `json:"kind"`
	Digest string `json:"digest"`
	Text   string `json:"text"`
}

type run struct {
	RunID        string `json:"runId"`
	Status       string `json:"status"`
	Instructions string `json:"instructions"`
	InputDigest  string `json:"inputDigest"`
}

// filed reports whether the package already holds a proposal.
func (p reviewPackage) filed() bool {
	return len(p.Proposal) > 0 && !bytes.Equal(bytes.TrimSpace(p.Proposal), []byte("null"))
}

// outcomes are the outcomes the case's award may have.
func (p reviewPackage) outcomes() []string {
	if p.CaseMode == modeEvaluation {
		if p.Evaluation == nil {
			return nil
		}
		return p.Evaluation.AllowedOutcomes
	}
	return award.ProceedingOutcomes
}

// filing is the body of POST /api/disputes/{id}/synthesize-opinion: a
// proposal, or a request for human attention.
type filing struct {
	RunID          string          `json:"runId"`
	InputDigest    string          `json:"inputDigest"`
	Proposal       *award.Proposal `json:"proposal,omitempty"`
	HumanAttention *humanAttention `json:"humanAttention,omitempty"`
}

type humanAttention struct {
	Reason string `json:"reason"`
}

// idempotencyKey is the filing's Idempotency-Key: derived from the case and
// the run, so every retry of a run's filing, in this process or after a
// restart, sends the same key.
func idempotencyKey(caseID, runID string) string {
	sum := sha256.Sum256([]byte(caseID + "\n" + runID))
	return "adj-" + hex.EncodeToString(sum[:])[:32]
}

// APIError is an answer of the pcourt API other than a success: its HTTP
// status and the website envelope's error code and message (empty when
// the body was not an envelope).
type APIError struct {
	Status  int
	Code    string
	Message string
}

func (e *APIError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("pcourt answered %d", e.Status)
	}
	return fmt.Sprintf("pcourt answered %d %s: %s", e.Status, e.Code, e.Message)
}

// Temporary reports whether a later try may succeed: a 5xx or a 429.
func (e *APIError) Temporary() bool {
	return e.Status >= 500 || e.Status == http.StatusTooManyRequests
}

// codeRunNotOpen is the refusal of a filing for a run another run superseded.
const codeRunNotOpen = "run_not_open"

// envelope is the website envelope of every answer.
type envelope struct {
	OK    bool            `json:"ok"`
	Data  json.RawMessage `json:"data"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// maxAnswerBytes bounds an answer of the API: a review package carries the
// record's text.
const maxAnswerBytes = 16 << 20

// pcourtAPI is the agent's client of the pcourt API.
type pcourtAPI struct {
	base   string
	token  envconf.Secret
	client *http.Client
}

func (c *pcourtAPI) casePath(caseID, tail string) string {
	return c.base + "/api/disputes/" + url.PathEscape(caseID) + "/" + tail
}

// reviewPackage reads the case's review package.
func (c *pcourtAPI) reviewPackage(ctx context.Context, caseID string) (reviewPackage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.casePath(caseID, "review-package"), nil)
	if err != nil {
		return reviewPackage{}, err
	}
	data, err := c.do(req)
	if err != nil {
		return reviewPackage{}, fmt.Errorf("reading the review package of %s: %w", caseID, err)
	}
	var p reviewPackage
	if err := json.Unmarshal(data, &p); err != nil {
		return reviewPackage{}, fmt.Errorf("reading the review package of %s: %w", caseID, err)
	}
	return p, nil
}

// file posts body (a filing's exact bytes) with the Idempotency-Key key.
func (c *pcourtAPI) file(ctx context.Context, caseID, key string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.casePath(caseID, "synthesize-opinion"), bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	if _, err := c.do(req); err != nil {
		return fmt.Errorf("filing for %s: %w", caseID, err)
	}
	return nil
}

// do sends req with the bearer token and returns the envelope's data of a
// 2xx, or an *APIError.
func (c *pcourtAPI) do(req *http.Request) (json.RawMessage, error) {
	req.Header.Set("Authorization", "Bearer "+c.token.Reveal())
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswerBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(body) > maxAnswerBytes {
		return nil, errors.New("answer larger than 16 MiB")
	}
	var env envelope
	decodeErr := json.Unmarshal(body, &env)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		apiErr := &APIError{Status: resp.StatusCode}
		if decodeErr == nil && env.Error != nil {
			apiErr.Code, apiErr.Message = env.Error.Code, env.Error.Message
		}
		return nil, apiErr
	}
	if decodeErr != nil || !env.OK {
		// A 2xx that is not a success envelope: a proxy's page, or a
		// server that does not speak this protocol. Retrying will not help.
		return nil, &APIError{Status: resp.StatusCode, Code: "not_an_envelope", Message: "the answer is not {\"ok\":true,\"data\":…}"}
	}
	return env.Data, nil
}
