package webpage

import (
	"bytes"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"path"

	"github.com/gin-gonic/gin"
)

// Render answers a page: t's template name executed with data into a
// buffer first, so a template error never sends half a page; it is
// logged, and the answer is a plain 500.
func Render(c *gin.Context, logger *slog.Logger, t *template.Template, status int, name string, data any) {
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, data); err != nil {
		logger.ErrorContext(c.Request.Context(), "rendering a page failed", "page", name, "err", err)
		c.Data(http.StatusInternalServerError, "text/plain; charset=utf-8", []byte("Something went wrong.\n"))
		return
	}
	c.Data(status, "text/html; charset=utf-8", buf.Bytes())
}

// staticTypes are the media types a site's static files are served as:
// its modules and stylesheets, nothing else.
var staticTypes = map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}

// Static serves a site's own modules and stylesheets, files/static/<file>
// for the route parameter file, and the design system's stylesheet as
// StylesheetFile; any other name, or a file of another kind, is 404.
func Static(files fs.FS) gin.HandlerFunc {
	return func(c *gin.Context) {
		name := path.Base(c.Param("file"))
		b, err := fs.ReadFile(files, "static/"+name)
		if name == StylesheetFile {
			b, err = Stylesheet, nil
		}
		ct, known := staticTypes[path.Ext(name)]
		if err != nil || !known {
			c.Data(http.StatusNotFound, "text/plain; charset=utf-8", []byte("Not found.\n"))
			return
		}
		c.Data(http.StatusOK, ct, b)
	}
}
