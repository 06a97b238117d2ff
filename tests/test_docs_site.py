"""The documentation site: ``sphinx-build -W -n`` passes, and the built HTML has the structure it promises.

Builds docs/ (conf.py, the API pages generated from every package's ``__all__``, the executed notebook) into a
temporary directory with warnings as errors and nitpicky references, then reads the HTML back:

* every public name (each package's ``__all__``, walked here independently of the docs' own generator) is listed
  on its package's page, linking to an anchor whose id, imported, is the very same object;
* no broken internal link: every relative ``href`` of every page names an existing file, and its ``#fragment``
  an existing ``id`` in it;
* the theory pages carry their math (MathJax loaded, ``\\(…\\)`` and ``\\[…\\]`` spans) and the citations link both
  ways (srf_solve's page to srf-theory.md §4, the theory page to srf_solve);
* the landing page is the README's quick start, and the worked notebook ran (its figure is in the page).
"""

import html.parser
import importlib
import inspect
import pathlib
import pkgutil
import re
import subprocess
import sys
import urllib.parse

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


class _Page(html.parser.HTMLParser):
    """The hrefs, ids, script sources and math spans of one page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.hrefs, self.ids, self.scripts, self.math = [], set(), [], []
        self._math_depth = 0
        self._text = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        if tag == "a" and a.get("href") is not None:
            self.hrefs.append(a["href"])
        if tag == "script" and a.get("src"):
            self.scripts.append(a["src"])
        if "math" in (a.get("class") or "").split() and tag in ("span", "div"):
            self._math_depth += 1
            self._text = []

    def handle_endtag(self, tag):
        if self._math_depth and tag in ("span", "div"):
            self._math_depth -= 1
            if not self._math_depth:
                self.math.append("".join(self._text).strip())

    def handle_data(self, data):
        if self._math_depth:
            self._text.append(data)


def _parse(path):
    p = _Page()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def _public_packages():
    root = importlib.import_module("onestep_theory")
    names = ["onestep_theory"] + [m.name for m in pkgutil.walk_packages(root.__path__, "onestep_theory.")
                                  if m.ispkg]
    return [n for n in names if getattr(importlib.import_module(n), "__all__", None)]


_NOTHING = object()


def _resolve(dotted):
    """The object the dotted path names, attribute first as ``from package import name`` reads it (the function
    ``onestep_theory.spikes.gains``, not the module of the same name), or _NOTHING."""
    parts = dotted.split(".")
    try:
        obj = importlib.import_module(parts[0])
    except ImportError:
        return _NOTHING
    for i, part in enumerate(parts[1:], start=1):
        nxt = getattr(obj, part, _NOTHING)
        if nxt is _NOTHING and inspect.ismodule(obj):
            try:
                nxt = importlib.import_module(".".join(parts[:i + 1]))
            except ImportError:
                return _NOTHING
        if nxt is _NOTHING:
            return _NOTHING
        obj = nxt
    return obj


def _build(out):
    cmd = [sys.executable, "-m", "sphinx", "-W", "-n", "--keep-going", "-q", "-b", "html",
           "-d", str(out / "doctrees"), str(DOCS), str(out / "html")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert proc.returncode == 0, f"sphinx-build -W -n failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    return out / "html"


@pytest.mark.slow
def test_docs_site(tmp_path):
    """One build (about a minute: one test, so that pytest-xdist does not build it on both workers), then every
    check below on it; all of them run, and the failures are reported together."""
    for mod in ("sphinx", "myst_nb", "furo", "ipykernel"):
        pytest.importorskip(mod, reason=f"the docs extra is not installed ({mod}): pip install -e '.[docs]'")
    site = _build(tmp_path)
    failures = []
    for check in (_every_public_name_has_a_page, _no_broken_internal_link, _theory_math_and_cross_references,
                  _landing_page_and_executed_notebook):
        try:
            check(site)
        except AssertionError as exc:
            failures.append(f"{check.__name__}: {exc}")
    assert not failures, "\n".join(failures)


def _every_public_name_has_a_page(site):
    missing = []
    for pkg in _public_packages():
        page = site / "api" / "generated" / f"{pkg}.html"
        assert page.exists(), f"no page for package {pkg}"
        links = {}
        for href in _parse(page).hrefs:
            target, _, frag = href.partition("#")
            if frag:
                links.setdefault(frag.rpartition(".")[2], []).append((target, frag))
        mod = importlib.import_module(pkg)
        for name in mod.__all__:
            obj = getattr(mod, name)
            ok = False
            for target, frag in links.get(name, []):
                dest = (page.parent / target).resolve() if target else page
                if dest.exists() and frag in _parse(dest).ids and _resolve(frag) is obj:
                    ok = True
                    break
            if not ok:
                missing.append(f"{pkg}.{name}")
    assert not missing, f"public names without a page: {missing}"


def _no_broken_internal_link(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 100, len(pages)
    parsed = {p: _parse(p) for p in pages}
    broken = []
    for page, info in parsed.items():
        for href in info.hrefs:
            url = urllib.parse.urlsplit(href)
            if url.scheme or href.startswith("//"):
                continue
            dest = (page.parent / urllib.parse.unquote(url.path)).resolve() if url.path else page
            if dest.is_dir():
                dest = dest / "index.html"
            if not dest.exists():
                broken.append(f"{page.relative_to(site)}: {href}")
            elif url.fragment and dest.suffix == ".html":
                ids = parsed[dest].ids if dest in parsed else _parse(dest).ids
                if urllib.parse.unquote(url.fragment) not in ids:
                    broken.append(f"{page.relative_to(site)}: {href}")
    assert not broken, f"{len(broken)} broken internal links, e.g. {broken[:10]}"


def _theory_math_and_cross_references(site):
    theory = site / "theory" / "srf-theory.html"
    info = _parse(theory)
    assert any("mathjax" in s.lower() for s in info.scripts), info.scripts
    inline = [m for m in info.math if m.startswith("\\(")]
    display = [m for m in info.math if m.startswith("\\[") or "begin{" in m]
    assert len(inline) > 200 and len(display) > 20, (len(inline), len(display))
    body = theory.read_text(encoding="utf-8").split("<body")[1]
    text = re.sub(r"<(script|style|pre|code)\b.*?</\1>", " ", body, flags=re.S)      # the page's prose only
    text = re.sub(r"<[^>]+>", " ", text).replace("\\$", "")
    raw = re.search(r"(?<![\\\w])\$[^$\s][^$]*\$", text)
    assert not raw, f"raw $...$ math left in the page: {raw.group(0)[:80]}"
    for page in ("hermite", "spike-theory", "numerics", "checking"):
        assert _parse(site / "theory" / f"{page}.html").math, page
    # code -> theory: srf_solve's page links to the section of srf-theory.md its docstring cites (§4)
    solve = next(site.glob("api/generated/objects/onestep_theory.srf*.srf_solve.html"))
    sec4 = [h for h in _parse(solve).hrefs if h.split("#")[0].endswith("theory/srf-theory.html") and "#" in h]
    assert sec4, "srf_solve's page does not link to srf-theory.md"
    assert any(h.split("#")[1] in info.ids and "4" in h.split("#")[1] for h in sec4), sec4
    heading = re.search(r'id="srf-theory-s4"[^>]*>|<section id="([^"]*)">\s*<span id="srf-theory-s4"',
                        theory.read_text(encoding="utf-8"))
    assert heading, "no label on srf-theory.md §4"
    # theory -> code: the page lists the functions citing it, srf_solve among them
    text = theory.read_text(encoding="utf-8")
    tail = text[text.index("Functions and classes citing this page"):]
    assert re.search(r'href="[^"]*srf_solve\.html#onestep_theory\.srf[\w.]*\.srf_solve"', tail)


def _landing_page_and_executed_notebook(site):
    index = (site / "index.html").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "Quick start" in index and "Quick start" in readme
    assert 'href="api/index.html"' in index and 'href="theory/srf-theory.html"' in index
    nb = site / "examples" / "checking.html"
    page = nb.read_text(encoding="utf-8")
    assert "Traceback" not in page and "output traceback" not in page
    imgs = re.findall(r'<img[^>]+src="([^"]+\.png)"', page)
    assert imgs and all((nb.parent / s).exists() for s in imgs), imgs
    assert "differs" in page                           # the check's verdict printed by the executed cell
