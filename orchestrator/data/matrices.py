"""Feature matrices from .npy and .npz files, read and checked the one way both `orch align`
and a sweep's eval references use: every problem is a `DataError` naming the file."""

import zipfile
from pathlib import Path
from typing import IO

import numpy as np

from orchestrator.errors import InputError

__all__ = ["DataError", "check_matrix", "load_arrays"]


class DataError(InputError):
    """A data file that is missing, unreadable or malformed."""


SAVE_HINT = "write features with numpy.save (one matrix) or numpy.savez (one per layer)"


def load_arrays(path: Path) -> list[tuple[str, np.ndarray]]:
    """(name, array) for each array in the file: '0' for a .npy, the member names of an .npz.
    Nothing pickled is ever loaded, and no array is allocated larger than its bytes on disk."""
    try:
        _check_headers(path)
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


def _check_headers(path: Path) -> None:
    """Every array's header claims no more bytes than the file holds: a forged or truncated
    header (10^12 rows in a few bytes) is refused before numpy allocates what it claims."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            for member in archive.infolist():
                if member.filename.endswith(".npy"):
                    with archive.open(member) as handle:
                        _check_header(handle, member.file_size, f"{path}[{member.filename[:-4]}]")
        return
    with path.open("rb") as handle:
        _check_header(handle, path.stat().st_size, str(path))


def _check_header(handle: IO[bytes], size: int, where: str) -> None:
    version = np.lib.format.read_magic(handle)
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
    shape, _, dtype = read(handle)
    if dtype.hasobject:  # pickled objects: np.load refuses them before reading a byte
        return
    claimed = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if claimed > size:
        raise DataError(
            f"{where}: its header claims shape {shape} ({claimed:,} bytes), but it holds {size:,} bytes "
            "(truncated or not written by numpy.save)"
        )


LARGEST = 1e150  # past this, squares (norms, kernels) overflow float64


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
    if (largest := float(np.abs(array).max())) > LARGEST:
        raise DataError(
            f"{where}: values up to {largest:.3g}, past {LARGEST:g}: their squares overflow and every "
            "score would read 0 (rescale the features, e.g. divide by their largest value)"
        )
    return array
