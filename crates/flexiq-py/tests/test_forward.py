"""Native forwarders (``flexiq._queue.forward``): every ``NativeQueue`` method is a ``Queue``
call, written or forwarded, or held back on purpose; a forwarder behaves as the native method
does, with its signature, docstring, errors and async twin; and ``tools/aio_stub.py`` declares
forwarders and their twins with the types of ``_flexiq.pyi``."""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import shutil
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator, Tuple

import pytest

from flexiq import Closed, InvalidArgument, NotFound, Queue, _flexiq
from flexiq._aio import async_twins
from flexiq._queue.forward import INTERNAL, NativeCalls, forward_native

TOOL = Path(__file__).resolve().parent.parent / "tools" / "aio_stub.py"


def native_names() -> set:
    return {n for n in vars(_flexiq.NativeQueue) if not n.startswith("_")}


def test_every_native_queue_method_is_a_queue_call_or_internal() -> None:
    assert [n for n in sorted(native_names()) if not hasattr(Queue, n) and n not in INTERNAL] == []
    assert sorted(set(INTERNAL) - native_names()) == []  # an INTERNAL name the native queue lost
    assert [n for n in INTERNAL if hasattr(Queue, n)] == []  # an INTERNAL name that became public
    assert all(reason.strip() for reason in INTERNAL.values())


def test_queue_forwards_the_native_methods_it_does_not_write() -> None:
    written = {n for n in native_names() if any(n in vars(k) for k in Queue.__mro__ if k is not NativeCalls)}
    methods = {n for n in native_names() if inspect.ismethoddescriptor(vars(_flexiq.NativeQueue)[n])}
    forwarded = {n for n, v in vars(NativeCalls).items() if inspect.isfunction(v)}
    assert forwarded == methods - written - set(INTERNAL)
    assert Queue.__mro__.index(NativeCalls) < [k.__name__ for k in Queue.__mro__].index("AsyncMixin")
    for name in forwarded:
        assert inspect.iscoroutinefunction(getattr(Queue, "a" + name)), name


def bare_queue_class() -> Tuple[type, type, type]:
    """A class over ``NativeQueue`` that writes nothing, with its own holders: every native
    method is forwarded to it and given a twin."""

    class Forwards:
        pass

    class Twins:
        pass

    @async_twins(into=Twins)
    @forward_native(into=Forwards, internal=())
    class Bare(Forwards, Twins):
        def __init__(self, url: str) -> None:
            self._native = _flexiq.NativeQueue(url)

    return Bare, Forwards, Twins


@pytest.fixture
def bare(tmp_path: Path) -> Iterator[Any]:
    cls, _, _ = bare_queue_class()
    q = cls(str(tmp_path / "bare.db"))
    try:
        yield q
    finally:
        q.close()


def test_a_forwarder_has_the_native_signature_and_doc() -> None:
    cls, forwards, twins = bare_queue_class()
    assert str(inspect.signature(cls.log)) == "(self, job_id, message, level='info')"
    assert str(inspect.signature(cls.list_archived_after)) == "(self, limit=50, after=None)"
    assert str(inspect.signature(cls.revoked_tasks)) == "(self)"
    for name in ("log", "revoked_tasks", "get_dependencies", "workflow_jobs"):
        fn = vars(forwards)[name]
        assert fn.__doc__ == getattr(_flexiq.NativeQueue, name).__doc__ and fn.__doc__, name
        assert fn.__qualname__ == f"Forwards.{name}"
        assert inspect.signature(vars(twins)["a" + name]) == inspect.signature(fn), name
    assert "namespace" not in vars(forwards) and "backend" not in vars(forwards)  # properties


def test_a_forwarder_calls_the_native_method(bare: Any) -> None:
    bare.revoke_task("mail.send")
    bare.pause(queue_name="reports")
    assert bare.revoked_tasks() == ["mail.send"]
    assert bare.paused_queues() == ["reports"]
    assert bare.dedup_job_id(key="nobody") is None
    assert asyncio.run(bare.arevoked_tasks()) == ["mail.send"]
    assert asyncio.run(bare.aunrevoke_task("mail.send")) is True
    assert bare.revoked_tasks() == []


def test_a_forwarder_raises_what_the_written_method_raises(bare: Any, sqlite_queue: Queue) -> None:
    for q in (bare, sqlite_queue):
        with pytest.raises(InvalidArgument, match="concurrency 0"):
            q.set_queue_concurrency("q", 0)
        with pytest.raises(InvalidArgument, match="not a UUID"):
            q.requeue_job("nope")
        with pytest.raises(NotFound):
            q.retry_dead(str(uuid.uuid4()))
        with pytest.raises(TypeError):
            q.revoke_task(3)
    with pytest.raises(InvalidArgument, match="concurrency 0"):
        asyncio.run(bare.aset_queue_concurrency("q", 0))
    bare.close()
    with pytest.raises(Closed):
        bare.revoked_tasks()


def test_a_written_method_wins_over_the_native_one() -> None:
    class Forwards:
        pass

    @forward_native(into=Forwards, internal=("log",))
    class Written(Forwards):
        def revoked_tasks(self) -> list:
            return ["written"]

    assert "revoked_tasks" not in vars(Forwards) and "log" not in vars(Forwards)
    assert "paused_queues" in vars(Forwards)
    with pytest.raises(TypeError, match="must derive from Forwards"):
        forward_native(into=Forwards)(type("Stray", (), {}))


def load_tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("aio_stub", TOOL)
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def test_the_stub_tool_copies_the_native_declarations() -> None:
    tool = load_tool()
    stub = tool.NativeStub()
    cls, forwards, twins = bare_queue_class()
    body, names = tool.forward_body(forwards, stub)
    assert "    # control" in body and "    # listing" in body
    assert "    def revoked_tasks(self) -> List[str]: ..." in body
    assert '    def log(self, job_id: str, message: str, level: str = "info") -> None: ...' in body
    assert "    def list_archived_after(self, limit: int = 50, after: Optional[str] = None) -> _Page: ..." in body
    assert body.index("    def revoked_tasks(self) -> List[str]: ...") > body.index("    # control")
    imports = stub.imports(names, tool._head(tool.FORWARD_STUB), "flexiq._queue", "flexiq._queue.forward")
    native_import = next(line for line in imports if line.startswith("from .._flexiq import "))
    assert {"_Page", "NativeWorkflowJobs", "PartialIter"} <= set(native_import[22:].split(", "))
    assert "from typing import Dict, List, Tuple" in imports  # the kept head has the others

    twin_lines, twin_names = tool.twin_body(twins, cls, stub, forwards=forwards)
    assert "    # _queue/forward.py" in twin_lines
    assert "    async def arevoked_tasks(self) -> List[str]: ..." in twin_lines
    assert "    async def alist_archived_after(self, limit: int = 50, after: Optional[str] = None) -> _Page: ..." in twin_lines
    assert stub.imports(twin_names, tool._head(tool.STUB), "flexiq", "flexiq._aio")[-1].startswith("from ._flexiq import ")


def test_the_stub_check_fails_when_a_stub_is_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = load_tool()
    for attr in ("STUB", "FORWARD_STUB"):
        copy = tmp_path / getattr(tool, attr).name
        shutil.copy(getattr(tool, attr), copy)
        monkeypatch.setattr(tool, attr, copy)
    assert tool.main(["--check"]) == 0
    for attr in ("STUB", "FORWARD_STUB"):
        path = getattr(tool, attr)
        current = path.read_text()
        path.write_text(current + "    def stale(self) -> None: ...\n")
        assert tool.main(["--check"]) == 1, attr
        assert tool.main([]) == 0 and path.read_text() == current
        assert tool.main(["--check"]) == 0
