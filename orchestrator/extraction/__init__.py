"""`orch features`: reference features from pretrained models in local folders, written as the
.npz that `orch align` and sweeps read (one float32 matrix per layer, in depth order) with a JSON
sidecar that says how they were made.

The defaults follow platonic-rep (Huh et al. 2024), whose numbers the preprint's metric follows:
text rows are the masked mean of every hidden state (embeddings included) computed in bf16;
image rows are every block's CLS token before the final norm, at the model's native resolution.
A row's features never depend on its batch: causal models are padded on the left with position
ids from the mask, bidirectional ones on the right, and pooling reads only real tokens.

`transformers` is imported only here (the `orch[features]` extra); nothing is ever downloaded.
"""

from orchestrator.extraction.manifest import Item, read_items
from orchestrator.extraction.options import Extraction, Options
from orchestrator.extraction.run import extract

__all__ = ["Extraction", "Item", "Options", "extract", "read_items"]
