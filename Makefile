# pcourt — every target works on a fresh machine of the project's kind.
# Each module builds and tests on its own (GOWORK=off); go.work is only a
# convenience for editors and `make run`.

SHELL   := /bin/bash
GO      ?= go
MODULES := api libs tools services/accounts services/mcp services/readiness services/filings services/cases services/webhooks services/compat-edge services/console
SERVICES := readiness filings cases webhooks compat-edge console accounts mcp
# Further commands of a service module, built and imaged like the services:
# compat-controller is compat-edge's second binary.
COMMANDS := compat-controller
# Supporting processes built into FROM-scratch images like the services.
TOOL_IMAGES := facilitator webhook-receiver kafka-broker
# helm and kube-apiserver are built of the releases one module of ours
# requires, tools/kubeassets (k8s.io/kubernetes, helm.sh/helm/v3): its
# go.mod requires every module the edge and the tools also build at their
# versions, so the Kubernetes client and API packages all three use are
# compiled once on a fresh machine (docs/development.md, "CI time").
# KUBE_VERSION is also the version the chart is linted and rendered for (a
# helm built from source assumes v1.20, below the chart's kubeVersion,
# >= 1.30). helm is v3.21.4: the module proxy serves v3.22.0, but it is
# not an approved release.
KUBEASSETS   := tools/kubeassets
KUBE_VERSION := $(patsubst v%,%,$(shell awk '$$1 == "k8s.io/kubernetes" {print $$2}' $(KUBEASSETS)/go.mod))
HELM_VERSION := $(shell awk '$$1 == "helm.sh/helm/v3" {print $$2}' $(KUBEASSETS)/go.mod)
REVISION := $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
STATICCHECK_VERSION := v0.8.2
CONTROLLER_GEN_VERSION := v0.23.0
BIN     := $(CURDIR)/bin
# One build configuration for everything, so that a fresh machine compiles
# each package once (docs/development.md, "CI time"): the shipped binaries'
# (CGO_ENABLED=0 -trimpath). make build and the images, make run, the
# tests, make lint's analysers, make e2e and every tool built from source
# (helm, staticcheck, kube-apiserver, the S3 test server) share it.
# The race detector has a configuration of its own (cgo, every package
# instrumented), so it compiles only what its packages need: see RACE_PACKAGES.
# Test binaries and tools link without DWARF (-ldflags=-w; stack traces
# and profiles need only the symbol and line tables, which stay): about a
# third of each link's CPU, and make test links a few hundred binaries.
# make build strips the images' binaries further (LDFLAGS).
SHIPPED := GOWORK=off CGO_ENABLED=0 GOFLAGS='-trimpath -ldflags=-w'
# -race goes on the command line, not in GOFLAGS: the tests that build the
# services (tools/devstack) pass GOFLAGS on to a shipped build.
RACE    := GOWORK=off CGO_ENABLED=1 GOFLAGS=-ldflags=-w
# The compiler, the linker and the analysers allocate much and keep little:
# at GOGC=800 they collect an eighth as often as at the runtime's 100, for
# about a fifth less CPU on a cold compile (docs/development.md, "CI
# time"); the memory limit keeps the largest (staticcheck over the
# Kubernetes client) within what two at once can hold. Only the builds get
# them: the programs the tests run (TEST_EXEC) and the benchmarks keep the
# runtime's defaults, and the services their own (libs/service, GCPercent).
BUILD_GC := GOGC=800 GOMEMLIMIT=6GiB
# go test runs each test binary without BUILD_GC, and without the subset of
# go vet it would run first: make lint runs all of go vet over the same
# packages, test files included.
TEST_EXEC := -vet=off -exec 'env -u GOGC -u GOMEMLIMIT'
# The race detector runs on the code the services ship: the packages of
# libs and of the services whose own code shares memory between
# goroutines, which it must do through sync, sync/atomic or errgroup (a go
# list template, one import path a line). Test helpers (the packages named
# *test: redistest, kafkatest, s3test, …) and the tools (the dev stack, the
# demo, pcadm, the test servers) run in the shipped configuration alone,
# like every other package: each package's tests run once.
RACE_MODULES  := libs $(filter services/%,$(MODULES))
RACE_PACKAGES := {{$$p := .ImportPath}}{{range .Imports}}{{if or (eq . "sync") (eq . "sync/atomic") (eq . "golang.org/x/sync/errgroup")}}{{$$p}}{{"\n"}}{{end}}{{end}}
# kube-apiserver of that version, built from source through the module
# proxy (tools/kubeassets pins the release), beside Debian's etcd
# in envtest's asset layout. The tests that need an API server (tools/kubecheck) find them
# through KUBEBUILDER_ASSETS, set for every test run once they exist.
KUBE_ASSETS := $(BIN)/k8s/$(KUBE_VERSION)
ifeq ($(words $(wildcard $(KUBE_ASSETS)/etcd $(KUBE_ASSETS)/kube-apiserver)),2)
export KUBEBUILDER_ASSETS ?= $(KUBE_ASSETS)
endif
# The container end-to-end tests make e2e runs (a go test -run pattern).
E2E_RUN ?= .

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: ## Start the whole system locally (kfake, redis-server, every service and the edge on :8080).
	CGO_ENABLED=0 $(GO) run -trimpath ./tools/devstack

.PHONY: test
# Two modules at a time: a module's tests leave about half of the two cores
# idle (they wait on Redis, brokers, browsers and subprocesses). The
# longest start first (tools' stack tests; libs; readiness, whose payment
# tests are slowest under the race detector), so that no long module is
# left to run alone at the end. Each module's output is printed whole when
# it ends.
# Every module of MODULES is tested: the ones named here first, the rest after.
TEST_FIRST := tools libs services/readiness services/compat-edge
TEST_ORDER := $(TEST_FIRST) $(filter-out $(TEST_FIRST),$(MODULES))
test: ## Run every module's tests: the shipped build, the race detector where goroutines share memory.
	@$(MAKE) --no-print-directory -j2 --output-sync=target $(addprefix test/,$(TEST_ORDER))

# tools/devstack starts the whole stack once per test (the evidence walk
# streams a gigabyte through it): more than go test's default 10 minutes.
# A module's race packages run under -race alone, the others without it:
# every package's tests run once.
test/%:
	@set -eo pipefail; cd $*; \
	race=$(if $(filter $*,$(RACE_MODULES)),$$($(SHIPPED) $(GO) list -f '$(RACE_PACKAGES)' ./... | { grep -v 'test$$' || true; } | sort -u)); \
	plain=$$($(SHIPPED) $(GO) list ./... | { grep -vxF -f <(echo "$$race") || true; }); \
	echo "test $* ($$(echo $$plain | wc -w) packages; $$(echo $$race | wc -w) more with -race)"; \
	if [ -n "$$plain" ]; then $(SHIPPED) $(BUILD_GC) $(GO) test $(TEST_EXEC) -count=1 -timeout 30m $$plain; fi; \
	if [ -n "$$race" ]; then $(RACE) $(BUILD_GC) $(GO) test $(TEST_EXEC) -race -count=1 -timeout 30m $$race; fi

.PHONY: lint
# vet and staticcheck load the packages in the shipped configuration, as
# `make test` compiles them: lint's compile is the tests'.
lint: $(BIN)/staticcheck ## gofmt, go vet, staticcheck and the import rules over every module.
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	cd tools && $(SHIPPED) $(BUILD_GC) $(GO) run ./importrules ..
	@set -e; for m in $(MODULES); do echo "vet+staticcheck $$m"; (cd $$m && export $(SHIPPED) $(BUILD_GC) && $(GO) vet ./... && $(BIN)/staticcheck ./...); done

$(BIN)/staticcheck:
	GOBIN=$(BIN) CGO_ENABLED=0 $(BUILD_GC) $(GO) install -trimpath honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

.PHONY: generate
generate: ## Regenerate compat-edge's CompatibilityFamily DeepCopy, CRD and the compat-controller's RBAC role (controller-gen).
	cd services/compat-edge && GOWORK=off $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION) \
		object crd rbac:roleName=compat-controller paths=./api/... paths=./internal/controller/... \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	cp services/compat-edge/config/crd/bases/compat.pcourt.dev_compatibilityfamilies.yaml deploy/helm/pcourt/crds/compatibilityfamilies.yaml

.PHONY: bench
bench: ## Run the benchmarks (compare ratios within one run; the machine is shared).
	@set -eo pipefail; for m in $(MODULES); do (cd $$m && $(SHIPPED) $(GO) test -run='^$$' -bench=. -benchmem ./... | { grep -v '^?\|no test files' || true; }); done

.PHONY: build
build: $(addprefix $(BIN)/linux/,$(SERVICES) $(COMMANDS) $(TOOL_IMAGES)) ## Build static linux binaries of the services (and compat-controller) and supporting tools into bin/linux.

LDFLAGS = -s -w -X main.version=$$(git describe --always --dirty 2>/dev/null || echo dev)

# Each binary builds in its own module (GOWORK=off), as make test and make
# lint compile it: a machine that ran them links the binaries from
# packages already compiled.
$(addprefix $(BIN)/linux/,$(SERVICES)): $(BIN)/linux/%: FORCE
	cd services/$* && $(SHIPPED) $(BUILD_GC) GOOS=linux $(GO) build -ldflags "$(LDFLAGS)" -o $@ ./cmd/$*

$(BIN)/linux/compat-controller: FORCE
	cd services/compat-edge && $(SHIPPED) $(BUILD_GC) GOOS=linux $(GO) build -ldflags "$(LDFLAGS)" -o $@ ./cmd/compat-controller

$(addprefix $(BIN)/linux/,$(TOOL_IMAGES)): $(BIN)/linux/%: FORCE
	cd tools && $(SHIPPED) $(BUILD_GC) GOOS=linux $(GO) build -ldflags "$(LDFLAGS)" -o $@ ./$*

.PHONY: images
images: build images-deps ## Build every image with no registry: pcourt/<service>:dev, compat-controller, facilitator, webhook-receiver, kafka-broker (FROM scratch), redis and nginx (Debian).
	@set -e; for s in $(SERVICES) $(COMMANDS) $(TOOL_IMAGES); do \
	  ctx=$(BIN)/images/$$s; rm -rf $$ctx; mkdir -p $$ctx; \
	  ln -f $(BIN)/linux/$$s $$ctx/$$s; cp /etc/ssl/certs/ca-certificates.crt $$ctx/; \
	  dockerfile=deploy/docker/Dockerfile; \
	  if [ $$s = kafka-broker ]; then dockerfile=deploy/docker/kafka-broker.Dockerfile; mkdir $$ctx/kafka-data; fi; \
	  echo "docker build pcourt/$$s:dev"; \
	  docker build -q -f $$dockerfile --build-arg SERVICE=$$s \
	    --label org.opencontainers.image.revision=$(REVISION) -t pcourt/$$s:dev $$ctx >/dev/null; \
	done

.PHONY: e2e
e2e: images ## The whole system in containers (tools/e2e, testcontainers-go, local images only): the journey through nginx, then faults under load (E2E_RUN selects tests).
	cd tools && E2E=1 TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1 \
	  $(SHIPPED) $(BUILD_GC) $(GO) test $(TEST_EXEC) -count=1 -timeout 20m -v -run '$(E2E_RUN)' ./e2e

.PHONY: images-deps
images-deps: ## Build pcourt/redis:dev and pcourt/nginx:dev from Debian packages on a debootstrapped root (cached in .cache/ and as pcourt/debian-base).
	REVISION=$(REVISION) deploy/docker/debian/build.sh

.PHONY: helm
helm: $(BIN)/helm ## Build helm into bin/ (the version tools/kubeassets requires; bin/ keeps it between runs).

# Each version in a directory of its own, bin/helm a link to the pinned
# one: a machine that kept another version's bin/helm builds this one
# (helm version names only the minor release).
$(BIN)/helm-$(HELM_VERSION)/helm:
	cd $(KUBEASSETS) && GOWORK=off CGO_ENABLED=0 $(BUILD_GC) $(GO) build -trimpath -ldflags=-w -o $@ helm.sh/helm/v3/cmd/helm

$(BIN)/helm: $(BIN)/helm-$(HELM_VERSION)/helm
	ln -sfn helm-$(HELM_VERSION)/helm $@

# SeaweedFS, the real S3-compatible server libs/objectstore's tests run
# (weed mini, through libs/objectstore/s3test). `go install …@version` is
# refused, as its go.mod has a replace directive, so the module is
# downloaded through the module proxy and built inside a writable copy
# (.cache/, kept, so a rebuild reuses it). About 1,700 packages, the
# largest of the test tools; .ci/run builds it beside the lint and bin/weed
# is then kept (docs/operations.md, "Evidence storage").
WEED_VERSION := v0.0.0-20261109003541-7506e5f91cd6
WEED_SRC := $(CURDIR)/.cache/seaweedfs-$(WEED_VERSION)
# A test server, compiled without optimisation or inlining: a quarter less
# CPU (327 to 247 CPU-seconds on a fresh machine) for the same test times
# (libs/objectstore's tests take 33 s either way). The standard library
# keeps the build configuration's flags (the last matching pattern wins),
# so it is the one the lint and the tests compiled.
WEED_GCFLAGS := -gcflags='all=-N -l' -gcflags='std='

.PHONY: weed
weed: $(BIN)/weed ## Build SeaweedFS's weed (the S3 server of the object store tests) into bin/ from the module proxy; kept between runs.

$(BIN)/weed:
	@set -e; if [ ! -f $(WEED_SRC)/go.mod ]; then \
	  mod=$$(cd /tmp && GOWORK=off $(GO) mod download -json github.com/seaweedfs/seaweedfs@$(WEED_VERSION) | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p'); \
	  [ -n "$$mod" ] || { echo "go mod download found no github.com/seaweedfs/seaweedfs@$(WEED_VERSION)"; exit 1; }; \
	  rm -rf $(WEED_SRC).tmp; mkdir -p $(dir $(WEED_SRC)); cp -R $$mod $(WEED_SRC).tmp; chmod -R u+w $(WEED_SRC).tmp; mv $(WEED_SRC).tmp $(WEED_SRC); \
	fi
	cd $(WEED_SRC) && GOWORK=off CGO_ENABLED=0 GOFLAGS=-buildvcs=false $(BUILD_GC) $(GO) build -trimpath -ldflags=-w $(WEED_GCFLAGS) -o $@ ./weed

.PHONY: helm-lint
helm-lint: $(BIN)/helm ## helm lint --strict and helm template of deploy/helm/pcourt (default and production values), then the manifest checks of tools/helmcheck.
	@set -e; for values in "" "-f deploy/helm/pcourt/values-production.yaml"; do \
	  echo "helm lint --strict $$values"; \
	  $(BIN)/helm lint --strict --quiet --kube-version $(KUBE_VERSION) deploy/helm/pcourt $$values; \
	  echo "helm template $$values"; \
	  $(BIN)/helm template pcourt deploy/helm/pcourt --kube-version $(KUBE_VERSION) $$values >/dev/null; \
	done
	cd tools && $(SHIPPED) $(BUILD_GC) HELM=$(BIN)/helm $(GO) test $(TEST_EXEC) -count=1 ./helmcheck

.PHONY: kube-assets
kube-assets: $(KUBE_ASSETS)/etcd $(KUBE_ASSETS)/kube-apiserver ## Build kube-apiserver from source (module proxy) into bin/k8s/<version> beside Debian's etcd, kept between runs.

# etcd is Debian's (apt-get install etcd-server), linked into envtest's
# layout: a real etcd, which the dry run and the controller tests need only
# as kube-apiserver's store, without a source build of its own (about 80
# CPU-seconds on a fresh machine).
$(KUBE_ASSETS)/etcd:
	@etcd=$$(command -v etcd || true); \
	[ -n "$$etcd" ] || { echo "etcd is missing: apt-get install etcd-server"; exit 1; }; \
	mkdir -p $(dir $@) && ln -sf $$etcd $@

# The version the binary reports: a module build has no git tree to stamp it.
$(KUBE_ASSETS)/kube-apiserver:
	cd $(KUBEASSETS) && GOWORK=off CGO_ENABLED=0 $(BUILD_GC) $(GO) build -trimpath \
		-ldflags "-w -X k8s.io/component-base/version.gitVersion=v$(KUBE_VERSION) -X k8s.io/component-base/version.gitMajor=$(word 1,$(subst ., ,$(KUBE_VERSION))) -X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(KUBE_VERSION)))" \
		-o $@ ./apiserver

.PHONY: kube-check
kube-check: $(BIN)/helm kube-assets ## Apply the chart (default and production values) and its CRD to a real kube-apiserver with server-side dry run (tools/kubecheck).
	cd tools && $(SHIPPED) $(BUILD_GC) HELM=$(BIN)/helm KUBEBUILDER_ASSETS=$(KUBE_ASSETS) $(GO) test $(TEST_EXEC) -count=1 -v -run . ./kubecheck

.PHONY: tidy
tidy: ## go mod tidy in every module.
	@set -e; for m in $(MODULES); do (cd $$m && GOWORK=off $(GO) mod tidy); done

.PHONY: FORCE
FORCE:

.PHONY: screenshots
screenshots: ## Refresh the pictures in docs/console and docs/respond: the Chromium walks at 1280 and 375 px, light and dark, each page audited.
	cd services/console && $(SHIPPED) PC_CONSOLE_SCREENSHOTS=1 $(GO) test -count=1 -run Chromium ./internal/console/
	cd services/cases && $(SHIPPED) PC_RESPOND_SCREENSHOTS=1 $(GO) test -count=1 -run Chromium ./internal/respond/

.PHONY: bench-edge
bench-edge: ## Measure the edge against direct, nginx and a bare Go proxy: the real processes under a load generator (3–5 minutes on 2 cores).
	cd tools && GOWORK=off CGO_ENABLED=0 $(GO) run -trimpath ./benchedge
