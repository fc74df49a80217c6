"""ReCoRD (SuperGLUE): cloze-style news reading comprehension, validation split.

Files: HF ``aps/super_glue`` record validation parquet under ``<data_dir>/record/``
(``validation-*.parquet``, ``data/`` or ``record/`` below it; or SuperGLUE's
``val.jsonl``) when present; the team folder has
neither, so the reference's 300-row
``moodbench/basic_ability/NLU/record_parquet/validation-00000-of-00001.parquet``
(HF format) is what the tests read. Item id: ``<passage idx>/<query idx>``,
the same in all three formats.

The prompt shows the passage (its ``@highlight`` lines as bullets), the query
with ``@placeholder`` and the candidate entities as a list; the model writes
the entity. Scored with ReCoRD's official metric: token F1 (primary) and
exact match after SQuAD normalisation, best over the gold aliases (the
answers are alternative surface forms of one entity: naming any one is right).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import orjson

from benchmark.adapters.freetext import SQUAD, TextDataset
from benchmark.loaders import Files, read_rows
from benchmark.registry import register


def record_rows(files: Files, path: Path) -> Iterator[tuple[int, dict]]:
    """One row per query: _pid, _qid, passage, query, entities, answers (HF fields)."""
    if files.format != "superglue":
        for n, row in read_rows(files, path):
            idx = row.get("idx") or {}
            row["_pid"], row["_qid"] = idx.get("passage"), idx.get("query")
            yield n, row
        return
    # SuperGLUE's JSONL: one passage per line; entity spans have inclusive ends.
    n = 0
    with path.open("rb") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                doc = orjson.loads(line)
                text = doc["passage"]["text"]
                entities = sorted({text[e["start"] : e["end"] + 1] for e in doc["passage"]["entities"]})
                for qa in doc["qas"]:
                    answers = sorted({a["text"] for a in qa.get("answers", ())})
                    yield n, {"_pid": doc["idx"], "_qid": qa["idx"], "passage": text, "query": qa["query"],
                              "entities": entities, "answers": answers}
                    n += 1
            except (orjson.JSONDecodeError, KeyError, TypeError) as e:
                raise ValueError(f"{path}:{lineno}: not a SuperGLUE ReCoRD record ({e!r})") from None


def _derive(row: dict) -> dict:
    text, *highlights = row["passage"].split("@highlight")
    passage = text.strip()
    if highlights:
        passage += "\n\nHighlights:\n" + "\n".join(f"- {h.strip()}" for h in highlights if h.strip())
    return {"_passage": passage, "_candidates": "\n".join(f"- {e}" for e in row["entities"])}


register(
    TextDataset(
        id="record",
        language="en",
        files=(
            Files("original", "validation-*.parquet", "parquet"),
            Files("original", "data/validation-*.parquet", "parquet"),
            Files("original", "record/validation-*.parquet", "parquet"),  # aps/super_glue's own tree
            Files("original", "val.jsonl", "superglue"),
            Files("reference", "basic_ability/NLU/record_parquet/validation-*.parquet", "parquet"),
        ),
        rows=record_rows,
        item_id="{_pid}/{_qid}",
        task=(
            "Read the news passage below. In the sentence that follows it, one entity has been replaced by "
            "@placeholder. Which entity from the candidate list belongs in its place? Write the entity exactly "
            "as it appears in the list."
        ),
        body="Passage:\n{_passage}\n\nSentence: {query}\n\nCandidates:\n{_candidates}",
        derive=_derive,
        gold="answers",
        scorer=SQUAD,
        max_tokens=32,
    )
)
