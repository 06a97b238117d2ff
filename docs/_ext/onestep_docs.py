"""Sphinx extension of the onestep_theory documentation site (docs/conf.py loads it).

Three jobs, all done at build time from the package as it is imported, so that the site follows the code when
modules move (srf/ was split into sub-packages while this was written):

1. **API pages from ``__all__``.**  Every package of ``onestep_theory`` that has an ``__all__`` gets a page
   ``api/generated/<package>.rst`` (its docstring, a summary table of every public name); every public object
   gets exactly one page, under its *canonical* package -- of the packages that export it, the deepest one whose
   name prefixes the object's ``__module__`` (``srf_solve`` is exported by ``onestep_theory``,
   ``onestep_theory.srf`` and the room that defines it; its page is the room's).  The other packages link to it.
2. **Theory sections <-> code.**  Every numbered heading ``## 4.7 ...`` of ``docs/theory/*.md`` and
   ``docs/studies/*.md`` gets the label ``study-<file>-s4-7``; in the docstrings, ``docs/theory/<file>.md`` becomes a
   link to the page and each ``§N.M`` after it (the package's citation convention, docs/theory/README.md) a link
   to the section.  Each theory page ends with the list of the public functions and classes citing it.
3. **References by identity.**  A cross-reference to ``onestep_theory.<module path>.<name>`` (as the docstrings
   and the type hints spell it, by the defining module) is resolved by importing the object and linking to its
   canonical page.
"""

from __future__ import annotations

import importlib
import inspect
import pathlib
import pkgutil
import re
import shutil
import sys

from docutils import nodes
from sphinx.util import logging

logger = logging.getLogger(__name__)

PACKAGE = "onestep_theory"
DOCS = pathlib.Path(__file__).resolve().parents[1]
GENERATED = DOCS / "api" / "generated"
NOTE_DIRS = ("theory", "studies")

_HEADING = re.compile(r"^(#{1,6})\s+(\d+(?:\.\d+)*)\.?\s")
_FILE = re.compile(r"(?:docs/)?(theory|studies)/([A-Za-z0-9_-]+)\.md")
_CITE = re.compile(r"(?:docs/)?(?P<dir>theory|studies)/(?P<file>[A-Za-z0-9_-]+)\.md|(?P<sec>§§?)(?P<num>\d+(?:\.\d+)*)")
_LITERAL = re.compile(r"(``.*?``|`[^`]*`)")


def label(doc: str, num: str) -> str:
    """The label of section ``§num`` of the note ``doc`` (``theory/srf-theory``), e.g. ``srf-theory-s4-7``; a study
    page's labels start with ``study-`` (``studies/trained-bulk`` and ``theory/trained-bulk`` share a file name)."""
    folder, _, name = doc.rpartition("/")
    return f"{'study-' if folder.endswith('studies') else ''}{name}-s{num.replace('.', '-')}"


def note_sections() -> dict[str, dict[str, str]]:
    """``{"theory/srf-theory": {"4.7": "4.7 Test error, (25), ..."}}``: the numbered headings of the notes."""
    out: dict[str, dict[str, str]] = {}
    for d in NOTE_DIRS:
        for path in sorted((DOCS / d).glob("*.md")):
            secs = {}
            for line in path.read_text(encoding="utf-8").splitlines():
                m = _HEADING.match(line)
                if m:
                    secs.setdefault(m.group(2), line.lstrip("#").strip())
            out[f"{d}/{path.stem}"] = secs
    return out


# --------------------------------------------------------------------------------------------------- 1. API
def public_packages() -> list[str]:
    """Every package of onestep_theory with an ``__all__``, in a stable order (parents first)."""
    root = importlib.import_module(PACKAGE)
    names = [PACKAGE]
    for info in pkgutil.walk_packages(root.__path__, PACKAGE + "."):
        if info.ispkg:
            names.append(info.name)
    return sorted((n for n in names if getattr(importlib.import_module(n), "__all__", None)),
                  key=lambda n: (n.count("."), n))


def _kind(obj) -> str:
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.isroutine(obj) or (callable(obj) and hasattr(obj, "__wrapped__")):
        return "function"
    return "data"


def api_catalogue() -> tuple[dict[str, list[tuple[str, str]]], dict[tuple[str, int], str], dict[str, str]]:
    """``(exports, canonical, kinds)``: ``exports[pkg]`` = ``[(name, canonical full name)]`` in ``__all__``
    order; ``canonical[(name, id(obj))]`` = the full name of the object's page; ``kinds[full name]`` its kind."""
    packages = public_packages()
    owners: dict[tuple[str, int], list[str]] = {}
    objects: dict[tuple[str, int], object] = {}
    for pkg in packages:
        mod = importlib.import_module(pkg)
        for name in mod.__all__:
            obj = getattr(mod, name)            # an __all__ naming nothing is an error of the package: let it raise
            key = (name, id(obj))
            owners.setdefault(key, []).append(pkg)
            objects[key] = obj
    canonical, kinds = {}, {}
    for key, pkgs in owners.items():
        obj = objects[key]
        if inspect.ismodule(obj):
            full = obj.__name__
        else:
            home = getattr(obj, "__module__", None) or ""
            prefixing = [p for p in pkgs if home == p or home.startswith(p + ".")]
            best = max(prefixing or pkgs, key=lambda p: (p.count("."), p))
            full = f"{best}.{key[0]}"
        canonical[key] = full
        kinds[full] = _kind(obj)
    exports = {pkg: [(n, canonical[(n, id(getattr(importlib.import_module(pkg), n)))])
                     for n in importlib.import_module(pkg).__all__] for pkg in packages}
    return exports, canonical, kinds


def _title(text: str) -> str:
    return f"{text}\n{'=' * len(text)}\n"


def _object_page(full: str, kind: str) -> str:
    mod, _, name = full.rpartition(".")
    head = _title(name) + f"\n.. currentmodule:: {mod}\n\n"
    if kind == "module":
        return _title(full) + f"\n.. automodule:: {full}\n   :members:\n"
    if kind == "class":
        return head + f".. autoclass:: {name}\n   :members:\n   :show-inheritance:\n"
    if kind == "exception":
        return head + f".. autoexception:: {name}\n   :members:\n   :show-inheritance:\n"
    if kind == "function":
        return head + f".. autofunction:: {name}\n"
    return head + f".. autodata:: {name}\n   :no-value:\n"


def page_name(full: str, taken: set[str]) -> str:
    """The file name of an object's page; names that differ only in case (``Gains``, ``gains``) stay apart."""
    stem = full if full.lower() not in taken else f"{full}-{len(taken)}"
    taken.add(stem.lower())
    return stem


def import_all() -> None:
    """Import every module of the package (a docstring may cite a helper of a module nothing imports eagerly)."""
    root = importlib.import_module(PACKAGE)
    for info in pkgutil.walk_packages(root.__path__, PACKAGE + ".", onerror=lambda name: None):
        if info.name.rpartition(".")[2] == "__main__":         # runs the command line when imported
            continue
        try:
            importlib.import_module(info.name)
        except Exception as exc:  # noqa: BLE001 - an optional dependency missing: its names stay unresolved
            logger.info(f"[onestep_docs] {info.name} not imported: {exc}")


def write_api(app) -> None:
    """Write api/generated/: one page per public package and one per public object (see the module doc)."""
    exports, canonical, kinds = api_catalogue()
    import_all()
    if GENERATED.exists():
        shutil.rmtree(GENERATED)
    GENERATED.mkdir(parents=True)
    taken: set[str] = set()
    pages = {full: page_name(full, taken) for full in sorted(set(canonical.values()))}
    homes: dict[str, list[str]] = {}
    for full in pages:
        if kinds[full] != "module":
            homes.setdefault(full.rpartition(".")[0], []).append(full)
    for pkg, names in exports.items():
        lines = [_title(pkg), f".. automodule:: {pkg}\n   :no-members:\n",
                 "Public names (``__all__``)\n" + "-" * 26 + "\n", ".. autosummary::\n   :nosignatures:\n"]
        lines += [f"   ~{full[len(pkg) + 1:] if full.startswith(pkg + '.') else full}" for _, full in names]
        own = homes.get(pkg, [])
        if own:
            lines.append("\n.. toctree::\n   :hidden:\n\n" + "\n".join(f"   objects/{pages[f]}" for f in own))
        (GENERATED / f"{pkg}.rst").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (GENERATED / "objects").mkdir()
    for full, stem in pages.items():
        if kinds[full] != "module":
            (GENERATED / "objects" / f"{stem}.rst").write_text(_object_page(full, kinds[full]), encoding="utf-8")
    app.config.onestep_api = {"exports": exports, "pages": pages}
    _remember(exports, canonical)


_CANON: dict[tuple[str, int], str] = {}
_SHORT: dict[str, set[str]] = {}


def _remember(exports, canonical) -> None:
    _CANON.clear()
    _CANON.update(canonical)
    _SHORT.clear()
    for full in canonical.values():
        _SHORT.setdefault(full.rpartition(".")[2], set()).add(full)


def _import(dotted: str):
    """The object named ``dotted`` (module path then attributes), or None."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except Exception:  # noqa: BLE001 - not a module: try a shorter prefix
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def canonical_of(dotted: str) -> str | None:
    """The documented full name of the object ``dotted`` names (or of a member of a documented class)."""
    if not dotted.startswith(PACKAGE):
        return None
    parts = dotted.split(".")
    for i in range(len(parts), 1, -1):
        obj = _import(".".join(parts[:i]))
        if obj is None:
            continue
        full = _CANON.get((parts[i - 1], id(obj)))
        if full is not None:
            return ".".join([full, *parts[i:]])
    return None


def _exists(target: str, module: str | None, cls: str | None) -> bool:
    """Whether ``target`` names an object of the package: a dotted path, a member of the current class (also
    an inherited method or a dataclass field), or a name of the current module or of any loaded module of the
    package (docstrings cite helpers of their own module by the short name, some by a path since moved)."""
    if target.startswith(PACKAGE + ".") and _import(target) is not None:
        return True
    if module and cls:
        owner = _import(f"{module}.{cls}")
        if owner is not None and (hasattr(owner, target) or target in getattr(owner, "__dataclass_fields__", {})):
            return True
    name = target.rsplit(".", 1)[-1] if target.startswith(PACKAGE + ".") else target
    head = name.split(".")[0]
    mods = [module] if module else []
    mods += sorted(m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + "."))
    found = any(hasattr(sys.modules.get(m), head) and _import(f"{m}.{name}") is not None for m in mods)
    if found and name != target:
        logger.info(f"[onestep_docs] {target}: not where the docstring says; shown unlinked")
    return found


def resolve_missing(app, env, node, contnode):
    """``missing-reference``: a reference into the package that the domain did not find by its own rules.

    1. the object's canonical page: a target spelled by the defining module (``onestep_theory.srf.solve.
       srf_solve``, also a member ``...SRFSolution.state``), by a short name under the current module, or a
       name whose last component has one documented owner (a path the code has since moved);
    2. an existing object that is not public (a helper, a constant of a module) is shown as code, unlinked;
    3. anything else (a name the package does not have) stays a warning: ``-n`` fails the build.
    """
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "").lstrip("~.")
    mod = node.get("py:module")
    candidates = []
    if target.startswith(PACKAGE + "."):
        candidates.append(canonical_of(target))
    elif mod:
        candidates.append(canonical_of(f"{mod}.{target}"))
    parts = target.split(".")
    for k in range(len(parts)):                 # tails with one documented owner, the longest first
        owners = _SHORT.get(parts[k], set())
        if len(owners) == 1:
            candidates.append(".".join([next(iter(owners)), *parts[k + 1:]]))
    py = env.get_domain("py")
    for cand in candidates:
        if cand and cand != target:
            new = node.deepcopy()
            new["reftarget"] = cand
            for typ in dict.fromkeys((node["reftype"], "obj")):
                res = py.resolve_xref(env, node["refdoc"], app.builder, typ, cand, new, contnode)
                if res is not None:
                    return res
    if _exists(target, mod, node.get("py:class")):
        return contnode
    return None


def fix_docstring(app, what, name, obj, options, lines) -> None:
    """``autodoc-process-docstring``, before napoleon: make the free-prose NumPy docstrings render.

    * a data object without a docstring of its own gets no docstring of its type (``dict``'s, ``Symbol``'s);
    * a docstring opening with an equation number, ``(15) in Arb ...``, is not read as a list numbered from 15;
    * a doctest or a paragraph of prose written straight after a ``Parameters``/``Returns`` section (without an
      ``Examples``/``Notes`` heading) gets the heading, so that napoleon does not read it as a parameter.
    """
    if what in ("data", "attribute") and obj is not None and not isinstance(obj, type):
        own = inspect.getdoc(type(obj)) or ""
        if lines and own and "\n".join(lines).strip() == inspect.cleandoc(own).strip():
            lines[:] = [f"(``{type(obj).__name__}``)"]
        return
    if lines and re.match(r"\(\d+[a-z]?\)\s", lines[0]):
        lines[0] = "\\" + lines[0]            # "(15) in Arb ..." cites eq. (15): not an enumerated list
    out, section, prev_blank = [], None, True
    for line in lines:
        stripped = line.strip()
        if re.fullmatch(r"-{3,}", stripped) and out:
            section = out[-1].strip()
        elif section in _PARAM_SECTIONS and line[:1] not in (" ", "\t", "") and prev_blank:
            if stripped.startswith(">>>"):
                out += ["Examples", "--------"]
                section = "Examples"
            elif section != "Returns" and not _PARAM_SPEC.match(stripped):
                out += ["Notes", "-----"]
                section = "Notes"
        out.append(line)
        prev_blank = not stripped
    lines[:] = out


_PARAM_SECTIONS = {"Parameters", "Other Parameters", "Returns", "Yields", "Raises", "Attributes", "Keyword Arguments"}
_PARAM_SPEC = re.compile(r"^\*{0,2}[A-Za-z_]\w*(\s*,\s*\*{0,2}[A-Za-z_]\w*)*\s*(:.*)?$")


# ------------------------------------------------------------------------------------ 2. theory <-> code
def _link_line(line: str, state: dict, sections: dict) -> str:
    if line.lstrip().startswith((">>>", "...")):
        return line
    out = []
    for i, part in enumerate(_LITERAL.split(line)):
        if i % 2:
            out.append(part)
            continue

        def sub(m):
            if m.group("file"):
                doc = f"{m.group('dir')}/{m.group('file')}"
                if doc not in sections:
                    return m.group(0)
                state["doc"] = doc
                return f":doc:`{m.group(0)} </{doc}>`"
            doc, num = state.get("doc"), m.group("num")
            if doc and num in sections[doc]:
                return f":ref:`{m.group('sec')}{num} <{label(doc, num)}>`"
            return m.group(0)

        out.append(_CITE.sub(sub, part))
    return "".join(out)


def link_citations(app, what, name, obj, options, lines) -> None:
    """``autodoc-process-docstring``: citations of the notes become links (see the module doc)."""
    sections = app.config.onestep_sections
    state: dict = {}
    in_literal = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if in_literal and stripped and not line[:1].isspace():
            in_literal = False
        if not in_literal:
            lines[i] = _link_line(line, state, sections)
        if stripped.endswith("::") and not stripped.startswith(".."):
            in_literal = True


def citing_objects(canonical_names) -> dict[str, dict[str, list[str]]]:
    """``{"theory/srf-theory": {"4.7": [full names], "": [...]}}``: which public objects cite which sections."""
    sections = note_sections()
    out: dict[str, dict[str, list[str]]] = {}
    for full in sorted(canonical_names):
        obj = _import(full)
        doc = inspect.getdoc(obj) if (inspect.isclass(obj) or inspect.isroutine(obj)) else None
        if not doc:
            continue
        cur = None
        for m in _CITE.finditer(doc):
            if m.group("file"):
                cur = f"{m.group('dir')}/{m.group('file')}"
                if cur in sections:
                    out.setdefault(cur, {}).setdefault("", [])
                    if full not in out[cur][""]:
                        out[cur][""].append(full)
            elif cur in sections and m.group("num") in sections[cur]:
                lst = out[cur].setdefault(m.group("num"), [])
                if full not in lst:
                    lst.append(full)
    return out


def add_labels_and_backlinks(app, docname, source) -> None:
    """``source-read``: labels on the notes' numbered headings, and the list of the code citing the page."""
    if docname not in app.config.onestep_sections:
        return
    text = source[0]
    out = []
    for line in text.splitlines():
        m = _HEADING.match(line)
        if m:
            out.append(f"({label(docname, m.group(2))})=")
        out.append(line)
    cites = app.config.onestep_citing.get(docname)
    if cites:
        out += ["", "## Functions and classes citing this page", "",
                "Generated from the docstrings: each public name whose docstring cites this page, by section.", ""]
        whole = [f for f in cites.get("", []) if not any(f in v for k, v in cites.items() if k)]
        key = lambda s: [int(x) for x in s.split(".")]     # noqa: E731 - section order
        for num in sorted((k for k in cites if k), key=key):
            refs = ", ".join(f"{{py:obj}}`~{f}`" for f in cites[num])
            out.append(f"- [§{num}](#{label(docname, num)}): {refs}")
        if whole:
            out.append("- the page as a whole: " + ", ".join(f"{{py:obj}}`~{f}`" for f in whole))
    source[0] = "\n".join(out) + "\n"


def readme_links(app, relative_path, parent_docname, content) -> None:
    """``include-read``: the landing page includes README.md, whose link to CONTRIBUTING.md (outside docs/)
    points to the site's page that includes it."""
    if pathlib.Path(relative_path).name == "README.md" and parent_docname == "index":
        content[0] = content[0].replace("](CONTRIBUTING.md)", "](contributing.md)")


_BACKLINK = re.compile(r'href="([^"#]*/objects/([^"#/]+)\.html)#([^"]+)"')


def viewcode_backlinks(app, pagename, templatename, context, doctree) -> None:
    """``html-page-context``: viewcode links a source line to ``<page>#<first module name documented>.<name>``,
    wrong when one module's objects are documented under different packages (``precision`` under
    ``onestep_theory``, ``workdps`` under ``onestep_theory.core``). An object page holds one object whose id is the
    page's name: the fragment is rebuilt from it (``<page name><rest of the qualified name>``)."""
    if not pagename.startswith("_modules/") or "body" not in context:
        return

    def fix(m):
        url, stem, frag = m.groups()
        stem = re.sub(r"-\d+$", "", stem)                    # page_name's suffix for names differing in case
        short = stem.rpartition(".")[2]
        parts = frag.split(".")
        if frag == stem or short not in parts:
            return m.group(0)
        k = len(parts) - 1 - parts[::-1].index(short)
        return f'href="{url}#{".".join([stem, *parts[k + 1:]])}"'

    context["body"] = _BACKLINK.sub(fix, context["body"])


def setup_citations(app) -> None:
    app.config.onestep_sections = note_sections()
    app.config.onestep_citing = citing_objects(set(_CANON.values()))


def _napoleon_for_callables(app) -> None:
    """Run napoleon on functions, classes, methods and modules only: on an attribute, data or property it reads a
    free-prose first line ``"hinge": the channel ...`` as ``type: description`` and makes ``"hinge"`` a type."""
    from sphinx.ext.napoleon import _process_docstring

    for listener in list(app.events.listeners.get("autodoc-process-docstring", [])):
        if listener.handler is _process_docstring:
            app.disconnect(listener.id)

    def napoleon_callables(app, what, name, obj, options, lines):
        if what not in ("attribute", "data", "property"):
            _process_docstring(app, what, name, obj, options, lines)

    app.connect("autodoc-process-docstring", napoleon_callables, priority=500)


def setup(app):
    app.setup_extension("sphinx.ext.napoleon")
    _napoleon_for_callables(app)
    app.add_config_value("onestep_sections", {}, "env")
    app.add_config_value("onestep_citing", {}, "env")
    app.add_config_value("onestep_api", {}, "env")
    # before autosummary and autodoc read the generated files
    app.connect("config-inited", lambda app, config: write_api(app), priority=100)
    app.connect("builder-inited", lambda app: setup_citations(app), priority=100)
    app.connect("source-read", add_labels_and_backlinks)
    app.connect("include-read", readme_links)
    app.connect("html-page-context", viewcode_backlinks)
    app.connect("autodoc-process-docstring", fix_docstring, priority=400)       # napoleon's is 500
    app.connect("autodoc-process-docstring", link_citations, priority=600)
    app.connect("missing-reference", resolve_missing)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
