"""``--mode llm`` over a real OpenAI-compatible server (CI: llama.cpp, SmolLM2-135M); plumbing only.

Selected with ``-m llm_live``; skipped without ``FAITHSIEVE_LIVE_BASE_URL`` and
``FAITHSIEVE_LIVE_MODEL``. Without a Lean backend nothing can be kept: the item must end as a
recorded rejection at a named stage (an unparsable answer at ``rewrite``/``screen``, or
``formalize``/``kernel_unavailable`` once the model's JSON is usable), and the run statistics must
say that no rewrite is verified.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from faithsieve.core.settings import Settings
from faithsieve.rewrite.llm_mode import build_llm_work
from faithsieve.rewrite.runner import summarize

BASE_URL = os.environ.get("FAITHSIEVE_LIVE_BASE_URL", "")
MODEL = os.environ.get("FAITHSIEVE_LIVE_MODEL", "")
MODE = os.environ.get("FAITHSIEVE_LIVE_STRUCTURED", "json_object_schema")

pytestmark = [
    pytest.mark.llm_live,
    pytest.mark.skipif(not (BASE_URL and MODEL),
                       reason="live LLM tests need FAITHSIEVE_LIVE_BASE_URL and FAITHSIEVE_LIVE_MODEL "
                              "(start a server with .ci/llm_server.sh start)"),
]


def test_one_item_ends_as_a_recorded_rejection_without_lean(tmp_path: Path) -> None:
    settings = Settings(llm_base_url=BASE_URL, llm_model=MODEL, llm_structured=MODE,  # type: ignore[arg-type]
                        llm_cache_path=str(tmp_path / "c.sqlite"), llm_max_tokens=300, llm_timeout_s=120,
                        lean_backend="none")
    work, config = build_llm_work(settings, seed=0, variants=1, budget=1)
    record = {"question": "Tom has 3 apples and buys 4 more. How many apples does he have?",
              "answer": "3+4=<<3+4=7>>7\n#### 7"}
    rows, outcome = work("live-0", record)
    assert rows == [] and outcome["kept"] == 0
    assert (outcome["stage"], outcome["reason"]) in {
        ("rewrite", "unparsed"), ("rewrite", "unchanged"), ("screen", "unparsed"), ("formalize", "kernel_unavailable"),
    } or outcome["stage"] == "screen"
    stats = summarize([outcome], config)
    assert stats["items_kept"] == 0 and stats["validity"]["answer_correct"] is None
    assert "formal stages cannot run" in stats["notes"][0]
