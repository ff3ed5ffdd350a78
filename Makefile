# pcourt — every target works on a fresh machine of the project's kind.
# Each module builds and tests on its own (GOWORK=off); go.work is only a
# convenience for editors and `make run`.

SHELL   := /bin/bash
GO      ?= go
MODULES := api libs tools services/readiness services/filings services/cases services/webhooks services/compat-edge
SERVICES := readiness filings cases webhooks compat-edge
STATICCHECK_VERSION := v0.8.2
CONTROLLER_GEN_VERSION := v0.23.0
BIN     := $(CURDIR)/bin

.DEFAULT_GOAL := help

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-10s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: ## Start the whole system locally (kfake, redis-server, five services, edge on :8080).
	$(GO) run ./tools/devstack

.PHONY: test
test: $(addprefix test/,$(MODULES)) ## Run every module's tests with the race detector.

test/%:
	cd $* && GOWORK=off $(GO) test -race -count=1 ./...

.PHONY: lint
lint: $(BIN)/staticcheck ## gofmt, go vet, staticcheck and the import rules over every module.
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	cd tools && GOWORK=off $(GO) run ./importrules ..
	@set -e; for m in $(MODULES); do echo "vet+staticcheck $$m"; (cd $$m && GOWORK=off $(GO) vet ./... && GOWORK=off $(BIN)/staticcheck ./...); done

$(BIN)/staticcheck:
	GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

.PHONY: generate
generate: ## Regenerate compat-edge's CompatibilityFamily DeepCopy, CRD and RBAC role (controller-gen).
	cd services/compat-edge && GOWORK=off $(GO) run sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION) \
		object crd rbac:roleName=compat-edge paths=./api/... paths=./internal/controller/... \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac

.PHONY: bench
bench: ## Run the benchmarks (compare ratios within one run; the machine is shared).
	@set -eo pipefail; for m in $(MODULES); do (cd $$m && GOWORK=off $(GO) test -run='^$$' -bench=. -benchmem ./... | { grep -v '^?\|no test files' || true; }); done

.PHONY: build
build: $(addprefix $(BIN)/linux/,$(SERVICES)) ## Build static linux binaries of the services into bin/linux.

$(BIN)/linux/%: FORCE
	CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -ldflags "-s -w -X main.version=$$(git describe --always --dirty 2>/dev/null || echo dev)" -o $@ ./services/$*/cmd/$*

.PHONY: images
images: build ## Build a FROM-scratch image per service (pcourt/<service>:dev); needs no registry.
	cp /etc/ssl/certs/ca-certificates.crt $(BIN)/linux/ca-certificates.crt
	@set -e; for s in $(SERVICES); do docker build -q -f deploy/docker/Dockerfile --build-arg SERVICE=$$s -t pcourt/$$s:dev $(BIN)/linux; done

.PHONY: tidy
tidy: ## go mod tidy in every module.
	@set -e; for m in $(MODULES); do (cd $$m && GOWORK=off $(GO) mod tidy); done

.PHONY: FORCE
FORCE:
