"""`orch data chunks`: bad views from a document corpus, as the `documents` file a files source
reads (`doc_id, chunk_a, chunk_b`), with a sidecar that records the chunking rule, the inputs'
sha256 and the counts.

How a document is cut into two views is a choice the preprint leaves open; `RULES` names orch's:
- `halves` (default, what a `text` row gives unbuilt): a document's first and second half, by
  words; one pair per document of 2 words or more;
- `adjacent`: the document cut into chunks of `words` words (the last may be shorter), paired off
  in order (1st with 2nd, 3rd with 4th, ...); an odd last chunk is counted, not used.
Documents stream one at a time: memory does not grow with the corpus."""

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from orchestrator.data.built import Overlap, check_out, describe_inputs, publish, staging
from orchestrator.data.matrices import DataError
from orchestrator.data.shards import read_rows

__all__ = ["FORMAT", "RULES", "build_chunks", "chunk_pairs"]

FORMAT = "orch-chunks/1"
RULES = ("halves", "adjacent")
WRITE_ROWS = 65_536  # pairs per Parquet row group


def chunk_pairs(text: str, rule: str, words: int) -> tuple[list[tuple[str, str]], int]:
    """A document's (chunk, chunk) pairs under `rule`, and the chunks it leaves unused."""
    tokens = text.split()
    if rule == "halves":
        middle = len(tokens) // 2
        return ([(" ".join(tokens[:middle]), " ".join(tokens[middle:]))], 0) if len(tokens) >= 2 else ([], 0)
    chunks = [" ".join(tokens[i : i + words]) for i in range(0, len(tokens), words)]
    return list(zip(chunks[0::2], chunks[1::2], strict=False)), len(chunks) % 2


def build_chunks(
    inputs: list[Path],
    out: Path,
    rule: str = "halves",
    words: int = 64,
    eval_texts: Path | None = None,
    notify: Callable[[str], None] = lambda text: None,
) -> dict[str, Any]:
    """Write `out` and its sidecar from every document (`text`, and `id` if given) of `inputs`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    check_out(out, [*inputs, eval_texts])
    if rule not in RULES:
        raise DataError(f"--rule {rule}: not a chunking rule (one of {', '.join(RULES)})")
    if words < 1:
        raise DataError(f"--words {words}: a chunk needs at least 1 word")
    overlap = Overlap(eval_texts) if eval_texts is not None else None
    schema = pa.schema([("doc_id", pa.string()), ("chunk_a", pa.string()), ("chunk_b", pa.string())])
    counts: Counter = Counter(documents=0, pairs=0, short=0, unused=0)
    rows: list[int] = []
    columns: dict[str, list[str]] = {name: [] for name in schema.names}
    with staging(out) as staged:
        with pq.ParquetWriter(staged, schema) as writer:
            for doc_id, text in _documents(inputs, counts, rows):
                pairs, unused = chunk_pairs(text, rule, words)
                if overlap is not None:  # what a trial trains on: the chunks paired
                    overlap.see_within_each([chunk for pair in pairs for chunk in pair])
                counts.update(pairs=len(pairs), unused=unused, short=0 if pairs else 1)
                for a, b in pairs:
                    columns["doc_id"].append(doc_id)
                    columns["chunk_a"].append(a)
                    columns["chunk_b"].append(b)
                if len(columns["doc_id"]) >= WRITE_ROWS:
                    writer.write_table(pa.table(columns, schema=schema))
                    columns = {name: [] for name in schema.names}
                    notify(f"{counts['documents']:,} documents, {counts['pairs']:,} pairs")
            writer.write_table(pa.table(columns, schema=schema))
        if counts["pairs"] == 0:
            raise DataError(
                f"{', '.join(map(str, inputs))}: no document gives two chunks under --rule {rule}"
            )
        sidecar = {
            "format": FORMAT,
            "inputs": describe_inputs(inputs, rows),
            "rule": rule,
            "words": words if rule == "adjacent" else None,
            "counts": dict(counts),
            "overlap": overlap.summary() if overlap else None,
        }
        publish(staged, out, sidecar)
    return sidecar


def _documents(inputs: list[Path], counts: Counter, rows: list[int]) -> Iterator[tuple[str, str]]:
    """(id, text) of every document of `inputs` (an id `input:row` where the file gives none),
    counted in `counts`; `rows` gets how many each input held."""
    for source, path in enumerate(inputs):
        before = counts["documents"]
        for where, row in read_rows(path):
            text = row.get("text")
            if not isinstance(text, str):
                raise DataError(f"{where}: column 'text' is missing or not text")
            counts["documents"] += 1
            yield str(row.get("id", f"{source}:{counts['documents'] - before}")), text
        rows.append(counts["documents"] - before)
