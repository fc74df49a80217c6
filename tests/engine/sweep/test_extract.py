"""`python -m engine extract`: the public JSONL contract (docs/extraction.md)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.cli import main

ROOT = Path(__file__).resolve().parents[3]
OPTS4 = {"A": "anger", "B": "joy", "C": "fear", "D": "calm"}

CASES = [
    {"id": "x-1", "response": "Answer: C", "options": OPTS4, "multi_label": False},
    {"id": 7, "response": "I'd say B and D are both right.\nAnswer: B, D", "options": OPTS4, "multi_label": True},
    {"id": "x-3", "response": "I cannot decide.", "options": OPTS4, "multi_label": False},
    {"id": "x-4", "response": "joy", "options": OPTS4},  # multi_label omitted: one answer
    {"id": "x-5", "response": None, "options": {"A": "yes", "B": "no"}, "multi_label": True, "finish_reason": "stop",
     "intended": "ignored key"},
]
EXPECTED = [
    {"id": "x-1", "answer": "C", "by": "rules"},
    {"id": 7, "answer": ["B", "D"], "by": "rules"},
    {"id": "x-3", "answer": None, "by": "rules"},
    {"id": "x-4", "answer": "B", "by": "rules"},
    {"id": "x-5", "answer": None, "by": "rules"},
]


def _jsonl(rows) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def _out(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def test_contract_round_trips_in_order(tmp_path, capsys):
    f = tmp_path / "in.jsonl"
    f.write_text(_jsonl(CASES[:2]) + "\n   \n" + _jsonl(CASES[2:]), encoding="utf-8")  # blank lines skipped
    assert main(["extract", str(f)]) == 0
    assert _out(capsys.readouterr().out) == EXPECTED


def test_stdin_dash(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(_jsonl(CASES).encode())))
    assert main(["extract", "-"]) == 0
    assert _out(capsys.readouterr().out) == EXPECTED


def test_as_a_subprocess_from_the_project(tmp_path):
    """Exactly how outside tools call it: `PYTHON -m engine extract FILE` with cwd = the project."""
    f = tmp_path / "in.jsonl"
    f.write_text(_jsonl(CASES), encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "engine", "extract", str(f)], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert _out(r.stdout) == EXPECTED
    assert "5 lines: 3 read by the rules, 2 unread" in r.stderr


@pytest.mark.parametrize("line, message", [
    ("{oops", "not JSON"),
    ("[1, 2]", "not a JSON object"),
    ('{"response": "A", "options": {"A": "x", "B": "y"}}', "`id`"),
    ('{"id": 1, "response": 3, "options": {"A": "x", "B": "y"}}', "`response`"),
    ('{"id": 1, "response": "A", "options": {"A": "x"}}', "`options`"),
    ('{"id": 1, "response": "A", "options": {"B": "x", "A": "y"}}', "option codes"),
    ('{"id": 1, "response": "A", "options": {"A": "x", "B": "y"}, "multi_label": "no"}', "`multi_label`"),
])
def test_bad_line_exits_2_naming_it(tmp_path, capsys, line, message):
    f = tmp_path / "in.jsonl"
    f.write_text(_jsonl(CASES[:2]) + line + "\n", encoding="utf-8")
    assert main(["extract", str(f)]) == 2
    cap = capsys.readouterr()
    assert cap.out == ""  # nothing written before the input is known good
    err = cap.err.strip().splitlines()
    assert len(err) == 1 and f"{f} line 3:" in err[0] and message in err[0]


def test_missing_file_exits_2(tmp_path, capsys):
    assert main(["extract", str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_extractor_file_without_table_exits_2(tmp_path, capsys):
    f, models = tmp_path / "in.jsonl", tmp_path / "m.toml"
    f.write_text(_jsonl(CASES), encoding="utf-8")
    models.write_text('[judge]\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "x"\n')
    assert main(["extract", str(f), "--extractor", str(models)]) == 2
    assert "no [extractor] table" in capsys.readouterr().err


def test_a_line_separator_inside_a_string_is_text_not_a_line_break(tmp_path, capsys):
    """JSON Lines ends a line at \\n only: U+2028, U+2029, \\x85 and \\x0c are valid raw inside a string."""
    row = {"id": "sep", "response": "I think\u2028it is\u2029\x85\x0c Answer: C", "options": OPTS4}
    f = tmp_path / "in.jsonl"
    f.write_text(_jsonl([row, CASES[0]]), encoding="utf-8")
    assert main(["extract", str(f)]) == 0
    assert _out(capsys.readouterr().out) == [{"id": "sep", "answer": "C", "by": "rules"}, EXPECTED[0]]


def test_windows_line_ends_and_a_bom_on_the_first_line_are_accepted(tmp_path, capsys):
    f = tmp_path / "in.jsonl"
    f.write_bytes(b"\xef\xbb\xbf" + _jsonl(CASES).replace("\n", "\r\n").encode())
    assert main(["extract", str(f)]) == 0
    assert _out(capsys.readouterr().out) == EXPECTED


def test_a_bom_past_the_first_line_is_a_bad_line(tmp_path, capsys):
    f = tmp_path / "in.jsonl"
    f.write_text(_jsonl(CASES[:1]) + "\ufeff" + _jsonl(CASES[1:2]), encoding="utf-8")
    assert main(["extract", str(f)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{f} line 2: not JSON" in err[0]


@pytest.mark.parametrize("depth", [10_000, 200_000])
def test_deeply_nested_json_exits_2_in_one_line(tmp_path, capsys, depth):
    f = tmp_path / "in.jsonl"
    f.write_text(_jsonl(CASES[:1]) + '{"id": 1, "x": ' + "[" * depth + "]" * depth + "}\n", encoding="utf-8")
    assert main(["extract", str(f)]) == 2
    cap = capsys.readouterr()
    err = cap.err.strip().splitlines()
    assert cap.out == "" and len(err) == 1 and f"{f} line 2: nested too deeply" in err[0]


def test_an_id_that_is_not_valid_unicode_exits_2(tmp_path, capsys):
    """A lone surrogate escape is valid JSON but cannot be written back out as UTF-8."""
    f = tmp_path / "in.jsonl"
    f.write_text(_jsonl(CASES[:1]) + '{"id": "a\\ud800", "response": "A", "options": {"A": "x", "B": "y"}}\n',
                 encoding="utf-8")
    assert main(["extract", str(f)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{f} line 2:" in err[0] and "`id`" in err[0]


@pytest.mark.slow
def test_a_dead_extractor_is_given_up_every_line_written_and_exit_3(tmp_path):
    """The extractor's endpoint has the sweep's breaker: a dead one costs its patience once, not retries per line."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]  # nothing listens there
    lines = [*CASES, *({"id": f"u{k}", "response": "I cannot decide.", "options": OPTS4} for k in range(40))]
    f, models = tmp_path / "in.jsonl", tmp_path / "m.toml"
    f.write_text(_jsonl(lines), encoding="utf-8")
    models.write_text(f'[extractor]\nprovider = "openai"\nbase_url = "http://127.0.0.1:{dead}/v1"\nmodel = "x"\n'
                      'api_key_env = "NO_KEY_NEEDED"\nunreachable_after_s = 2\nmax_retries = 50\nmax_concurrency = 2\n')
    r = subprocess.run([sys.executable, "-m", "engine", "extract", str(f), "--extractor", str(models)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120, env={**__import__("os").environ,
                                                                          "NO_KEY_NEEDED": "k"})
    assert r.returncode == 3, r.stderr
    out = _out(r.stdout)
    assert [x["id"] for x in out] == [x["id"] for x in lines]  # every line written, in order
    assert out[:5] == EXPECTED  # what the rules read is kept
    assert all(x["answer"] is None for x in out[5:])
    assert "was given up" in r.stderr and "lines were not asked" in r.stderr
    unasked = int(r.stderr.split(" lines were not asked")[0].rsplit(" ", 1)[1])
    assert unasked >= 41 - 2, r.stderr  # at most one question in flight per worker when it gave up (2 workers)
