package problem

import (
	"encoding/json"
	"net/http"
)

// problemJSON renders a Body with the problem media type; gin's JSON renderer
// would overwrite Content-Type with application/json.
type problemJSON struct{ body Body }

func (r problemJSON) Render(w http.ResponseWriter) error {
	r.WriteContentType(w)
	return json.NewEncoder(w).Encode(r.body)
}

func (r problemJSON) WriteContentType(w http.ResponseWriter) {
	w.Header().Set("Content-Type", ContentType)
}
