# Two commands for a newcomer: `make run` (set up if needed, open memapp) and `make test`.
# The venv is created on first use; torch is pinned through constraints.txt (the CPU wheel on this
# machine kind) and never through the package's own requirements.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test check lint types bench soak clean

# apsw-sqlite3mc provides the `apsw` module in place of `apsw`: a venv made before it came in still has the
# plain one, and removing that later would delete the module both installed, so it goes first.
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	! $(BIN)/pip show -q apsw 2>/dev/null || $(BIN)/pip uninstall -q -y apsw apsw-sqlite3mc
	$(BIN)/pip install -q -c constraints.txt -e ".[test,dev,multilingual]"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/memapp $(ARGS)

# Two passes: everything not marked `serial` on every core (pytest-xdist), then the `serial` tests (they
# kill processes or time themselves) one at a time (exit 5, "no tests collected", is fine when
# PYTEST_ARGS picks a path with none of one kind). `make test WORKERS=0` runs the first pass in-process.
WORKERS ?= auto
test: $(STAMP)
	$(BIN)/pytest -q -n $(WORKERS) -m "not serial" $(PYTEST_ARGS) || test $$? -eq 5
	$(BIN)/pytest -q -m serial $(PYTEST_ARGS) || test $$? -eq 5

lint: $(STAMP)
	$(BIN)/ruff check app store embeddings tests bench
	$(BIN)/ruff format --check app store embeddings tests bench

types: $(STAMP)
	$(BIN)/mypy
	$(BIN)/lint-imports

# What CI runs (.ci/run): lint, format check, types (tests included), import contracts, then the tests.
check: lint types test

# Every benchmark prints JSON and a one-line summary, generating its data under bench/.data/ (reused
# while the code that shapes it is unchanged); `make bench QUICK=1` is the smaller run for iterating.
BENCH_SIZE := $(if $(QUICK),--quick,)
SEARCH_SIZE := $(if $(QUICK),--quick,--full)

bench: $(STAMP)
	$(BIN)/python -m bench search $(SEARCH_SIZE) --cpu
	$(BIN)/python -m bench keyword_held $(BENCH_SIZE)
	$(BIN)/python -m bench importing $(BENCH_SIZE)
	$(BIN)/python -m bench reimport $(BENCH_SIZE)
	$(BIN)/python -m bench startup $(BENCH_SIZE)
	$(BIN)/python -m bench cold $(BENCH_SIZE)
	$(BIN)/python -m bench context $(BENCH_SIZE)
	$(BIN)/python -m bench transcript $(if $(QUICK),--turns 100,)
	$(BIN)/python -m bench eval_search --out bench/out/eval_search.json
	$(BIN)/python -m bench report --write

# The long reliability run (kills, disk full, fuzzing, concurrency, write bursts, lost updates, plain
# copies after load, restores, at full size), then memory and file descriptors over time
# (bench/perf/resources.py), then the table of both into docs/benchmarks/reliability.md. Runs serially: the
# kill and concurrency tests own the machine.
soak: $(STAMP)
	start=$$(date +%s); MEMAPP_SOAK=1 $(BIN)/pytest -q -p no:cacheprovider -p no:xdist tests/reliability tests/store/test_files.py \
		tests/store/test_checkpoints.py tests/store/test_writelock.py tests/app/tui/test_tui_write_queue.py \
		&& $(BIN)/python -m bench resources \
		&& $(BIN)/python tests/reliability/soak_table.py --write --seconds $$(( $$(date +%s) - start ))

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache .mypy_cache
