"""Episodes: dialogues with a simulated help-seeker as items (docs/interactive.md).

Entry: ``benchmark.episodes.dataset.EpisodeDataset`` (the adapter base an interactive dataset
declares). ``scenario`` holds the records an adapter derives from its source (who the seeker is,
sessions, events, recall probes); ``seeker`` the user simulator's prompt and the lenient reader of
its JSON reply; ``rubric`` the optional [judge] rubric over a finished transcript. The wing imports nothing
of the project but ``benchmark.dataset``, ``benchmark.loaders``, ``benchmark.errors``, ``benchmark.context``
(the judge prompt's token estimate) and ``benchmark.metrics.kinds``.
"""
