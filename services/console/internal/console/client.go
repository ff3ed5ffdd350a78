package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/requestid"
)

// client calls the public API as the partner, with the session's bearer
// credential, over HTTP through the edge (one base URL), as a partner's
// own backend does: the same routes, shapes and checks, so nothing is
// reached that a partner could not reach itself.
type client struct {
	base *url.URL
	hc   *http.Client
}

// APIError is a problem answer of the public API.
type APIError struct {
	Status int
	Code   string
	Title  string
	Detail string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("API answered %d %s: %s", e.Status, e.Code, e.Detail)
}

// maxAPIBody bounds what the console reads of one API answer.
const maxAPIBody = 4 << 20

// call sends one request; out receives the JSON answer of a 2xx. bearer ""
// sends none (public routes such as the keys).
func (cl *client) call(ctx context.Context, bearer, method, path string, query url.Values, body any, idempotencyKey string, out any) error {
	u := *cl.base
	u.Path = strings.TrimRight(cl.base.Path, "/") + path
	u.RawQuery = query.Encode()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	if id := requestid.FromContext(ctx); id != "" {
		req.Header.Set(requestid.Header, id)
	}
	resp, err := cl.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIBody))
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		var p struct {
			Code   string `json:"code"`
			Title  string `json:"title"`
			Detail string `json:"detail"`
		}
		_ = json.Unmarshal(raw, &p)
		if p.Code == "" {
			p.Code, p.Title, p.Detail = "unexpected_answer", http.StatusText(resp.StatusCode), "The service answered without a problem body."
		}
		return &APIError{Status: resp.StatusCode, Code: p.Code, Title: p.Title, Detail: p.Detail}
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}

func apiError(err error) (*APIError, bool) {
	var e *APIError
	ok := errors.As(err, &e)
	return e, ok
}

// The public API's shapes the console reads (services/webhooks'
// responses, as docs/webhooks.md and api/openapi.yaml describe them).
type (
	endpoint struct {
		ID                string    `json:"id"`
		URL               string    `json:"url"`
		EventTypes        []string  `json:"eventTypes"`
		Description       string    `json:"description"`
		Status            string    `json:"status"`
		DisabledReason    string    `json:"disabledReason"`
		CreatedAt         time.Time `json:"createdAt"`
		OperationalEvents []struct {
			Type         string     `json:"type"`
			At           time.Time  `json:"at"`
			Reason       string     `json:"reason"`
			FailingSince *time.Time `json:"failingSince"`
			Failures     int        `json:"failures"`
		} `json:"operationalEvents"`
	}
	delivery struct {
		ID            string     `json:"id"`
		EventID       string     `json:"eventId"`
		EventType     string     `json:"eventType"`
		EndpointID    string     `json:"endpointId"`
		Status        string     `json:"status"`
		Trigger       string     `json:"trigger"`
		ReplayOf      string     `json:"replayOf"`
		AttemptCount  int        `json:"attemptCount"`
		CreatedAt     time.Time  `json:"createdAt"`
		NextAttemptAt *time.Time `json:"nextAttemptAt"`
		LastAttemptAt *time.Time `json:"lastAttemptAt"`
		LastStatus    int        `json:"lastResponseStatus"`
		RequestBody   string     `json:"requestBody"`
		Attempts      []attempt  `json:"attempts"`
	}
	attempt struct {
		Number          int               `json:"number"`
		Trigger         string            `json:"trigger"`
		StartedAt       time.Time         `json:"startedAt"`
		DurationMs      int64             `json:"durationMs"`
		URL             string            `json:"url"`
		KeyID           string            `json:"keyId"`
		RequestHeaders  map[string]string `json:"requestHeaders"`
		ResponseStatus  int               `json:"responseStatus"`
		ResponseHeaders map[string]string `json:"responseHeaders"`
		ResponseBody    string            `json:"responseBody"`
		Outcome         string            `json:"outcome"`
		ErrorClass      string            `json:"errorClass"`
		Error           string            `json:"error"`
		NextAttemptAt   *time.Time        `json:"nextAttemptAt"`
	}
	endpointHealth struct {
		Status              string        `json:"status"`
		Since               time.Time     `json:"since"`
		Attempts            int64         `json:"attempts"`
		Successes           int64         `json:"successes"`
		SuccessRate         *float64      `json:"successRate"`
		LatencyAvgMs        int64         `json:"latencyAvgMs"`
		LatencyP95Ms        int64         `json:"latencyP95Ms"`
		FailingSince        *time.Time    `json:"failingSince"`
		ConsecutiveFailures int           `json:"consecutiveFailures"`
		DisableAt           *time.Time    `json:"disableAt"`
		DisableMinFailures  int           `json:"disableMinFailures"`
		Window              string        `json:"window"`
		Hours               []hourFigures `json:"hours"`
	}
	hourFigures struct {
		Start        time.Time `json:"start"`
		Attempts     int64     `json:"attempts"`
		Successes    int64     `json:"successes"`
		SuccessRate  *float64  `json:"successRate"`
		LatencyP50Ms int64     `json:"latencyP50Ms"`
		LatencyP95Ms int64     `json:"latencyP95Ms"`
	}
	recovery struct {
		ID           string        `json:"id"`
		EndpointID   string        `json:"endpointId"`
		Since        time.Time     `json:"since"`
		Until        time.Time     `json:"until"`
		Status       string        `json:"status"`
		Total        int           `json:"total"`
		Scanned      int           `json:"scanned"`
		Scheduled    int           `json:"scheduled"`
		Replays      outcomeCounts `json:"replays"`
		LimitReached bool          `json:"limitReached"`
		NextSince    *time.Time    `json:"nextSince"`
		CancelReason string        `json:"cancelReason"`
		CreatedAt    time.Time     `json:"createdAt"`
		UpdatedAt    time.Time     `json:"updatedAt"`
		CompletedAt  *time.Time    `json:"completedAt"`
	}
	outcomeCounts struct {
		Scheduled int `json:"scheduled"`
		Delivered int `json:"delivered"`
		Failed    int `json:"failed"`
		Cancelled int `json:"cancelled"`
	}
	jwk struct {
		Kty string `json:"kty"`
		Crv string `json:"crv"`
		X   string `json:"x"`
		Kid string `json:"kid"`
		Use string `json:"use,omitempty"`
		Alg string `json:"alg,omitempty"`
	}
)
