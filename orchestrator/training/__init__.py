"""Text encoders, objectives and the training loop behind one trial.

Import the submodules directly; this package does not import torch on its own, so the CLI
and the sweep-file parser stay fast.
"""
