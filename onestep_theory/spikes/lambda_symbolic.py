r"""Exact closed forms of the test-error gains :math:`\Lambda_\ell` (corrected form) [MLHD23].

The numeric definition is the one of :func:`onestep_theory.spikes.gains.lambda_matrix`
(docs/theory/spike-theory.md §8.5, reducing to the boxed §8.4 for ℓ = 1, 2):

.. math::
    \hat c=M^{-1}s,\quad M=\Xi W\Xi^\top,\ s=\Xi Wh\ (§7.3),\qquad
    \Lambda_\ell=2\hat c^\top\Xi Vh-\hat c^\top\Xi V\Xi^\top\hat c,

with :math:`w_1=\tau_2`, :math:`w_k=k!\tau_1`, :math:`v_1=q_{\rm lin}`, :math:`v_k=k!q_{\rm nl}` and
:math:`q_{\rm lin}=\frac\phi\psi\frac{-\partial_\lambda m_2}{m_1^2}`,
:math:`q_{\rm nl}=\frac\phi\psi\frac{-\partial_\lambda m_1}{m_1^2}` (§8.1). Writing :math:`t=m_2/m_1`, :math:`W=\tau_1D(t)` with :math:`D(t)=\mathrm{diag}(k!,\ t\text{ at }k=1)`, so
:math:`\hat c=C(t)h` with :math:`C(t)=(\Xi D\Xi^\top)^{-1}\Xi D` exact over :math:`\mathbb Q(t)`, and :math:`V` is
linear in :math:`(q_{\rm lin},q_{\rm nl})`. Hence

.. math::
    \Lambda_\ell=\frac\phi\psi\frac1{m_1^2}\,h^\top\big[(-\partial_\lambda m_1)Q_0(t)+(-\partial_\lambda m_2)Q_1(t)\big]h,
    \qquad Q_j=2C^\top\Xi V_j-C^\top\Xi V_j\Xi^\top C,

:math:`V_0=\mathrm{diag}(k!\text{ for }k\ne1,\ 0)`, :math:`V_1=e_1e_1^\top`, and :math:`h_k=c_{\star,k}\rho^k`,
:math:`\rho=c_{\star,1}/b`, :math:`b^2=c_{\star,1}^2+\phi(c_\star^2+\sigma_\varepsilon^2)` (§4). The build is exact for
any ℓ ≤ ``MAX_ELL`` and any set of dropped spike rows (absent spikes, §7.5).

Structure (derived; checked by ``tests/test_lambda_symbolic.py``): while row 1 (the spike :math:`u`) is kept, the
fitted projection :math:`\Xi^\top C(t)` does not depend on :math:`t` (degree 1 is orthogonal to the rest in every
diagonal metric), so :math:`\Delta_\ell=\lambda[\tau_2E_{\rm lin}+\tau_1E_{{\rm nl},\ell}]` and
:math:`\Lambda_\ell=q_{\rm lin}E_{\rm lin}+q_{{\rm nl}}E_{{\rm nl},\ell}` with the same energies, i.e.
:math:`\Lambda_\ell=-\tau_1^{-2}\,\partial_\lambda(\Delta_\ell/\lambda)` at fixed teacher; in particular
:math:`\Lambda_\ell\ge0` and :math:`\Lambda_\ell-\Lambda_1=\frac{q_{\rm nl}}{\lambda\tau_1}(\Delta_\ell-\Delta_1)`.

References
----------
docs/theory/spike-theory.md §8.1 (q_lin, q_nl), §8.4 (corrected ℓ = 1, 2), §8.5 (general ℓ), §7.3 (ĉ),
§7.5 (absent spikes); [MLHD23] arXiv:2310.07891 (the test-error gain for ℓ = 1, 2).
"""

from __future__ import annotations

import math

import sympy as sp

from ..core.caches import cached
from ..core.errors import InvalidParameterError
from ..hermite.polynomials import he_xi
from .symbolic import CSTAR2, M1, M2, MAX_ELL, PHI, PSI, S2, cstar_symbols, spike_rows

__all__ = ["DM1", "DM2", "lambda_symbolic", "lambda_latex", "lambda_closed_forms"]

#: :math:`\partial_\lambda m_1`, :math:`\partial_\lambda m_2` (both negative, docs/theory/spike-theory.md §6.4); the
#: names match the fields ``dm1_dlam``, ``dm2_dlam`` of :class:`~onestep_theory.spikes.resolvent.Resolvent`.
DM1, DM2 = sp.symbols("dm1_dlam dm2_dlam", negative=True)


def _check(ell, drop) -> tuple:
    if isinstance(ell, bool) or not isinstance(ell, int) or not 1 <= ell <= MAX_ELL:
        raise InvalidParameterError("ell", ell, f"an integer in [1, {MAX_ELL}]")
    try:
        out = tuple(sorted(set(drop)))
    except TypeError:
        raise InvalidParameterError("drop", drop, f"a collection of spike degrees in [1, {ell}]") from None
    if any(isinstance(i, bool) or not isinstance(i, int) or not 1 <= i <= ell for i in out):
        raise InvalidParameterError("drop", drop, f"a collection of spike degrees in [1, {ell}]")
    return out


def lambda_symbolic(ell: int, drop=(), *, centered_teacher: bool = True) -> sp.Expr:
    r"""Exact closed form of the corrected test-error gain :math:`\Lambda_\ell` (docs/theory/spike-theory.md §8.5,
    §8.4 for ℓ = 1, 2), in the symbols of :func:`~onestep_theory.spikes.symbolic.delta_symbolic`: ``m1, m2``,
    :data:`DM1`, :data:`DM2` (``dm1_dlam``, ``dm2_dlam``), ``phi, psi``, :math:`c_{\star,0..\ell}` (``c_star_k``),
    ``c_star2`` and ``sigma_eps2``, with :math:`b` and :math:`\rho` substituted. :math:`\lambda` enters only through
    :math:`m_i` and :math:`\partial_\lambda m_i`.

    Parameters
    ----------
    ell : int
        Number of spikes, 1..``MAX_ELL``.
    drop : collection of int
        Spike rows to delete (``absent_spikes="drop"``, §7.5); empty is the ``formal`` form.
    centered_teacher : bool
        Omit the :math:`c_{\star,0}` terms (default, as ``delta_symbolic``); ``False`` keeps them, which matches
        ``gains(..., allow_uncentered=True)`` (there ``c_star2`` stands for :math:`\mathbb E\sigma_\star^2`, as in
        its :math:`b^2`).

    Substituting the resolvent values and the teacher's coefficients gives ``gains(...).lambda_test[ell-1]``.
    The build is cached by its (normalized) arguments.

    >>> cs = cstar_symbols(2)
    >>> b2 = cs[1]**2 + PHI*(CSTAR2 + S2)
    >>> l1 = PHI/PSI*cs[1]**4/b2*(-DM2)/M1**2                        # §8.4, boxed
    >>> sp.simplify(lambda_symbolic(1) - l1)
    0
    >>> sp.simplify(lambda_symbolic(2) - l1 - PHI/PSI*4*cs[1]**4*cs[2]**2/(3*b2**2)*(-DM1)/M1**2)
    0
    >>> lambda_symbolic(3, drop=[2, 3]) == lambda_symbolic(1)
    True
    """
    return _build(ell, _check(ell, drop), bool(centered_teacher))


@cached(maxsize=64)
def _build(ell: int, drop: tuple, centered_teacher: bool) -> sp.Expr:
    rows = spike_rows(ell, drop)
    if not rows:                     # every spike dropped: no learned direction, no gain
        return sp.Integer(0)
    from sympy.polys.matrices import DomainMatrix

    t = sp.Symbol("t", positive=True)
    n = ell + 1
    Xi = sp.Matrix([[he_xi(i, k) for k in range(n)] for i in rows])
    D = sp.diag(*[t if k == 1 else math.factorial(k) for k in range(n)])
    XD = DomainMatrix.from_Matrix(Xi * D).to_field()
    C = DomainMatrix.from_Matrix(Xi * D * Xi.T).to_field().lu_solve(XD).to_Matrix()   # c_hat = C h
    Q = []
    for Vj in (sp.diag(*[0 if k == 1 else math.factorial(k) for k in range(n)]),
               sp.diag(*[1 if k == 1 else 0 for k in range(n)])):
        XV = Xi * Vj
        Q.append(2 * C.T * XV - C.T * XV * Xi.T * C)
    cs = cstar_symbols(ell)
    b2 = cs[1] ** 2 + PHI * (CSTAR2 + S2)
    terms = []
    for p in range(n):
        for q in range(p, n):
            if (p == 0 or q == 0) and centered_teacher:
                continue
            q0, q1 = (Qj[p, q] + Qj[q, p] if p != q else Qj[p, p] for Qj in Q)
            pq = sp.factor(sp.cancel((-DM1 * q0 - DM2 * q1).subs(t, M2 / M1)))
            if pq != 0:
                terms.append(cs[p] * cs[q] * cs[1] ** (p + q) * b2 ** sp.Rational(-(p + q), 2) * pq)
    return PHI / (PSI * M1**2) * sp.Add(*terms)


def lambda_latex(expr: sp.Expr) -> str:
    r"""LaTeX in the notation of docs/theory/spike-theory.md §8.4: :math:`m_i`, :math:`\partial_\lambda m_i`,
    :math:`c_{\star,k}`, :math:`c_\star^2`, :math:`\sigma_\varepsilon^2`.

    >>> s = lambda_latex(lambda_symbolic(1))
    >>> all(k in s for k in (r"\partial_\lambda m_2", r"c_{\star,1}^{4}", r"m_1^{2}", r"\sigma_\varepsilon^2"))
    True
    """
    names = {M1: "m_1", M2: "m_2", DM1: r"\partial_\lambda m_1", DM2: r"\partial_\lambda m_2",
             CSTAR2: r"c_\star^2", S2: r"\sigma_\varepsilon^2"}
    names.update({c: rf"c_{{\star,{k}}}" for k, c in enumerate(cstar_symbols(MAX_ELL))})
    return sp.latex(expr, symbol_names=names)


def lambda_closed_forms(ell: int, dropped=(), *, centered_teacher: bool = True) -> dict:
    """``{"lambda_k": {"sympy": ..., "latex": ...}}`` for k = 1..ell, each dropping the rows of ``dropped`` that are
    ≤ k, as ``gains`` does (docs/theory/spike-theory.md §7.5); the shape of ``Gains.symbolic``.

    >>> sorted(lambda_closed_forms(2))
    ['lambda_1', 'lambda_2']
    """
    dropped = _check(ell, dropped)
    out = {}
    for k in range(1, ell + 1):
        e = lambda_symbolic(k, tuple(i for i in dropped if i <= k), centered_teacher=centered_teacher)
        out[f"lambda_{k}"] = {"sympy": str(e), "latex": lambda_latex(e)}
    return out
