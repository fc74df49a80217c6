"""Who asks what: the model lane, the work a lane takes, side lanes (judge, extractor), the batch core and
both batch lanes. Every lane is a `engine.run.context.Lane`: it takes the run context and nothing else.

Entry point: `engine.lanes.model_lane.ModelLane` (the lane of one evaluated model).
May import: `engine.run`, `engine.config`, `engine.errors`.
"""
