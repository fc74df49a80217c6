"""Book-SORT (Sequence Order Recall Task, Pink et al. 2024): which of two excerpt segments comes first? Binary, en.

Files: the Hugging Face layout ``<data_dir>/booksort/data/test_e1000_s50.parquet``
(``memari/booksort``: 1,000-word excerpts, 50-word segments, 3,600 test rows) when
present, then the team folder's copy of the reference's 300-row sample
``booksort/moodbench_hf_format/test_e1000_s50.parquet``, else the reference's own
``moodbench/company_ability/memory/booksort/data/test_e1000_s50.parquet``.
Item id: ``<book_idx>/<excerpt_idx>/<distance_bin>/<segment_idx>``.

``segment_1`` always precedes ``segment_2`` in the book; ``present_seg1_first``
says which one SORT shows first. The segments are shown in that order, so the
answer is A when it is 1 and B otherwise (149 / 151 in the reference sample).
The reference always showed ``segment_1`` first but kept that gold, so half of
its golds were wrong. The release's ``*...*`` wrappers around the texts are
removed. Metric: accuracy (paper); chance 0.5.
"""

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

PARQUET = "test_e1000_s50.parquet"


def _shown(row: dict) -> dict:
    seg1, seg2 = (str(row[k]).strip().strip("*").strip() for k in ("segment_1", "segment_2"))
    first, second = (seg1, seg2) if int(row["present_seg1_first"]) == 1 else (seg2, seg1)
    return {"excerpt": str(row["excerpt_text"]).strip().strip("*").strip(), "first": first, "second": second}


register(
    ChoiceDataset(
        id="booksort",
        language="en",
        files=(
            Files("original", f"data/{PARQUET}", "parquet"),
            Files("original", f"moodbench_hf_format/{PARQUET}", "parquet"),
            Files("reference", f"company_ability/memory/booksort/data/{PARQUET}", "parquet"),
        ),
        item_id="{book_idx}/{excerpt_idx}/{distance_bin}/{segment_idx}",
        task="Read the excerpt from a book. Then decide which of the two segments quoted from it appears first "
        "in the excerpt.",
        body="Book: {book_title}\n\nExcerpt:\n{excerpt}",
        derive=_shown,
        option_fields=("first", "second"),
        gold_field="present_seg1_first",
        gold_map={1: 0, 0: 1},
        chance_baseline=0.5,
        majority_baseline=151 / 300,  # always "B", on the reference's 300 rows
    )
)
