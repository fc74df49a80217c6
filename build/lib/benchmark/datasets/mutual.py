"""MuTual-plus (multi-turn dialogue reasoning, Cui et al. 2020), dev: pick the right next utterance.

Files: MuTual-plus dev files, one JSON object per ``dev_<n>.txt`` (``article``,
``options`` (4), ``answers`` letter, ``id``): the upstream layout
``<data_dir>/mutual/mutual_plus/dev/dev_*.txt`` (Nealcly/MuTual ``data/mutual_plus``,
886 files) when present, else the reference's 300-file cut
``moodbench/basic_ability/NLI/mutual_plus_txt/dev/dev_*.txt`` (the team folder's
``mutual/dev/`` is plain MuTual, a different task without the "safe response"
option, and is not used). Item id: ``id`` (``dev_<n>``), the same in both.

Metric: accuracy, which is MuTual's R@1. R@2 and MRR need a ranking of all four
options, which a one-answer question does not produce. Gold letters are spread
(A-D 65/79/86/70 in the reference cut): options keep their order.
"""

from benchmark.loaders import Files
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

register(
    ChoiceDataset(
        id="mutual",
        language="en",
        files=(
            Files("original", "mutual_plus/dev/dev_*.txt", "jsonl"),
            Files("reference", "basic_ability/NLI/mutual_plus_txt/dev/dev_*.txt", "jsonl"),
        ),
        item_id="{id}",
        task=(
            "Read the conversation between a man (M) and a woman (F) and choose the utterance that "
            "follows it most coherently and logically."
        ),
        body="Conversation: {article}",
        options_field="options",
        gold_field="answers",
        gold_map="letter",
        chance_baseline=0.25,
        majority_baseline=86 / 300,  # always C, on the reference cut
    )
)
