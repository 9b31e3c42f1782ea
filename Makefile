# The lab's two commands: `make lab` opens the course, `make test` runs every test.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
ROOT_FLAG := $(shell [ "$$(id -u)" = 0 ] && echo --allow-root)

.PHONY: install lab test lint check notebooks bench clean

# Never silent: pip names each package it collects; download bars only on a terminal (not in CI logs).
$(STAMP): requirements.txt pyproject.toml
	@echo "Installing keel-lab and the Jupyter stack into $(VENV) (about 2 minutes the first time)..."
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	@echo "Installing the packages of requirements.txt and keel-lab itself (editable)..."
	$(BIN)/python -m pip install $$([ -t 1 ] || echo --progress-bar off) -r requirements.txt -e .
	touch $(STAMP)
	@echo "Installed: $(VENV) is ready."

install: $(STAMP)

lab: $(STAMP)
	@echo "Opening JupyterLab on notebooks/ - open the http://127.0.0.1 URL printed below."
	$(BIN)/jupyter lab notebooks --no-browser --ip=127.0.0.1 $(ROOT_FLAG)

lint: $(STAMP)
	$(BIN)/ruff check keel_lab tests bench scripts notebooks/solutions
	$(BIN)/mypy keel_lab

# Package tests, then every solution notebook under nbval with full output comparison.
test: lint
	$(BIN)/pytest tests notebooks/solutions --nbval --nbval-current-env

# For learners: which exercises of the learner edition pass. A check cell fails by raising;
# tracebacks and nbval's reports are left out (--tb=no -rN), the last lines are one per exercise.
check: $(STAMP)
	$(BIN)/pytest --nbval-lax --nbval-current-env -p no:cacheprovider --tb=no -rN notebooks/*.ipynb

# For authors: re-execute the solution notebooks, save outputs, regenerate the learner edition.
notebooks: $(STAMP)
	$(BIN)/python scripts/build_notebooks.py

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
