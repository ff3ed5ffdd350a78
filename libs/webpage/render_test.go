package webpage_test

import (
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/webpage"
)

// A site serves its own modules and stylesheets and the design system's
// stylesheet from /static/, each as its kind, and nothing else.
func TestStaticServesModulesStylesheetsAndTheDesignSystem(t *testing.T) {
	files := fstest.MapFS{
		"static/page.js":   {Data: []byte("export {};")},
		"static/page.css":  {Data: []byte("p{}")},
		"static/notes.txt": {Data: []byte("private")},
	}
	r := gin.New()
	r.GET("/static/:file", webpage.Static(files))
	for _, tc := range []struct {
		file, contentType string
		status            int
		body              []byte
	}{
		{"page.js", "text/javascript; charset=utf-8", 200, []byte("export {};")},
		{"page.css", "text/css; charset=utf-8", 200, []byte("p{}")},
		{webpage.StylesheetFile, "text/css; charset=utf-8", 200, webpage.Stylesheet},
		{"notes.txt", "text/plain; charset=utf-8", 404, []byte("Not found.\n")},
		{"missing.js", "text/plain; charset=utf-8", 404, []byte("Not found.\n")},
	} {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/static/"+tc.file, nil))
		require.Equal(t, tc.status, rec.Code, tc.file)
		require.Equal(t, tc.contentType, rec.Header().Get("Content-Type"), tc.file)
		require.Equal(t, tc.body, rec.Body.Bytes(), tc.file)
	}
}

// A page whose template fails is a plain 500, never half a page.
func TestRenderSendsAWholePageOrNone(t *testing.T) {
	tmpl := template.Must(template.New("").Parse(`{{define "ok"}}<p>{{.}}</p>{{end}}{{define "broken"}}<p>start</p>{{.Missing}}{{end}}`))
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	r := gin.New()
	r.GET("/ok", func(c *gin.Context) { webpage.Render(c, logger, tmpl, http.StatusCreated, "ok", "hello") })
	r.GET("/broken", func(c *gin.Context) {
		webpage.Render(c, logger, tmpl, http.StatusOK, "broken", "a string has no fields")
	})

	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ok", nil))
	require.Equal(t, http.StatusCreated, rec.Code)
	require.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
	require.Equal(t, "<p>hello</p>", rec.Body.String())

	rec = httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/broken", nil))
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.Equal(t, "Something went wrong.\n", rec.Body.String())
}
