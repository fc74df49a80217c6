"""SAMSum (Gliwa et al., 2019): English messenger-style chats and their third-person summaries, test split.

In the reference suite only (not in the paper). Files: the reference's
``moodbench/basic_ability/NLG/samsum/test.csv`` (300 of the 819 test
conversations; the README beside it is the Hub card of ``knkarthick/samsum``;
columns ``id``, ``dialogue`` with one ``Name: message`` line per turn,
``summary``; CC BY-NC-ND 4.0); no upstream copy is in the team folder.
Item id: the conversation ``id``. The reference takes the first 300 rows,
i.e. all of them; so does the 300-item sample here.

Handled as lcsts, cnewsum and vcsum (benchmark/datasets/_summary.py): scored
by ROUGE-1 F (the adapter's primary metric, the reference's score), ROUGE-2 F
and ROUGE-L F (benchmark/metrics/text.py: lower-cased word tokens, punctuation
dropped, clipped counts, no stemming), and by the summary judge
(completeness, conciseness, faithfulness, fluency) when a judge is configured.
The reference tokenises English with jieba (punctuation tokens count,
case-sensitive, distinct n-grams) and calls the chat a "tech article"; the
prompt here calls it a conversation and asks for SAMSum's style of summary.
"""

from benchmark.datasets._summary import source_meta, summary
from benchmark.loaders import Files
from benchmark.registry import register

register(summary(
    id="samsum",
    language="en",
    files=(Files("reference", "basic_ability/NLG/samsum/test.csv", "csv"),),
    item_id="{id}",
    task="Summarise the chat conversation below in one to three short sentences, in the third person: "
    "who is involved and what they say, plan or decide.",
    body="Conversation:\n{dialogue}",
    gold="summary",
    meta_fields=source_meta("dialogue"),
    max_tokens=128,
))
