"""VCSum: Chinese meeting summarisation (ACL 2023 Findings), test split, overall meeting summary.

Files: the original ``<data_dir>/vcsum/long_test.txt`` (26 meetings: ``id``,
``eos_index``, ``summary``) when present, else the reference's
``moodbench/basic_ability/NLG/vcsum_txt/long_test.txt``. The transcript of
each meeting comes from ``overall_context.txt`` beside it (upstream's file of
full transcripts, joined by ``id``, as the reference does) when present.
Neither the team folder nor the reference snapshot has that file (> 4 MiB), so
the transcript is otherwise rebuilt from ``short_test.txt`` (beside it, or in
``tmp/``): the meeting's segments ``<id>_0``, ``<id>_1``... in order, their
utterances concatenated, and checked against ``eos_index`` (segment k ends at
utterance ``eos_index[k]``). A meeting with a missing or mis-sized segment is
left out (97 and 110: 24 of 26 meetings remain) rather than summarised from a
partial transcript. Item id: the meeting id.

The transcript is shown one utterance per line, ``发言人N：text``; the gold is
the overall summary (100-350 characters). Scored by the judge (completeness,
conciseness, faithfulness, fluency; see benchmark/datasets/_summary.py) and by
ROUGE-1 F (primary metric of the adapter, the reference's score), ROUGE-2 F,
ROUGE-L F on character tokens (benchmark/metrics/text.py), jieba-free. A
transcript longer than the model's context is cut at the end (recorded as
``truncated``): meetings run to 90,000 estimated tokens.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from benchmark.datasets._summary import source_meta, summary
from benchmark.loaders import Files, read_rows
from benchmark.registry import register

_JSONL = Files("original", "", "jsonl")


def _utterances(context: Any) -> list[str]:
    """A transcript's utterances: each a string, or a list of sentences joined."""
    out = []
    for u in context or ():
        text = "".join(str(s) for s in u) if isinstance(u, (list, tuple)) else str(u)
        out.append(" ".join(text.split()))
    return out


def _from_full(path: Path) -> dict[str, dict]:
    return {str(row["id"]): row for _, row in read_rows(_JSONL, path)}


def _from_segments(path: Path) -> dict[str, list[dict]]:
    """meeting id -> its segments from short_test.txt, ordered by segment number."""
    by_meeting: dict[str, dict[int, dict]] = {}
    for n, row in read_rows(_JSONL, path):
        meeting, _, seg = str(row["id"]).rpartition("_")
        if not meeting or not seg.isdigit():
            raise ValueError(f"{path} row {n}: segment id {row['id']!r} is not <meeting>_<n>")
        by_meeting.setdefault(meeting, {})[int(seg)] = row
    return {m: [segs[k] for k in sorted(segs)] for m, segs in by_meeting.items()}


def _rebuild(meeting: dict, segments: list[dict]) -> dict | None:
    """The meeting's transcript from its segments, or None when a segment is missing."""
    ends = [int(x) for x in meeting.get("eos_index") or ()]
    if not ends or len(segments) != len(ends):
        return None
    context, speakers, start = [], [], 0
    for seg, end in zip(segments, ends):
        utts = seg["context"]
        if len(utts) != end + 1 - start:
            return None
        context += utts
        speakers += list(seg.get("speaker") or [None] * len(utts))
        start = end + 1
    return {"context": context, "speaker": speakers}


def vcsum_rows(files: Files, path: Path) -> Iterator[tuple[int, dict]]:
    full = path.with_name("overall_context.txt")
    transcripts = _from_full(full) if full.is_file() else None
    segments: dict[str, list[dict]] = {}
    if transcripts is None:
        short = next((p for p in (path.with_name("short_test.txt"), path.parent / "tmp" / "short_test.txt")
                      if p.is_file()), None)
        if short is None:
            raise ValueError(f"{path}: no transcripts beside it (overall_context.txt or short_test.txt)")
        segments = _from_segments(short)
    for n, meeting in read_rows(files, path):
        mid = str(meeting["id"])
        t = transcripts.get(mid) if transcripts is not None else _rebuild(meeting, segments.get(mid, []))
        if t is None:
            continue  # no complete transcript for this meeting
        yield n, {**meeting, "id": mid, "context": t["context"], "speaker": t.get("speaker")}


def _transcript(row: dict) -> dict:
    utts = _utterances(row["context"])
    speakers = row.get("speaker") or [None] * len(utts)
    lines = [f"发言人{s}：{u}" if s is not None else u for s, u in zip(speakers, utts)]
    return {"_transcript": "\n".join(lines)}


register(summary(
    id="vcsum",
    language="zh",
    files=(
        Files("original", "long_test.txt", "jsonl"),
        Files("reference", "basic_ability/NLG/vcsum_txt/long_test.txt", "jsonl"),
    ),
    rows=vcsum_rows,
    item_id="{id}",
    task="下面是一场会议的完整转写稿（由语音识别得到，可能有错字）。请为整场会议写一段总结，"
    "涵盖主要议题、观点和结论，约200到300字。",
    body="会议转写稿：\n{_transcript}",
    derive=_transcript,
    gold="summary",
    meta_fields=source_meta("_transcript"),
    max_tokens=512,
))
