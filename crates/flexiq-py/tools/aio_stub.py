"""Writes (or, with ``--check``, verifies) the class bodies of ``python/flexiq/_aio.pyi``.

The async twins are made at import time from the blocking methods (``flexiq._aio``), so their
stub lines are made the same way: this script imports flexiq, walks the twins each holder
received, in the order they were made, and writes one ``async def`` per twin with its blocking
method's signature, grouped by the ``_queue`` module that defines the blocking form. The part
of the stub above ``class AsyncMixin:`` (imports and the helpers' stubs) is kept as written.

    python tools/aio_stub.py          # rewrite the stub after adding a blocking method
    python tools/aio_stub.py --check  # fail when the stub is not what the twins say (CI)
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any, List

import flexiq
from flexiq._aio import AsyncMixin, WorkflowAsyncMixin

STUB = Path(__file__).resolve().parent.parent / "python" / "flexiq" / "_aio.pyi"
HEAD_END = "class AsyncMixin:\n"


def _default(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


def _annotation(a: Any) -> str:
    return a if isinstance(a, str) else inspect.formatannotation(a)


def _params(sig: inspect.Signature) -> str:
    out: List[str] = []
    star_done = False
    for p in sig.parameters.values():
        text = p.name
        if p.kind is p.VAR_POSITIONAL:
            text, star_done = "*" + p.name, True
        elif p.kind is p.VAR_KEYWORD:
            text = "**" + p.name
        elif p.kind is p.KEYWORD_ONLY and not star_done:
            out.append("*")
            star_done = True
        if p.annotation is not p.empty:
            text += ": " + _annotation(p.annotation)
        if p.default is not p.empty:
            text += " = " + _default(p.default)
        out.append(text)
    return ", ".join(out)


def _body(holder: type, owner: type, suffix: str = "") -> List[str]:
    lines: List[str] = []
    group = None
    for name, twin in vars(holder).items():
        if not name.startswith("a") or not callable(twin) or not hasattr(twin, "__signature__"):
            continue
        blocking = getattr(owner, name[1:])
        module = blocking.__module__.removeprefix("flexiq.").replace(".", "/") + ".py"
        if module != group:
            group = module
            lines.append(f"    # {module}{suffix}")
        sig = inspect.signature(blocking)
        ret = "" if sig.return_annotation is sig.empty else " -> " + _annotation(sig.return_annotation)
        lines.append(f"    async def {name}({_params(sig)}){ret}: ...")
    return lines


def render() -> str:
    text = STUB.read_text()
    head = text[: text.index(HEAD_END)]
    body = [HEAD_END.rstrip("\n")] + _body(AsyncMixin, flexiq.Queue)
    body += ["", "class WorkflowAsyncMixin:"] + _body(WorkflowAsyncMixin, flexiq.WorkflowJobs, " (WorkflowJobs)")
    return head + "\n".join(body) + "\n"


def main() -> int:
    want = render()
    if "--check" in sys.argv[1:]:
        if STUB.read_text() != want:
            print(f"{STUB} is not what the async twins say; run python tools/aio_stub.py", file=sys.stderr)
            return 1
        return 0
    STUB.write_text(want)
    return 0


if __name__ == "__main__":
    sys.exit(main())
