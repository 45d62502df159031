"""Property-based contract run (schemathesis) over every operation in openapi.yaml,
with every check schemathesis has: no server errors; no undocumented status
codes, content types, headers or shapes; requests that match the schema are
accepted and requests that break it are refused.  tests/schemathesis.toml widens
a check for an operation only where the service checks more than JSON Schema can
say, and says why.

Each operation is run twice: with requests the schema allows (positive) and
with requests it forbids (negative).  The app runs on a real Redis, in a
database of its own that no worker reads, so the packs and solves it queues stay
queued instead of loading the session worker.  Rate limits are off: the run
sends far more requests than a client may."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from hypothesis.stateful import run_state_machine_as_test
from schemathesis.checks import CHECKS, load_all_checks
from schemathesis.config import SchemathesisConfig
from schemathesis.generation import GenerationMode

from service.app import create_app

OPENAPI = Path(__file__).resolve().parents[1] / "openapi.yaml"
CONFIG = Path(__file__).resolve().parent / "schemathesis.toml"
LABELS = [op.ok().label for op in schemathesis.openapi.from_path(OPENAPI).get_all_operations()]
load_all_checks()
ALL_CHECKS = CHECKS.get_all()
EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "20"))  # per operation and mode; more for a deeper hunt
# The command's run adds its own phases (examples, coverage, stateful links) to
# the fuzzing the tests above do per operation with EXAMPLES each (so it leaves
# its own fuzzing phase out): a third as many.
COMMAND_EXAMPLES = max(1, EXAMPLES // 3)


@pytest.fixture(scope="module")
def api_schema(redis_url):
    base, _, _ = redis_url.rpartition("/")
    app = create_app({"TESTING": True, "REDIS_URL": f"{base}/7", "RATE_LIMITS_ENABLED": False,
                      "SOLVE_TIME_BUDGET": 0.5, "GAME_SSE_SECONDS": 0.2,
                      "EXPORT_LINES": 50})  # the export's first lines: a whole one takes half a minute
    return schemathesis.openapi.from_wsgi("/openapi.yaml", app, config=SchemathesisConfig.from_path(CONFIG))


def test_every_operation_and_every_check_is_covered():
    assert len(LABELS) >= 15 and "POST /v1/verify" in LABELS and "GET /v1/daily/{day}" in LABELS
    names = {check.__name__ for check in ALL_CHECKS}
    assert {"positive_data_acceptance", "negative_data_rejection", "not_a_server_error",
            "response_schema_conformance", "allow_header_conformance"} <= names


@pytest.mark.slow
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=lambda m: m.value)
@pytest.mark.parametrize("label", LABELS)
def test_operation_keeps_the_contract(api_schema, label, mode):
    operation = api_schema.find_operation_by_label(label)
    config = api_schema.config.checks_config_for(operation=operation)
    checks = [c for c in ALL_CHECKS if config.get_by_name(name=c.__name__).enabled]  # schemathesis.toml says

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    def run(case):
        case.call_and_validate(checks=checks)

    try:
        run()
    except Unsatisfiable:
        # Nothing the schema forbids can be sent to an operation whose only
        # inputs are free strings (or none): there is no negative request to try.
        assert mode is GenerationMode.NEGATIVE


@pytest.mark.slow
def test_stateful_links_keep_the_contract(api_schema):
    """Sequences of calls along the links schemathesis finds (a game's id into
    its bids, a job's id into its reads and its cancellation), checked with
    every check the configuration leaves on for each operation."""
    machine = api_schema.as_state_machine()
    run_state_machine_as_test(machine, settings=settings(max_examples=25, stateful_step_count=6, deadline=None,
                                                         suppress_health_check=list(HealthCheck), database=None))


@pytest.mark.slow
def test_the_schemathesis_command_passes_every_phase(redis_url, tmp_path):
    """`st run` as a client would use it, against the app served over HTTP: the
    examples, coverage and stateful phases (the tests above fuzz each
    operation), every check, and the exceptions of tests/schemathesis.toml.
    The stateful phase follows the spec's links and checks, for example, a
    cancelled job's later reads."""
    import subprocess
    import sys
    import threading

    from werkzeug.serving import make_server

    base, _, _ = redis_url.rpartition("/")
    # Fuzzing opens a game's event stream again and again, faster than the test
    # server's threads always wind the last ones down, so the process's cap on
    # streams (503 beyond it, by design: tests/test_games.py covers it) is raised here.
    app = create_app({"TESTING": True, "REDIS_URL": f"{base}/7", "RATE_LIMITS_ENABLED": False,
                      "SOLVE_TIME_BUDGET": 0.5, "GAME_SSE_SECONDS": 0.2, "GAME_STREAMS": 64, "EXPORT_LINES": 50})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        # One worker thread: hypothesis parses lambdas' source to describe them, and CPython 3.11.7's
        # ast.parse is not safe across threads (SystemError "AST constructor recursion depth mismatch").
        run = subprocess.run(
            [sys.executable, "-m", "schemathesis.cli", "--no-color", "--config-file", str(CONFIG), "run",
             f"http://127.0.0.1:{server.port}/openapi.yaml", "--max-examples", str(COMMAND_EXAMPLES),
             "--workers", "1", "--phases", "examples,coverage,stateful",
             # /v1/puzzles/next may look for 9 s (NEXT_BUDGET) and serve what it found after: the default
             # 10 s read timeout failed it once on a machine running four test processes on two cores.
             "--request-timeout", "30",
             "--seed", "1", "--report-dir", str(tmp_path)],
            capture_output=True, text=True, timeout=600, cwd=tmp_path)  # its cache stays out of the tree
    finally:
        server.shutdown()
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
