package auth

// ProtectedResource is the protected resource metadata of RFC 9728, the
// members the platform's resources state: where an OAuth client refused
// by a resource (its 401 names the document: ResourceMetadata) finds the
// authorization server that issues tokens for it, and what it may ask.
type ProtectedResource struct {
	// Resource is the resource identifier: the audience its account
	// tokens name (RFC 8707), which the client compares with the URL it
	// reached.
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
	ResourceDocumentation  string   `json:"resource_documentation,omitempty"`
}

// NewProtectedResource is the metadata of a resource that takes account
// tokens issued by authorizationServer: every account scope, in the
// Authorization header only (never a query or a form, where a token ends
// up in logs).
func NewProtectedResource(resource, authorizationServer, name string) ProtectedResource {
	scopes := make([]string, len(Scopes))
	for i, s := range Scopes {
		scopes[i] = string(s)
	}
	return ProtectedResource{
		Resource:               resource,
		AuthorizationServers:   []string{authorizationServer},
		ScopesSupported:        scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           name,
	}
}
