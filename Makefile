# Every target installs what it needs: `make run` and `make test` work on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# `make run` installs only what the server imports (pyproject's `serve` extra, its own stamp): a fresh clone
# serves without PySpark, the CDK or the test tools; any other target upgrades the same .venv to `dev`.
SERVE_STAMP := $(VENV)/.installed-serve

.PHONY: run test unit integration e2e infra lint format bench clean synth test-alb bootstrap deploy destroy admin analytics browser browser-tests console-vendor console-screenshots

# The CDK CLI, pinned in package.json; jsii and the CLI quiet about versions (Node 20 is what the machines have).
NODE_STAMP := node_modules/.installed
CDK := node_modules/.bin/cdk
export CDK_DISABLE_VERSION_CHECK := 1
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP) $(SERVE_STAMP)

$(SERVE_STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -e '.[serve]'
	touch $(SERVE_STAMP)

# Pushes may reach endpoints on this machine (loopback) and no other internal address; the server itself
# listens on 127.0.0.1 only. `make run PUSH_ALLOWED_NETWORKS=` refuses loopback too, as on AWS.
PUSH_ALLOWED_NETWORKS ?= 127.0.0.0/8,::1/128
# Keys beyond the default one (with policies), beside the data: `make admin ARGS="--keys-file .mns/keys.json create-account"`.
KEYS_DIR := $(if $(filter :memory:,$(MNS_DATA_DIR)),.mns,$(or $(MNS_DATA_DIR),.mns))
MNS_KEYS_FILE ?= $(KEYS_DIR)/keys.json
# `make run WAIT_TIER=holder`: the same server behind the wait tier (the holder of wait_tier/, in a process of its
# own; docs/wait_tier.md): clients call it on MNS_PORT (8080), the server answers directly on the port after it.
# (`pushpin`, the tier's former name, is taken for `holder`.)
WAIT_TIER ?=
# `make run FRONT_DOOR=alb`: each request reaches the functions as an Application Load Balancer's Lambda event
# (`-c frontDoor=alb`, docs/front-door.md), not as API Gateway's.
FRONT_DOOR ?=
RUN_MODULE := $(if $(filter holder pushpin,$(WAIT_TIER)),local_runtime.behind_holder,local_runtime)
run: $(SERVE_STAMP)
	MNS_PUSH_ALLOWED_NETWORKS='$(PUSH_ALLOWED_NETWORKS)' MNS_KEYS_FILE='$(MNS_KEYS_FILE)' MNS_FRONT_DOOR='$(FRONT_DOOR)' \
		$(BIN)/python -m $(RUN_MODULE)

# The suites on more workers than the 2 cores CI has: many tests wait (servers, sockets, long polls, push schedules),
# and the workers would stand idle meanwhile. mypy runs beside them (its minute spent while tests wait), its verdict
# printed after theirs; ruff first, in seconds. Times and load: docs/testing.md.
TEST_WORKERS ?= 4
test: $(STAMP) $(NODE_STAMP) browser
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@echo "$(BIN)/mypy (beside the suites) & $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal --durations=25 tests"
	@types=$$(mktemp); $(BIN)/mypy > $$types 2>&1 & checker=$$!; \
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal --durations=25 tests; suites=$$?; \
	wait $$checker; typed=$$?; cat $$types; rm -f $$types; [ $$suites = 0 ] && [ $$typed = 0 ]

# The client and conformance suites through the load balancer's door (`make run FRONT_DOOR=alb`'s local form: each
# request reaches the functions as the Lambda event ALB gives them, `local_runtime/alb.py`), on both engines.
FRONT_DOOR_SUITES := tests/e2e/test_e2e_messages.py tests/e2e/test_e2e_tea_gateway.py tests/e2e/test_e2e_smqproxy.py \
	tests/e2e/test_e2e_mns_open.py tests/e2e/test_e2e_http_edge.py tests/e2e/test_e2e_hostile_input.py \
	tests/e2e/test_e2e_signature_v4.py tests/e2e/test_e2e_security_tokens.py tests/e2e/test_e2e_errors.py
test-alb: $(STAMP)
	MNS_FRONT_DOOR=alb $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal $(FRONT_DOOR_SUITES)

# The console's browser tests drive Debian's chromium through chromedriver: installed here when missing.
browser:
	@if command -v chromium >/dev/null && command -v chromedriver >/dev/null; then :; \
	elif command -v apt-get >/dev/null; then \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium chromium-driver; \
	else echo "chromium and chromedriver are needed for tests/browser and apt-get is missing" >&2; exit 1; fi
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null \
		|| { echo "chromium / chromedriver could not be installed" >&2; exit 1; }

browser-tests: $(STAMP) browser
	$(BIN)/python -m pytest tests/browser

# Screenshots of the console for the README (docs/console/*.png), taken by the browser tests.
console-screenshots: $(STAMP) browser
	MNS_CONSOLE_SCREENSHOTS=docs/console $(BIN)/python -m pytest tests/browser -q

# The console's libraries, copied from their npm packages (versions pinned in package.json) into
# console/static/vendor/, which is committed: nothing is fetched at run time. preact/hooks imports
# "preact" by its bare name: the copy imports the file beside it instead (no import map needed).
VENDOR := console/static/vendor
console-vendor: $(NODE_STAMP)
	mkdir -p $(VENDOR)
	cp node_modules/preact/dist/preact.mjs node_modules/htm/dist/htm.mjs $(VENDOR)/
	sed 's#from"preact"#from"./preact.mjs"#' node_modules/preact/hooks/dist/hooks.mjs > $(VENDOR)/hooks.mjs
	cp node_modules/uplot/dist/uPlot.iife.min.js node_modules/uplot/dist/uPlot.min.css $(VENDOR)/
	for p in preact htm uplot; do node -p "'$$p ' + require('./node_modules/$$p/package.json').version"; done > $(VENDOR)/VERSIONS
	for p in preact htm uplot; do cp node_modules/$$p/LICENSE $(VENDOR)/LICENSE.$$p; done

unit: $(STAMP)
	$(BIN)/python -m pytest tests/unit

integration: $(STAMP)
	$(BIN)/python -m pytest tests/integration

e2e: $(STAMP)
	$(BIN)/python -m pytest tests/e2e

# The template (cdk-nag and cfn-lint included), the layer's bundling and the key admin command.
infra: $(STAMP)
	$(BIN)/python -m pytest tests/infra tests/admin

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# Analytics jobs with local pyspark (docs/analytics.md): EXPORTS holds log/, messages/ and meta/ exports.
EXPORTS ?= build/exports
analytics: $(STAMP)
	$(BIN)/python -m glue_jobs.local_pipeline --exports $(EXPORTS) --out build/analytics

bench: $(STAMP)
	$(BIN)/python -m bench.queue_lifecycle

$(NODE_STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $(NODE_STAMP)

# cdk.out/ with the template checked by cdk-nag (during the synth) and cfn-lint. CONTEXT="-c domainName=... -c ...".
synth: $(STAMP) $(NODE_STAMP)
	$(CDK) synth --quiet --no-notices $(CONTEXT)
	$(BIN)/python -m infra.lint cdk.out/Mns.template.json

# Once per account and Region: the CDK's staging bucket and roles.
bootstrap: $(STAMP) $(NODE_STAMP)
	$(CDK) bootstrap --no-notices

# Deploys exactly the assembly `synth` checked, to the account and region of the AWS configuration.
deploy: synth
	$(CDK) deploy --app cdk.out --no-notices $(DEPLOY_ARGS)

destroy: synth
	$(CDK) destroy --app cdk.out --no-notices

# make admin ARGS="--secret-arn <CredentialsSecretArn> create-account"
admin: $(STAMP)
	$(BIN)/python -m admin $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
