"""Answer constraints: their wire forms, and the simulator holding the vendors' rules for them."""

import orjson
import pytest

from simulator.structured import SchemaError, check_openai_format, obey
from benchmark.dataset import AnswerSpace, Message
from benchmark.extract.choice import Choices, extract_multi, extract_single
from providers.constrain import answer_schema, gbnf
from providers.errors import ErrorClass, ProviderError
from providers.gemini import GeminiChat
from providers.openai import OpenAIChat

MSGS = (Message("user", "Pick one.\nA. yes\nB. no\nC. maybe"),)
ABC = AnswerSpace(values=("A", "B", "C"))
ABC_MULTI = AnswerSpace(values=("A", "B", "C"), multi=True)


def openai(url="http://127.0.0.1:9/v1", **kw):
    return OpenAIChat(base_url=url, model="m", api_key=None, generation={"max_tokens": 8},
                      max_retries=0, timeout_s=5, **kw)


def gemini(url="http://127.0.0.1:9", **kw):
    return GeminiChat(base_url=url, model="gemini-x", api_key="fake-gemini", generation={"max_tokens": 8},
                      max_retries=0, timeout_s=5, **kw)


def test_gbnf_single_is_the_alternatives():
    assert gbnf(ABC) == 'root ::= "A" | "B" | "C"'


def test_gbnf_multi_is_distinct_values_in_listed_order():
    assert gbnf(ABC_MULTI).splitlines() == [
        "root ::= s0 | s1 | s2",
        's0 ::= "A" (", " (s1 | s2))?',
        's1 ::= "B" (", " (s2))?',
        's2 ::= "C"',
    ]


def test_gbnf_multi_keeps_a_none_option_alone():
    space = AnswerSpace(values=("A", "B", "C"), multi=True, alone="C")
    assert gbnf(space).splitlines() == ["root ::= s0 | s1 | \"C\"", 's0 ::= "A" (", " (s1))?', 's1 ::= "B"']


def test_json_schema_keeps_a_none_option_alone_with_a_nested_any_of():
    schema = answer_schema(AnswerSpace(values=("A", "B", "none"), multi=True, alone="none"))
    assert schema["properties"]["answer"] == {"anyOf": [
        {"type": "array", "items": {"type": "string", "enum": ["A", "B"]}},
        {"type": "string", "enum": ["none"]}]}
    fmt = {"type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": schema}}
    assert check_openai_format(fmt) is schema
    assert obey("Answer: none", schema) == '{"answer":"none"}'
    assert obey("Answer: B, A", schema) == '{"answer":["B","A"]}'
    ch = Choices(["A", "B", "none"])
    assert extract_multi('{"answer":"none"}', ch) == frozenset({2})


def test_gbnf_escapes_option_names():
    assert gbnf(AnswerSpace(values=('say "hi"', "a\\b"))) == r'root ::= "say \"hi\"" | "a\\b"'


def test_openai_body_carries_the_constraint_only_when_configured_and_asked():
    plain = orjson.loads(openai().request_body(MSGS, ABC))
    assert "grammar" not in plain and "response_format" not in plain
    assert "grammar" not in orjson.loads(openai(answer_constraint="grammar").request_body(MSGS))  # free text
    body = orjson.loads(openai(answer_constraint="grammar").request_body(MSGS, ABC))
    assert body["grammar"] == 'root ::= "A" | "B" | "C"'
    body = orjson.loads(openai(answer_constraint="json_schema").request_body(MSGS, ABC_MULTI))
    # OpenAI's documented strict structured-outputs shape.
    assert body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "answer", "strict": True, "schema": {
            "type": "object", "properties": {"answer": {"type": "array", "items": {"type": "string", "enum": ["A", "B", "C"]}}},
            "required": ["answer"], "additionalProperties": False}}}
    check_openai_format(body["response_format"])  # the simulator's copy of OpenAI's rules accepts it


def test_gemini_body_uses_response_schema_and_keeps_generation_config():
    body = orjson.loads(gemini(answer_constraint="json_schema").request_body(MSGS, ABC))
    assert body["generationConfig"] == {"maxOutputTokens": 8, "responseMimeType": "application/json",
                                        "responseSchema": {"type": "OBJECT", "properties": {"answer": {
                                            "type": "STRING", "enum": ["A", "B", "C"]}}, "required": ["answer"]}}
    assert "responseSchema" not in orjson.loads(gemini(answer_constraint="json_schema").request_body(MSGS))["generationConfig"]
    with pytest.raises(ValueError, match="json_schema"):
        gemini(answer_constraint="grammar")


@pytest.mark.parametrize("bad, message", [
    ({"type": "json_schema", "json_schema": {"name": "answer", "strict": True,
                                             "schema": {"type": "object", "properties": {"answer": {"type": "string"}},
                                                        "required": ["answer"]}}}, "additionalProperties"),
    ({"type": "json_schema", "json_schema": {"name": "answer", "strict": True,
                                             "schema": {**answer_schema(ABC), "required": []}}}, "required"),
    ({"type": "json_schema", "json_schema": {"schema": answer_schema(ABC)}}, "name"),
    ({"type": "xml"}, "response_format.type"),
])
def test_simulator_refuses_what_openai_refuses(bad, message):
    with pytest.raises(SchemaError, match=message):
        check_openai_format(bad)


@pytest.mark.parametrize("make, path", [(openai, "/v1"), (gemini, "")])
async def test_constrained_answers_come_back_as_json_the_extractor_reads(sim, make, path):
    # The simulated model says something unreadable; held to the schema it must pick an allowed value.
    root, _ = await sim(mode="fixed:I am not sure about this one.")
    a = make(root + path, answer_constraint="json_schema")
    free = make(root + path)
    try:
        one = await a.chat(MSGS, ABC)
        many = await a.chat(MSGS, ABC_MULTI)
        unconstrained = await free.chat(MSGS, ABC)
    finally:
        await a.aclose()
        await free.aclose()
    ch = Choices(["yes", "no", "maybe"])
    assert orjson.loads(one.text) == {"answer": "A"} and extract_single(one.text, ch) == 0
    assert orjson.loads(many.text) == {"answer": ["A"]} and extract_multi(many.text, ch) == frozenset({0})
    assert extract_single(unconstrained.text, ch) is None


async def test_a_schema_openai_refuses_is_a_permanent_error(sim):
    root, _ = await sim(mode="letter")

    class Loose(OpenAIChat):  # a schema without additionalProperties: false, refused in strict mode
        def request_body(self, messages, answer=None):
            body = orjson.loads(super().request_body(messages, answer))
            del body["response_format"]["json_schema"]["schema"]["additionalProperties"]
            return orjson.dumps(body)

    a = Loose(base_url=root + "/v1", model="m", api_key=None, generation={}, max_retries=3, timeout_s=5,
              answer_constraint="json_schema")
    try:
        with pytest.raises(ProviderError) as e:
            await a.chat(MSGS, ABC)
    finally:
        await a.aclose()
    assert e.value.klass is ErrorClass.PERMANENT and e.value.attempts == 1
