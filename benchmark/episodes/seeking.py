"""The seeker's prompt and reader as the engine imports them: benchmark/episodes/seeker.py's (the
interactive-data branch's, per the contract), or their stand-in (seeker_standin.py) while that branch
is not merged. Delete this shim and the stand-in at the merge; import from seeker directly."""

from __future__ import annotations

try:
    from benchmark.episodes.seeker import (SEEKER_PROMPT_VERSION, read_seeker_reply,  # type: ignore[attr-defined]
                                           seeker_messages)
except ImportError:
    from benchmark.episodes.seeker_standin import SEEKER_PROMPT_VERSION, read_seeker_reply, seeker_messages

__all__ = ["SEEKER_PROMPT_VERSION", "read_seeker_reply", "seeker_messages"]
