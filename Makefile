# Everything a newcomer needs: `make demo`, `make test`, `make bench`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

BENCH_STAMP := $(VENV)/.bench-installed

.PHONY: demo test bench bench-quick install clean sandbox-deps

## bubblewrap isolates the kernel; installed with apt when we are root, else a warning.
sandbox-deps:
	@command -v bwrap >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; \
	  else \
	    echo "WARNING: bubblewrap is missing and cannot be installed here: kernels will run without"; \
	    echo "         isolation. Install it (apt-get install bubblewrap) and run 'jupyter analyst doctor'."; \
	  fi; }

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP) sandbox-deps

## Offline end-to-end run on the bundled sample data, with the scripted model.
demo: $(STAMP) sandbox-deps
	$(VENV)/bin/jupyter-analyst demo --out demo-output

## The whole test suite.
test: $(STAMP) sandbox-deps
	$(PY) -m pytest

$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $(BENCH_STAMP)

## Speed and memory, as ratios against the raw floor and the peers (JupySQL, stock papermill)
## measured in the same run; writes benchmarks/results.json and the README's table from it.
bench: $(BENCH_STAMP) sandbox-deps
	$(PY) -m benchmarks; status=$$?; $(PY) -m benchmarks --readme; exit $$status

## A short run (small data, one repetition) to check that every benchmark still works.
bench-quick: $(BENCH_STAMP) sandbox-deps
	$(PY) -m benchmarks --quick --out benchmarks/results-quick.json

clean:
	rm -rf $(VENV) demo-output .pytest_cache
