"""How much of a run's prompt text a provider's prefix cache could serve, under the scripted perfect model.

    .venv/bin/python bench/prefix_share.py ../shared/datasets/raw/proofloc-university --mode llm

Every item is localized behind the test server (``tests/llm/persona.py``); then, for each request in
the order it was sent, the longest prefix it shares with any earlier request (system and user text;
characters / 4 as tokens, as the persona counts them) is rounded down to the cache's block: 16 tokens
and no minimum (vLLM's automatic prefix caching, DeepSeek), and OpenAI's rule (a prompt and a shared
prefix of at least 1,024 tokens, in 128-token steps). Prints one JSON line with both shares, overall and
by prompt id.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from faithsieve.core.settings import Settings
from faithsieve.pipeline import Pipeline
from faithsieve.split import proof_from_steps
from tests.llm.fakeserver import FakeOpenAI
from tests.llm.persona import Persona, load_items


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path")
    ap.add_argument("--mode", default="llm")
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args(argv)
    items = load_items(args.path)[: args.limit or None]
    persona = Persona(items, kind="perfect")
    with FakeOpenAI() as server:
        server.respond_with(persona.reply)
        settings = Settings(mode=args.mode, llm_base_url=server.base_url, llm_model=server.model, llm_cache=False,
                            llm_structured="json_schema", llm_timeout_s=30, llm_backoff_s=0.0)
        pipe = Pipeline.from_settings(settings)
        for it in items:
            pipe.localize(proof_from_steps(it.problem, list(it.steps), settings))
        requests = list(server.requests)
    seen: list[str] = []
    total = blocks = openai = 0
    by: dict[str, list[int]] = {}
    for r in requests:
        text = "\n".join(str(m.get("content") or "") for m in r["messages"])
        name = str((r.get("response_format") or {}).get("json_schema", {}).get("name", "?"))
        i = bisect.bisect_left(seen, text)  # the longest common prefix is with a sorted neighbour
        lcp = max((len(os.path.commonprefix([text, seen[j]])) for j in (i - 1, i) if 0 <= j < len(seen)), default=0)
        bisect.insort(seen, text)
        tokens, shared = len(text) // 4, lcp // 4
        cached = shared // 16 * 16
        total, blocks = total + tokens, blocks + cached
        openai += shared // 128 * 128 if tokens >= 1024 and shared >= 1024 else 0
        row = by.setdefault(name, [0, 0])
        row[0] += tokens
        row[1] += cached
    print(json.dumps({"mode": args.mode, "requests": len(requests), "prompt_tokens": total,
                      "cached_share_16_token_blocks": round(blocks / max(1, total), 3),
                      "cached_share_openai_rule": round(openai / max(1, total), 3),
                      "by_prompt": {k: round(c / max(1, t), 3) for k, (t, c) in sorted(by.items())}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
