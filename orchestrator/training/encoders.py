"""Transformer text encoders built from a `Preset`: bidirectional for JEPA, causal with a tied LM
head for NTP. Both return every layer's hidden states so alignment can be read per layer."""

import torch
from torch import nn

from orchestrator.data.tokenizer import PAD
from orchestrator.sweepfile.catalog import PROJECTOR_WIDTH, Preset

__all__ = ["TextEncoder", "masked_mean"]


def masked_mean(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean over valid tokens: (B, T, d) with (B, T) bool -> (B, d)."""
    weights = mask.to(hidden.dtype).unsqueeze(-1)  # (B, T, 1)
    return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp_min(1.0)


class TextEncoder(nn.Module):
    def __init__(self, preset: Preset, vocab_size: int, max_len: int, causal: bool) -> None:
        super().__init__()
        self.causal = causal
        self.token_embedding = nn.Embedding(vocab_size, preset.width)
        self.position_embedding = nn.Embedding(max_len, preset.width)
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(
                d_model=preset.width,
                nhead=preset.heads,
                dim_feedforward=preset.ff,
                dropout=0.0,
                activation="gelu",
                batch_first=True,
                norm_first=True,
            )
            for _ in range(preset.layers)
        )
        self.final_norm = nn.LayerNorm(preset.width)
        # JEPA embeds through a small projector; NTP predicts tokens through the tied embedding.
        self.projector = None if causal else nn.Linear(preset.width, PROJECTOR_WIDTH)
        nn.init.normal_(self.token_embedding.weight, std=0.02)
        nn.init.normal_(self.position_embedding.weight, std=0.02)

    @property
    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def hidden_states(self, tokens: torch.Tensor) -> list[torch.Tensor]:
        """Every block's output, the last after the final norm: L x (B, T, d)."""
        T = tokens.shape[1]
        padding = tokens == PAD  # (B, T)
        positions = torch.arange(T, device=tokens.device)
        x = self.token_embedding(tokens) + self.position_embedding(positions)  # (B, T, d)
        causal_mask = (
            torch.ones(T, T, dtype=torch.bool, device=tokens.device).triu(1) if self.causal else None
        )  # (T, T): True where a token may not look (the future)
        states = []
        for block in self.blocks:
            x = block(x, src_mask=causal_mask, src_key_padding_mask=padding, is_causal=self.causal)
            states.append(x)
        states[-1] = self.final_norm(x)
        return states

    def pooled_layers(self, tokens: torch.Tensor) -> list[torch.Tensor]:
        """Mean over valid tokens of every layer: L x (B, d); what alignment is measured on."""
        mask = tokens != PAD
        return [masked_mean(h, mask) for h in self.hidden_states(tokens)]

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        """JEPA embedding: projector of the pooled last layer, (B, PROJECTOR_WIDTH)."""
        pooled = masked_mean(self.hidden_states(tokens)[-1], tokens != PAD)
        return self.projector(pooled)

    def next_token_logits(self, tokens: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """(B, T, vocab) logits from the tied embedding, and the hidden states."""
        states = self.hidden_states(tokens)
        return states[-1] @ self.token_embedding.weight.T, states
