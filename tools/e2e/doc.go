// Package e2e runs the whole pcourt system in containers, from the images
// `make images` builds, and walks it as partners do through nginx: the
// journey, then faults under load (replica kills, rolling restarts, Redis
// and broker kills). The tests need a Docker engine and minutes; they run
// only with E2E=1 (`make e2e`), never in `make test`.
package e2e
