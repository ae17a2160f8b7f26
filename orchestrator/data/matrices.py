"""Feature matrices from .npy and .npz files, read and checked the one way both `orch align`
and a sweep's eval references use: every problem is a `DataError` naming the file."""

import zipfile
from pathlib import Path

import numpy as np

from orchestrator.errors import InputError

__all__ = ["DataError", "check_matrix", "load_arrays"]


class DataError(InputError):
    """A data file that is missing, unreadable or malformed."""


SAVE_HINT = "write features with numpy.save (one matrix) or numpy.savez (one per layer)"


def load_arrays(path: Path) -> list[tuple[str, np.ndarray]]:
    """(name, array) for each array in the file: '0' for a .npy, the member names of an .npz.
    Nothing pickled is ever loaded."""
    try:
        loaded = np.load(path, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            return [("0", loaded)]
        with loaded:
            arrays = [(name, loaded[name]) for name in loaded.files]
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except (OSError, ValueError, EOFError, KeyError, AttributeError, zipfile.BadZipFile) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise DataError(f"{path}: not a feature file ({reason}); {SAVE_HINT}") from None
    if not arrays:
        raise DataError(f"{path}: holds no arrays; {SAVE_HINT}")
    for name, array in arrays:
        if not isinstance(array, np.ndarray):  # an .npz member that is not an .npy
            raise DataError(f"{path}: not a feature file (member {name!r} is not an array); {SAVE_HINT}")
    return arrays


def check_matrix(array: np.ndarray, where: str) -> np.ndarray:
    """The array if it is a finite, real, numeric rows x width matrix with 2+ rows and 1+ column."""
    if array.ndim != 2:
        raise DataError(f"{where}: shape {array.shape} is not rows x width (reshape to 2-D)")
    if array.shape[0] < 2 or array.shape[1] < 1:
        raise DataError(
            f"{where}: {array.shape[0]} rows x {array.shape[1]} columns (need 2+ rows, 1+ column)"
        )
    if np.iscomplexobj(array):
        raise DataError(f"{where}: complex values (alignment needs real features; take .real or abs)")
    if array.dtype == bool or not np.issubdtype(array.dtype, np.number):
        raise DataError(f"{where}: dtype {array.dtype} is not numeric")
    if not np.isfinite(array).all():
        raise DataError(f"{where}: holds NaN or inf (drop or impute those rows)")
    return array
