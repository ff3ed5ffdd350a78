package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
)

// The website aliases (/api/disputes/...) keep their envelope: success is
// {"ok": true, "data": …}, failure {"ok": false, "error": {"code", "message"}}
// with the same status a problem would have. Handlers and the shared
// middleware (credentials, idempotency journal) answer in the canonical
// form; websiteEnvelope rewrites the answer on its way out, so the journal
// keeps one form and a retry may cross route families.

type websiteError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type websiteFailure struct {
	OK    bool         `json:"ok"`
	Error websiteError `json:"error"`
}

type websiteSuccess struct {
	OK   bool            `json:"ok"`
	Data json.RawMessage `json:"data"`
}

func websiteEnvelope() gin.HandlerFunc {
	return func(c *gin.Context) {
		w := &capture{ResponseWriter: c.Writer, status: http.StatusOK}
		c.Writer = w
		c.Next()
		c.Writer = w.ResponseWriter
		if w.file {
			return // a file went out as it is (see capture.file)
		}
		// An error a handler recorded but nobody rendered yet is rendered
		// now, through the server's mapper, so that it gets the envelope
		// too: the error middleware of libs/httpserver runs outside this
		// route middleware and would render it after the envelope was
		// written. This is the one direct problem.Render of the service.
		if !w.wrote && len(c.Errors) > 0 {
			c.Writer = w
			problem.Render(c, c.Errors.Last().Err)
			c.Writer = w.ResponseWriter
			c.Errors = c.Errors[:0]
		}
		body := rewrite(w.Header().Get("Content-Type"), w.status, w.body.Bytes())
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.ResponseWriter.WriteHeader(w.status)
		_, _ = w.ResponseWriter.Write(body)
	}
}

// rewrite turns a canonical answer into the website envelope.
func rewrite(contentType string, status int, body []byte) []byte {
	if strings.HasPrefix(contentType, problem.ContentType) || status >= http.StatusBadRequest {
		var p problem.Body
		if err := json.Unmarshal(body, &p); err != nil || p.Code == "" {
			p.Code, p.Detail = "internal", "The server could not complete the request."
		}
		out, _ := json.Marshal(websiteFailure{Error: websiteError{Code: p.Code, Message: p.Detail}})
		return out
	}
	var canonical struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &canonical); err != nil || len(canonical.Data) == 0 {
		canonical.Data = json.RawMessage("null")
	}
	out, _ := json.Marshal(websiteSuccess{OK: true, Data: canonical.Data})
	return out
}

// capture holds the answer back until websiteEnvelope has rewritten it.
type capture struct {
	gin.ResponseWriter
	status int
	wrote  bool
	body   bytes.Buffer
	// file says the answer is a file download (a 2xx with
	// Content-Disposition: attachment, as the record bundle): it has no
	// envelope and streams through as it is written, never buffered.
	file bool
}

func (w *capture) WriteHeader(code int) {
	if w.wrote {
		return
	}
	w.status = code
	if code < http.StatusMultipleChoices && strings.HasPrefix(w.Header().Get("Content-Disposition"), "attachment") {
		w.file = true
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *capture) WriteHeaderNow() { w.wrote = true }

func (w *capture) Write(b []byte) (int, error) {
	w.wrote = true
	if w.file {
		return w.ResponseWriter.Write(b)
	}
	return w.body.Write(b)
}

func (w *capture) WriteString(s string) (int, error) {
	w.wrote = true
	if w.file {
		return w.ResponseWriter.WriteString(s)
	}
	return w.body.WriteString(s)
}

func (w *capture) Status() int { return w.status }

func (w *capture) Size() int {
	if !w.wrote {
		return -1
	}
	return w.body.Len()
}

func (w *capture) Written() bool { return w.wrote }

func (w *capture) Flush() {}
