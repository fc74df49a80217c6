"""Provider batch APIs: ``core`` (the seam: requests answered later at the batch price), ``http`` (what
the three wires share), and one wire each: ``openai``, ``anthropic``, ``gemini``.

Entry: ``providers.registry.make_batch_api`` builds a wire; ``core.BatchAPI`` is its protocol.
"""
