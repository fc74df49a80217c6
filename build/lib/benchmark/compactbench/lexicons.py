"""CompactBench 0.1.0's word lists, verbatim: the draws index into them, so any
change (order included) changes every generated case.

From compactbench 0.1.0 (Apache-2.0): dsl/generators.py, engine/distractors.py,
runner/continuation.py.
"""

from __future__ import annotations

PERSON_NAMES: tuple[str, ...] = (
    "Alice", "Bob", "Carol", "David", "Elena", "Farid", "Grace", "Hassan", "Iris", "Julia",
    "Kenji", "Leo", "Maya", "Noor", "Omar", "Priya", "Quinn", "Rafael", "Sofia", "Tara",
    "Umar", "Vera", "Wen", "Xiu", "Yusuf", "Zara", "Aditya", "Bianca", "Chen", "Dimitri",
    "Esha", "Fatima", "Gabriel", "Hana", "Ivy", "Jamal",
)

ACTION_PHRASES: tuple[str, ...] = (
    "use regex to parse HTML",
    "store passwords in plaintext",
    "deploy on Fridays",
    "skip code review",
    "hardcode API keys in source",
    "use floats for money",
    "ignore rate limits",
    "trust user input without validation",
    "log personally identifiable information to stdout",
    "cache forever without an invalidation strategy",
    "mutate shared global state",
    "catch exceptions silently",
    "call eval() on user input",
    "commit directly to the main branch",
    "build SQL through string concatenation",
    "run schema migrations inside a web request",
    "hold database locks during outbound HTTP calls",
    "retry non-idempotent operations",
    "disable TLS certificate verification",
    "commit credentials to git history",
    "use md5 to hash passwords",
    "trust the X-Forwarded-For header blindly",
    "disable CSRF tokens",
    "return raw exception messages to end users",
    "assume the server timezone is UTC without configuring it",
)

PROJECT_NOUNS: tuple[str, ...] = (
    "auth rewrite", "pricing revamp", "dashboard migration", "CI overhaul", "onboarding redesign",
    "billing audit", "observability pass", "search relevance upgrade", "webhook refactor",
    "legacy deprecation", "mobile launch", "integration sprint", "performance tune-up",
    "schema migration", "feature flag cleanup", "access control review", "data pipeline rebuild",
    "admin tools revamp", "notifications unification", "reports module",
)

ORG_NAMES: tuple[str, ...] = (
    "Acme Systems", "Blue Harbor Inc", "Cobalt Labs", "Delta Fleet", "Evergreen Co",
    "Fulcrum Group", "Granite Works", "Harbor Line", "Ironmask Ltd", "Juniper Partners",
    "Kestrel and Sons", "Linden Row", "Meridian Works", "Nimbus Group", "Orion Bearing",
    "Pioneer Cast", "Quartz Rail", "Redwood Signals", "Starboard Inc", "Timberline Holdings",
)

# Distractor turns alternate user/assistant, each drawn from its own list.
USER_DISTRACTORS: tuple[str, ...] = (
    "By the way, how long have you been working with me today?",
    "Quick question unrelated to this: what time is it where you are?",
    "I just remembered I need to send someone an email later.",
    "Random thought: do you have opinions on coffee versus tea?",
    "Oh, did you see that article about electric cars?",
    "Side note — my internet has been slow today.",
    "What's the weather like lately?",
    "Unrelated, but what do you think of remote work in general?",
    "By the way, do you read much fiction?",
    "Quick tangent: is it true that pandas have thumbs?",
    "I was thinking about lunch earlier.",
    "Off-topic, but any thoughts on daylight saving time?",
    "Random: I keep hearing about this one podcast.",
    "Unrelated question — do you know anything about gardening?",
    "Do you happen to know what a quokka is?",
)

ASSISTANT_DISTRACTORS: tuple[str, ...] = (
    "Happy to chat about that briefly — anything else on the main topic?",
    "I can answer, but let me know when you want to return to the main question.",
    "Quick aside, sure. Anything else pressing?",
    "Got it. Let me know if you want to switch focus back.",
    "Sure, I can address that. Is there anything more on the main thread?",
    "Understood. Shall we continue where we left off?",
    "Acknowledged. Ready when you are to move forward.",
    "Fair point. Want me to refocus on the earlier question?",
    "Noted. Do you want to get back to the plan?",
    "I hear you. Anything else to cover on the primary question?",
)

# The user turn that opens each drift cycle.
CONTINUATION_PROMPTS: tuple[str, ...] = (
    "What should we tackle next?",
    "Given everything we've discussed, what's the priority?",
    "Any considerations I might be missing?",
    "What could go wrong with the current plan?",
    "Anything else to wire in before we move on?",
    "Walk me through the immediate next step.",
    "Which risk concerns you most right now?",
    "Who needs to be looped in before we proceed?",
)
