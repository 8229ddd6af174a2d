# Kafka assignment planner. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SAMPLE_GROUPS ?= 300
BENCH_GROUPS ?= 100000
BENCH_STRATEGIES ?= range,roundrobin
BENCH_REPEAT ?= 3

export SPARK_LOCAL_IP ?= 127.0.0.1
export PYSPARK_PYTHON := $(abspath $(PY))
export PYSPARK_DRIVER_PYTHON := $(abspath $(PY))

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,report]'
	@touch $@

.PHONY: venv
venv: $(STAMP) ## Create .venv and install the pinned dependencies

.PHONY: run
run: $(STAMP) ## Generate the sample estate, plan it on local[*], print the summary
	$(PY) -m jobs.tools.sample_estate --groups $(SAMPLE_GROUPS) --bad-rows --out data/sample
	$(PY) -m jobs.plan_assignments --input data/sample --output out/sample --ds $$(date -u +%F)

.PHONY: submit
submit: $(STAMP) ## The same run through spark-submit (as on a cluster)
	$(PY) -m jobs.tools.sample_estate --groups $(SAMPLE_GROUPS) --bad-rows --out data/sample
	$(VENV)/bin/spark-submit --master 'local[*]' --conf spark.log.level=WARN jobs/plan_assignments.py \
		--input data/sample --output out/sample-submit

.PHONY: dist
dist: $(STAMP) ## dist/planner.zip: the code to ship with spark-submit --py-files
	@mkdir -p dist && rm -f dist/planner.zip
	$(PY) -m jobs.session dist/planner.zip  # jobs/tools is not shipped

.PHONY: test
test: $(STAMP) chromium lint typecheck ## Install everything, then run linters and every test
	$(PY) -m pytest

.PHONY: chromium
chromium: ## Headless Chromium for the report's rendering test (installed only as root with apt)
	@command -v chromium >/dev/null \
		|| { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
			&& apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } \
		|| echo "chromium not installed (needs root with apt): the browser test will be skipped"

.PHONY: test-unit
test-unit: $(STAMP) ## Only the pure-Python tests (no JVM; seconds)
	$(PY) -m pytest tests/unit

.PHONY: lint
lint: $(STAMP) ## ruff check and format check
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

.PHONY: format
format: $(STAMP) ## Apply ruff fixes and formatting
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

.PHONY: typecheck
typecheck: $(STAMP) ## mypy (strict on assignors/)
	$(VENV)/bin/mypy

.PHONY: bench
bench: $(STAMP) ## Benchmarks: estate vs I/O floor, Kafka's large sticky tests, one 1M-partition group
	$(PY) -m jobs.tools.bench --groups $(BENCH_GROUPS) --strategies $(BENCH_STRATEGIES) --repeat $(BENCH_REPEAT)
	$(PY) -m jobs.tools.bench_sticky --case all --assignor all --replay
	$(PY) -m jobs.tools.bench --scenario big-group --strategies sticky,cooperative-sticky

.PHONY: clean
clean: ## Remove generated data, outputs and caches (keeps .venv)
	rm -rf data out dist .pytest_cache .mypy_cache .ruff_cache
	find . -name __pycache__ -type d -prune -not -path './.venv/*' -exec rm -rf {} +
