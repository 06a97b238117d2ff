"""Sphinx configuration of the onestep_theory documentation site.

Build: ``sphinx-build -W -n -b html docs docs/_build/html`` (the ``docs`` extra: ``pip install -e ".[docs]"``).
The API reference is generated at build time from the packages' ``__all__`` by ``_ext/onestep_docs.py``
(into ``api/generated/``, not kept in git), which also links the docstrings' citations of ``docs/theory/*.md §N``
to the sections and lists, at the end of each theory page, the functions citing it.
"""

import os
import pathlib
import sys

DOCS = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

import onestep_theory  # noqa: E402

project = "onestep_theory"
author = "the onestep_theory developers"
copyright = "the onestep_theory developers"     # noqa: A001 - Sphinx's name
release = version = onestep_theory.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "myst_nb",                                   # MyST Markdown (myst-parser) and executed notebooks
    "onestep_docs",
]

# the Markdown pages as they are: $...$ and $$...$$ math, \begin{align} environments, section anchors
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3
myst_dmath_double_inline = True                  # $$...$$ inside a paragraph is display math (as on GitHub)
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = [
    "_build", "_ext", "**.ipynb_checkpoints",
    "studies/*_template.md", "studies/*/*_template.md",   # templates that make_page.py / make_*.py fill in
]

# the worked notebook runs at every build (it takes about a minute); an error in a cell fails the build
nb_execution_mode = "force"
nb_execution_timeout = 600
nb_execution_raise_on_error = True
nb_execution_show_tb = True

# API reference: autodoc + napoleon over the docstrings (free prose with math, reST roles, doctests)
autosummary_generate = False                     # the pages are written by _ext/onestep_docs.py from __all__
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True
autodoc_inherit_docstrings = False
napoleon_google_docstring = True
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_param = False                       # types are prose ("exact numbers", "7-tuple"): shown, not linked

# nitpicky (-n): every reference inside the package must resolve. Types of other libraries in signatures are
# not checked: their inventories (intersphinx) are on the network, which builds (CI included) do not reach.
nitpick_ignore_regex = [
    ("py:.*", r"(numpy|np|mpmath|mp|sympy|sp|scipy|pandas|pd|matplotlib|dask|distributed|flint|gmpy2"
              r"|collections|typing|types|pathlib|sqlite3|argparse|concurrent|fractions|decimal|numbers"
              r"|contextlib|io|os|json|enum|dataclasses)(\..*)?"),
    ("py:class", r"(mpf|mpc|ndarray|Expr|Basic|Symbol|Rational|Integer|Float|Path|Fraction|Callable|Iterable"
                 r"|Iterator|Sequence|Mapping|Generator|ArrayLike|NDArray|DataFrame|Figure|Axes|Namespace"
                 r"|ArgumentParser|Connection|Client|Future|Matrix|MutableDenseMatrix|ImmutableDenseMatrix"
                 r"|Lambda|Function|Poly|Piecewise|Relational|Eq|fmpz|fmpq|arb|acb)"),
]

html_theme = "furo"
html_title = f"onestep_theory {release}"
html_static_path = []

# The notebook's rich outputs (the results' _repr_html_) write math as $...$, as Jupyter renders it; the pages' own
# math comes out of MyST as \(...\) and \[...\]. MathJax reads both (code and pre blocks are never read).
_MATHJAX = {"tex": {"inlineMath": [["$", "$"], ["\\(", "\\)"]], "displayMath": [["$$", "$$"], ["\\[", "\\]"]],
                    "processEscapes": True}}
mathjax3_config = mathjax4_config = _MATHJAX       # Sphinx 7-8 load MathJax 3, Sphinx 9 MathJax 4
# MyST has MathJax read only its math elements in a Markdown page; a notebook's HTML outputs are read too
myst_mathjax_classes = "tex2jax_process|mathjax_process|math|output_area|text_html"

# MathJax comes from its CDN (version 4, Sphinx's default). To read the site offline, point ONESTEP_DOCS_MATHJAX at a local copy of MathJax 3's
# es5/ directory (e.g. from `npm pack mathjax@3`): it is copied into _static/ and loaded from there.
if os.environ.get("ONESTEP_DOCS_MATHJAX"):
    _mj = pathlib.Path(os.environ["ONESTEP_DOCS_MATHJAX"]).resolve()
    if not (_mj / "tex-mml-chtml.js").is_file():
        raise ValueError(f"ONESTEP_DOCS_MATHJAX: no tex-mml-chtml.js in {_mj}")
    html_static_path.append(str(_mj.parent))
    mathjax_path = f"{_mj.name}/tex-mml-chtml.js"
    mathjax4_config, mathjax3_config = None, _MATHJAX
