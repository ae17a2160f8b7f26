"""Rows as the store takes them, for tests that fill a store directly."""


def trial_row(key: str, **fields) -> dict:
    row = {
        "key": key,
        "config": "{}",
        "objective": "ntp",
        "model": "tiny",
        "data_size": 4000,
        "seed": 0,
        "budget_samples": 4000,
    }
    return row | fields
