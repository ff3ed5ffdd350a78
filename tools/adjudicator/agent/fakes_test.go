package agent_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/tools/adjudicator/agent"
)

// now is the clock of every test: the agent's, the receiver's and the
// signer's.
var now = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

const (
	token      = "pc_adjudicator_token"
	endpointID = "we_adjudicator"
)

// answer is one canned answer of a fake server.
type answer struct {
	status int
	body   string
}

// request is what a fake server received.
type request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// fakeAPI is the pcourt API as the agent sees it: the webhook key set, the
// review packages, and the filings, each answered from a queue (201 when
// the queue is empty).
type fakeAPI struct {
	*httptest.Server
	signer *signature.Signer

	mu       sync.Mutex
	packages map[string]json.RawMessage
	reads    []request
	filings  []request
	answers  []answer
	failing  int
}

func newFakeAPI(t testing.TB) *fakeAPI {
	t.Helper()
	seed := sha256.Sum256([]byte("adjudicator test key"))
	priv := ed25519.NewKeyFromSeed(seed[:])
	kid, err := signature.NewKeyID(signature.Sandbox, now.AddDate(0, -1, 0), priv.Public().(ed25519.PublicKey))
	require.NoError(t, err)
	signer, err := signature.NewSigner(kid, priv)
	require.NoError(t, err)

	f := &fakeAPI{signer: signer, packages: map[string]json.RawMessage{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/webhooks/keys", func(w http.ResponseWriter, _ *http.Request) {
		data, err := signature.MarshalJWKS(signer.JWK())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_, _ = w.Write(data)
	})
	mux.HandleFunc("GET /api/disputes/{id}/review-package", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.reads = append(f.reads, record(t, r))
		data, ok := f.packages[r.PathValue("id")]
		failing := f.failing > 0
		if failing {
			f.failing--
		}
		f.mu.Unlock()
		if failing {
			writeEnvelope(w, http.StatusInternalServerError, `{"ok":false,"error":{"code":"internal","message":"see the logs"}}`)
			return
		}
		if !ok {
			writeEnvelope(w, http.StatusNotFound, `{"ok":false,"error":{"code":"case_not_found","message":"no such case"}}`)
			return
		}
		writeEnvelope(w, http.StatusOK, `{"ok":true,"data":`+string(data)+`}`)
	})
	mux.HandleFunc("POST /api/disputes/{id}/synthesize-opinion", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.filings = append(f.filings, record(t, r))
		a := answer{http.StatusCreated, `{"ok":true,"data":{"caseId":"` + r.PathValue("id") + `","status":"proposal_filed"}}`}
		if len(f.answers) > 0 {
			a, f.answers = f.answers[0], f.answers[1:]
		}
		f.mu.Unlock()
		writeEnvelope(w, a.status, a.body)
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func record(t testing.TB, r *http.Request) request {
	body, err := io.ReadAll(r.Body)
	require.NoError(t, err)
	return request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
}

func writeEnvelope(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// serve makes pkg the review package of its case.
func (f *fakeAPI) serve(t testing.TB, pkg map[string]any) {
	t.Helper()
	data, err := json.Marshal(pkg)
	require.NoError(t, err)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.packages[pkg["caseId"].(string)] = data
}

// failReads makes the next n reads of a review package answer 500.
func (f *fakeAPI) failReads(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failing += n
}

// answerFilings queues the answers to the next filings.
func (f *fakeAPI) answerFilings(answers ...answer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, answers...)
}

func (f *fakeAPI) received() (reads, filings []request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.reads...), append([]request(nil), f.filings...)
}

// filed is a filing's body as the agent sent it.
type filed struct {
	RunID          string          `json:"runId"`
	InputDigest    string          `json:"inputDigest"`
	Proposal       *award.Proposal `json:"proposal"`
	HumanAttention *struct {
		Reason string `json:"reason"`
	} `json:"humanAttention"`
}

// onlyFiling returns the one filing the agent made, decoded strictly.
func (f *fakeAPI) onlyFiling(t testing.TB) filed {
	t.Helper()
	_, filings := f.received()
	require.Len(t, filings, 1, "filings")
	return decodeFiling(t, filings[0].Body)
}

func decodeFiling(t testing.TB, body []byte) filed {
	t.Helper()
	var members map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &members))
	_, hasProposal := members["proposal"]
	_, hasHuman := members["humanAttention"]
	require.True(t, hasProposal != hasHuman, "a filing is a proposal or a request for human attention, never both: %s", body)
	var out filed
	require.NoError(t, json.Unmarshal(body, &out))
	return out
}

// loadPackage reads testdata/packages/<name>.json and pins it to c.
func loadPackage(t testing.TB, name string, c award.Configuration) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "packages", name+".json"))
	require.NoError(t, err)
	var pkg map[string]any
	require.NoError(t, json.Unmarshal(data, &pkg))
	digest, err := agent.ConfigurationDigest(c)
	require.NoError(t, err)
	pkg["configuration"] = c
	pkg["configurationDigest"] = digest
	return pkg
}

// recordItems returns the package's record items.
func recordItems(pkg map[string]any) []map[string]any {
	var out []map[string]any
	for _, it := range pkg["record"].(map[string]any)["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

func runID(pkg map[string]any) string { return pkg["run"].(map[string]any)["runId"].(string) }

func recordDigest(pkg map[string]any) string {
	return pkg["record"].(map[string]any)["digest"].(string)
}

// wantKey is the Idempotency-Key a run's filing carries (docs/tribunal-adjudicator.md).
func wantKey(caseID, runID string) string {
	sum := sha256.Sum256([]byte(caseID + "\n" + runID))
	return "adj-" + hex.EncodeToString(sum[:])[:32]
}

// fakeModel is an OpenAI-compatible chat completions server answering
// from a queue of recorded answers.
type fakeModel struct {
	*httptest.Server
	mu       sync.Mutex
	answers  []answer
	requests []request
}

func newFakeModel(t testing.TB, answers ...answer) *fakeModel {
	t.Helper()
	m := &fakeModel{answers: answers}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		m.requests = append(m.requests, record(t, r))
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" || len(m.answers) == 0 {
			m.mu.Unlock()
			http.Error(w, `{"error":{"message":"unexpected request"}}`, http.StatusTeapot)
			return
		}
		a := m.answers[0]
		m.answers = m.answers[1:]
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *fakeModel) received() []request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]request(nil), m.requests...)
}

// recorded is a recorded chat completion from testdata/answers.
func recorded(t testing.TB, name string) answer {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "answers", name+".json"))
	require.NoError(t, err)
	return answer{http.StatusOK, string(data)}
}

// recordedContent is the message content of a recorded answer.
func recordedContent(t testing.TB, name string) string {
	t.Helper()
	var resp struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
	}
	require.NoError(t, json.Unmarshal([]byte(recorded(t, name).body), &resp))
	return resp.Choices[0].Message.Content
}

// modelConfig is the model of the tests, served by m.
func modelConfig(m *fakeModel) agent.ModelConfig {
	return agent.ModelConfig{URL: m.URL, Name: "llama-3.1-8b-instruct", Version: "llama-3.1-8b-instruct-q4_k_m-2026-10", Key: "sk-test", TemperatureMilli: 200}
}

// newAgent is an agent of cfg against api, with the tests' clock and
// token and a backoff of a millisecond.
func newAgent(t testing.TB, api *fakeAPI, cfg agent.Config) *agent.Agent {
	t.Helper()
	cfg.APIURL = api.URL
	cfg.Token = token
	cfg.EndpointID = endpointID
	cfg.Now = func() time.Time { return now }
	cfg.Backoff = time.Millisecond
	cfg.MaxBackoff = 4 * time.Millisecond
	a, err := agent.New(cfg)
	require.NoError(t, err)
	return a
}
