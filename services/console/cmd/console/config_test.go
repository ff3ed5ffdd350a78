package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConfig(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	tests := []struct {
		name    string
		vars    map[string]string
		apiURL  string
		public  string
		secure  bool
		wantErr string
	}{
		{name: "development defaults: the local edge", apiURL: "http://127.0.0.1:8080", public: "http://127.0.0.1:8080"},
		{name: "behind the ingress", vars: map[string]string{"CONSOLE_API_URL": "http://pcourt-compat-edge:8080/", "PUBLIC_BASE_URL": "https://api.pcourt.example"},
			apiURL: "http://pcourt-compat-edge:8080", public: "https://api.pcourt.example", secure: true},
		{name: "an API URL that is not http(s)", vars: map[string]string{"CONSOLE_API_URL": "ftp://edge"}, wantErr: "API URL"},
		{name: "a public URL that is not one", vars: map[string]string{"PUBLIC_BASE_URL": "not a url"}, wantErr: "console"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadConfig(env(tt.vars))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.apiURL, cfg.Console.APIURL)
			require.Equal(t, tt.public, cfg.Console.PublicBaseURL)
			require.Equal(t, tt.secure, cfg.Console.SecureCookie)
			require.Equal(t, ":8088", cfg.Service.HTTP.Addr)
		})
	}
}
