"""House rules, checked: citations resolve into docs/theory, imports go one way and never reach private
names of another module, no module does two jobs by size, and theory modules draw no random numbers."""

import ast
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


def test_every_module_cites_its_theory():
    """Each module of the theory and simulation layers names the section of docs/theory it implements."""
    missing = []
    for path in SOURCES:
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        if path.parts[-2] in ("hermite", "spikes", "srf", "simulate", "reproduce") and "docs/theory/" not in doc:
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
    offenders = [str(p.relative_to(ROOT)) for p in SOURCES if p.parts[-2] in ("core", "hermite", "spikes", "srf")
                 and pattern.search(p.read_text())]
    assert not offenders, offenders
