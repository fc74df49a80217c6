"""Model names in models.toml: no control character, no leading or trailing space, no comma (one line, exit 2)."""

from __future__ import annotations

import pytest

from engine.cli import main

MODEL = '[[models]]\nname = {name}\nprovider = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'


@pytest.mark.parametrize("name, says", [
    ('"evil\\u001b]0;pwned\\u0007"', "holds a control character"),
    ('"tab\\there"', "holds a control character"),
    ('"c1\\u009bx"', "holds a control character"),
    ('" padded "', "starts or ends with a space: ' padded ' and 'padded' would be two models"),
    ('"padded "', "starts or ends with a space"),
    ('"gpt, the big one"', "holds a comma"),
])
def test_a_bad_model_name_is_one_line_exit_2(tmp_path, capsys, name, says):
    path = tmp_path / "models.toml"
    path.write_text(MODEL.format(name=name) + "\n" + MODEL.format(name='"fine-name"'))
    assert main(["sweep", str(path), "--estimate", "--db", str(tmp_path / "r.duckdb")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {path}: models[0] (name ") and says in err, err
    assert "\x1b" not in err and "\x07" not in err and "\x9b" not in err  # the name is shown escaped


def test_the_judge_name_is_held_to_the_same_rules(tmp_path, capsys):
    path = tmp_path / "models.toml"
    path.write_text(MODEL.format(name='"a"') + '\n[judge]\nname = "judge, strict"\nprovider = "openai"\n'
                    'base_url = "http://127.0.0.1:9/v1"\nmodel = "j"\n')
    assert main(["sweep", str(path), "--estimate", "--db", str(tmp_path / "r.duckdb")]) == 2
    assert "judge: `name` holds a comma" in capsys.readouterr().err
