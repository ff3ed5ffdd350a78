package main

import (
	"errors"
	"fmt"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/service"
)

// config is everything the service reads from its environment.
type config struct {
	Service service.Config
}

func loadConfig(getenv func(string) string) (config, error) {
	r := envconf.New(getenv)
	cfg := config{Service: service.ConfigFromEnv(r, ":8084")}
	if err := errors.Join(r.Err(), cfg.Service.Validate()); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}
