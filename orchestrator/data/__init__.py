"""Training and evaluation data: the embedded world, or files a cluster user brings.

Import the submodules: `world`, `files`, `tokenizer`, `stream` (a trial's data), `shape` (the
planner's view of it).
"""
