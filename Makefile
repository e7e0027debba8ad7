# Everything a newcomer needs: `make demo`, `make test`, `make bench`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test bench install clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

## Offline end-to-end run on the bundled sample data, with the scripted model.
demo: $(STAMP)
	$(VENV)/bin/jupyter-analyst demo --out demo-output

## The whole test suite.
test: $(STAMP)
	$(PY) -m pytest

## Speed and memory, as ratios against raw baselines measured in the same run.
bench: $(STAMP)
	$(PY) -m benchmarks

clean:
	rm -rf $(VENV) demo-output .pytest_cache
