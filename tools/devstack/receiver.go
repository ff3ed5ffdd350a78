package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/pcourt/pcourt/libs/webhook/receiver"
	"github.com/pcourt/pcourt/libs/webhook/signature"
)

// devReceiver is a partner's callback endpoint, run in this process so
// that a new user who walks a draft to an opened case sees the signed case
// events arrive: it verifies each delivery against the key set the edge
// publishes, and that it was signed for its own endpoint, as a partner's
// receiver does, and prints it.
type devReceiver struct {
	url  string
	ln   net.Listener
	srv  *http.Server
	done chan error
}

// listenReceiver takes a free loopback port for the receiver; register
// starts serving on it, once the endpoint id it verifies against is known.
func listenReceiver() (*devReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("webhook receiver: %w", err)
	}
	return &devReceiver{url: "http://" + ln.Addr().String() + "/pcourt-events", ln: ln, done: make(chan error, 1)}, nil
}

// serve verifies deliveries for endpointID and prints every verified event
// to out as "webhook  | <event JSON>" (a test event says so).
func (r *devReceiver) serve(cfg config, endpointID string, out io.Writer) error {
	base := fmt.Sprintf("http://127.0.0.1:%d", cfg.EdgePort)
	keys, err := receiver.NewJWKSCache(base+"/api/webhooks/keys?environment=sandbox", receiver.JWKSConfig{})
	if err != nil {
		return err
	}
	var mu sync.Mutex
	handler, err := receiver.NewHandler(keys, func(_ context.Context, d receiver.Delivery) error {
		var line bytes.Buffer
		if err := json.Compact(&line, d.Body); err != nil {
			return err
		}
		kind := "verified"
		if d.Test {
			kind = "verified test event"
		}
		mu.Lock()
		defer mu.Unlock()
		_, err := fmt.Fprintf(out, "webhook  | %s %s: %s\n", kind, d.Event.Type, line.Bytes())
		return err
	}, receiver.Config{EndpointID: endpointID, Environment: signature.Sandbox})
	if err != nil {
		return err
	}
	r.srv = &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	go func() { r.done <- r.srv.Serve(r.ln) }()
	return nil
}

// receiverDescription marks the endpoint that make run registers for its
// development receiver, so that a later start finds it again.
const receiverDescription = "make run: the development receiver"

// register makes the receiver the orchestrator's partner's development
// endpoint, through the edge like any partner, and starts serving it:
// deliveries that arrive meanwhile wait in the listen queue.
func (r *devReceiver) register(ctx context.Context, cfg config, orchestratorToken string, out io.Writer) error {
	api := devAPI{base: fmt.Sprintf("http://127.0.0.1:%d/api/v2/webhooks", cfg.EdgePort), token: orchestratorToken}
	id, err := claimEndpoint(ctx, api, r.url, receiverDescription, nil)
	if err != nil {
		return fmt.Errorf("the development receiver: %w", err)
	}
	return r.serve(cfg, id, out)
}

// claimEndpoint makes url the endpoint of the token's partner that make
// run registers under description, and returns its id. eventTypes nil
// subscribes to every type.
//
// The state directory outlives the stack, and a receiver may take a new
// port at every start. So an earlier start's endpoint is reused: its URL
// moves to this start's and it is enabled again, keeping its id and its
// delivery history; any further endpoints with the same description (left
// by starts before this rule) are deleted. Registering a new endpoint at
// every start would reach the partner's endpoint limit after 20 starts.
func claimEndpoint(ctx context.Context, api devAPI, url, description string, eventTypes []string) (string, error) {
	var listed struct {
		Data []struct {
			ID          string `json:"id"`
			Description string `json:"description"`
			Status      string `json:"status"`
		} `json:"data"`
	}
	if err := api.call(ctx, http.MethodGet, "/endpoints", nil, http.StatusOK, &listed); err != nil {
		return "", fmt.Errorf("listing the partner's endpoints: %w", err)
	}
	var id, status string
	for _, e := range listed.Data {
		if e.Description != description {
			continue
		}
		if id == "" {
			id, status = e.ID, e.Status
			continue
		}
		if err := api.call(ctx, http.MethodDelete, "/endpoints/"+e.ID, nil, http.StatusNoContent, nil); err != nil {
			return "", fmt.Errorf("deleting an earlier endpoint: %w", err)
		}
	}
	var endpoint struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	switch {
	case id == "":
		body := map[string]any{"url": url, "description": description}
		if eventTypes != nil {
			body["eventTypes"] = eventTypes
		}
		if err := api.call(ctx, http.MethodPost, "/endpoints", body, http.StatusCreated, &endpoint); err != nil {
			return "", fmt.Errorf("registering the endpoint: %w", err)
		}
	default:
		body := map[string]any{"url": url}
		if eventTypes != nil {
			body["eventTypes"] = eventTypes
		}
		if err := api.call(ctx, http.MethodPatch, "/endpoints/"+id, body, http.StatusOK, &endpoint); err != nil {
			return "", fmt.Errorf("moving the endpoint to %s: %w", url, err)
		}
		if status != "enabled" {
			if err := api.call(ctx, http.MethodPost, "/endpoints/"+id+"/enable", nil, http.StatusOK, nil); err != nil {
				return "", fmt.Errorf("enabling the endpoint: %w", err)
			}
		}
	}
	if endpoint.Data.ID == "" {
		return "", errors.New("registering the endpoint: the answer names no endpoint id")
	}
	return endpoint.Data.ID, nil
}

// devAPI calls the webhooks API through the edge with one bearer token.
type devAPI struct {
	base, token string
}

// call sends body (JSON, when not nil) and decodes the answer into into
// (when not nil); any status other than want is an error that quotes the
// answer. Every write carries a fresh Idempotency-Key.
func (a devAPI) call(ctx context.Context, method, path string, body any, want int, into any) error {
	var payload io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		payload = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, payload)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if method != http.MethodGet {
		key := make([]byte, 16)
		_, _ = rand.Read(key)
		req.Header.Set("Idempotency-Key", "devstack-"+hex.EncodeToString(key))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, answer)
	}
	if into == nil {
		return nil
	}
	return json.Unmarshal(answer, into)
}

func (r *devReceiver) close() {
	if r.srv == nil {
		_ = r.ln.Close()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
	<-r.done // http.ErrServerClosed: the stack is stopping
}
