"""House rules, checked: citations resolve into docs/theory, imports go one way and never reach private
names of another module, no module does two jobs by size, and theory modules draw no random numbers."""

import ast
import functools
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PKG = ROOT / "onestep_theory"
DOCS = ROOT / "docs" / "theory"
SOURCES = sorted(PKG.rglob("*.py"))

#: A citation: the file, then optionally "§" or "§§" and section numbers, lists and ranges ("§4.6", "§§7–8",
#: "§6.1, §6.3", "§4.1–4.7").
CITE = re.compile(r"docs/theory/([a-z-]+)\.md(?:\s*(?:\(|,)?\s*(§§?\s*\d+(?:\.\d+)*(?:\s*(?:[–-]|,\s*§?|and\s+§?)\s*"
                  r"\d+(?:\.\d+)*)*))?")
BARE = re.compile(r"(?<![\w/.])§§?\s*(\d+(?:\.\d+)*(?:\s*(?:[–-]|,\s*§?)\s*\d+(?:\.\d+)*)*)")


def headings(name: str) -> set:
    out = set()
    for line in (DOCS / f"{name}.md").read_text().splitlines():
        m = re.match(r"#+\s+(\d+(?:\.\d+)*)\.?\s", line)
        if m:
            out.add(m.group(1))
    return out


def numbers(refs: str) -> list:
    return re.findall(r"\d+(?:\.\d+)*", refs)


def citations(text: str):
    """(file, section or None, position) for every file-qualified citation, and every bare "§N" attributed
    to the most recent file cited before it in the same text."""
    found = []
    for m in CITE.finditer(text):
        refs = numbers(m.group(2)) if m.group(2) else [None]
        found += [(m.group(1), r, m.start()) for r in refs]
    spans = [(m.start(), m.end()) for m in CITE.finditer(text)]
    for m in BARE.finditer(text):
        if any(a <= m.start() < b for a, b in spans):
            continue
        before = [c for c in found if c[2] < m.start()]
        if before:
            found += [(max(before, key=lambda c: c[2])[0], r, m.start()) for r in numbers(m.group(1))]
    return found


def test_citation_pattern_is_not_vacuous():
    text = "see docs/theory/srf-theory.md §4.6 and (§§7–8), docs/theory/hermite.md §5.4, §6"
    got = {(f, r) for f, r, _ in citations(text)}
    assert got == {("srf-theory", "4.6"), ("srf-theory", "7"), ("srf-theory", "8"), ("hermite", "5.4"),
                   ("hermite", "6")}
    assert "4.6" in headings("srf-theory") and "99.9" not in headings("srf-theory")


@pytest.mark.parametrize("path", SOURCES + [ROOT / "README.md", ROOT / "CONTRIBUTING.md"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_citation_resolves(path):
    text = path.read_text()
    bad = []
    for name, ref, pos in citations(text):
        if not (DOCS / f"{name}.md").exists():
            bad.append(f"docs/theory/{name}.md (no such file)")
        elif ref is not None and ref not in headings(name):
            bad.append(f"docs/theory/{name}.md §{ref} (line {text.count(chr(10), 0, pos) + 1})")
    assert not bad, bad


def test_no_citation_points_outside_the_repository():
    for path in SOURCES + [ROOT / "README.md"]:
        text = path.read_text()
        for m in re.finditer(r"(?<![\w/-])(hermite|spike-theory|srf-theory|numerics)\.md", text):
            assert text[max(0, m.start() - 12):m.start()] == "docs/theory/", (path, text[m.start() - 20:m.end()])
        assert "../shared" not in text, path


def _layer(path) -> str:
    """The subpackage of the package that holds ``path`` (``srf`` for srf/grouped/kgroup.py); '' at the top."""
    rel = path.relative_to(PKG).parts
    return rel[0] if len(rel) > 1 else ""


def test_every_module_cites_its_theory():
    """Each module of the theory and simulation layers names the section of docs/theory it implements."""
    missing = []
    for path in SOURCES:
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        if _layer(path) in ("hermite", "spikes", "srf", "simulate", "reproduce") and "docs/theory/" not in doc:
            missing.append(str(path.relative_to(ROOT)))
    assert not missing, missing


# ---------------------------------------------------------------- architecture
LAYERS = {"core": 0, "hermite": 1, "spikes": 2, "srf": 2, "simulate": 3, "reproduce": 4, "study": 4, "quantities": 4, "cli": 5}


def _imports(path):
    tree = ast.parse(path.read_text())
    rel = path.relative_to(PKG).parts
    pkg = list(rel[:-1])
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = pkg[: len(pkg) - (node.level - 1)]
            yield node, base + (node.module.split(".") if node.module else [])


def test_no_private_name_crosses_a_module():
    bad = []
    for path in SOURCES:
        for node, _ in _imports(path):
            bad += [f"{path.relative_to(ROOT)}:{node.lineno} {a.name}" for a in node.names
                    if a.name.startswith("_") and a.name != "__version__"]
    assert not bad, bad


def test_imports_go_one_way():
    """A subpackage imports only from its own or lower layers (spikes and srf are independent)."""
    bad = []
    for path in SOURCES:
        rel = path.relative_to(PKG).parts
        if len(rel) < 2:
            continue
        here = rel[0]
        for node, target in _imports(path):
            if not target or target[0] not in LAYERS:
                continue
            there = target[0]
            if there != here and (LAYERS[there] > LAYERS[here] or LAYERS[there] == LAYERS[here]):
                bad.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {'.'.join(target)}")
    assert not bad, bad


def test_modules_are_small():
    big = {str(p.relative_to(ROOT)): n for p in SOURCES if (n := len(p.read_text().splitlines())) > 420}
    assert not big, big


def test_theory_modules_draw_no_random_numbers():
    pattern = re.compile(r"default_rng|np\.random\.|random\.seed|standard_normal")
    offenders = [str(p.relative_to(ROOT)) for p in SOURCES if _layer(p) in ("core", "hermite", "spikes", "srf")
                 and pattern.search(p.read_text())]
    assert not offenders, offenders


# ---------------------------------------------------------------- rooms and the module import graph (issue 33)
#: Most modules in one package folder (``__init__`` not counted): a newcomer sees a room at a glance.
MAX_ROOM = 12
#: Folders allowed over MAX_ROOM for now, each with the reason and the plan; an entry no longer needed fails.
OVER_FOR_NOW: dict = {}       # e.g. {"quantities": "issue 33: its TeX reader moves into a room"} (done: latex/)
#: The rooms of srf and their levels: a room imports only rooms of a lower level; one level's rooms are
#: independent (the order stated in srf/__init__.py and CONTRIBUTING.md).
SRF_ROOMS = {"features": 1, "loss": 1, "single": 2, "spectral": 2, "optimal": 3, "grouped": 4}


def _module_name(path) -> tuple:
    rel = path.relative_to(PKG).parts
    return rel[:-1] if rel[-1] == "__init__.py" else rel[:-1] + (path.stem,)


MODULES = {_module_name(p): p for p in SOURCES}


def _edges(path):
    """(line, imported module) for every import of a module of the package in ``path``, at any depth (function-
    level imports included).  ``from P import name`` counts as an import of ``P.name`` when that is a module, else
    of ``P``; each package above the target that is not a package of ``path`` itself counts too (Python runs its
    ``__init__`` first)."""
    here = _module_name(path)
    pkg = list(here if path.name == "__init__.py" else here[:-1])
    for node in ast.walk(ast.parse(path.read_text())):
        targets = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = tuple(pkg[: len(pkg) - (node.level - 1)]) + (tuple(node.module.split(".")) if node.module else ())
            elif node.module and node.module.split(".")[0] == "onestep_theory":
                base = tuple(node.module.split(".")[1:])
            else:
                continue
            targets = [base + (a.name,) if base + (a.name,) in MODULES else base for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [tuple(a.name.split(".")[1:]) for a in node.names if a.name.split(".")[0] == "onestep_theory"]
        for t in dict.fromkeys(targets):
            for k in range(len(t) + 1):
                up = t[:k]
                if up in MODULES and up != here and (k == len(t) or here[:k] != up):
                    yield node.lineno, up


@functools.lru_cache(maxsize=1)
def _graph() -> dict:
    return {m: frozenset(t for _, t in _edges(p)) for m, p in MODULES.items()}


def _cycles(graph: dict) -> list:
    """Every strongly connected component with more than one module, or a module importing itself (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v), on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, ()):
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _cycle_path(graph: dict, comp: list) -> str:
    """One closed import path through a strongly connected component, for the message."""
    members, start = set(comp), comp[0]
    path, seen = [start], {start}
    while True:
        nxt = sorted(w for w in graph[path[-1]] if w in members)
        back = [w for w in nxt if w == start]
        if back and len(path) > 1 or path[-1] in graph[path[-1]]:
            return " -> ".join(".".join(m) or "onestep_theory" for m in path + [start])
        step = [w for w in nxt if w not in seen] or nxt
        path.append(step[0])
        seen.add(step[0])


def test_cycle_finder_is_not_vacuous():
    g = {("a",): {("b",)}, ("b",): {("c",)}, ("c",): {("a",)}, ("d",): {("a",)}, ("e",): {("e",)}}
    assert _cycles(g) == [[("a",), ("b",), ("c",)], [("e",)]]
    assert _cycle_path(g, [("a",), ("b",), ("c",)]) == "a -> b -> c -> a"
    # the graph sees function-level imports, module imports through ``from P import module`` and the packages
    # run first: the Hermite coefficients' old circle, and srf/grouped/kgroup's room
    graph = _graph()
    assert ("hermite", "expansion") in graph[("hermite", "activation")]
    assert ("srf", "grouped", "groupprior") in graph[("srf", "grouped", "kgroup")]
    assert ("srf", "single") in graph[("srf", "grouped", "kgroup")]
    assert ("srf",) not in graph[("srf", "grouped", "kgroup")]
    assert ("srf", "spectral", "spectrum") in graph[("cli", "srf")]     # an import inside a handler


def test_no_import_cycles_between_modules():
    graph = _graph()
    cycles = [_cycle_path(graph, comp) for comp in _cycles(graph)]
    assert not cycles, cycles


def test_no_room_is_crowded():
    counts = {}
    for path in SOURCES:
        if path.name != "__init__.py":
            folder = str(path.parent.relative_to(PKG))
            counts[folder] = counts.get(folder, 0) + 1
    over = {f: n for f, n in counts.items() if n > MAX_ROOM and f not in OVER_FOR_NOW}
    assert not over, f"folders over {MAX_ROOM} modules (make rooms): {over}"
    stale = [f for f in OVER_FOR_NOW if counts.get(f, 0) <= MAX_ROOM]
    assert not stale, f"no longer over {MAX_ROOM} modules, remove from OVER_FOR_NOW: {stale}"


def test_srf_rooms_import_one_way():
    """Every srf module sits in a room of SRF_ROOMS and imports only its own room and rooms of lower levels."""
    bad, loose = [], []
    for path in SOURCES:
        name = _module_name(path)
        if name[:1] != ("srf",) or name == ("srf",):
            continue
        room = name[1]
        if room not in SRF_ROOMS or len(name) > 3:
            loose.append(str(path.relative_to(ROOT)))
            continue
        for line, t in _edges(path):
            if t[0] == "srf" and len(t) > 1 and t[1] != room and not SRF_ROOMS.get(t[1], 99) < SRF_ROOMS[room]:
                bad.append(f"{path.relative_to(ROOT)}:{line} ({room}, level {SRF_ROOMS[room]}) imports "
                           f"{'.'.join(t)} (level {SRF_ROOMS.get(t[1], '?')})")
            if t == ("srf",):
                bad.append(f"{path.relative_to(ROOT)}:{line} imports the srf package from inside a room")
    assert not loose, f"srf modules outside a room of SRF_ROOMS: {loose}"
    assert not bad, bad


@pytest.mark.parametrize("room", sorted(SRF_ROOMS))
def test_every_srf_room_names_its_sections_and_public_names(room):
    """A room's __init__ docstring cites docs/theory and names each of its public names (its ``__all__``)."""
    tree = ast.parse((PKG / "srf" / room / "__init__.py").read_text())
    doc = ast.get_docstring(tree) or ""
    assert re.search(r"docs/theory/[a-z-]+\.md §\d", doc), room
    public = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                  and any(getattr(t, "id", None) == "__all__" for t in n.targets))
    assert public and not [n for n in public if f"``{n}``" not in doc], room


def _old_srf_paths(text: str) -> list:
    """Places naming an srf module without its room (``srf.kgroup``, ``..srf.kgroup``, ``onestep_theory.srf.kgroup``)."""
    stems = {p.stem for p in (PKG / "srf").glob("*/*.py") if p.stem != "__init__"}
    pattern = re.compile(r"(?<![\w])srf\.(" + "|".join(sorted(stems)) + r")\b")
    found = [f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}" for m in pattern.finditer(text)
             if not re.search(r"(simulate|cli|reproduce)\.$", text[:m.start()])]
    tree = ast.parse((PKG / "srf" / "__init__.py").read_text())
    public = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                  and any(getattr(t, "id", None) == "__all__" for t in n.targets))
    for m in re.finditer(r"from (?:onestep_theory\.|\.+)srf import (\([^)]*\)|[^\n]*)", text):
        names = re.findall(r"(\w+)(?:\s+as\s+\w+)?", m.group(1))
        found += [f"line {text.count(chr(10), 0, m.start()) + 1}: srf import {n}" for n in names
                  if n in stems and n not in public]
    return found


def test_no_old_srf_module_path_is_used():
    """The package, tests, scripts and docs use the rooms' paths; the old paths are for users, for one release."""
    assert _old_srf_paths("from ..srf.kgroup import x; onestep_theory.srf.taustar; srf.grouped.kgroup; "
                          "cli.srf.bounds\nsrf.bias\nfrom onestep_theory.srf import bounds, solvers") == [
        "line 1: srf.kgroup", "line 1: srf.taustar", "line 2: srf.bias", "line 3: srf import solvers"]
    files = [p for p in SOURCES if p != PKG / "srf" / "__init__.py"]
    for folder, pattern in (("tests", "*.py"), ("tests/data/precompute", "*.py"), ("benchmarks", "*.py"),
                            ("derivations", "*.py"), ("docs/theory", "*.md"), ("docs/studies", "*.md"),
                            ("docs/studies", "*.py")):
        files += [p for p in (ROOT / folder).glob(pattern) if p.resolve() != pathlib.Path(__file__).resolve()]
    found = {str(p.relative_to(ROOT)): hits for p in files + [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
             if p.is_file() and (hits := _old_srf_paths(p.read_text()))}
    assert not found, found


def test_old_srf_module_paths_import_for_one_release(monkeypatch):
    """``onestep_theory.srf.<module>`` of the flat srf/ imports the moved module itself, with a DeprecationWarning
    at the caller's line, and never hides a public name of the same spelling (``bounds``, ``spectrum``,
    ``readout``)."""
    import importlib
    import sys

    import onestep_theory
    import onestep_theory.srf as srf

    public = {n: getattr(srf, n) for n in srf.__all__}
    rooms = {p.stem: p.parent.name for p in (PKG / "srf").glob("*/*.py") if p.stem != "__init__"}
    new_since = {"batch", "trainedbulk", "gridsmooth", "zeroreadout", "grid"}  # modules added after issue 33: no flat path to keep
    assert srf.MOVED == {k: v for k, v in rooms.items() if k not in new_since}   # every older one had one
    rooms = srf.MOVED
    for old, room in rooms.items():
        monkeypatch.delitem(sys.modules, f"onestep_theory.srf.{old}", raising=False)
        new = f"onestep_theory.srf.{room}.{old}"
        with pytest.warns(DeprecationWarning, match=rf"onestep_theory\.srf\.{old} moved to {re.escape(new)}") as rec:
            mod = importlib.import_module(f"onestep_theory.srf.{old}")
        assert mod is importlib.import_module(new) and mod.__spec__.name == new and mod.__name__ == new
        assert rec[0].filename == __file__, rec[0].filename
    assert {n: getattr(srf, n) for n in srf.__all__} == public
    assert onestep_theory.bounds is public["bounds"] and callable(onestep_theory.spectrum)
    # the statement forms, and monkeypatching through the old name patches the one module
    monkeypatch.delitem(sys.modules, "onestep_theory.srf.kgroup")
    monkeypatch.delattr(srf, "kgroup", raising=False)
    with pytest.warns(DeprecationWarning, match="kgroup moved"):
        from onestep_theory.srf.kgroup import solve_kgroup
    from onestep_theory.srf.grouped import kgroup
    assert solve_kgroup is kgroup.solve_kgroup
    old_kgroup = sys.modules["onestep_theory.srf.kgroup"]
    monkeypatch.setattr(old_kgroup, "MAX_KGROUP_WORK", 1)
    assert kgroup.MAX_KGROUP_WORK == 1
    monkeypatch.delattr(srf, "taustar", raising=False)
    monkeypatch.delitem(sys.modules, "onestep_theory.srf.taustar")
    with pytest.warns(DeprecationWarning, match="taustar moved"):
        assert srf.taustar.tau_star is srf.optimal.tau_star
    with pytest.raises(AttributeError):
        srf.no_such_module
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("onestep_theory.srf.no_such_module")


# issue 34: precision set once at the boundary.  Every module of the package: every function computes at the ambient
# precision (core.precision) and takes no precision argument, except the public boundaries listed (each sets the
# working precision once with core.precision.precision, or passes the digits asked on to one), the mechanism's own
# helpers (PRECISION_HELPERS) and the records of the digits asked (PRECISION_RECORDS); a module not listed has no
# boundary.  GUARD_DIGITS lives in core.precision.
PRECISION_BOUNDARIES = {
    "hermite/activation.py": {"coeff", "coeffs_mp", "mean", "raw_mean", "second_moment", "c_gt1", "c_star",
                              "deriv_second_moment", "coeffs"},
    "hermite/coefficients.py": {"he_coeffs"},
    "hermite/expansion.py": {"expansion"},
    "hermite/gauss.py": {"expect_numeric"},
    "hermite/moments.py": {"he_expect"},
    "spikes/gains.py": {"gains"},
    "spikes/resolvent.py": {"resolvent", "resolvent_from_constants"},
    "spikes/symbolic.py": set(), "spikes/lambda_symbolic.py": set(), "spikes/windows.py": set(),
    "core/caches.py": set(),
    # the srf layer below srf_solve / srf_groups / the mapping (the boundaries: _problem is srf_solve's validation
    # step, kgroup_work / check_kgroup_work bound the work of the digits asked before it starts; nstr is a formatter)
    "core/exact.py": {"nstr", "check_dps"},
    "hermite/quadrature.py": set(),
    "srf/features/mapping.py": {"srf_params", "srf_params_checked", "resolve_rcg", "row_norm_params"},
    "srf/features/kappa.py": set(), "srf/features/cge.py": {"cge_coeffs", "cge_values"},
    "srf/features/smoothing.py": {"smooth"},
    "srf/single/solve.py": {"srf_solve", "_problem"}, "srf/single/solvers.py": set(), "srf/single/saddle.py": set(),
    "srf/single/channel.py": set(), "srf/single/priors.py": set(), "srf/single/solution.py": set(),
    **{f"srf/grouped/{m}.py": set() for m in ("finitew", "groupbounds", "groupchannel", "groupprior",
                                                "groupspectrum", "readout")},
    "srf/grouped/groups.py": {"srf_groups"}, "srf/grouped/kgroup.py": {"kgroup_work", "check_kgroup_work"},
    # the spectrum, the bounds and tau* below their public entries; the quantities' registry.  Listed besides the
    # public boundaries: the private steps that pass the digits asked on to a public boundary or report them
    # (bounds._result: the digits reached against those asked; registry._evaluate, check._one/_verdict: the digits
    # compared, passed to evaluate/formula_value and printed in the verdict).  core.search.certified_argmin is no
    # boundary: its callers set the precision, it and its callbacks take an mp flag (float64 or the ambient)
    "srf/spectral/spectrum.py": {"stieltjes", "stieltjes_checked", "spectrum"}, "srf/spectral/realaxis.py": set(),
    "srf/spectral/realdensity.py": {"density_real"},
    "srf/optimal/boundrule.py": {"refined_bounds"}, "srf/optimal/bias.py": set(),
    "srf/optimal/taustar.py": {"tau_of_kappa", "tau_star"},
    "srf/optimal/optimize.py": {"eta_optimum", "eta_of_kappa"}, "core/search.py": set(),
    "srf/optimal/bounds.py": {"best_linear_checked", "bounds", "_result"},
    "quantities/registry.py": {"constants", "evaluate", "formula_value", "_evaluate"},
    "quantities/pointwise.py": {"sides"}, "quantities/check.py": {"check", "_one", "_verdict"},
    "cli/hermite.py": set(),
    # public entries that pass the digits asked on to the boundaries above (srf_batch to srf_solve; sweep to
    # evaluate/formula_value; check_paper to check)
    "srf/single/batch.py": {"srf_batch"}, "quantities/sweep.py": {"sweep"},
    "quantities/latex/paperreport.py": {"check_paper"},
}
#: The precision mechanism itself, core.precision: the helpers that take the digits asked and set the working
#: precision (workdps; precision and boundary_digits, the boundary's, with the validation _asked) or turn them into
#: a result's target (Target.of).  Allowed by what they are, not as exceptions.
PRECISION_HELPERS = {"core/precision.py": {"workdps", "_asked", "precision", "boundary_digits", "of"}}
#: Functions whose ``dps`` is the digits asked written into a result, not a precision (they set none and compute
#: nothing at it): core.results.provenance's ``"dps"`` entry.
PRECISION_RECORDS = {"core/results.py": {"provenance"}}
PRECISION_ARGS = {"dps", "digits", "wd", "prec", "workdps", "target_dps", "hi_dps"}
#: Functions whose ``digits`` is a quadrature rule's accuracy target (what the rule is built for: 16 in float64, the
#: digits asked + 2 at a boundary's precision), not a precision: they may take ``digits`` and no other of the above.
#: (Their private steps and helpers call it ``accuracy``; the public keywords stay.)
ACCURACY_TARGETS = {
    "hermite/quadrature.py": {"normal_rule"},
    "srf/features/kappa.py": {"srf_setup", "group_setup"},
    "srf/features/cge.py": {"cge_arb", "cge_curvature", "cge_coeffs"}, "srf/features/smoothing.py": {"smooth_arb"},
}


def test_precision_is_set_once_at_the_boundary():
    """No function of any module takes a precision argument (PRECISION_ARGS) unless listed: a public boundary, a
    helper of core.precision, a record of the digits asked; every name listed exists and takes what it is listed
    for (a stale entry fails)."""
    bad, listed = [], {}
    for table in (PRECISION_BOUNDARIES, PRECISION_HELPERS, PRECISION_RECORDS, ACCURACY_TARGETS):
        for rel, names in table.items():
            listed.setdefault(rel, set()).update(names)
    for p in SOURCES:
        rel = str(p.relative_to(PKG))
        allowed = set().union(*(t.get(rel, set()) for t in (PRECISION_BOUNDARIES, PRECISION_HELPERS,
                                                              PRECISION_RECORDS)))
        tree = ast.parse(p.read_text())
        defined = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        bad += [f"{rel}: {n} listed, not defined" for n in sorted(listed.pop(rel, set()) - defined)]
        for node in ast.walk(tree):
            a = getattr(node, "args", None)
            takes = {v.arg for v in a.posonlyargs + a.args + a.kwonlyargs} if isinstance(a, ast.arguments) else set()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                    node.name in allowed and not takes & PRECISION_ARGS
                    or node.name in ACCURACY_TARGETS.get(rel, ()) and "digits" not in takes):
                bad.append(f"{rel}:{node.lineno} {node.name} listed, takes no such argument")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name not in allowed:
                names = takes & PRECISION_ARGS
                if node.name in ACCURACY_TARGETS.get(rel, ()):
                    names.discard("digits")
                if names:
                    bad.append(f"{rel}:{node.lineno} {node.name}({', '.join(sorted(names))})")
    bad += [f"{rel}: listed, no such module" for rel in sorted(listed)]
    assert not bad, "a precision argument below the boundary (read mpmath.mp.dps via core.precision): " + str(bad)
    guard = [f"{p.relative_to(PKG)}:{n.lineno}" for p in SOURCES if str(p.relative_to(PKG)) != "core/precision.py"
             for n in ast.walk(ast.parse(p.read_text())) if (isinstance(n, ast.Name) and n.id == "GUARD_DIGITS")
             or (isinstance(n, ast.Attribute) and n.attr == "GUARD_DIGITS")]
    assert not guard, f"GUARD_DIGITS outside core.precision's helpers: {guard}"


def _precision_operand(node, rule: bool) -> bool:
    """A name of PRECISION_ARGS, or an attribute so named (mp.dps, args.dps), or the ambient precision read
    (``asked_digits()``, ``working_digits()``, ``boundary_digits(...)``); ``digits`` not inside a function of
    ACCURACY_TARGETS (``rule``), where it is a quadrature rule's accuracy."""
    if isinstance(node, ast.Call):
        node = node.func
        return (node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)) in {
            "asked_digits", "working_digits", "boundary_digits"}
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return name in PRECISION_ARGS and not (rule and name == "digits")


def test_no_dps_plus_k_without_its_derivation():
    """Issue 34 item 3: no ``dps ± k`` outside core.precision (its boundary and refinement helpers) unless a ``# k:``
    comment on its line or the line above derives k.  A working-precision raise is ``refined(k, why=...)``; a
    tolerance or a digit count that is not a precision is core.precision's ``tolerance``/``ulps``/``past_asked``."""
    bad = []
    for p in SOURCES:
        rel = str(p.relative_to(PKG))
        if rel == "core/precision.py":
            continue
        text = p.read_text()
        if not re.search(r"\b(" + "|".join(PRECISION_ARGS) + r"|asked_digits|working_digits|boundary_digits)\b", text):
            continue
        lines, tree = text.splitlines(), ast.parse(text)
        rule = {id(m) for f in ast.walk(tree) if rel in ACCURACY_TARGETS and isinstance(f, ast.FunctionDef)
                and f.name in ACCURACY_TARGETS[rel] for m in ast.walk(f)}
        for n in ast.walk(tree):
            if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub)) and any(
                    _precision_operand(o, id(n) in rule) for o in (n.left, n.right)):
                if not any("# k:" in ln for ln in lines[max(0, n.lineno - 2):n.lineno]):
                    bad.append(f"{rel}:{n.lineno} {ast.unparse(n)}")
    assert not bad, "dps ± k without a '# k:' comment deriving k (use core.precision's refined/tolerance/ulps): " \
        + str(bad)
