# Targets for building, testing and measuring autonomy. `make help` lists them.
GO       ?= go
BIN      ?= bin/autonomy
FUZZTIME ?= 30s
# staticcheck's pinned version: `make staticcheck` fetches and builds it (outside go.mod).
STATICCHECK ?= v0.8.2

.PHONY: help build test lint staticcheck bench fuzz schema golden conformance clean agent-install agent-smoke k8s-test

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

# CGO_ENABLED=0, as the releases are built (.goreleaser.yaml): a static binary starts without the
# dynamic loader, which every autonomy process (two per launch) would pay for; nothing needs cgo.
build: ## build bin/autonomy
	CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=true -o $(BIN) ./cmd/autonomy

test: ## run every test (README's test command)
	$(GO) test ./...

lint: ## gofmt check and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

staticcheck: ## staticcheck at its pinned version (STATICCHECK), which must report nothing
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK) ./...

bench: ## run the Go benchmarks (load+validate, compile, write, the whole process)
	$(GO) test -run '^$$' -bench . -benchmem ./...

fuzz: ## run every fuzz target for FUZZTIME each (a test checks each Fuzz function is listed)
	$(GO) test ./ir -run '^$$' -fuzz '^FuzzLoad$$' -fuzztime $(FUZZTIME)
	$(GO) test ./ir/internal/fastyaml -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./ir/internal/fastyaml -run '^$$' -fuzz '^FuzzResolvePlain$$' -fuzztime $(FUZZTIME)
	$(GO) test ./ir/cron -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./substrates/ghactions -run '^$$' -fuzz '^FuzzQuote$$' -fuzztime $(FUZZTIME)
	$(GO) test ./substrates/ghactions -run '^$$' -fuzz '^FuzzJSONString$$' -fuzztime $(FUZZTIME)
	$(GO) test ./substrates -run '^$$' -fuzz '^FuzzReadHeader$$' -fuzztime $(FUZZTIME)
	$(GO) test ./playbook/capsule -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./playbook/overlay -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./playbook/steps -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./playbook/workflow -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./playbook/overlay -run '^$$' -fuzz '^FuzzWeave$$' -fuzztime $(FUZZTIME)
	$(GO) test ./playbook/engine -run '^$$' -fuzz '^FuzzWords$$' -fuzztime $(FUZZTIME)
	$(GO) test ./playbook/stepsrun -run '^$$' -fuzz '^FuzzCapture$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/jsonschema -run '^$$' -fuzz '^FuzzValidate$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/mergecheck -run '^$$' -fuzz '^FuzzCaseFold$$' -fuzztime $(FUZZTIME)

schema: ## regenerate docs/ir.schema.json from the catalogs
	$(GO) run ./cmd/autonomy schema > docs/ir.schema.json

golden: ## rewrite golden/ from the compiler (review every changed line before committing)
	$(GO) test ./golden -update
	git status --short golden

conformance: ## regenerate docs/conformance.md from autonomy conformance (review the diff)
	$(GO) test ./cmd/autonomy -run '^TestConformanceDocMatches$$' -update-docs
	git status --short docs/conformance.md

# The packages whose tests need a Kubernetes control plane (they call internal/k8stest.Get).
K8S_PKGS ?= ./internal/k8stest/... ./substrates/kubernetes/...

k8s-test: ## build etcd, kube-apiserver, controller manager, scheduler and kwok (cached in AUTONOMY_K8S_CACHE) and run the tests that need them
	@bin=$$(scripts/k8s/build.sh) && echo "k8s-test: binaries in $$bin" && \
	AUTONOMY_K8S=1 AUTONOMY_K8S_BIN=$$bin $(GO) test -count=1 -timeout 30m $(K8S_PKGS)

agent-install: ## install the pinned agent CLIs (codex, claude) into the agent cache (AUTONOMY_AGENT_CACHE, default ~/.cache/autonomy-agents)
	scripts/install-agents.sh

# Every package whose tests run a pinned agent CLI (they import internal/agentcli): a new one is
# included without editing this list.
AGENT_PKGS = $(shell $(GO) list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... | grep ' .*internal/agentcli' | cut -d' ' -f1)

agent-smoke: agent-install ## run every agent preset's pinned CLI against the scripted model in every package whose tests use one (needs node, npm, bubblewrap, socat)
	AUTONOMY_AGENT_SMOKE=1 $(GO) test -v -count=1 -timeout 20m $(AGENT_PKGS)

clean: ## remove build output
	rm -rf bin
