# Two commands do everything on a fresh machine (see README):
#   make demo   set up .venv and run the main job (train briefly vs heuristic players, evaluate, print the tables)
#   make test   set up .venv and run the whole test suite
#   make docs   build the docs site into site/ (strict: a broken link or reference fails)
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo test lint docs setup clean clean-cache browser check-lowest check-agilerl

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt torch==2.13.0
	@# setuptools' notice on every editable install of a flat layout says nothing actionable here
	PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip install --quiet -c constraints.txt -e '.[dev,train,browser,rllib,docs,torchrl,skrl,openspiel]'
	@# tianshou 2.0.1 wants pandas<3, which ray's pin refuses: it runs with ours, so it installs without its pins
	$(PY) -m pip install --quiet -c constraints.txt --no-deps tianshou==2.0.1 deepdiff==7.0.1 overrides==7.7.0 \
		sensai-utils==1.6.0 h5py==3.16.0 ordered-set==4.1.0
	touch $@

setup: $(VENV)/.installed

demo: $(VENV)/.installed
	$(PY) -m cluedo_env.cli warmup
	$(PY) scripts/demo.py

# The replay viewer's browser test needs Chromium from the system packages (root or sudo):
# in CI (CI set) it must be there and the test must run; elsewhere the test skips without it.
test: $(VENV)/.installed
	@echo "Chromium for the browser tests: checking, installing if missing (log: .browser-install.log)"
	@scripts/install_browser.sh > .browser-install.log 2>&1 \
		|| { tail -5 .browser-install.log; [ -z "$$CI" ] && echo "(no Chromium: the browser tests will skip)"; }
	@# the lowest declared numpy, numba, gymnasium and pettingzoo in a venv of their own (a few minutes): in CI,
	@# or by hand with make check-lowest
	@if [ -n "$$CI" ]; then $(PY) scripts/check_lowest_versions.py; \
	else echo "(the lowest-versions check runs in CI; make check-lowest runs it here)"; fi
	@if [ -n "$$CI" ]; then $(PY) scripts/check_agilerl.py; else echo "(the AgileRL check runs in CI; make check-agilerl runs it here)"; fi
	@# numba's cache is built once here, visibly, so that the test workers load it instead of compiling twice
	$(PY) -m cluedo_env.cli warmup
	CLUEDO_REQUIRE_BROWSER=$${CI:+1} $(PY) -m pytest -n auto --dist loadgroup --durations=25

check-lowest: $(VENV)/.installed
	$(PY) scripts/check_lowest_versions.py

check-agilerl: $(VENV)/.installed
	$(PY) scripts/check_agilerl.py

browser: $(VENV)/.installed
	scripts/install_browser.sh

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .

# The generated pages (benchmarks, results) from docs/data/*.json and training/pretrained/index.json, then the site.
docs: $(VENV)/.installed
	$(PY) scripts/gen_docs.py
	$(VENV)/bin/mkdocs build --strict

# numba caches compiled kernels next to their modules (__pycache__/*.nbi, *.nbc); cluedo_env/engine/kernel_cache.py
# clears them when a kernel source changes. This removes them by hand (e.g. after a numba upgrade).
clean-cache:
	find cluedo_env agents -name '*.nbi' -delete -o -name '*.nbc' -delete

clean: clean-cache
	rm -rf $(VENV) site
