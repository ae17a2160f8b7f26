"""Every law and flag `orch fit` writes, in words: the report's glossary, and the words a claims
table prints beside each flag. A flag with a value (EXTRAPOLATED:12x) is looked up by its name."""

__all__ = ["FLAGS", "LAWS", "in_words"]

LAWS = {
    "saturating": "a_inf - b (S/1e6)^-alpha: rises to a ceiling a_inf (Hoffmann et al. 2022).",
    "power": "a (S/1e6)^alpha: a pure power law, no ceiling; forecasts at most 2x past its data.",
    "logistic": "a sigmoid in log S from lo up to lo + rise: a flat start (take-off), then a rise.",
    "broken": "two power laws joined at a break; no ceiling; forecasts at most 2x past its data.",
    "joint": "e - a (N/1e8)^-beta - b (S/1e6)^-alpha over model size N and samples S.",
}

FLAGS = {
    "EXTRAPOLATED": "the forecast lies this many times past the largest fitted samples",
    "NEAR_ASYMPTOTE": "the forecast is within 10% of the heaviest law's ceiling: more data barely moves it",
    "UNBOUNDED_LAW": "only laws without a ceiling reach this far: the number is withheld",
    "UNBOUNDED_SLOWED": "laws without a ceiling (this share of the weight) are read on a clock that slows "
    "past the data and stops at 2x it",
    "BOOTSTRAP": "bands from this many seed-bootstrap refits of every law",
    "BOUND_HIT": "a parameter sits on its bound: its error bar understates the uncertainty",
    "LOF_REJECT": "the lack-of-fit test rejects the law against seed noise (p < 0.05)",
    "NOISE_FROM_RESIDUALS": "one seed per size: the seed noise is the law's residual scatter, its errors "
    "scaled to it",
    "NOT_CONVERGED": "the solver stopped before this law's best start settled",
    "LMFIT_FINISH": "lmfit's finish of the best start lowered chi-square: its values were taken",
    "SAMPLES_NOT_FLOPS": "the ratio counts samples; the objectives' costs per sample may differ",
    "RECIPES_DIFFER": "the two objectives' trials differ in these recipe fields",
    "NOT_IDENTIFIABLE": "the data do not pin this ratio down: no headline (reasons given)",
    "OPEN_INTERVAL": "some draws never reach the target near the data: the interval has no end",
    "WIDE_INTERVAL": "the 95% interval spans more than 100x",
    "A_ABOVE_TARGET_AT_FIRST_CHECKPOINT": "A already exceeds the target at its first checkpoint",
    "B_ABOVE_TARGET_AT_FIRST_CHECKPOINT": "B already exceeds the target at its first checkpoint",
    "A_NOT_REACHED": "A does not reach the target by its last checkpoint",
    "B_NOT_REACHED": "B does not reach the target by its last checkpoint",
    "A_LACK_OF_FIT": "A's laws do not describe its points (lack-of-fit p < 0.001)",
    "B_LACK_OF_FIT": "B's laws do not describe its points (lack-of-fit p < 0.001)",
    "B_EXTRAPOLATED": "B's level is read past its data",
    "B_SINGLE_CHECKPOINT": "B is one measured checkpoint, not a fitted curve",
    "TARGET_AT_OR_BELOW_A_RANDOM_INIT": "the target is no higher than A's random-init level",
    "PUBLISHED": "numbers from a publication, not measured here",
    "A_SINGLE_CHECKPOINT": "A is one published checkpoint",
    "RECIPES_UNKNOWN": "the published runs' recipes are not known here",
    "UPPER_BOUND": "A is below B's level at its checkpoint: the ratio bounds R from above",
    "LOWER_BOUND": "A is above B's level at its checkpoint: the ratio bounds R from below",
    "SOURCE": "where the published numbers come from",
}


def in_words(flag: str) -> str:
    """'EXTRAPOLATED:12x' -> 'EXTRAPOLATED:12x (the forecast lies this many times past ...)'."""
    name = flag.split(":", 1)[0]
    return f"{flag} ({FLAGS[name]})" if name in FLAGS else flag
