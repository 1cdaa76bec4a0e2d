"""The word prefilters build exactly the trees and obligations the bare patterns build, on real items.

``mathtext.cues`` skips a cue's pattern on ASCII text that holds none of its words (``CUE_WORDS``) and
tries some cues only where their start words begin (``CUE_STARTS``), each table looked up by the
pattern's id; ``obligations.extraction.readings`` does the same for its patterns (``READING_WORDS``). Here every visible source's items (read through the dataset
adapters, a seeded sample of each) are decomposed and their obligations extracted twice: as shipped,
and with every prefilter off (each pattern run on every text, as before the prefilters existed). The
trees (edges, contexts, graph records, the imaginary-unit and custom-operation flags) and the
obligations must agree field by field. ``test_cue_words`` checks each word list on generated text;
this checks the whole builder on the texts it meets.
"""

from __future__ import annotations

import random
from pathlib import Path

import faithsieve.obligations.extraction.readings as readings
import pytest
from faithsieve.obligations.extraction.edgeunits import extract_obligations
from faithsieve.statetree.decompose import TreeBuilder, decompose

import faithsieve.mathtext.cues as cues
from datasets.adapters import load_dataset
from faithsieve.core.proof import Proof
from faithsieve.core.settings import Settings
from faithsieve.split import proof_from_steps

REPO = Path(__file__).resolve().parents[2]
RAW = REPO.parent / "shared" / "datasets" / "raw"
SOURCES = [RAW / name for name in ("processbench", "bigbench-mistake", "mathcheck-gsm", "mr-ben", "mr-math", "parc",
                                   "prmbench-preview", "mr-gsm8k-partial", "proofloc-university")]
SOURCES.append(REPO / "datasets" / "proofloc-mini")
PER_SOURCE = 40


def _sample(source: Path) -> list[Proof]:
    items = load_dataset(source).items
    rng = random.Random(source.name)
    settings = Settings()
    out = []
    for it in rng.sample(items, min(PER_SOURCE, len(items))):
        try:
            out.append(proof_from_steps(it.problem, list(it.steps), settings))
        except Exception:  # noqa: BLE001 (an item the pipeline refuses is not decomposed either)
            continue
    return out


def _record(proof: Proof) -> dict[str, object]:
    tree = decompose(proof)
    b = TreeBuilder(proof)
    return {
        "flags": (b.imaginary, b.custom_ops),
        "edges": [e.model_dump() for e in tree.edges],
        "contexts": tree.contexts,
        "nodes": dict(tree.graph.nodes(data=True)),
        "graph_edges": list(tree.graph.edges(data=True)),
        "obligations": extract_obligations(tree),
    }


def _prefilters_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cues, "words_absent", lambda text, words: False)
    monkeypatch.setattr(readings, "words_absent", lambda text, words: False)
    monkeypatch.setattr(cues, "_STARTS_OF", {})


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_trees_built_with_and_without_the_prefilters_agree(source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not source.exists():
        pytest.skip(f"{source} is absent (the visible sources live in ../shared)")
    proofs = _sample(source)
    assert len(proofs) >= min(PER_SOURCE, 10)
    shipped = [_record(p) for p in proofs]
    _prefilters_off(monkeypatch)
    bare = [_record(p) for p in proofs]
    for proof, a, b in zip(proofs, shipped, bare, strict=True):
        for key in a:
            assert a[key] == b[key], (source.name, key, proof.problem[:80])
    assert sum(len(r["edges"]) for r in shipped) > len(proofs)  # the items were decomposed, not skipped


def test_the_imaginary_flag_is_the_patterns_answer_on_complex_work() -> None:
    """The imaginary-unit cue, prefiltered, still sees "i^2", "\\mathrm{i}", "i = \\sqrt{-1}" and the words;
    and text holding none of its words (but other powers) is not flagged."""
    flagged = ["We use $i^2 = -1$.", "Since I ^ 2 = -1,", "Let $z = 3 + 4\\mathrm{i}$.", "where $i = \\sqrt{-1}$",
               "The Complex plane", "an IMAGINARY part"]
    plain = ["$x^2 + y^2 = 25$", "$2^{10} = 1024$", "Let $\\pi^2 \\approx 9.87$.", "pi ^ 2", "the sqrt of -1 is none"]
    for text in flagged:
        proof = Proof(problem="Compute.", steps=[{"index": 1, "text": text}])
        assert cues.IMAGINARY.search(text) and TreeBuilder(proof).imaginary, text
    for text in plain:
        proof = Proof(problem="Compute.", steps=[{"index": 1, "text": text}])
        assert not cues.IMAGINARY.search(text) and not TreeBuilder(proof).imaginary, text
