# Set-up and everyday commands.  `make run` and `make test` are the README's two
# commands: each installs everything it needs into .venv first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install browser cluster-tools run test lint openapi bench bench-load bench-cluster clean

# The Python client is a distribution of its own (clients/python), installed editable beside the service
# for the examples and the tests: its modules are read where they lie, so only its pyproject.toml asks for
# a new install (built with the setuptools the test extra brings, offline).
$(STAMP): pyproject.toml setup.py $(wildcard solver/core/*.[ch]) clients/python/pyproject.toml
	command -v redis-server >/dev/null || (apt-get update -qq && apt-get install -y -qq redis-server)
	command -v nginx >/dev/null || (apt-get update -qq && apt-get install -y -qq nginx)  # ricochet serve's front
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/python -m pip install --quiet --no-build-isolation -e clients/python
	touch $@

install: $(STAMP)

run: install
	$(BIN)/ricochet serve

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy  # service/, application/, workers/, solver/ ([tool.mypy] in pyproject.toml)

# openapi.yaml is generated from the marshmallow shapes and the views' declarations (service/declare.py),
# and the TypeScript client's types from it.
openapi: install
	$(BIN)/python -m service.contract
	if command -v npm >/dev/null; then cd clients/typescript && (test -d node_modules || npm ci --no-audit --no-fund --silent) && npm run -s generate; fi  # the TypeScript client's types

# The web page's end-to-end tests drive Debian's Chromium (through Playwright) and
# check accessibility with axe-core, from the npm registry (package-lock.json).
browser:
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)
	test -e /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf || apt-get install -y -qq fonts-noto-color-emoji  # the share text's squares in screenshots
	command -v npm >/dev/null || (apt-get update -qq && apt-get install -y -qq npm)
	test -f node_modules/axe-core/axe.min.js || npm ci --no-audit --no-fund --silent

# The multi-host tests (tests/cluster/, run as root: network namespaces) and bench/cluster.py:
# ip and tc (iproute2), redis-sentinel, and nftables for loss where the kernel has no netem.
cluster-tools:
	command -v ip >/dev/null && command -v tc >/dev/null || (apt-get update -qq && apt-get install -y -qq iproute2)
	command -v redis-sentinel >/dev/null || (apt-get update -qq && apt-get install -y -qq redis-sentinel)
	command -v nft >/dev/null || (apt-get update -qq && apt-get install -y -qq nftables)
	command -v iptables >/dev/null || (apt-get update -qq && apt-get install -y -qq iptables)  # NFQUEUE: a delay without netem

# Four test processes on two cores: much of the suite's time is spent waiting (browsers, workers,
# servers starting, faults held), which the third and fourth processes fill; worksteal evens out the
# long tests at the end.  On a quiet 2-core machine: 17:15 with -n 2, 11:30 with -n 3 --dist worksteal
# (the CPU 80% busy), 10:16 with -n 4 (90%); -n 6 took 12:05 and starved the tests that wait on a
# worker or a replica for a bounded time.  (Those are an earlier, smaller suite's; at 997 tests on 2026-11-29,
# the long ones dealt out first by tests/conftest.py, a quiet clean-clone run took 11:17 with -n 4, the CPU
# 100% busy from its first minute to its last: its time is its CPU, about 1,400 s, over two cores; at 997
# on 9eb9f04, the pools kept packed on disk (RICOCHET_POOL_CACHE) and the CPU that bought nothing cut, 9:01.)
# Bytecode is written even where the environment says PYTHONDONTWRITEBYTECODE (as this machine's does):
# a run after the first reads its compiled and rewritten modules (collecting took 8.6 s of CPU a
# test process without them, 3.8 with them); a clean clone's first run gains little.
test: lint browser cluster-tools
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n 4 --dist worksteal -p no:cacheprovider --durations=20

bench-load: install
	command -v wrk >/dev/null || (apt-get install -y wrk || sudo apt-get install -y wrk)
	$(BIN)/python bench/load.py

bench-cluster: install cluster-tools
	$(BIN)/python bench/cluster.py

bench: install
	$(BIN)/python bench/solver.py

clean:
	rm -rf $(VENV) build *.egg-info solver/*.so
