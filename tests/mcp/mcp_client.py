"""Drives Somna's MCP server with the official Python MCP client (PyPI package `mcp`, a
client this project does not write): lists the tools, calls every one of them, checks the
results, and checks that bad arguments come back as MCP errors with clear messages.

    mcp_client.py stdio <somna binary> <db path>     # starts `somna --db <db> mcp`
    mcp_client.py http <url of /mcp> <token file>     # a running `somna serve`

Exits non-zero (with the failing check) when anything is wrong.
"""

import asyncio
import sys

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

TOOLS = {
    "add_memory",
    "search_memory",
    "get_memory",
    "update_memory",
    "delete_memory",
    "list_memories",
    "run_sleep_cycle",
    "memory_history",
    "similar_memories",
    "merge_memories",
    "pin_memory",
    "find_duplicates",
    "curate_memories",
    "undo_curation",
    "what_if",
}


def check(cond, what):
    if not cond:
        raise AssertionError(what)


async def call(client, name, args):
    r = await client.call_tool(name, args)
    check(not r.is_error, f"{name} failed: {r.content}")
    check(isinstance(r.structured_content, dict), f"{name}: no structured content")
    return r.structured_content


async def refused(client, name, args, needle):
    try:
        r = await client.call_tool(name, args)
    except MCPError as e:
        check(needle in str(e), f"{name}{args}: error {e!s} does not mention {needle!r}")
        return
    # A tool-level error result is acceptable too, as long as it says what is wrong.
    text = " ".join(getattr(c, "text", "") for c in r.content)
    check(r.is_error and needle in text, f"{name}{args} was not refused: {r}")


async def exercise(client, tag):
    tools = {t.name: t for t in (await client.list_tools()).tools}
    check(TOOLS <= set(tools), f"missing tools: {TOOLS - set(tools)}")
    schema = tools["search_memory"].input_schema
    check("query" in schema.get("properties", {}), f"search_memory schema: {schema}")
    check("query" in schema.get("required", []), "query is not required")

    conv = f"mcp-{tag}"
    added = await call(
        client,
        "add_memory",
        {
            "conversation": conv,
            "messages": [
                {"speaker": "Ada", "text": f"I adopted a grey cat called Pixel ({tag})."},
                {"role": "assistant", "text": "Pixel is a lovely name for a cat."},
                {"speaker": "Ada", "text": f"My sister lives in Lisbon near the river ({tag})."},
            ],
        },
    )
    episodes = added["episodes"]
    check(len(episodes) == 3, f"add_memory episodes: {added}")
    first = episodes[0]

    found = await call(client, "search_memory", {"query": "what pet does Ada have?", "k": 5})
    ids = [h["id"] for h in found["hits"]]
    check(first in ids, f"search did not find {first}: {found}")
    check(all(isinstance(h["score"], (int, float)) for h in found["hits"]), "hits without scores")
    ctx = await call(
        client,
        "search_memory",
        {"query": "Lisbon", "k": 3, "mode": "context", "filters": {"conversation": conv, "kinds": ["episode"]}},
    )
    check(ctx["mode"] == "context", f"mode not applied: {ctx}")
    check(all(h["conversation"] == conv and h["kind"] == "episode" for h in ctx["hits"]), f"filters ignored: {ctx}")

    got = await call(client, "get_memory", {"id": first})
    check(got["memory"]["id"] == first and "Pixel" in got["memory"]["text"], f"get_memory: {got}")

    near = await call(client, "similar_memories", {"id": first, "k": 2})
    sims = [s["similarity"] for s in near["similar"]]
    check(near["id"] == first and 0 < len(sims) <= 2, f"similar_memories: {near}")
    check(all(s["memory"]["id"] != first for s in near["similar"]), f"similar_memories lists itself: {near}")
    check(sims == sorted(sims, reverse=True), f"similar_memories not ordered: {near}")
    await refused(client, "similar_memories", {"id": first, "k": 0}, "k must be")
    await refused(client, "similar_memories", {"id": 987654321}, "not found")

    upd = await call(client, "update_memory", {"id": first, "text": f"I adopted a black cat called Pixel ({tag}).", "importance": 0.9})
    check("black cat" in upd["text"] and abs(upd["importance"] - 0.9) < 1e-9, f"update_memory: {upd}")

    hist = await call(client, "memory_history", {"id": first})
    events = [h["event"] for h in hist["history"]]
    check(events[:1] == ["add"] and "update" in events, f"memory_history: {hist}")

    page = await call(client, "list_memories", {"filters": {"conversation": conv}, "limit": 50})
    check(page["total"] >= 3 and any(m["id"] == first for m in page["memories"]), f"list_memories: {page}")

    deleted = await call(client, "delete_memory", {"id": episodes[1]})
    check(deleted == {"id": episodes[1], "hard": False}, f"delete_memory: {deleted}")
    page = await call(client, "list_memories", {"filters": {"conversation": conv}, "limit": 50})
    check(all(m["id"] != episodes[1] for m in page["memories"]), "deleted memory still listed")

    # Curation: the same sentence said twice is one near-duplicate group; merge it (after a
    # preview) and pin the result.
    twice = await call(
        client,
        "add_memory",
        {
            "conversation": conv,
            "messages": [
                {"speaker": "Ada", "text": f"The ferry to Cacilhas leaves at noon every Sunday ({tag})."},
                {"speaker": "Ada", "text": f"The ferry to Cacilhas leaves at noon every Sunday ({tag})."},
            ],
        },
    )
    pair = twice["episodes"]
    dups = await call(client, "find_duplicates", {"threshold": 0.95, "conversation": conv})
    check(any(sorted(g["ids"]) == sorted(pair) for g in dups["groups"]), f"find_duplicates: {dups}")
    preview = await call(client, "merge_memories", {"ids": pair, "preview": True})
    check(preview["status"] == "preview" and preview["id"] is None, f"merge preview: {preview}")
    merged = await call(client, "merge_memories", {"ids": pair})
    new_id = merged["merged"]["id"]
    check(merged["status"] == "done" and isinstance(new_id, int), f"merge_memories: {merged}")
    src = await call(client, "get_memory", {"id": pair[0]})
    check(src["memory"]["state"] == "archived", f"merged source not archived: {src}")
    pinned = await call(client, "pin_memory", {"ids": [new_id]})
    check(pinned["op"] == "pin" and len(pinned["changed"]) == 1, f"pin_memory: {pinned}")
    got = await call(client, "get_memory", {"id": new_id})
    check(got["memory"]["pinned"] is True, f"not pinned: {got}")
    tag = {"op": "tag", "ids": [first], "add": ["ferry"], "remove": []}
    tagged = await call(client, "curate_memories", {"action": tag})
    got = await call(client, "get_memory", {"id": first})
    check("ferry" in got["memory"]["tags"], f"curate_memories tag: {tagged} {got}")
    undone = await call(client, "undo_curation", {"id": tagged["id"]})
    got = await call(client, "get_memory", {"id": first})
    check(undone["status"] == "undone" and "ferry" not in got["memory"]["tags"], f"undo_curation: {undone}")
    await refused(client, "curate_memories", {"action": {"op": "explode", "ids": [first]}}, "explode")
    await refused(client, "merge_memories", {"ids": [first]}, "at least two")
    await refused(client, "find_duplicates", {"threshold": 3}, "threshold")

    cycle = await call(client, "run_sleep_cycle", {"dry_run": True})
    check(cycle["dry_run"] is True and cycle["status"] == "dry_run", f"run_sleep_cycle: {cycle}")

    whatif = await call(client, "what_if", {"patch": {"archive_after_days": 30}, "query": "ferry"})
    check(
        whatif["after"]["sleep"]["archive_after_days"] == 30
        and whatif["before"]["sleep"]["archive_after_days"] == 90
        and whatif["search"]["after"]["query"] == "ferry",
        f"what_if: {str(whatif)[:400]}",
    )
    await refused(client, "what_if", {"patch": {"archive_after_days": 1}}, "warm ≤ cold ≤ archive")

    # Bad arguments: MCP errors that say what is wrong.
    await refused(client, "get_memory", {"id": 987654321}, "987654321")
    await refused(client, "search_memory", {"query": "x", "k": 0}, "k must be")
    await refused(client, "search_memory", {"k": 3}, "query")
    await refused(client, "add_memory", {"conversation": conv, "messages": []}, "messages")
    await refused(client, "update_memory", {"id": first}, "nothing to update")
    await refused(client, "search_memory", {"query": "x", "mode": "loud"}, "unknown variant `loud`")
    return {"added": len(episodes)}


async def main():
    mode, target, extra = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "stdio":
        server = StdioServerParameters(command=target, args=["--db", extra, "mcp"])
        async with Client(server) as client:
            print(await exercise(client, "stdio"))
    elif mode == "http":
        token = open(extra).read().strip()
        # Without the token, the server refuses.
        async with httpx2.AsyncClient() as plain:
            r = await plain.post(target, json={})
            check(r.status_code == 401, f"no token: HTTP {r.status_code}")
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        async with http:
            async with Client(streamable_http_client(target, http_client=http)) as client:
                print(await exercise(client, "http"))
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(f"mcp client ({mode}): every tool checked")


asyncio.run(main())
