"""Adds messages to a Somna store through MCP with the official Python client (PyPI `mcp`),
as an agent would, and prints the ids of the episodes created as JSON.

    mcp_add.py stdio <somna binary> <db path> <conversation> <text>...
    mcp_add.py http <url of /mcp> <bearer token> <conversation> <text>...

On stderr it says when the tool call returned (after the store committed the messages), in
milliseconds since the epoch: `add_memory returned at <ms>`.
"""

import asyncio
import json
import sys
import time

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


async def add(client, conversation, texts):
    r = await client.call_tool(
        "add_memory",
        {"conversation": conversation, "messages": [{"speaker": "Agent", "text": t} for t in texts]},
    )
    if r.is_error:
        raise SystemExit(f"add_memory failed: {r.content}")
    print(f"add_memory returned at {int(time.time() * 1000)}", file=sys.stderr, flush=True)
    return r.structured_content["episodes"]


async def main():
    mode, a, b, conversation, *texts = sys.argv[1:]
    if mode == "stdio":
        async with Client(StdioServerParameters(command=a, args=["--db", b, "mcp"])) as client:
            ids = await add(client, conversation, texts)
    else:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {b}"}, timeout=60)
        async with http, Client(streamable_http_client(a, http_client=http)) as client:
            ids = await add(client, conversation, texts)
    print(json.dumps(ids))


asyncio.run(main())
