r"""Symbolic building blocks of the spike theory [MLHD23]: :math:`\Omega^{-1}`, :math:`r_p`, the printed
:math:`\Delta_\ell` and its exact closed form.

Everything is built in SymPy from the exact :math:`\xi_{p,i}` for any ℓ, in the symbols
:math:`(m_1,m_2,\phi,\psi,\lambda,b,\rho)`, :math:`c_{\star,k}`, :math:`c_\star^2`, :math:`\sigma_\varepsilon^2`.

References
----------
docs/theory/spike-theory.md §7.2 (printed form, indices resolved), §7.3 (matrix form);
[MLHD23] arXiv:2310.07891, Theorem 3.4.
"""

from __future__ import annotations

import math

import mpmath
import sympy as sp

from ..core.caches import cached
from ..core.errors import InvalidParameterError
from ..hermite.polynomials import he_xi

__all__ = ["M1", "M2", "PHI", "PSI", "LAM", "B", "RHO", "CSTAR2", "S2", "MAX_ELL", "cstar_symbols", "spike_rows",
           "omega_inv_symbolic", "r_symbolic", "delta_printed", "delta_symbolic", "latex"]

MAX_ELL = 8  # M is ill-conditioned in the monomial basis beyond (docs/theory/spike-theory.md §7.3)

M1, M2, PHI, PSI, LAM, B, RHO = sp.symbols("m1 m2 phi psi lambda b rho", positive=True)
CSTAR2, S2 = sp.symbols("c_star2 sigma_eps2", nonnegative=True)


def cstar_symbols(ell: int) -> tuple:
    """Symbols :math:`c_{\\star,0},\\dots,c_{\\star,\\ell}` of the teacher's Hermite coefficients."""
    return sp.symbols(f"c_star_0:{ell + 1}", real=True)


def spike_rows(ell: int, drop=()) -> list:
    """Degrees ``1..ell`` of the spikes, minus the dropped ones (teacher coefficients that vanish, §7.5)."""
    rows = [i for i in range(1, ell + 1) if i not in set(drop)]
    return rows


@cached(maxsize=None)
def omega_inv_symbolic(ell: int, drop: tuple = ()) -> sp.Matrix:
    r""":math:`[\Omega^{-1}]_{ij}=b^{i+j}\frac\psi\phi\big[m_2\xi_{i,1}\xi_{j,1}+m_1\sum_{k\ne1}^{\min(i,j)}k!\xi_{i,k}\xi_{j,k}\big]`
    (docs/theory/spike-theory.md §7.2), rows/columns ``i, j`` in ``1..ell`` minus ``drop``.

    >>> omega_inv_symbolic(2).tolist()
    [[b**2*m2*psi/phi, 0], [0, 3*b**4*m1*psi/phi]]
    """
    rows = spike_rows(ell, drop)
    out = sp.zeros(len(rows), len(rows))
    for a, i in enumerate(rows):
        for c, j in enumerate(rows):
            acc = M2 * he_xi(i, 1) * he_xi(j, 1) + M1 * sum(
                math.factorial(k) * he_xi(i, k) * he_xi(j, k) for k in range(0, min(i, j) + 1) if k != 1)
            out[a, c] = B ** (i + j) * PSI / PHI * acc
    return out


@cached(maxsize=None)
def r_symbolic(ell: int) -> tuple:
    r""":math:`r_0=\frac\psi\phi m_1`, :math:`r_1=\frac\psi\phi m_2\rho`, :math:`r_p=p!\frac\psi\phi m_1\rho^p` (§7.2)."""
    return tuple(PSI / PHI * (M2 * RHO if p == 1 else math.factorial(p) * M1 * RHO**p) for p in range(ell + 1))


@cached(maxsize=None)
def _printed_compiled(ell: int, drop: tuple, module: str):
    args = (M1, M2, PHI, PSI, B, RHO)
    mods = "mpmath" if module == "mpmath" else "numpy"
    return (sp.lambdify(args, omega_inv_symbolic(ell, drop), modules=mods),
            sp.lambdify(args, list(r_symbolic(ell)), modules=mods))


def delta_printed(ell, m1, m2, phi, psi, lam, cstar, b, drop=()):
    r""":math:`\Delta_\ell=\lambda\sum_{p,q=0}^{\ell}c_{\star,p}c_{\star,q}r_pr_q\sum_{i,j}\Omega_{ij}b^{i+j}\xi_{i,p}\xi_{j,q}`
    (docs/theory/spike-theory.md §7.2, indices resolved), from the lambdified :math:`\Omega^{-1}` and :math:`r_p`.

    Evaluate at the current mpmath precision; ``cstar`` is :math:`(c_{\star,0},\dots,c_{\star,\ell})`.
    """
    rows = spike_rows(ell, tuple(drop))
    if not rows:                     # every spike dropped: no learned direction, no gain
        return mpmath.mpf(0) * lam
    oinv_f, r_f = _printed_compiled(ell, tuple(drop), "mpmath")
    rho = cstar[1] / b
    oinv = mpmath.matrix(oinv_f(m1, m2, phi, psi, b, rho))
    r = r_f(m1, m2, phi, psi, b, rho)
    om = mpmath.inverse(oinv)
    tot = mpmath.mpf(0)
    for p in range(ell + 1):
        for q in range(ell + 1):
            if cstar[p] == 0 or cstar[q] == 0:
                continue
            inner = mpmath.fsum(om[a, c] * b ** (i + j) * he_xi(i, p) * he_xi(j, q)
                                for a, i in enumerate(rows) for c, j in enumerate(rows))
            tot += cstar[p] * cstar[q] * r[p] * r[q] * inner
    return lam * tot


@cached(maxsize=64)
def delta_symbolic(ell: int, drop: tuple = (), *, centered_teacher: bool = True) -> sp.Expr:
    r"""Exact closed form of :math:`\Delta_\ell` (§7.3) in the symbols ``m1, m2, phi, psi, lambda``,
    :math:`c_{\star,0..\ell}` (``c_star_k``), ``c_star2`` (:math:`c_\star^2`) and ``sigma_eps2``, with
    :math:`b^2=c_{\star,1}^2+\phi(c_\star^2+\sigma_\varepsilon^2)` and :math:`\rho=c_{\star,1}/b` substituted.

    >>> d1 = delta_symbolic(1)
    >>> cs = cstar_symbols(1)
    >>> sp.simplify(d1 - PSI*LAM*cs[1]**4*M2/(PHI*(cs[1]**2 + PHI*(CSTAR2 + S2))))
    0
    """
    if not isinstance(ell, int) or not 1 <= ell <= MAX_ELL:
        raise InvalidParameterError("ell", ell, f"an integer in [1, {MAX_ELL}]")
    rows = spike_rows(ell, drop)
    if not rows:                     # every spike dropped: no learned direction, no gain
        return sp.Integer(0)
    cs = cstar_symbols(ell)
    # With t = tau2/tau1: W = tau1 * D(t), D = diag(k!, with t at k = 1), so
    # Delta = lambda tau1 h^T P(t) h with P = D Xi^T (Xi D Xi^T)^{-1} Xi D rational in t only.
    t = sp.Symbol("t", positive=True)
    from sympy.polys.matrices import DomainMatrix

    Xi = sp.Matrix([[he_xi(i, k) for k in range(ell + 1)] for i in rows])
    D = sp.diag(*[t if k == 1 else math.factorial(k) for k in range(ell + 1)])
    XD = DomainMatrix.from_Matrix(Xi * D).to_field()
    M = DomainMatrix.from_Matrix(Xi * D * Xi.T).to_field()
    P = (XD.transpose() * M.lu_solve(XD)).to_Matrix()
    b2 = cs[1] ** 2 + PHI * (CSTAR2 + S2)
    terms = []
    for p in range(ell + 1):
        for q in range(p, ell + 1):
            if (p == 0 or q == 0) and centered_teacher or P[p, q] == 0:
                continue
            coef = P[p, q] * (1 if p == q else 2)
            rho_pow = cs[1] ** (p + q) * (b2 ** sp.Rational(-(p + q), 2))
            pq = sp.factor(sp.cancel(coef.subs(t, M2 / M1) * M1))
            terms.append(cs[p] * cs[q] * rho_pow * pq)
    return LAM * PSI / PHI * sp.Add(*terms)


def latex(expr: sp.Expr) -> str:
    """LaTeX with the spec's notation: :math:`c_{\\star,k}`, :math:`c_\\star^2`, :math:`\\sigma_\\varepsilon^2`, :math:`m_i`."""
    names = {M1: "m_1", M2: "m_2", CSTAR2: r"c_\star^2", S2: r"\sigma_\varepsilon^2"}
    for k, c in enumerate(cstar_symbols(MAX_ELL)):
        names[c] = rf"c_{{\star,{k}}}"
    return sp.latex(expr, symbol_names=names)


