package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
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

// register subscribes the receiver, for every event type, as an endpoint of
// the orchestrator's partner, through the edge like any partner, and starts
// serving it: deliveries that arrive meanwhile wait in the listen queue.
func (r *devReceiver) register(ctx context.Context, cfg config, orchestratorToken string, out io.Writer) error {
	body, err := json.Marshal(map[string]any{"url": r.url, "description": "make run: the development receiver"})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/api/v2/webhooks/endpoints", cfg.EdgePort), bytes.NewReader(body))
	if err != nil {
		return err
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+orchestratorToken)
	req.Header.Set("Idempotency-Key", "devstack-"+hex.EncodeToString(key))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("registering the development receiver: %w", err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("registering the development receiver: %s: %s", resp.Status, answer)
	}
	var created struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(answer, &created); err != nil || created.Data.ID == "" {
		return fmt.Errorf("registering the development receiver: no endpoint id in %s", answer)
	}
	return r.serve(cfg, created.Data.ID, out)
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
