"""Does the user simulator feel what ESConv's real seekers said they felt? (issue 29, part 8)

ESConv's human supporters' turns are replayed, in order, as the companion; the user simulator
plays the seeker (seeker_messages / read_seeker_reply, as in an episode) and rates its emotion
after each supporter message. Its final emotion is compared, over conversations, with the real
seekers' own post-chat ratings: Spearman's rho against final_emotion_intensity (1-5, higher =
worse: a faithful simulator correlates negatively), against the drop in intensity (initial -
final: positively) and against their empathy rating of the supporter (positively).

    python bench/seeker_agreement.py                      # the simulated seeker (a scripted baseline)
    python bench/seeker_agreement.py --base-url http://127.0.0.1:8090/v1 --model smollm2 --limit 8 --turns 3
    python bench/seeker_agreement.py --base-url https://api.openai.com/v1 --model gpt-4o-mini --api-key-env OPENAI_API_KEY

The scripted seeker's emotion is crc32 arithmetic, so its rho is noise around 0: it checks the
bench, not a simulator. Data: ESConv.json when pulled, else FailedESConv.json (196 conversations).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark.dataset import Message  # noqa: E402
from benchmark.datasets.esconv_support import SEEKER_SPEAKERS, esconv_scenario  # noqa: E402
from benchmark.episodes.seeker import SEEKER_PROMPT_VERSION, read_seeker_reply, seeker_messages  # noqa: E402
from benchmark.loaders import Files, locate, read_rows  # noqa: E402

FILES = (Files("original", "ESConv.json", "json", folder="esconv"),
         Files("original", "FailedESConv.json", "json", folder="esconv"))


def supporter_messages(dialog: list[dict]) -> list[str]:
    """The supporter's turns, consecutive ones joined into one message, after the seeker first speaks."""
    out: list[str] = []
    seeker_spoke, previous = False, None
    for turn in dialog:
        mine = turn.get("speaker") in SEEKER_SPEAKERS
        text = str(turn.get("content", "")).strip()
        if mine:
            seeker_spoke = True
        elif seeker_spoke and text:
            if previous == "supporter":
                out[-1] += " " + text
            else:
                out.append(text)
        previous = "seeker" if mine else "supporter"
    return out


def _rating(survey: dict, key: str) -> int | None:
    try:
        return int(str(survey.get(key)).strip())
    except ValueError:
        return None


async def _ask(session: aiohttp.ClientSession, url: str, model: str, key: str | None,
               messages: tuple[Message, ...], max_tokens: int) -> str | None:
    body = {"model": model, "max_tokens": max_tokens, "temperature": 0,
            "messages": [{"role": m.role, "content": m.content} for m in messages]}
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        async with session.post(url + "/chat/completions", json=body, headers=headers,
                                timeout=aiohttp.ClientTimeout(total=120)) as resp:
            if resp.status != 200:
                return None
            data: Any = await resp.json(content_type=None)
            return str(data["choices"][0]["message"]["content"] or "")
    except (aiohttp.ClientError, asyncio.TimeoutError, KeyError, IndexError, TypeError):
        return None


async def play(session: aiohttp.ClientSession, args: argparse.Namespace, key: str | None, raw: dict,
               stats: dict[str, int]) -> int | None:
    """The simulator's last readable emotion after up to --turns supporter messages (None: never readable)."""
    scenario = esconv_scenario(raw)
    opening = scenario.sessions[0].opening
    history: list[Message] = [Message("user", opening)] if opening else []
    emotion = None
    for said in supporter_messages(raw.get("dialog") or [])[:args.turns]:
        history.append(Message("assistant", said))
        text = await _ask(session, args.base_url, args.model, key, seeker_messages(scenario, 0, history), args.max_tokens)
        stats["calls"] += 1
        reply = read_seeker_reply(text)
        if reply is None:
            stats["unreadable" if text is not None else "failed"] += 1
            history.append(Message("user", "..."))
            continue
        emotion = reply.emotion
        history.append(Message("user", reply.reply))
        if reply.end:
            break
    return emotion


async def run(args: argparse.Namespace) -> None:
    _, _, paths = locate(FILES, Path(args.data_dir), "esconv_support")
    rows = [row for path in paths for _, row in read_rows(FILES[0], path)
            if str(row.get("situation") or "").strip()][:args.limit]
    key = os.environ.get(args.api_key_env) if args.api_key_env else None
    stats = {"calls": 0, "unreadable": 0, "failed": 0}
    sem = asyncio.Semaphore(args.concurrency)
    async with aiohttp.ClientSession() as session:
        async def one(raw: dict) -> int | None:
            async with sem:
                return await play(session, args, key, raw, stats)

        t0 = time.perf_counter()
        finals = await asyncio.gather(*(one(r) for r in rows))
        elapsed = time.perf_counter() - t0
    pairs = []
    for raw, final in zip(rows, finals):
        survey = (raw.get("survey_score") or {}).get("seeker") or {}
        initial, after, empathy = (_rating(survey, k) for k in ("initial_emotion_intensity", "final_emotion_intensity",
                                                                 "empathy"))
        if final is not None and None not in (initial, after, empathy):
            pairs.append((final, after, (initial or 0) - (after or 0), empathy))
    print(f"{paths[0].name}: {len(rows)} conversations, simulator {args.model} at {args.base_url} "
          f"(seeker prompt {SEEKER_PROMPT_VERSION}), up to {args.turns} supporter messages each")
    print(f"calls {stats['calls']}, unreadable replies {stats['unreadable']}, failed calls {stats['failed']}, "
          f"{elapsed:.1f} s; conversations with a final emotion and ratings: {len(pairs)}")
    if len(pairs) < 3:
        print("too few conversations for a correlation")
        return
    sim = [p[0] for p in pairs]
    for name, col, sign in (("final intensity (1-5, higher = worse)", 1, "negative"),
                            ("intensity drop (initial - final)", 2, "positive"),
                            ("empathy rating (1-5)", 3, "positive")):
        res = spearmanr(sim, [p[col] for p in pairs])
        print(f"  Spearman rho, simulator's final emotion vs {name}: {res.statistic:+.3f} "
              f"(p = {res.pvalue:.3f}; a faithful simulator: {sign})")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base-url", help="an OpenAI-compatible endpoint; default: the simulated seeker, started here")
    p.add_argument("--model", default="seeker-sim")
    p.add_argument("--api-key-env", help="environment variable holding the key (never a key on the command line)")
    p.add_argument("--data-dir", default=str(Path(os.environ.get("ENGINE_SHARED_DIR", "/work/shared")) / "datasets"))
    p.add_argument("--limit", type=int, default=200, help="conversations (default: all of FailedESConv's 196)")
    p.add_argument("--turns", type=int, default=8, help="supporter messages replayed per conversation")
    p.add_argument("--max-tokens", type=int, default=300)
    p.add_argument("--concurrency", type=int, default=8)
    args = p.parse_args()
    if args.base_url:
        asyncio.run(run(args))
        return
    from simulator.server import SimServerProcess

    with SimServerProcess(mode="seeker") as sim:
        args.base_url = sim.base_url.rstrip("/")
        asyncio.run(run(args))


if __name__ == "__main__":
    main()
