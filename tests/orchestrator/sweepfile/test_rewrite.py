"""A recorded sweep file rewritten with more runs (`orch next --write`): its paths made absolute."""

from orchestrator.sweepfile.rewrite import _absolute_paths


def test_write_makes_a_files_sweeps_paths_absolute_and_leaves_the_worlds_knobs(tmp_path):
    files = {
        "claims": "claims.yaml",
        "data": {
            "source": "files",
            "pairs": ["a/*.jsonl", "/abs/b.jsonl"],
            "eval": {"texts": "eval.jsonl", "features": {"dino": "dino.npy"}},
        },
    }
    _absolute_paths(files, tmp_path)
    assert files["claims"] == str(tmp_path / "claims.yaml")
    assert files["data"]["pairs"] == [str(tmp_path / "a/*.jsonl"), "/abs/b.jsonl"]
    assert files["data"]["eval"] == {
        "texts": str(tmp_path / "eval.jsonl"),
        "features": {"dino": str(tmp_path / "dino.npy")},
    }
    world = {"data": {"source": "world", "seed": 0, "synonyms": 4}}
    _absolute_paths(world, tmp_path)
    assert world == {"data": {"source": "world", "seed": 0, "synonyms": 4}}
