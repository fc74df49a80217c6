"""Simulated provider servers (OpenAI, Anthropic, Gemini, llama.cpp wires) for tests and benchmarks."""
