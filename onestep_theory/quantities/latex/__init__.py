r"""Formulas and papers as printed: the LaTeX reader of ``check --latex`` and ``check-paper``
(docs/theory/checking.md §7, §7.5, §8).

Imports go one way inside the room: ``texlex`` (tokens) → ``texnames`` (names) → ``textables`` (what each paper's
names mean) → ``texread`` (one side read) → ``equation`` (a display split into equations, chains, relations) →
``tex`` (the public readers) → ``paperlex`` → ``paper`` (a TeX document's displayed equations) → ``paperreport``
(``check_paper`` and its reports, which calls :func:`onestep_theory.quantities.check.check`).

=================  =====================================================================================
module             what
=================  =====================================================================================
``tex``            :func:`read_latex`, :func:`read_equations`, :func:`equation_target`
``textables``      the symbol tables of the conventions ``moniri23 cui24 dandi24 ba22``
``paper``          :func:`read_paper`: the displayed equations of a document (never runs TeX)
``paperreport``    :func:`check_paper`: every display checked, one report (Markdown, HTML, JSON)
=================  =====================================================================================
"""

from .tex import TexEquation, TexFormula, TexSide, equation_target, read_equations, read_latex

__all__ = ["TexEquation", "TexFormula", "TexSide", "equation_target", "read_equations", "read_latex"]
