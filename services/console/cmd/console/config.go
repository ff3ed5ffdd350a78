package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/service"
	"github.com/pcourt/pcourt/services/console/internal/console"
)

// config is everything the console reads from its environment.
type config struct {
	Service service.Config
	// Console is the console's part: CONSOLE_API_URL, where it calls the
	// public API (the edge); PUBLIC_BASE_URL, where browsers reach it
	// (the edge's public URL), whose origin its form posts must come from
	// and whose scheme decides the session cookie's Secure flag.
	Console console.Config
}

func loadConfig(getenv func(string) string) (config, error) {
	r := envconf.New(getenv)
	cfg := config{Service: service.ConfigFromEnv(r, ":8088"), Console: console.DefaultConfig()}
	cfg.Console.APIURL = strings.TrimSuffix(r.String("CONSOLE_API_URL", cfg.Console.APIURL), "/")
	cfg.Console.PublicBaseURL = strings.TrimSuffix(r.String("PUBLIC_BASE_URL", cfg.Console.PublicBaseURL), "/")
	cfg.Console.SecureCookie = strings.HasPrefix(cfg.Console.PublicBaseURL, "https:")
	if err := errors.Join(r.Err(), cfg.Service.Validate(), cfg.Console.Validate()); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}
