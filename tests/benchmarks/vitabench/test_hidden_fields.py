"""The task files' answer-revealing fields (`shop_type` / `product_type` = target or
distraction, `target_reason`, `category`; ../shared/notes/vitabench_reference.md §1) never
reach the agent or the user simulator, on every task of both real files: not in either
system prompt, not in the tool schemas, not in the episode's database (which every tool
answer is rendered from), and not in the answers of the tools that list stores, shops,
products, orders, reservations and bookings."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evaluator.benchmarks.vitabench.data import load_vitabench_file
from evaluator.benchmarks.vitabench.env.model import HIDDEN_KEYS
from evaluator.benchmarks.vitabench.prompting import agent_system_prompt, user_system_prompt

from .helpers import VITA_DATA, make_env, run

LISTING_TOOLS = {
    "delivery": ["get_delivery_orders", "get_user_all_orders", "get_user_historical_behaviors"],
    "instore": ["get_instore_orders", "get_instore_reservations", "get_instore_books",
                "get_user_all_orders", "get_user_historical_behaviors"],
}
SEARCHES = {"delivery": ("delivery_store_search_recommand", "delivery_product_search_recommand"),
            "instore": ("instore_shop_search_recommend", "instore_product_search_recommend")}


def _hidden_values(node: Any, found: list[str]) -> list[str]:
    """The task file's own hidden values: every target_reason text. (Category values are
    generic names such as "other in-store services", which the user's history also uses;
    the `category` field itself is checked as a key.)"""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "weather":
                continue
            if key == "target_reason" and isinstance(value, str) and len(value) >= 12:
                found.append(value)
            _hidden_values(value, found)
    elif isinstance(node, list):
        for value in node:
            _hidden_values(value, found)
    return found


def _keys(node: Any) -> set[str]:
    """Every key, outside the weather (see _hidden_values)."""
    if isinstance(node, dict):
        return set(node) | set().union(*(_keys(v) for k, v in node.items() if k != "weather"))
    if isinstance(node, list):
        return set().union(*(_keys(v) for v in node))
    return set()


def _names(environment: dict[str, Any], domain: str) -> list[str]:
    """Store/shop and product names of the task: keywords that make the searches list them."""
    table = environment.get("stores" if domain == "delivery" else "shops") or {}
    names: list[str] = []
    for rec in table.values():
        names.append(rec.get("name") or rec.get("shop_name") or "")
        names.extend(p.get("name", "") for p in rec.get("products") or [])
    return [n for n in names if n]


@pytest.mark.parametrize("domain", ["delivery", "instore"])
def test_no_answer_revealing_field_reaches_agent_or_user(domain: str) -> None:
    path = VITA_DATA / domain / "tasks_en.json"
    if not path.is_file():
        pytest.skip(f"VitaBench data absent ({path})")
    raw = {t["id"]: t for t in json.loads(path.read_text(encoding="utf-8"))}
    tasks = load_vitabench_file(path).tasks
    assert len(tasks) == 100
    planted = 0
    for task in tasks:
        environment = raw[task.task_id]["environment"]
        values = _hidden_values(environment, [])
        planted += len(values) + len(_keys(environment) & HIDDEN_KEYS)
        env = make_env(environment, domain)
        assert not _keys(env.database()) & HIDDEN_KEYS, task.task_id
        texts = [agent_system_prompt(task), user_system_prompt(task), json.dumps(env.tools()),
                 json.dumps(env.database(), ensure_ascii=False, default=str)]
        params = {t["function"]["name"]: t["function"]["parameters"]["properties"]
                  for t in env.tools()}
        user = environment.get("user_id", "")
        for name in LISTING_TOOLS[domain]:
            if name in params:
                texts.append(run(env, name, **({"user_id": user} if "user_id" in params[name]
                                                else {})).content)
        names = _names(environment, domain)
        for search in SEARCHES[domain]:
            texts.append(run(env, search, keywords=names[:2]).content)
        for text in texts:
            for key in HIDDEN_KEYS - {"category"}:   # "category" is also the weather's field
                assert key not in text, (task.task_id, key)
            assert "distraction" not in text, task.task_id
            for value in values:
                assert value not in text, (task.task_id, value[:60])
    # the in-store file does carry them (the check above is not vacuous there); the delivery
    # file has none (notes §1)
    assert planted > 100 if domain == "instore" else planted == 0
