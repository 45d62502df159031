"""The `ricochet` command line, run as a user runs it (docs/formats.md shapes and exit codes)."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator

from tests.conftest import FIXTURES

CMD = [sys.executable, "-m", "service.cli"]


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*CMD, *args], input=stdin, capture_output=True, text=True, timeout=120)


def test_board_ascii_svg_json():
    out = run("board", "green-A,yellow-B,red-B,blue-B")
    assert out.returncode == 0 and "###" in out.stdout and out.stdout.count("\n") >= 33
    svg = run("board", "green-A,yellow-B,red-B,blue-B", "--svg")
    assert svg.returncode == 0 and svg.stdout.startswith("<svg") and svg.stdout.rstrip().endswith("</svg>")
    obj = json.loads(run("board", "green-A,yellow-B,red-B,blue-B", "--format", "json").stdout)
    assert obj["width"] == 16 and len(obj["targets"]) == 17


def test_board_list_counts_the_editions():
    assert len(run("board", "--list", "--edition", "1999").stdout.split()) == 96  # as the README prints it
    assert run("board").returncode == 2


def test_version():
    version = run("--version")
    assert version.returncode == 0 and version.stdout.startswith("ricochet ")


def _parsers(parser: argparse.ArgumentParser, path: str = "ricochet") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _parsers(child, f"{path} {name}")


def test_every_subcommand_is_a_module_and_every_flag_has_help():
    from service.cli import SUBCOMMANDS, build_parser

    parser = build_parser()
    seen = set()
    for path, p in _parsers(parser):
        seen.add(path)
        for action in p._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            assert action.help, f"{path} {'/'.join(action.option_strings) or action.dest} has no help"
    assert {m.__name__.rsplit(".", 1)[1] for m in SUBCOMMANDS} <= {p.split()[1] for p in seen if " " in p}
    assert {"ricochet pool build", "ricochet pack", "ricochet serve", "ricochet bank"} <= seen


def test_bad_board_spec_exits_2_with_the_reason():
    out = run("board", "green-A,green-B,red-B,blue-B")
    assert out.returncode == 2 and "colour marking green is used twice" in out.stderr


def test_solve_file_and_stdin(tmp_path):
    row = json.loads((FIXTURES / "puzzles.jsonl").read_text().splitlines()[0])
    path = tmp_path / "p.json"
    path.write_text(json.dumps(row))
    answer = json.loads(run("solve", str(path)).stdout)
    assert answer["status"] == "optimal" and answer["length"] == row["optimal_length"]
    assert all(set(m) == {"robot", "direction"} for m in answer["moves"])
    assert json.loads(run("solve", "-", stdin=json.dumps(row)).stdout)["length"] == row["optimal_length"]
    ref = json.loads(run("solve", "--reference", str(path)).stdout)
    assert ref["length"] == row["optimal_length"]


def test_solve_jsonl_in_order_with_a_bad_line(tmp_path):
    lines = (FIXTURES / "puzzles.jsonl").read_text().splitlines()[:5]
    bad = json.dumps({"board": "green-A,yellow-B,red-B,blue-B", "robots": {"red": [7, 7]},
                      "target": {"colour": "red", "symbol": "circle"}})
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join(lines[:2] + [bad] + lines[2:]) + "\n")
    out = run("solve", "--jsonl", str(path))
    answers = [json.loads(x) for x in out.stdout.splitlines()]
    assert out.returncode == 2 and len(answers) == 6
    assert answers[2]["field"] == "robots.red" and "blocked" in out.stderr
    expected = [json.loads(x)["optimal_length"] for x in lines]
    assert [a["length"] for a in answers[:2] + answers[3:]] == expected


def test_check_verdicts(tmp_path):
    row = json.loads((FIXTURES / "puzzles.jsonl").read_text().splitlines()[0])
    good = {**row, "moves": row["oracle_solution"]}
    wrong = {**row, "moves": row["oracle_solution"][:-1]}
    illegal = {**row, "moves": [{"robot": "blue", "direction": "E"}]}  # blue starts in the NE corner
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in (good, wrong, illegal)) + "\n")
    out = run("check", "--jsonl", str(path))
    assert out.returncode == 0
    v = [json.loads(x) for x in out.stdout.splitlines()]
    assert v[0]["legal"] and v[0]["solved"] and v[0]["length"] == row["optimal_length"] and v[0]["ricochet"]
    assert v[1]["legal"] and not v[1]["solved"]
    assert not v[2]["legal"] and v[2]["first_bad_move"] == 0 and v[2]["reason"]


def test_unreadable_input_exits_2(tmp_path):
    out = run("solve", str(tmp_path / "missing.json"))
    assert out.returncode == 2 and "cannot read" in out.stderr
    (tmp_path / "x.json").write_text("{not json")
    out = run("check", str(tmp_path / "x.json"))
    assert out.returncode == 2 and "not valid JSON" in out.stderr


def test_pool_build_writes_pools_that_load(tmp_path):
    """`ricochet pool build` (3 robots keep it small), with its progress on standard error."""
    from solver.production.pools import DirectorySource, Pool

    out = run("pool", "build", "green-C,red-C,yellow-D,blue-B", "red-circle", "--robots", "3", "--per-length", "20",
              "--output", str(tmp_path))
    assert out.returncode == 0, out.stderr
    source = DirectorySource(tmp_path)
    assert [i.rsplit("-", 1)[-1] for i in source.ids()] == ["none", "turn"]
    for pool_id in source.ids():
        pool = Pool.loads(source.read(pool_id))
        assert pool.rows and pool.id == pool_id and f"{pool_id}: {len(pool.rows)} puzzles" in out.stderr
    bad = run("pool", "build", "green-C,red-C,yellow-D,blue-B", "purple-moon", "--output", str(tmp_path))
    assert bad.returncode == 2 and "not a chip" in bad.stderr
    import os

    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    nowhere = subprocess.run([*CMD, "pool", "build", "green-C,red-C,yellow-D,blue-B", "red-circle"], env=env,
                             capture_output=True, text=True, timeout=60)
    assert nowhere.returncode == 2 and "REDIS_URL" in nowhere.stderr
