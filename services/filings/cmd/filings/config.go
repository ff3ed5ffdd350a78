package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/redisclient"
)

// config is everything the service reads from its environment.
type config struct {
	HTTP         httpserver.Config
	Redis        redisclient.Config
	KafkaBrokers []string
	LogLevel     string
	PodName      string
}

func loadConfig(getenv func(string) string) (config, error) {
	r := envconf.New(getenv)
	cfg := config{
		HTTP:         httpserver.ConfigFromEnv(r, ":8082"),
		Redis:        redisclient.FromEnv(r),
		KafkaBrokers: r.List("KAFKA_BROKERS", []string{"127.0.0.1:9092"}),
		LogLevel:     r.String("LOG_LEVEL", "info"),
		PodName:      r.String("POD_NAME", hostname()),
	}
	errs := []error{r.Err(), cfg.HTTP.Validate(), cfg.Redis.Validate()}
	if len(cfg.KafkaBrokers) == 0 {
		errs = append(errs, errors.New("KAFKA_BROKERS must name at least one broker"))
	}
	if err := errors.Join(errs...); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}
