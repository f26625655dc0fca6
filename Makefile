# Two commands do everything on a fresh machine (see README):
#   make demo   set up .venv and run the main job
#   make test   set up .venv and run the whole test suite
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo test lint setup clean

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt torch==2.13.0
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev,train]'
	touch $@

setup: $(VENV)/.installed

demo: $(VENV)/.installed
	$(PY) scripts/simulate.py --games 200 --preset classic --players 4 --seed 0

test: $(VENV)/.installed
	$(PY) -m pytest

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV)
