"""CPED (Chinese Personalized and Emotional Dialogue): the emotion of one utterance of a TV series. 13 options, zh.

Files: the original ``<data_dir>/cped/data/CPED/test_split.csv`` (scutcyr/CPED; the
full test split has 27,438 utterances, the team folder its first 1,000, all from one
series) when present, else the reference's 300-row sample
``moodbench/emo_ability/emo_recognition/CPED_txtcsv/test_split.csv``. The original
starts with a byte-order mark (the reader strips it). Item id: ``Utterance_ID``.

Gold: the ``Emotion`` column, mapped onto the 13 options. The file's names differ
from CPED's README names for seven classes (anger/angry, depress/depressed,
sadness/sad, fear/feared, disgust/disgusted, positive-other/other-positive,
negative-other/other-negative); the reference matched them as strings and left 127
of its 300 golds empty. Options are shown in Chinese, in a fixed order. The prompt
shows the speaker and the utterance (as the reference, no dialogue history).
Metrics: accuracy (primary, paper); macro F1 over the emotions and per-emotion F1
(CPED's own paper reports both; neutral is 30 % of the rows).
"""

from benchmark.dataset import MetricSpec
from benchmark.loaders import Files
from benchmark.adapters.choice_measures import per_class_f1
from benchmark.adapters.mcq import ChoiceDataset
from benchmark.registry import register

# (label in the data file, option shown); the order of CPED's README.
EMOTIONS = (
    ("happy", "快乐"), ("sadness", "悲伤"), ("anger", "愤怒"), ("fear", "恐惧"), ("depress", "沮丧"),
    ("disgust", "厌恶"), ("astonished", "惊讶"), ("worried", "担忧"), ("grateful", "感激"), ("relaxed", "放松"),
    ("neutral", "中性"), ("positive-other", "其他正面情绪"), ("negative-other", "其他负面情绪"),
)  # fmt: skip
# Macro F1 over the emotions (keys from the file's English names), besides the paper's accuracy.
_measures, _f1_metrics = per_class_f1(tuple(label for label, _ in EMOTIONS))

register(
    ChoiceDataset(
        id="cped",
        language="zh",
        files=(
            Files("original", "data/CPED/test_split.csv", "csv"),
            Files("reference", "emo_ability/emo_recognition/CPED_txtcsv/test_split.csv", "csv"),
        ),
        item_id="{Utterance_ID}",
        task="下面是电视剧对话中的一句话，请判断说话人说这句话时的情绪。",
        body="说话人：{Speaker}\n话语：{Utterance}",
        labels=tuple(shown for _, shown in EMOTIONS),
        gold_field="Emotion",
        gold_map={label: i for i, (label, _) in enumerate(EMOTIONS)},
        measures=_measures,
        metric_specs=(MetricSpec("accuracy", "mean", "score", primary=True), *_f1_metrics),
        chance_baseline=1 / 13,
        # Always "neutral": 305/1,000 on the team folder's original cut (99/300 in the reference copy).
        majority_baseline=0.305,
    )
)
