package proxy

import (
	"net/http"
	"strings"
)

// Transfer is a route that carries a file: an exhibit uploaded as
// multipart/form-data, of up to the largest per-file limit any rules
// version allows (100 MiB), or downloaded.
type Transfer struct {
	Method string
	// Pattern is the path with {name} for each path parameter.
	Pattern string
}

// Uploads are the routes that get the edge's upload limit instead of its
// body limit. The ingress gives the same paths its own larger body size
// (deploy/helm/pcourt/templates/ingress.yaml, libs/nginxtest): a path
// added here is added there too.
var Uploads = []Transfer{
	{http.MethodPost, "/api/cases/{id}/evidence"},
	{http.MethodPost, "/api/disputes/{id}/evidence/file"},
}

// Downloads are the routes that send a file back: one exhibit's original.
// They keep the body limit (a GET has no body) but get the transfer
// timeout, as uploads do.
var Downloads = []Transfer{
	{http.MethodGet, "/api/cases/{id}/evidence/{evidenceId}"},
}

// Streams are the routes whose answer may be a stream held open: the MCP
// server's POST /mcp, whose subscriptions/listen answer is an event
// stream that lasts up to MCP_STREAM_LIFETIME (docs/mcp.md). They get the
// transfer timeout to be answered and sent, as a download does; the
// stream's server ends it before then (its lifetime is shorter).
var Streams = []Transfer{
	{http.MethodPost, "/mcp"},
}

// isStream reports whether the request is one of Streams.
func isStream(method, path string) bool {
	for _, st := range Streams {
		if st.Method == method && matches(st.Pattern, path) {
			return true
		}
	}
	return false
}

// isUpload reports whether the request (its normalised path, as
// NormalizePath left it) is one of Uploads. A parameter matches one
// non-empty segment, as the inventory's do.
func isUpload(method, path string) bool {
	for _, u := range Uploads {
		if u.Method == method && matches(u.Pattern, path) {
			return true
		}
	}
	return false
}

// isDownload reports whether the request is one of Downloads.
func isDownload(method, path string) bool {
	for _, d := range Downloads {
		if d.Method == method && matches(d.Pattern, path) {
			return true
		}
	}
	return false
}

// matches reports whether path has pattern's segments, a {name} segment
// standing for any one non-empty segment. It walks both strings segment
// by segment: every proxied request asks it, so it allocates nothing.
func matches(pattern, path string) bool {
	for {
		w, wantRest, wantMore := strings.Cut(pattern, "/")
		g, gotRest, gotMore := strings.Cut(path, "/")
		param := len(w) >= 2 && w[0] == '{' && w[len(w)-1] == '}'
		if wantMore != gotMore || (param && g == "") || (!param && w != g) {
			return false
		}
		if !wantMore {
			return true
		}
		pattern, path = wantRest, gotRest
	}
}
