"""POST /get_reward: OpenRLHF's remote reward model shape, over the real grader."""

from __future__ import annotations

from fastapi.testclient import TestClient


def test_get_reward_shape_and_values(client: TestClient) -> None:
    prompts = ["Q: 2 + 3 * 4?\nA:", "Q: 2 + 3 * 4?\nA:", "Q: what is 6 * 7?\nA:"]
    responses = [" 3 * 4 = 12, and 2 + 12 = 14. The answer is 14.",
                 " 3 * 4 = 13, and 2 + 13 = 15. The answer is 15.",
                 " 6 * 7 = 42. The answer is \\boxed{42}."]
    body = {"query": [p + r for p, r in zip(prompts, responses, strict=True)], "prompts": prompts, "labels": ["14", "14", "42"]}
    r = client.post("/get_reward", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    assert set(out) == {"rewards", "scores", "extra_logs"}
    assert out["scores"] == [1.0, 0.0, 1.0]
    assert out["rewards"][0] == 1.0 and out["rewards"][2] == 1.0
    assert out["rewards"][1] < 0.0  # wrong answer and a refuted step: outcome 0 minus the process penalty
    assert all(len(v) == 3 for v in out["extra_logs"].values())


def test_get_reward_length_mismatch_is_422(client: TestClient) -> None:
    r = client.post("/get_reward", json={"query": ["a", "b"], "labels": ["1"]})
    assert r.status_code == 422
    assert r.json()["error"]["detail"]["field"] == "labels"


def test_get_reward_malformed_is_4xx(client: TestClient) -> None:
    assert client.post("/get_reward", json={"query": "not a list"}).status_code == 422
    assert client.post("/get_reward", json={"query": ["x"] * 10_000}).status_code == 413
