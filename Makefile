# The lab's two commands: `make lab` opens the course, `make test` runs every test.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# axe-core for the site's accessibility test, from npm (see the install target below)
AXE_DIR := tests/course/a11y
AXE     := $(AXE_DIR)/node_modules/axe-core/axe.min.js
# JupyterHub's proxy for `make classroom`, from npm (see the classroom targets below)
PROXY := build/classroom/node/node_modules/.bin/configurable-http-proxy
# The learner's own copy of the learner edition (git-ignored): `make lab`, `make check` and
# `make restore` work there, so a learner's answers never touch a tracked file (make test, make
# site and make handout read only notebooks/). keel_course/workspace.py makes and restores it.
WORKSPACE := workspace
WORKCOPY  := $(BIN)/python -m keel_course.workspace

.PHONY: install lab test lint bubblewrap check restore notebooks guide locale messages handout site bench clean classroom collect

# Never silent: pip names each package it collects; download bars only on a terminal (not in CI logs).
# axe-core comes with it (order-only: a new pin reinstalls axe-core alone, not the venv).
$(STAMP): requirements.txt pyproject.toml | $(AXE)
	@echo "Installing keel-lab and the Jupyter stack into $(VENV) (about 2 minutes the first time)..."
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	@echo "Installing the packages of requirements.txt and keel-lab itself (editable)..."
	$(BIN)/python -m pip install $$([ -t 1 ] || echo --progress-bar off) -r requirements.txt -e .
	touch $(STAMP)
	@echo "Installed: $(VENV) is ready."

install: $(STAMP)

# axe-core, which tests/course/test_site_a11y.py runs on every page of the site in Chromium: from
# npm, pinned by tests/course/a11y/package-lock.json, installed there (git-ignored). Without npm
# nothing is said here (a learner's `make lab` needs no npm): that test is skipped and says why.
$(AXE): $(AXE_DIR)/package.json $(AXE_DIR)/package-lock.json
	@if command -v npm >/dev/null; then echo "Installing axe-core with npm into $(AXE_DIR)..." && \
	    npm ci --prefix $(AXE_DIR) --no-audit --no-fund && touch $(AXE); fi

# JupyterLab on the learner's copy, workspace/: made from notebooks/ on first use, and after
# that only what it lacks is added (a new chapter after `git pull`); their answers stay as they are.
# `make lab LANGUAGE=zh` adds the Chinese edition, workspace/zh/. keel_course/lab.py starts the
# learner's JupyterLab on 127.0.0.1: nbgrader's menus and panels (the instructor's, in the same
# venv) and the news question left out for this server only; it says how to open and stop it.
lab: $(STAMP)
	@$(WORKCOPY) prepare notebooks $(WORKSPACE) --language $(LANGUAGE)
	$(BIN)/python -m keel_course.lab $(WORKSPACE) --language $(LANGUAGE)

lint: $(STAMP)
	$(BIN)/ruff check keel_lab keel_checks keel_cli keel_course tests bench scripts notebooks/solutions classroom conftest.py
	$(BIN)/mypy keel_lab keel_checks keel_cli keel_course

# Every test, fastest first: the lab's fast tests (a broken rule fails in about a minute), then the
# course's tests, the slow ones (hub, browser, nbgrader, fuzz) and every solution notebook, English
# and Chinese, under nbval with full output comparison. Both cores: a notebook stays on one worker
# (--dist loadfile), its cells in order. One chapter alone:
# `$(BIN)/pytest -m ch4 tests notebooks/solutions --nbval --nbval-sanitize-with tests/nbval-sanitize.cfg`.
XDIST := -n 2 --dist loadfile
test: lint bubblewrap
	$(BIN)/pytest $(XDIST) tests/lab -m "not slow"
	$(BIN)/pytest $(XDIST) tests/course notebooks/solutions notebooks/zh/solutions --nbval --nbval-current-env \
	    --nbval-sanitize-with tests/nbval-sanitize.cfg
	$(BIN)/pytest $(XDIST) tests/lab -m slow

# The grader's and the class server's sandbox (keel_course/bubblewrap.py): Debian's bubblewrap,
# installed with apt where this runs as root and it is missing; elsewhere both say, on every run,
# that they run unconfined (install it yourself: sudo apt-get install bubblewrap).
bubblewrap:
	@command -v bwrap >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	    { apt-get install -y -q bubblewrap >/dev/null 2>&1 || { apt-get update -q >/dev/null && \
	      apt-get install -y -q bubblewrap >/dev/null; }; } && echo "Installed bubblewrap (apt)."; } || \
	    echo "make: bubblewrap is not installed: grading and the class server run unconfined"

# For learners: which exercises of their copy, workspace/ (made first if missing), pass. A check
# cell fails by raising; tracebacks and nbval's reports are left out (--tb=no -rN), and so is
# pytest's count of cells (-qq): notebooks/conftest.py ends with one line per exercise, cut to the
# terminal, and one of totals in exercises; a notebook that cannot be read is one line, and the
# others are still checked (--continue-on-collection-errors); the progress file,
# .keel-progress.json, is kept beside the notebooks (its table: `keel-lab progress`).
# `make check LANGUAGE=zh` checks the Chinese edition, workspace/zh/, and says it all in Chinese
# (the default is KEEL_LAB_LANG's language, else en; gettext's own LANGUAGE variable, which many
# desktops set in the environment, is not read).
# `make check CHAPTER=02` checks chapter 2 alone, named as `make restore` names it (its number, 02a
# for a deeper notebook, or a part of its file name; keel_course/workspace.py finds it). Either way
# pytest loads nbval alone, not every plugin installed for the tests (hypothesis' and langsmith's
# cost 2 s of CPU to import), after keel_checks/pytest_plugin.py (nbformat's jsonschema without a
# grammar it would build for nothing, 1 s); docs/performance.md has the figures (pytest >= 8.4).
ifneq ($(origin LANGUAGE),command line)
LANGUAGE := $(or $(KEEL_LAB_LANG),en)
endif
EDITION := $(if $(filter en,$(LANGUAGE)),notebooks,notebooks/$(LANGUAGE))
LEARNER := $(if $(filter en,$(LANGUAGE)),$(WORKSPACE),$(WORKSPACE)/$(LANGUAGE))
check: $(STAMP)
	@[ -f $(EDITION)/01_history.ipynb ] || { echo "make check: LANGUAGE=$(LANGUAGE) has no learner edition in $(EDITION)/ (en or zh)" >&2; exit 2; }
	@$(WORKCOPY) prepare notebooks $(WORKSPACE) --language $(LANGUAGE) --quiet
	@$(if $(CHAPTER),chapter=$$($(WORKCOPY) chapter notebooks $(WORKSPACE) '$(CHAPTER)' --language $(LANGUAGE)) && )KEEL_LAB_LANG=$(LANGUAGE) $(BIN)/pytest --nbval-lax --nbval-current-env --continue-on-collection-errors --disable-plugin-autoload -p keel_checks.pytest_plugin -p nbval -p no:cacheprovider --tb=no -rN -qq $(if $(CHAPTER),"$$chapter",$(LEARNER)/*.ipynb)

# For learners: one chapter of workspace/ back to its start, `make restore CHAPTER=04` (its number,
# 04a for the deeper notebook beside it, or a part of its file name; LANGUAGE=zh: workspace/zh/).
# Their copy is kept first in the folder's .backup/ as <chapter>.<UTC time>.ipynb: nothing is lost.
restore: $(STAMP)
	@$(WORKCOPY) restore notebooks $(WORKSPACE) '$(CHAPTER)' --language $(LANGUAGE)

# For authors: re-execute the solution notebooks, save outputs, regenerate the learner edition;
# in English and in Chinese (notebooks/zh/, translated by the catalogs in locale/).
notebooks: $(STAMP)
	$(BIN)/python scripts/build_notebooks.py

# For authors: the instructor's guide's generated parts (goals, answer key, misconceptions with
# their hints, the overview) rewritten from the solution notebooks, the checks and their test
# tables; `$(BIN)/keel-course guide --check` names each stale part and exits 1 instead.
guide: $(STAMP)
	$(BIN)/keel-course guide

# For authors and translators: the notebooks' text into the catalogs, locale/zh_CN/LC_MESSAGES/
# (templates in build/gettext/; new text empty, changed text fuzzy). Then `make notebooks`.
locale: $(STAMP)
	$(BIN)/python scripts/i18n.py update

# For authors and translators: the package's messages (`_()` in keel_lab/ and keel_cli/, the `make check`
# summary and what `make lab` says) into keel_lab/locale/keel_lab.pot, then into the Chinese catalog beside it (new
# messages empty, changed ones fuzzy with their previous English). tests/test_i18n.py checks both.
messages: $(STAMP)
	$(BIN)/pybabel extract --project keel-lab --version 0.1.0 --copyright-holder "the keel-lab authors" \
	    --add-comments TRANSLATORS: --add-location file --sort-output --width 100 --ignore-dirs ".*" \
	    -o keel_lab/locale/keel_lab.pot keel_lab keel_checks keel_cli notebooks/conftest.py keel_course/lab.py \
	    keel_course/workspace.py
	$(BIN)/pybabel update --input-file keel_lab/locale/keel_lab.pot --output-dir keel_lab/locale \
	    --domain keel_lab --locale zh_CN --init-missing --previous --ignore-obsolete --width 100

# For instructors: what a class receives, build/handout/ and build/handout.zip - the learner
# edition, the package, requirements, a README for students, and no solution (checked when built).
# `make handout LANGUAGE=zh`: the Chinese edition, in build/handout-zh/ and build/handout-zh.zip.
HANDOUT := build/handout$(if $(filter en,$(LANGUAGE)),,-$(LANGUAGE))
handout: $(STAMP)
	$(BIN)/keel-course handout $(HANDOUT) --zip --language $(LANGUAGE)

# The course as a static site in build/site/ (build/site/en/ and build/site/zh/): the learner
# editions with their saved outputs, built offline by Sphinx and myst-nb, executing nothing; any
# warning fails it.
site: $(STAMP)
	$(BIN)/python scripts/site.py --out build/site

bench: $(STAMP) $(PROXY)
	$(BIN)/python bench/run_all.py

# A class on this machine (docs/classroom.md): JupyterHub on 127.0.0.1 for the students listed in
# ROSTER, the class kept in CLASS (outside the checkout: `make clean` must never take the students'
# work); its proxy comes from npm, pinned by classroom/package-lock.json, installed under build/
# (no global install).
ROSTER ?= classroom/roster.example.txt
CLASS  ?= $(HOME)/keel-lab-class

$(PROXY): classroom/package.json classroom/package-lock.json
	@echo "Installing configurable-http-proxy with npm into build/classroom/node..."
	mkdir -p build/classroom/node
	cp classroom/package.json classroom/package-lock.json build/classroom/node/
	npm ci --prefix build/classroom/node --no-audit --no-fund
	touch $(PROXY)

# `make classroom PORT=8001` for another port than 8000; `make collect CHAPTER=02` (a number or a
# name) grades one chapter instead of every chapter with exercises.
classroom: $(STAMP) $(PROXY)
	$(BIN)/keel-course classroom start $(ROSTER) $(CLASS) $(if $(PORT),--port '$(PORT)')

collect: $(STAMP)
	$(BIN)/keel-course classroom collect $(CLASS) $(if $(CHAPTER),--chapter '$(CHAPTER)')

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
