"""Writes (or, with ``--check``, verifies) the stubs of the methods flexiq makes at import time:
the async twins in ``python/flexiq/_aio.pyi`` and the native forwarders in
``python/flexiq/_queue/forward.pyi``.

The twins are made from the blocking methods (``flexiq._aio``) and the forwarders from the
methods of ``NativeQueue`` that ``Queue`` does not write (``flexiq._queue.forward``), so
their stub lines are made the same way: this script imports flexiq and walks what each holder
received. A forwarder's declaration is copied from the ``NativeQueue`` declaration of
``_flexiq.pyi`` (read with ``ast``: the parameters, annotations, defaults and return type as
written there), grouped under that file's area comments. A twin gets its blocking method's
signature, in the order the twins were made, grouped by the ``_queue`` module that defines the
blocking form; the twin of a forwarder takes the forwarder's declaration. The part of each stub
down to the line ``# Written by tools/aio_stub.py from here on.`` (imports and the helpers'
stubs) is kept as written; below it the script writes the imports that the copied annotations
need and the kept part lacks, then the holder classes.

    python tools/aio_stub.py          # rewrite the stubs after adding a method
    python tools/aio_stub.py --check  # fail when a stub is not what the code says (CI)
"""

from __future__ import annotations

import ast
import builtins
import inspect
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

import flexiq
from flexiq._aio import AsyncMixin, WorkflowAsyncMixin
from flexiq._queue.forward import NativeCalls

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "flexiq"
STUB = PACKAGE / "_aio.pyi"
FORWARD_STUB = PACKAGE / "_queue" / "forward.pyi"
NATIVE_STUB = PACKAGE / "_flexiq.pyi"
MARK = "# Written by tools/aio_stub.py from here on.\n"

# A name's origin: the absolute module it is imported from (or defined in) and its name there
# (None for a module bound by ``import``).
Origin = Tuple[str, Optional[str]]


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


def _absolute(module: Optional[str], level: int, package: str) -> str:
    """The absolute name of ``from <level dots><module> import ...`` in ``package``."""
    if level == 0:
        return module or ""
    parts = package.split(".")
    base = parts[: len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _relative(module: str, package: str) -> str:
    """How a stub in ``package`` names ``module`` in an import (relative inside flexiq)."""
    top = package.split(".")[0]
    if module != top and not module.startswith(top + "."):
        return module
    here, there = package.split("."), module.split(".")
    common = 0
    while common < min(len(here), len(there)) and here[common] == there[common]:
        common += 1
    return "." * (len(here) - common + 1) + ".".join(there[common:])


def _bindings(tree: ast.Module, package: str, module: str) -> Dict[str, Origin]:
    """The names a stub's top level binds, with their origins."""
    out: Dict[str, Origin] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            source = _absolute(node.module, node.level, package)
            for alias in node.names:
                out[alias.asname or alias.name] = (source, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                out[alias.asname or alias.name.split(".")[0]] = (alias.name, None)
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = (module, node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out[target.id] = (module, target.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = (module, node.target.id)
    return out


class NativeStub:
    """The method declarations of one class of ``_flexiq.pyi``, as text to copy."""

    def __init__(self, path: Path = NATIVE_STUB, cls: str = "NativeQueue", module: str = "flexiq._flexiq") -> None:
        self.path = path
        self.source = path.read_text()
        tree = ast.parse(self.source)
        self.origins = _bindings(tree, module.rpartition(".")[0], module)
        self.defs: Dict[str, ast.FunctionDef] = {}
        self.areas: Dict[str, Optional[str]] = {}
        self._overloaded: Set[str] = set()
        body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
        lines = self.source.splitlines()
        area: Optional[str] = None
        line = body.lineno + 1
        for node in body.body:
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            for text in lines[line - 1 : first - 1]:
                if text.strip().startswith("#"):
                    area = text.strip().lstrip("#").strip()
            line = (node.end_lineno or node.lineno) + 1
            if not isinstance(node, ast.FunctionDef):
                continue
            if any(ast.unparse(d) == "property" for d in node.decorator_list):
                continue
            if node.name in self.defs:
                self._overloaded.add(node.name)
            self.defs[node.name] = node
            self.areas[node.name] = area

    def _def(self, name: str) -> ast.FunctionDef:
        if name not in self.defs:
            raise SystemExit(f"{self.path.name} declares no method {name}: add its line there")
        if name in self._overloaded:
            raise SystemExit(f"{name} is overloaded in {self.path.name}: write its Queue method by hand")
        return self.defs[name]

    def _text(self, node: ast.expr) -> str:
        segment = ast.get_source_segment(self.source, node)
        return ast.unparse(node) if segment is None or "\n" in segment else segment

    def _arg(self, arg: ast.arg, default: Optional[ast.expr]) -> str:
        text = arg.arg
        if arg.annotation is not None:
            text += ": " + self._text(arg.annotation)
        if default is not None:
            text += " = " + self._text(default)
        return text

    def signature(self, name: str) -> str:
        """``(params) -> ret`` of method ``name`` as ``_flexiq.pyi`` writes it, on one line."""
        fn = self._def(name)
        a = fn.args
        positional = a.posonlyargs + a.args
        defaults: List[Optional[ast.expr]] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        out: List[str] = []
        for i, (arg, default) in enumerate(zip(positional, defaults)):
            out.append(self._arg(arg, default))
            if i == len(a.posonlyargs) - 1:
                out.append("/")
        if a.vararg is not None:
            out.append("*" + self._arg(a.vararg, None))
        elif a.kwonlyargs:
            out.append("*")
        for arg, default in zip(a.kwonlyargs, a.kw_defaults):
            out.append(self._arg(arg, default))
        if a.kwarg is not None:
            out.append("**" + self._arg(a.kwarg, None))
        ret = "" if fn.returns is None else " -> " + self._text(fn.returns)
        return f"({', '.join(out)}){ret}"

    def names(self, name: str) -> Set[str]:
        """The names method ``name``'s declaration uses (annotations and defaults)."""
        fn = self._def(name)
        a = fn.args
        nodes: List[Optional[ast.expr]] = [x.annotation for x in a.posonlyargs + a.args + a.kwonlyargs]
        nodes += [x.annotation for x in (a.vararg, a.kwarg) if x is not None]
        nodes += list(a.defaults) + list(a.kw_defaults) + [fn.returns]
        return {n.id for node in nodes if node is not None for n in ast.walk(node) if isinstance(n, ast.Name)}

    def imports(self, names: Iterable[str], head: str, package: str, module: str) -> List[str]:
        """The import lines a stub of ``module`` (in ``package``) whose kept part is ``head``
        needs so that ``names`` mean there what they mean in ``_flexiq.pyi``."""
        bound = _bindings(ast.parse(head), package, module)
        wanted: Dict[str, List[str]] = {}
        plain: List[str] = []
        for name in sorted(set(names)):
            origin = self.origins.get(name)
            if origin is None:
                if hasattr(builtins, name):
                    continue
                raise SystemExit(f"{self.path.name} uses {name} without binding it")
            if name in bound:
                if bound[name] != origin:
                    raise SystemExit(f"{name} means one thing in {self.path.name} and another in {module}")
                continue
            source, original = origin
            if original is None:
                plain.append(f"import {source}")
            else:
                wanted.setdefault(source, []).append(original if original == name else f"{original} as {name}")
        froms = sorted(wanted, key=lambda m: (m.startswith(package.split(".")[0]), m))
        return plain + [f"from {_relative(m, package)} import {', '.join(wanted[m])}" for m in froms]


def forwarded(holder: type) -> List[str]:
    """The forwarders ``holder`` received, in the order they were made."""
    return [n for n, v in vars(holder).items() if inspect.isfunction(v) and not n.startswith("_")]


def forward_body(holder: type, stub: NativeStub) -> Tuple[List[str], Set[str]]:
    """The class body declaring ``holder``'s forwarders, in ``_flexiq.pyi``'s order under its
    area comments, and the names it uses."""
    made = set(forwarded(holder))
    lines: List[str] = []
    names: Set[str] = set()
    area: Optional[str] = None
    for name in [n for n in stub.defs if n in made] + sorted(made - set(stub.defs)):
        if stub.areas.get(name) not in (None, area):
            area = stub.areas[name]
            lines.append(f"    # {area}")
        lines.append(f"    def {name}{stub.signature(name)}: ...")
        names |= stub.names(name)
    return lines, names


def twin_body(
    holder: type, owner: type, stub: NativeStub, forwards: type = NativeCalls, suffix: str = ""
) -> Tuple[List[str], Set[str]]:
    """The class body declaring the twins ``holder`` received for ``owner``'s blocking methods,
    and the names the declarations of forwarders' twins use."""
    lines: List[str] = []
    names: Set[str] = set()
    group = None
    for name, twin in vars(holder).items():
        if not name.startswith("a") or not callable(twin) or not hasattr(twin, "__signature__"):
            continue
        blocking = getattr(owner, name[1:])
        module = blocking.__module__.removeprefix("flexiq.").replace(".", "/") + ".py"
        if module != group:
            group = module
            lines.append(f"    # {module}{suffix}")
        if vars(forwards).get(name[1:]) is blocking:
            lines.append(f"    async def {name}{stub.signature(name[1:])}: ...")
            names |= stub.names(name[1:])
            continue
        sig = inspect.signature(blocking)
        ret = "" if sig.return_annotation is sig.empty else " -> " + _annotation(sig.return_annotation)
        lines.append(f"    async def {name}({_params(sig)}){ret}: ...")
    return lines, names


def _head(path: Path) -> str:
    text = path.read_text()
    if MARK not in text:
        raise SystemExit(f"{path} lacks the line {MARK.strip()!r} above what this script writes")
    return text[: text.index(MARK) + len(MARK)]


def _assemble(head: str, imports: List[str], classes: List[Tuple[str, List[str]]]) -> str:
    out = head + "".join(line + "\n" for line in imports) + ("\n" if imports else "")
    blocks = [f"class {name}:\n" + "\n".join(body) if body else f"class {name}: ..." for name, body in classes]
    return out + "\n\n".join(blocks) + "\n"


def render_aio(stub: NativeStub) -> str:
    """What ``_aio.pyi`` should hold."""
    head = _head(STUB)
    queue, names = twin_body(AsyncMixin, flexiq.Queue, stub)
    workflow, more = twin_body(WorkflowAsyncMixin, flexiq.WorkflowJobs, stub, suffix=" (WorkflowJobs)")
    imports = stub.imports(names | more, head, "flexiq", "flexiq._aio")
    return _assemble(head, imports, [("AsyncMixin", queue), ("WorkflowAsyncMixin", workflow)])


def render_forward(stub: NativeStub) -> str:
    """What ``_queue/forward.pyi`` should hold."""
    head = _head(FORWARD_STUB)
    body, names = forward_body(NativeCalls, stub)
    imports = stub.imports(names, head, "flexiq._queue", "flexiq._queue.forward")
    return _assemble(head, imports, [("NativeCalls", body)])


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    stub = NativeStub()
    wanted = {FORWARD_STUB: render_forward(stub), STUB: render_aio(stub)}
    if "--check" in args:
        stale = [path for path, text in wanted.items() if path.read_text() != text]
        for path in stale:
            print(f"{path} is not what the code says; run python tools/aio_stub.py", file=sys.stderr)
        return 1 if stale else 0
    for path, text in wanted.items():
        if path.read_text() != text:
            path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
