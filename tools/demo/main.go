// Command demo walks a new user through a case on a running stack (make
// run), through the edge.
//
// To the opening (-through opening, the default): the claimant's agent
// prepares a two-party draft, the partner's orchestrator grants the
// respondent's agent its side, each agent reads its exact confirmation
// statement and confirms, the last confirmation opens the case with its
// show-once capabilities, and a retry of that confirmation shows the stored
// answer without them.
//
// To the award (-through award): the same with a short procedure plan, then
// the respondent answers, each side files one submission, both confirm the
// record; the stack's tribunal pool assigns the reference adjudicator
// (make run runs it with its deterministic rubric), which files its
// proposal; the reviewer agrees, attests and opens the pre-award review,
// both sides answer it, and the reviewer signs off. The demo then fetches
// the award, its json artifact, its attestation and the published award
// keys, verifies them offline (libs/award.Verify), and prints as its last
// line:
//
//	award <caseId> <awardHash>
//
// To the execution (-through execution): first the purchase the dispute
// is about, an x402 payment of the claim from the buyer's development
// wallet to the seller's, settled by the stack's local facilitator; then
// the walk to the award, on a plan without an answer (so the rubric,
// counting one item a side, upholds half the claim: a payment); both sides consent to the
// award, which makes it final; and the claimant's agent commands the
// x402r refund of that payment. It prints as its last line:
//
//	execution <caseId> <executionId> <status>
//
// Usage:
//
//	go run ./tools/demo                       # reads .devstack/credentials.env
//	go run ./tools/demo -env path/to/credentials.env
//	go run ./tools/demo -through award
//	go run ./tools/demo -through execution
//
// docs/filings-walkthrough.md shows the same steps as curl commands.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "demo: %v\n", err)
		os.Exit(1)
	}
}

// settings are what the demo needs from the stack.
type settings struct {
	url, orchestrator, claimant, respondent string
	// reviewer is the tribunal's reviewer, for -through award.
	reviewer string
	// facilitator is the stack's local x402 facilitator, for -through
	// execution: the purchase is settled there.
	facilitator string
}

// Where the walkthrough ends.
const (
	throughOpening   = "opening"
	throughAward     = "award"
	throughExecution = "execution"
)

func run(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	envFile := fs.String("env", ".devstack/credentials.env", "credentials file written by make run (variables already set in the environment win)")
	through := fs.String("through", throughOpening, "where to stop: opening (the case opens), award (a signed award, verified offline) or execution (the final award refunds the purchase over x402r)")
	wait := fs.Duration("decision-timeout", 2*time.Minute, "-through award: how long to wait for the case to open, and then for the tribunal's assignment and the adjudicator's proposal")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *through != throughOpening && *through != throughAward && *through != throughExecution {
		return fmt.Errorf("-through %q: want %s, %s or %s", *through, throughOpening, throughAward, throughExecution)
	}
	cfg, err := loadSettings(*envFile, getenv, *through)
	if err != nil {
		return err
	}
	c := &client{base: cfg.url, out: out, http: &http.Client{Timeout: 10 * time.Second}}
	var bought purchase
	if *through == throughExecution {
		if bought, err = pay(ctx, c, cfg.facilitator); err != nil {
			return err
		}
	}
	opened, err := openCase(ctx, c, cfg, *through)
	if err != nil {
		return err
	}
	if *through == throughOpening {
		fmt.Fprintf(out, "\nDone.\n")
		return nil
	}
	awardHash, err := walkToAward(ctx, c, cfg, opened, *through == throughAward, *wait)
	if err != nil || *through == throughAward {
		return err
	}
	return walkToExecution(ctx, c, cfg, opened.CaseID, awardHash, bought)
}

// openCase walks a draft to an opened case and returns it. Past the
// opening, the procedure plan reaches the record quickly: an answer (not
// for an execution, so that the reference adjudicator's rubric, which
// counts each side's items, upholds half the claim: a payment to refund),
// then one evidence round of one submission per side, no rebuttal.
func openCase(ctx context.Context, c *client, cfg settings, through string) (openedCase, error) {
	out := c.out
	var err error

	step(out, "1. Who are we? Each agent's credential, as the platform sees it")
	var claimant, respondent struct {
		Data struct{ CredentialID, AgentID string }
	}
	if err := c.call(ctx, "GET", "/api/v2/integration", cfg.claimant, "", nil, 200, &claimant); err != nil {
		return openedCase{}, err
	}
	if err := c.call(ctx, "GET", "/api/v2/integration", cfg.respondent, "", nil, 200, &respondent); err != nil {
		return openedCase{}, err
	}
	if respondent.Data.AgentID == "" {
		return openedCase{}, errors.New("the respondent credential is not bound to an agent id; use the credentials make run minted")
	}

	// The standard plan: an answer, two evidence rounds, a rebuttal, two
	// filings per side and stage. The short one (custom_bounded) keeps the
	// answer and one evidence round of one filing each.
	plan := map[string]any{"profile": "standard"}
	switch through {
	case throughAward:
		plan = map[string]any{"profile": "custom_bounded", "answerRequired": true, "evidenceRounds": 1, "rebuttalRounds": 0, "filingsPerSidePerStage": 1}
	case throughExecution:
		plan = map[string]any{"profile": "custom_bounded", "answerRequired": false, "evidenceRounds": 1, "rebuttalRounds": 0, "filingsPerSidePerStage": 1}
	}
	step(out, fmt.Sprintf("2. The claimant's agent prepares a two-party draft (procedure %s)", plan["profile"]))
	var prepared struct{ Data draftResource }
	err = c.call(ctx, "POST", "/api/v2/case-drafts", cfg.claimant, key(), map[string]any{
		"externalCaseId":     "demo-" + key()[:8],
		"caseMode":           "proceeding",
		"intakeMode":         "bilateral_api",
		"confirmationPolicy": map[string]any{"mode": "all_participants"},
		"procedure":          plan,
		"participants": []map[string]any{
			{"participantId": "claimant", "side": "claimant", "principalId": "org-demo-buyer", "principalKind": "organization", "authorizationMode": "partner_credential", "initiator": true},
			{"participantId": "respondent", "side": "respondent", "principalId": "agent-demo-seller", "principalKind": "autonomous_agent", "agentId": respondent.Data.AgentID, "authorizationMode": "agent_credential"},
		},
		"claim": map[string]any{"amountInDisputeMinor": 42000, "remedy": "money_obligation", "summary": "A paid API subscription was never provisioned."},
	}, 201, &prepared)
	if err != nil {
		return openedCase{}, err
	}
	d := prepared.Data
	fmt.Fprintf(out, "   draft %s, digest %s, case %s reserved, fee %d USD cents (%s)\n", d.DraftID, d.DraftDigest, d.ReservedCaseID, d.Fee.AmountMinor, d.Fee.Collection)

	step(out, "3. The orchestrator grants the respondent's agent the respondent side")
	if err := c.call(ctx, "POST", "/api/v2/authorizations/authority-grants", cfg.orchestrator, key(), map[string]any{
		"resource": "draft:" + d.DraftID, "side": "respondent", "credentialId": respondent.Data.CredentialID,
	}, 201, nil); err != nil {
		return openedCase{}, err
	}

	step(out, "4. Each agent reads the draft: its confirmation statement, to copy exactly")
	var asRespondent struct{ Data draftResource }
	if err := c.call(ctx, "GET", "/api/filings/"+d.DraftID, cfg.respondent, "", nil, 200, &asRespondent); err != nil {
		return openedCase{}, err
	}
	for _, conf := range asRespondent.Data.Confirmations {
		fmt.Fprintf(out, "   %s: %q\n", conf.ParticipantID, conf.ConfirmationStatement)
	}

	step(out, "5. The claimant's agent confirms: recorded, the other confirmation is pending (202)")
	if err := c.call(ctx, "POST", "/api/v2/case-drafts/"+d.DraftID+"/confirmations", cfg.claimant, key(),
		confirmation(d, "claimant", claimant.Data.CredentialID, "org-demo-buyer"), 202, nil); err != nil {
		return openedCase{}, err
	}

	step(out, "6. The respondent's agent confirms: the last confirmation opens the case (201)")
	lastKey := key()
	body := confirmation(d, "respondent", respondent.Data.AgentID, "agent-demo-seller")
	var opened struct{ Data openedCase }
	if err := c.call(ctx, "POST", "/api/filings/"+d.DraftID+"/confirmations", cfg.respondent, lastKey, body, 201, &opened); err != nil {
		return openedCase{}, err
	}
	fmt.Fprintf(out, "   case %s is %s; showOnce: %s\n", opened.Data.CaseID, opened.Data.Status, opened.Data.ShowOnce)
	if opened.Data.ShowOnce == nil {
		return openedCase{}, errors.New("the first 201 carried no showOnce capabilities")
	}

	step(out, "7. A retry of that confirmation (same Idempotency-Key) returns the stored 201, without showOnce")
	var replay struct{ Data openedCase }
	if err := c.call(ctx, "POST", "/api/filings/"+d.DraftID+"/confirmations", cfg.respondent, lastKey, body, 201, &replay); err != nil {
		return openedCase{}, err
	}
	if replay.Data.ShowOnce != nil || replay.Data.CaseID != opened.Data.CaseID {
		return openedCase{}, errors.New("the replay differs from the stored answer or shows the capabilities again")
	}
	fmt.Fprintf(out, "   case %s again, showOnce: %s\n", replay.Data.CaseID, replay.Data.ShowOnce)
	return opened.Data, nil
}

type draftResource struct {
	DraftID        string `json:"draftId"`
	ReservedCaseID string `json:"reservedCaseId"`
	DraftDigest    string `json:"draftDigest"`
	Fee            struct {
		AmountMinor int64  `json:"amountMinor"`
		Collection  string `json:"collection"`
	} `json:"fee"`
	Confirmations []struct {
		ParticipantID         string `json:"participantId"`
		ConfirmationStatement string `json:"confirmationStatement"`
	} `json:"confirmations"`
}

type openedCase struct {
	CaseID   string          `json:"caseId"`
	Status   string          `json:"status"`
	ShowOnce json.RawMessage `json:"showOnce"`
}

func confirmation(d draftResource, participant, actorID, principalID string) map[string]any {
	statement := ""
	for _, c := range d.Confirmations {
		if c.ParticipantID == participant {
			statement = c.ConfirmationStatement
		}
	}
	return map[string]any{
		"participantId": participant, "draftDigest": d.DraftDigest, "confirmationStatement": statement,
		"actorId": actorID, "principalId": principalID, "confirmationMethod": "protocol_act",
		"confirmationReference": "demo-" + participant,
	}
}

// client makes one call, prints it, and checks the status it expects.
type client struct {
	base string
	out  io.Writer
	http *http.Client
}

func (c *client) call(ctx context.Context, method, path, token, idemKey string, body any, want int, into any) error {
	raw, err := c.do(ctx, method, path, token, idemKey, body, want, true)
	if err != nil || into == nil {
		return err
	}
	return json.Unmarshal(raw, into)
}

// quiet is call without the printed line, for polling.
func (c *client) quiet(ctx context.Context, method, path, token, idemKey string, body any, want int, into any) error {
	raw, err := c.do(ctx, method, path, token, idemKey, body, want, false)
	if err != nil || into == nil {
		return err
	}
	return json.Unmarshal(raw, into)
}

// do sends the request (bearer token when not empty, JSON body when not
// nil, Idempotency-Key when not empty) and returns the answer's bytes;
// any status other than want is an error that quotes the answer.
func (c *client) do(ctx context.Context, method, path, token, idemKey string, body any, want int, print bool) ([]byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w (is make run up?)", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if print {
		fmt.Fprintf(c.out, "   %s %s → %d\n", method, path, resp.StatusCode)
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: want %d, got %d: %s", method, path, want, resp.StatusCode, raw)
	}
	return raw, nil
}

func step(out io.Writer, title string) { fmt.Fprintf(out, "\n%s\n", title) }

func key() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "demo-" + hex.EncodeToString(b[:])
}

// loadSettings reads PCOURT_* from the environment, falling back to the
// export lines of the credentials file; past the opening the reviewer's
// token is needed too, and for an execution the facilitator's URL.
func loadSettings(path string, getenv func(string) string, through string) (settings, error) {
	file := map[string]string{}
	if f, err := os.Open(path); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			name, value, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
			if ok {
				file[name] = value
			}
		}
	}
	get := func(name string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return file[name]
	}
	s := settings{url: get("PCOURT_URL"), orchestrator: get("PCOURT_ORCHESTRATOR_TOKEN"), claimant: get("PCOURT_CLAIMANT_TOKEN"), respondent: get("PCOURT_RESPONDENT_TOKEN"),
		reviewer: get("PCOURT_REVIEWER_TOKEN"), facilitator: get("PCOURT_FACILITATOR_URL")}
	if s.url == "" || s.orchestrator == "" || s.claimant == "" || s.respondent == "" {
		return settings{}, fmt.Errorf("PCOURT_URL and the three PCOURT_*_TOKEN variables are needed: start the stack with make run (it writes %s) or export them", path)
	}
	if through != throughOpening && s.reviewer == "" {
		return settings{}, fmt.Errorf("-through %s needs PCOURT_REVIEWER_TOKEN, the tribunal's reviewer: make run mints one into %s", through, path)
	}
	if through == throughExecution && s.facilitator == "" {
		return settings{}, fmt.Errorf("-through execution needs PCOURT_FACILITATOR_URL, the stack's local x402 facilitator: make run writes it into %s", path)
	}
	return s, nil
}
