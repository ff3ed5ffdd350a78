package proxy

import (
	"bytes"
	_ "embed"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
)

//go:embed guide/migration.html
var guideHTML string

// guideTemplate renders the guide from the inventory and the policy in
// force, so the page can never disagree with what the edge announces.
var guideTemplate = template.Must(template.New("guide").Funcs(template.FuncMap{
	"join":      func(s []string) string { return strings.Join(s, ", ") },
	"windowEnd": func(w *policy.Window) string { return w.End(nil).Format(time.DateOnly) },
}).Parse(guideHTML))

// Guide serves the migration guide that every announcement links to.
func (p *Proxy) Guide(c *gin.Context) {
	pol := policy.Resolve(policy.Env{}, nil)
	if p.compat.Policy != nil {
		pol = p.compat.Policy()
	}
	var b bytes.Buffer
	err := guideTemplate.Execute(&b, struct {
		Enabled bool
		Windows []*policy.Window
		Routes  []inventory.Route
	}{pol.Enabled, pol.Windows(), inventory.Routes})
	if err != nil {
		_ = c.Error(err)
		return
	}
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, "text/html; charset=utf-8", b.Bytes())
}
