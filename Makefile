# Kafka assignment planner. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# .ready: written once the venv has the pinned dependencies and the spark-submit fix below.
STAMP := $(VENV)/.ready
# Executors' Python for the cluster test: the pinned runtime dependencies, NOT the project.
EXEC_VENV := .venv-exec
EXEC_STAMP := $(EXEC_VENV)/.installed
# Airflow and its Spark provider: their own venv (the provider pulls pyspark-client and
# pandas 3, which must never reach .venv).
AIRFLOW_VENV := .venv-airflow
AIRFLOW_STAMP := $(AIRFLOW_VENV)/.installed
SAMPLE_GROUPS ?= 300
BENCH_GROUPS ?= 100000
BENCH_STRATEGIES ?= range,roundrobin
BENCH_REPEAT ?= 3
# Benchmarks and the sample estate: not shipped to executors.
TOOLS := tools
# The mypyc-compiled core (tools/build_core.py): rebuilt whenever assignors/ changes.
CORE_STAMP := build/core/.built
# The executors' Python environment with the planner and its compiled core (tools/planner_env.py).
PLANNER_ENV := dist/planner-env.tar.gz

export SPARK_LOCAL_IP ?= 127.0.0.1
export PYSPARK_PYTHON := $(abspath $(PY))
export PYSPARK_DRIVER_PYTHON := $(abspath $(PY))

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  \033[36m%-14s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# pyspark's bin/find-spark-home runs `python3` from PATH to locate SPARK_HOME, so
# `.venv/bin/spark-submit` fails outside an activated venv (and the driver would run the
# system Python). Point both at the venv: find-spark-home falls back to the venv's python,
# and pyspark's conf/spark-env.sh (sourced by every spark-class call) defaults the driver and
# worker Python to it. A user's PYSPARK_PYTHON or --conf spark.pyspark.python still wins.
$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,report,export]'
	@spark_home=$$($(PY) -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))') && \
	sed -i 's|PYSPARK_DRIVER_PYTHON="$${PYSPARK_PYTHON:-"python3"}"|PYSPARK_DRIVER_PYTHON="$${PYSPARK_PYTHON:-"$$(cd "$$(dirname "$$0")"; pwd)/python"}"|' \
		$(VENV)/bin/find-spark-home && \
	grep -q '/python"}"' $(VENV)/bin/find-spark-home && \
	mkdir -p "$$spark_home/conf" && \
	printf '%s\n' '# Written by `make venv`: default the Python of spark-submit from this venv.' \
		': "$${PYSPARK_PYTHON:=$(abspath $(PY))}"' \
		': "$${PYSPARK_DRIVER_PYTHON:=$$PYSPARK_PYTHON}"' > "$$spark_home/conf/spark-env.sh"
	@touch $@

.PHONY: venv
venv: $(STAMP) ## Create .venv and install the pinned dependencies

$(EXEC_STAMP): pyproject.toml
	@test -x $(EXEC_VENV)/bin/python || $(PYTHON) -m venv $(EXEC_VENV)
	$(EXEC_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(PYTHON) -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
		> $(EXEC_VENV)/requirements.txt
	$(EXEC_VENV)/bin/python -m pip install --quiet -r $(EXEC_VENV)/requirements.txt
	@touch $@

.PHONY: venv-exec
venv-exec: $(EXEC_STAMP) ## Create .venv-exec: the executors' Python (dependencies only, not the project)

# The DAG's tests also need, pinned as in the dev extras: pytest, and for the export step's
# live run a noida-db broker and librdkafka consumers (confluent-kafka).
AIRFLOW_TEST_DEPS := pytest== noida-db== confluent-kafka==
$(AIRFLOW_STAMP): dags/requirements-airflow.txt dags/constraints-airflow.txt pyproject.toml
	@test -x $(AIRFLOW_VENV)/bin/python || $(PYTHON) -m venv $(AIRFLOW_VENV)
	$(AIRFLOW_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(AIRFLOW_VENV)/bin/python -m pip install --quiet -r dags/requirements-airflow.txt \
		-c dags/constraints-airflow.txt
	$(AIRFLOW_VENV)/bin/python -m pip install --quiet -c dags/constraints-airflow.txt \
		$$($(PYTHON) -c "import tomllib; \
		print(*[d for d in tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['dev'] \
		if d.startswith(tuple('$(AIRFLOW_TEST_DEPS)'.split()))])")
	@touch $@

.PHONY: venv-airflow
venv-airflow: $(AIRFLOW_STAMP) ## Create .venv-airflow: Airflow 3 + the Spark provider (for dags/)

CORE_SOURCES := $(shell find assignors -name '*.py')
$(CORE_STAMP): $(STAMP) $(CORE_SOURCES) tools/build_core.py
	$(PY) -m $(TOOLS).build_core
	@mkdir -p $(@D) && touch $@

.PHONY: core
core: $(CORE_STAMP) ## Compile the planning core with mypyc (the .py files stay the fallback)

.PHONY: clean-core
clean-core: ## Remove the compiled core: back to the pure-Python modules
	$(PY) -m $(TOOLS).build_core --clean
	rm -rf build/core

.PHONY: run
run: $(CORE_STAMP) ## Generate the sample estate, plan it on local[*], print the summary
	$(PY) -m $(TOOLS).sample_estate --groups $(SAMPLE_GROUPS) --bad-rows --out data/sample
	$(PY) -m jobs.plan_assignments --input data/sample --output out/sample --ds $$(date -u +%F)

.PHONY: submit
submit: $(STAMP) ## The same run through spark-submit (as on a cluster)
	$(PY) -m $(TOOLS).sample_estate --groups $(SAMPLE_GROUPS) --bad-rows --out data/sample
	$(VENV)/bin/spark-submit --master 'local[*]' --conf spark.log.level=WARN jobs/plan_assignments.py \
		--input data/sample --output out/sample-submit

.PHONY: dist
dist: $(STAMP) $(PLANNER_ENV) ## dist/planner-env.tar.gz (--archives: executors' Python, compiled core) and dist/planner.zip (--py-files: sources)
	@mkdir -p dist && rm -f dist/planner.zip
	$(PY) -m jobs.plan.session dist/planner.zip  # tools/ is not shipped

# build/planner-env keeps the dependencies between builds (reinstalled, from pip's cache, only
# when their pins change); the planner's files are copied in afresh.
SHIPPED_SOURCES := $(shell find jobs -name '*.py' -o -name '*.j2')
$(PLANNER_ENV): $(CORE_STAMP) pyproject.toml tools/planner_env.py $(SHIPPED_SOURCES)
	$(PY) -m $(TOOLS).planner_env $@

.PHONY: test
test: ## Install everything (side by side), then every suite, lint and typecheck in two lanes side by side
	$(MAKE) --no-print-directory -j4 --output-sync=target installed
	@mkdir -p build; \
	$(MAKE) --no-print-directory test-lane-live > build/test-lane-live.log 2>&1 & live=$$!; \
	$(MAKE) --no-print-directory test-lane-cpu > build/test-lane-cpu.log 2>&1; cpu=$$?; \
	cat build/test-lane-cpu.log; wait $$live; live=$$?; cat build/test-lane-live.log; \
	echo "make test: CPU lane exit $$cpu, live lane exit $$live"; [ $$cpu = 0 ] && [ $$live = 0 ]

# Two lanes side by side (`make test`), each running its targets one after another. They are
# two shell jobs: under `make -j2` the second lane sometimes waited for the first. Each lane's
# output goes to build/test-lane-*.log, printed when the lane ends. The CPU lane, at a lower
# priority (nice): the main suite on every core, then the pure core's unit tests. The live
# lane, at normal priority: the live librdkafka groups first (they mostly wait on the mock
# coordinator's join windows, and a member that is not scheduled in time misses one), then
# the standalone cluster, the DAG, lint and types.
.PHONY: test-lane-cpu
test-lane-cpu: $(CORE_STAMP) chromium ## make test's CPU lane, at a lower priority: test-main, then test-pure
	nice -n 10 $(MAKE) --no-print-directory -j1 test-main test-pure

.PHONY: test-lane-live
test-lane-live: $(CORE_STAMP) $(EXEC_STAMP) $(AIRFLOW_STAMP) $(PLANNER_ENV) ## make test's live lane: test-librdkafka, test-cluster, test-airflow, lint, typecheck
	$(MAKE) --no-print-directory -j1 test-librdkafka test-cluster test-airflow lint typecheck

# pip's downloads, the core's compile and Chromium's install overlap.
.PHONY: installed
installed: $(CORE_STAMP) $(EXEC_STAMP) $(AIRFLOW_STAMP) $(PLANNER_ENV) chromium ## Build every environment the tests need, side by side: .venv with the compiled core, .venv-exec, .venv-airflow, dist/planner-env.tar.gz

# The main suite runs on every core: pytest-xdist, one test file per worker (a file's tests
# share its module fixtures: a planned estate, a broker). Each worker starts its own Spark
# session. A third worker loads the machine enough that live librdkafka groups miss their
# join windows. `make test-main WORKERS=1` runs it in one process.
WORKERS ?= auto
XDIST := -n $(WORKERS) --dist loadfile
# What a test needs, by marker (tests/conftest.py, pyproject.toml): the Makefile slices by them.
FAST := -m "not spark and not e2e and not live and not cluster and not slow"
NO_JVM := -m "not spark and not e2e and not live and not cluster"
# the compiled core is a prerequisite: its test fails (not skips) when it is missing
COMPILED_PYTEST := PLANNER_EXPECT_COMPILED=1 $(PY) -m pytest
# Real librdkafka consumers in groups on librdkafka's mock cluster: the cases of one module,
# a few groups at a time (make test-librdkafka).
LIBRDKAFKA_TESTS := tests/jobs/export/test_librdkafka_assignors.py

.PHONY: test-main
test-main: $(CORE_STAMP) chromium ## Every test but the standalone cluster's, the live librdkafka groups and the live stories: unit, Spark, end to end, live brokers, in parallel
	$(COMPILED_PYTEST) $(XDIST) --durations=10 --junitxml=build/junit-main.xml \
		-m "not cluster and not stories" --ignore=$(LIBRDKAFKA_TESTS)

.PHONY: test-librdkafka
test-librdkafka: $(STAMP) ## Groups of real librdkafka consumers on librdkafka's mock cluster: each planned and compared with what its members hold
	$(PY) -m pytest --durations=3 --junitxml=build/junit-librdkafka.xml -m "not stories" $(LIBRDKAFKA_TESTS)

# Multi-round cooperative rebalances of real librdkafka consumers: on a quiet machine they
# settle on the variant's plan; under load a member's rejoin can fall between rounds.
.PHONY: test-stories
test-stories: $(STAMP) ## The timing-sensitive live librdkafka groups (cooperative rebalances over several rounds) on librdkafka's mock cluster; best on a quiet machine
	$(PY) -m pytest -m stories tests/jobs/export/test_librdkafka_assignors.py tests/jobs/export/test_librdkafka_sticky_stories.py

.PHONY: test-spark
test-spark: $(CORE_STAMP) chromium ## The tests that start a JVM: Spark sessions and the real entry point (markers spark, e2e)
	$(COMPILED_PYTEST) $(XDIST) -m "(spark or e2e) and not cluster"

.PHONY: test-live
test-live: $(STAMP) ## The exporter against real brokers and consumers on 127.0.0.1 (marker live)
	$(PY) -m pytest $(XDIST) -m "live and not cluster"

.PHONY: test-slow
test-slow: $(CORE_STAMP) ## Only the tests marked slow (each takes more than about 10 s)
	$(COMPILED_PYTEST) $(XDIST) -m "slow and not cluster"

.PHONY: chromium
chromium: ## Headless Chromium for the report's rendering test (installed only as root with apt)
	@command -v chromium >/dev/null \
		|| { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null \
			&& apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } \
		|| echo "chromium not installed (needs root with apt): the browser test will be skipped"

.PHONY: test-unit
test-unit: $(CORE_STAMP) ## Every test that needs no JVM, broker or cluster, slow ones too, on the compiled core
	$(COMPILED_PYTEST) $(XDIST) $(NO_JVM)

# The uncompiled core: a copy of the sources without their extension modules. `bin/pytest`,
# not `python -m pytest`: -m would put the project root (compiled) first on sys.path.
PURE_PYTEST := PYTHONPATH=$(abspath build/pure):$(CURDIR) $(VENV)/bin/pytest -p no:cacheprovider

.PHONY: pure-core
pure-core: ## Copy the core's sources without their compiled modules to build/pure (test-quick, test-pure)
	@rm -rf build/pure && mkdir -p build/pure && cp -r assignors tools build/pure/
	@find build/pure \( -name '*.so' -o -name __pycache__ \) -prune -exec rm -rf {} +

.PHONY: check
check: lint typecheck test-quick ## The quick loop: lint, types and test-quick (no compile, no JVM; about 2 minutes)

.PHONY: test-quick
test-quick: $(STAMP) pure-core ## The tests that need no JVM, broker or cluster and are not slow, on the pure core (what the pre-commit hook runs)
	$(PURE_PYTEST) -q $(XDIST) $(FAST)

.PHONY: test-pure
test-pure: $(STAMP) pure-core ## The core's unit tests on the uncompiled core (what a --py-files zip runs)
	$(PURE_PYTEST) $(XDIST) tests/assignors

.PHONY: test-cluster
test-cluster: $(STAMP) $(EXEC_STAMP) dist ## Spark standalone cluster (master + 2 workers on 127.0.0.1) runs the shipped job, both ways
	PLANNER_CLUSTER_TESTS=1 PLANNER_EXEC_PYTHON=$(abspath $(EXEC_VENV))/bin/python $(PY) -m pytest --durations=5 tests/cluster/test_standalone.py

.PHONY: test-airflow
test-airflow: $(STAMP) $(AIRFLOW_STAMP) dist ## The Airflow DAG: DagBag, and dag.test() exporting from a live broker and running the job via SparkSubmitOperator
	$(AIRFLOW_VENV)/bin/python -m pytest -p no:cacheprovider --durations=5 tests/ops

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
bench: $(CORE_STAMP) ## Benchmarks: estate vs I/O floor, Kafka's large sticky tests, one 1M-partition group
	$(PY) -m $(TOOLS).bench --groups $(BENCH_GROUPS) --strategies $(BENCH_STRATEGIES) --repeat $(BENCH_REPEAT)
	$(PY) -m $(TOOLS).bench_sticky --case all --assignor all --replay
	$(PY) -m $(TOOLS).bench --scenario big-group --strategies sticky,cooperative-sticky

.PHONY: bench-growth
bench-growth: $(CORE_STAMP) ## Cost of growth: 10k, 30k and 100k groups, seconds and peak worker memory per 1,000 groups
	$(PY) -m $(TOOLS).bench --scenario growth --sizes 10000,30000,100000 --strategies config --repeat 1

.PHONY: clean
clean: ## Remove generated data, outputs and caches (keeps the venvs)
	rm -rf data out dist build .pytest_cache .mypy_cache .ruff_cache
	find assignors -name '*.cpython-*.so' -delete
	find . -name __pycache__ -type d -prune -not -path './.venv*' -exec rm -rf {} +

.PHONY: export-snapshot
export-snapshot: $(STAMP) ## Export a live cluster's groups: make export-snapshot BOOTSTRAP=host:9092 OUT=dir [ARGS=...]
	$(PY) -m jobs.export_snapshot --bootstrap-servers $(BOOTSTRAP) --output $(OUT) $(ARGS)
