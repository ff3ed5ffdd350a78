package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/tools/adjudicator/agent"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestPrintRubric(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"-print-rubric"}, env(nil), &out))
	require.Equal(t, agent.Rubric+"\n", out.String())
}

func TestPrintConfiguration(t *testing.T) {
	dir := t.TempDir()
	instructions := filepath.Join(dir, "instructions.txt")
	require.NoError(t, os.WriteFile(instructions, []byte("Decide fairly.\n"), 0o600))
	// A model server that answers every request as one exact build.
	var probes atomic.Int32
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probes.Add(1)
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"model":"qwen2.5-7b-instruct-q4_k_m","choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"length"}]}`)
	}))
	t.Cleanup(model.Close)

	tests := []struct {
		name string
		vars map[string]string
		args []string
		want award.Configuration
	}{
		{name: "the rubric", want: agent.RubricConfiguration()},
		{
			name: "a model",
			vars: map[string]string{"MODEL_URL": "http://127.0.0.1:8000", "MODEL_NAME": "llama-3.1-8b-instruct", "MODEL_VERSION": "q4_k_m-2026-10", "MODEL_TEMPERATURE_MILLI": "200"},
			want: award.Configuration{Provider: "openai-compatible", Model: "llama-3.1-8b-instruct", ModelVersion: "q4_k_m-2026-10",
				InstructionsDigest: award.Hash([]byte(agent.DefaultInstructions)), OutputSchemaVersion: award.SchemaProposal, TemperatureMilli: 200, Tools: []string{}},
		},
		{
			name: "flags and an instructions file",
			vars: map[string]string{"MODEL_URL": "http://127.0.0.1:8000", "MODEL_NAME": "ignored"},
			args: []string{"-model", "mistral", "-model-version", "7b-v0.3", "-instructions", instructions},
			want: award.Configuration{Provider: "openai-compatible", Model: "mistral", ModelVersion: "7b-v0.3",
				InstructionsDigest: award.Hash([]byte("Decide fairly.\n")), OutputSchemaVersion: award.SchemaProposal, Tools: []string{}},
		},
		{
			name: "the version the server answers",
			vars: map[string]string{"MODEL_URL": model.URL, "MODEL_NAME": "qwen2.5"},
			want: award.Configuration{Provider: "openai-compatible", Model: "qwen2.5", ModelVersion: "qwen2.5-7b-instruct-q4_k_m",
				InstructionsDigest: award.Hash([]byte(agent.DefaultInstructions)), OutputSchemaVersion: award.SchemaProposal, Tools: []string{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, run(context.Background(), append([]string{"-print-configuration"}, tt.args...), env(tt.vars), &out))
			want, err := agent.CanonicalConfiguration(tt.want)
			require.NoError(t, err)
			require.Equal(t, string(want)+"\n", out.String(), "the canonical bytes, one line")
		})
	}
	require.Equal(t, int32(1), probes.Load(), "asked once, by the case that named no version")
}

func TestSettingsAreChecked(t *testing.T) {
	serving := map[string]string{"PCOURT_API_URL": "http://127.0.0.1:8080", "ADJUDICATOR_TOKEN": "t", "ADJUDICATOR_ENDPOINT_ID": "we_1"}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range serving {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	tests := []struct {
		name string
		vars map[string]string
		args []string
		want []string
	}{
		{name: "nothing to serve with", vars: nil, want: []string{"PCOURT_API_URL", "ADJUDICATOR_TOKEN is required", "ADJUDICATOR_ENDPOINT_ID"}},
		{name: "a temperature that is no number", vars: with(map[string]string{"MODEL_TEMPERATURE_MILLI": "0.2"}), want: []string{`MODEL_TEMPERATURE_MILLI="0.2" is not an integer`}},
		{name: "model settings without a model", vars: with(map[string]string{"MODEL_NAME": "x", "MODEL_KEY": "k"}), want: []string{"MODEL_NAME, MODEL_KEY set without MODEL_URL"}},
		{name: "a model without a name", vars: with(map[string]string{"MODEL_URL": "http://127.0.0.1:1"}), want: []string{"MODEL_NAME is required"}},
		{name: "a temperature out of range", vars: with(map[string]string{"MODEL_URL": "http://127.0.0.1:1", "MODEL_NAME": "m", "MODEL_VERSION": "v", "MODEL_TEMPERATURE_MILLI": "2001"}),
			want: []string{"MODEL_TEMPERATURE_MILLI=2001: want 0 to 2000"}},
		{name: "print a configuration with instructions and no model", args: []string{"-print-configuration", "-instructions", "main.go"},
			want: []string{"ADJUDICATOR_INSTRUCTIONS_FILE set without MODEL_URL"}},
		{name: "an unknown argument", args: []string{"serve"}, want: []string{`unexpected arguments ["serve"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), tt.args, env(tt.vars), io.Discard)
			require.Error(t, err)
			for _, w := range tt.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
}

// lines is a writer the test reads line by line while run writes.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// find returns the first logged line whose msg is msg.
func (l *lines) find(msg string) map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	sc := bufio.NewScanner(bytes.NewReader(l.buf.Bytes()))
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == msg {
			return line
		}
	}
	return nil
}

func TestServeUntilStopped(t *testing.T) {
	var out lines
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, nil, env(map[string]string{
			"PCOURT_API_URL": "http://127.0.0.1:8080", "ADJUDICATOR_TOKEN": "pc_secret_token", "ADJUDICATOR_ENDPOINT_ID": "we_1",
			"ADJUDICATOR_LISTEN": "127.0.0.1:0",
		}), &out)
	}()
	var line map[string]any
	require.Eventually(t, func() bool { line = out.find("adjudicator listening"); return line != nil }, 10*time.Second, 10*time.Millisecond)
	require.NotContains(t, out.String(), "pc_secret_token", "the token never prints")
	require.Equal(t, "rubric", line["provider"])

	resp, err := http.Get("http://" + line["addr"].(string) + "/livez")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	// A delivery with no signature is refused by the receiver.
	resp, err = http.Post("http://"+line["addr"].(string)+"/", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
}
