# Everything installs into .venv from the package registries; nothing else is needed.
VENV ?= .venv
BIN := $(VENV)/bin

$(BIN)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(BIN)/pip install -q -e '.[dev,plot,train,llm,llm-test]'
	touch $@

.PHONY: install demo test lint bench
install: $(BIN)/.installed

demo: install
	$(BIN)/monitor-gateway demo

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest -q

bench: install
	$(BIN)/python benchmarks/throughput.py
