# Everything installs into .venv from the package registries; nothing else is needed.
VENV ?= .venv
BIN := $(VENV)/bin

# what the demo needs: the gateway, plotting and training the offline classifier
$(BIN)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/pip install -q -e '.[bench,llm]'
	touch $@

# what the tests need besides: linters, pytest, and a real OpenAI-compatible server
# (llama-cpp-python compiles for several minutes in every new virtualenv). llama.cpp is
# built for the instructions any x86-64 machine here runs, never from a cached native
# build: one made for this CPU's AMX tiles died with an invalid opcode on its first reply,
# since the virtual machine's kernel does not enable them
$(BIN)/.installed-dev: $(BIN)/.installed
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/pip install -q --no-cache-dir 'llama-cpp-python[server]>=0.3'
	$(BIN)/pip install -q -e '.[dev,bench,llm,llm-test,otel,openai-agents,langchain,review]'
	touch $@

# Prometheus and promtool, from Debian's package, for the rules' tests and the end-to-end
# test with a real server (needs root, as on CI machines)
/usr/bin/promtool:
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus

# Chromium, from Debian's package, for the review page's browser test (Playwright drives
# it; its own browser download cannot work offline)
/usr/bin/chromium:
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

.PHONY: install demo test lint bench manifests
install: $(BIN)/.installed

demo: install
	$(BIN)/monitor-gateway demo

lint: $(BIN)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/mypy

test: lint /usr/bin/promtool /usr/bin/chromium
	$(BIN)/pytest -q

bench: install
	$(BIN)/python benchmarks/throughput.py
	$(BIN)/python benchmarks/offline.py
	cd benchmarks && ../$(BIN)/python llm_throughput.py

# the PrometheusRule and dashboard ConfigMap, rendered from dashboards/ (tests check them)
manifests: $(BIN)/.installed-dev
	$(BIN)/python k8s/render.py
