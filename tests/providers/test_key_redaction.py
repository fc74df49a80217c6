"""Keys never leave an adapter: whatever the server echoes in an error (whole, partly, upper-cased)
is redacted at the one exit, ``HttpChat.chat``, on every wire; an answer is never altered (one that
holds the key is refused), and a placeholder key too short to be secret is hidden nowhere."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simulator.echo import ECHO_HEADER, echo
from benchmark.dataset import Message
from providers.base import ChatResult
from providers.errors import ErrorClass, ProviderError
from providers.redact import ANSWER_RUN, MASK, MIN_RUN, Redactor
from tests.providers import test_anthropic, test_gemini, test_openai

KEY = "sk-proj-Echo0123456789abcdefGHIJ"
MSGS = (Message("user", "Pick one.\nA. yes\nB. no\n[[gold:B]]"),)
# Each takes the server's root URL (the OpenAI adapter's base_url includes /v1).
ADAPTERS = [pytest.param(lambda root, **kw: test_openai.adapter(root + "/v1", **kw), id="openai"),
            pytest.param(test_anthropic.adapter, id="anthropic"), pytest.param(test_gemini.adapter, id="gemini")]


def pieces(secret: str) -> list[str]:
    return [secret[i:i + MIN_RUN] for i in range(len(secret) - MIN_RUN + 1)]


def leaked(text: str, secret: str = KEY) -> list[str]:
    low = text.lower()
    return [p for p in pieces(secret) if p.lower() in low]


def test_every_run_of_the_key_in_any_case_is_masked():
    r = Redactor([KEY])
    text = f"a{KEY}b {KEY[3:14]} {KEY.upper()} {KEY[-MIN_RUN:].lower()} {KEY[:MIN_RUN - 1]}"
    out = r.text(text)
    assert leaked(out) == []
    assert out.startswith(f"a{MASK}b ") and out.endswith(KEY[:MIN_RUN - 1])  # 7 characters say nothing
    assert r.text("nothing secret here") == "nothing secret here"
    assert Redactor([None]).text(KEY) == KEY and not Redactor([None])


def test_placeholder_keys_too_short_to_be_secret_are_hidden_nowhere():
    for placeholder in ("a", "EMPTY", "ollama", "x" * (MIN_RUN - 1)):
        r = Redactor([placeholder])
        assert not r and r.text("A. Anna says EMPTY ollama") == "A. Anna says EMPTY ollama"
        assert r.exposing_field(ChatResult(text="A. Anna", model_version="ollama-EMPTY")) is None


def test_an_answer_holds_the_key_only_with_a_long_piece_of_it():
    """The model cannot know the key: only a gateway pasting a long piece of it counts, never a
    vendor's public prefix the model may well write."""
    r = Redactor([KEY])
    assert not r.exposes(f"keys look like {KEY[:MIN_RUN + 4]}... {KEY[:ANSWER_RUN - 1].upper()}")
    assert r.exposes(f"x{KEY[3:3 + ANSWER_RUN]}y") and r.exposes(KEY.upper())
    assert r.exposing_field(ChatResult(text="fine", model_version=f"m {KEY}")) == "model_version"
    assert Redactor(["shortkey1"]).exposes("it is SHORTKEY1.")  # a key under ANSWER_RUN: whole


_KEYS = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=MIN_RUN, max_size=60)
_FILLER = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@settings(max_examples=300, deadline=None)
@given(key=_KEYS, data=st.data())
def test_no_run_survives_against_a_naive_search(key, data):
    """Reference: every MIN_RUN-character window of the key, searched case-insensitively."""
    parts = []
    for _ in range(data.draw(st.integers(0, 4))):
        i = data.draw(st.integers(0, len(key) - MIN_RUN))
        j = data.draw(st.integers(i + MIN_RUN, len(key)))
        piece = key[i:j]
        parts += [data.draw(_FILLER), piece.upper() if data.draw(st.booleans()) else piece]
    text = "".join(parts) + data.draw(_FILLER)
    out = Redactor([key]).text(text)
    assert leaked(out, key) == []
    if leaked(text, key) == []:
        assert out == text  # nothing to hide: nothing changed


@pytest.mark.parametrize("make", ADAPTERS)
async def test_an_answer_with_the_key_pasted_in_is_refused_not_altered(sim, make):
    root, _ = await sim(echo_key=True, api_key=KEY, mode="gold")
    a = make(root, api_key=KEY)
    try:
        with pytest.raises(ProviderError) as e:
            await a.chat(MSGS)
    finally:
        await a.aclose()
    assert e.value.klass is ErrorClass.PERMANENT and "API key" in str(e.value) and leaked(str(e.value)) == []


@pytest.mark.parametrize("make", ADAPTERS)
@pytest.mark.parametrize("placeholder", ["a", "sim", "EMPTY"])
async def test_a_placeholder_key_leaves_the_answer_and_model_version_as_sent(sim, make, placeholder):
    """With key "a", "Answer: B" came back "***nswer: B" (unparsed); with "sim", the version "m-***-2024"."""
    root, _ = await sim(api_key=placeholder, mode="gold")
    a = make(root, api_key=placeholder)
    try:
        res = await a.chat(MSGS)
    finally:
        await a.aclose()
    assert res.text.startswith("Answer: B") and MASK not in res.text
    assert "sim" in (res.model_version or "") and MASK not in (res.model_version or "")


@pytest.mark.parametrize("make", ADAPTERS)
async def test_error_messages_that_echo_the_key_are_masked(sim, make):
    root, _ = await sim(echo_key=True, api_key=KEY, faults={"500": 1.0})
    a = make(root, api_key=KEY, max_retries=0)
    try:
        with pytest.raises(ProviderError) as e:
            await a.chat(MSGS)
    finally:
        await a.aclose()
    assert e.value.status == 500 and MASK in str(e.value) and leaked(str(e.value)) == []


async def test_the_echo_mode_really_echoes(sim):
    """The gateway these tests rely on sends the key back in body and header (else they prove nothing)."""
    import aiohttp

    root, _ = await sim(echo_key=True, api_key=KEY, mode="gold")
    async with aiohttp.ClientSession() as s:
        async with s.post(root + "/v1/chat/completions", headers={"Authorization": f"Bearer {KEY}"},
                          json={"model": "m", "messages": [{"role": "user", "content": "hi"}]}) as r:
            body = await r.text()
            assert r.headers[ECHO_HEADER] == KEY
    assert echo(KEY).strip("[] ") in body.replace("\\", "") or KEY in body
    assert KEY.upper() in body and KEY[4:16] in body


@pytest.mark.parametrize("make", ADAPTERS)
async def test_basic_credentials_of_the_url_echoed_in_errors_are_masked(sim, make):
    """A base_url's user:password@ goes out as Basic auth; a server that prints it back leaks none of it."""
    root, _ = await sim(echo_key=True, faults={"500": 1.0})
    secret = "Pa55word-Secret-0123"
    a = make(root.replace("://", f"://bob:{secret}@"), api_key=None, max_retries=0)
    try:
        with pytest.raises(ProviderError) as e:
            await a.chat(MSGS)
    finally:
        await a.aclose()
    assert e.value.status == 500 and MASK in str(e.value)
    assert leaked(str(e.value), secret) == [] and leaked(str(e.value), f"bob:{secret}") == []
