"""A LangGraph graph whose long-term memory is Engram (``EngramStore``).

pip install './clients/python[langgraph]'
ENGRAM_API_URL=http://127.0.0.1:8000 ENGRAM_API_KEY=... python langgraph_store.py

The first invocation files a fact under the user's namespace; the second, on a freshly
compiled graph with a new store (as a new process would have), finds it by meaning.
"""

from __future__ import annotations

import uuid
from typing import TypedDict

from engram_client.langgraph import EngramStore
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore


class State(TypedDict):
    user_id: str
    message: str
    answer: str


def memory_node(state: State, *, store: BaseStore) -> dict[str, str]:
    namespace = ("memories", state["user_id"])
    if state["message"].startswith("remember: "):
        fact = state["message"].removeprefix("remember: ")
        store.put(namespace, str(uuid.uuid4()), {"text": fact})
        return {"answer": f"filed: {fact}"}
    hits = store.search(namespace, query=state["message"], limit=1)
    return {"answer": hits[0].value["text"] if hits else "I don't know yet."}


def build(store: BaseStore) -> CompiledStateGraph[State, None, State, State]:
    builder = StateGraph(State)
    builder.add_node("memory", memory_node)
    builder.add_edge(START, "memory")
    builder.add_edge("memory", END)
    return builder.compile(store=store)


def main() -> None:
    with EngramStore() as store:  # ENGRAM_API_URL, ENGRAM_API_KEY
        first = build(store).invoke(
            State(user_id="ada", message="remember: Ada's staging runs PostgreSQL 18", answer="")
        )
        print(first["answer"])
    with EngramStore() as store:
        second = build(store).invoke(
            State(user_id="ada", message="what does staging run?", answer="")
        )
        print("recalled:", second["answer"])
        print("namespaces:", store.list_namespaces(prefix=("memories",)))


if __name__ == "__main__":
    main()
