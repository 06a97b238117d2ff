r"""Independent closed form for the asymptotic test error of random-features ridge regression.

Test helper only: it implements Theorem 2 of Mei & Montanari, "The generalization error of random
features regression: precise asymptotics and double descent curve" (arXiv:1908.05355; CPAM 2022),
and deliberately imports nothing from :mod:`onestep_theory`, so that agreement with
``srf_solve(..., r=0)`` validates both codes.

Their model (notation of the paper)
-----------------------------------
* :math:`x_j,\theta_i` uniform on the sphere of radius :math:`\sqrt d`; :math:`N` features
  :math:`\sigma(\langle\theta_i,x\rangle/\sqrt d)`, :math:`n` samples,
  :math:`\psi_1=N/d`, :math:`\psi_2=n/d`.
* :math:`y=f(x)+\varepsilon`, :math:`f=\beta_0+\langle\beta_1,x\rangle+f_{NL}`,
  :math:`\|\beta_1\|^2\to F_1^2`, :math:`\mathbb E f_{NL}^2\to F_\star^2`, noise variance :math:`\tau^2`.
* ridge :math:`\frac1n\sum_j(y_j-\sum_ia_i\sigma_i(x_j))^2+\frac{N\lambda}d\|a\|^2`;
  test error :math:`R=\mathbb E_x(f(x)-\hat f(x))^2` (noiseless).
* :math:`\mu_1=\mathbb E[G\sigma(G)]`, :math:`\mu_\star^2=\mathbb E\sigma^2-\mu_0^2-\mu_1^2`,
  :math:`\zeta=\mu_1/\mu_\star`, :math:`\bar\lambda=\lambda/\mu_\star^2`.

Theorem 2: with :math:`\nu_{1,2}(\xi)` the solution, analytic in :math:`\xi\in\mathbb C_+` with
:math:`\operatorname{Im}\nu_k>0`, of

.. math::
    \nu_1=\psi_1\Big(-\xi-\nu_2-\frac{\zeta^2\nu_2}{1-\zeta^2\nu_1\nu_2}\Big)^{-1},\qquad
    \nu_2=\psi_2\Big(-\xi-\nu_1-\frac{\zeta^2\nu_1}{1-\zeta^2\nu_1\nu_2}\Big)^{-1},

:math:`\chi=\nu_1(i\sqrt{\psi_1\psi_2\bar\lambda})\,\nu_2(i\sqrt{\psi_1\psi_2\bar\lambda})` (real, negative),
:math:`\mathcal B=\mathcal E_1/\mathcal E_0`, :math:`\mathcal V=\mathcal E_2/\mathcal E_0` and

.. math:: R=F_1^2\mathcal B+(\tau^2+F_\star^2)\mathcal V+F_\star^2 .

Map from the package's r = 0 convention (srf-theory.md §1, §4)
--------------------------------------------------------------
Package: :math:`x\sim\mathcal N(0,I_d)`, rows of :math:`W` of norm :math:`\sqrt c`, width :math:`p=\beta d`,
:math:`n=\alpha d`, ridge :math:`\sum_\mu(y_\mu-a^\top\sigma(Wx_\mu)/\sqrt p)^2+\lambda\|a\|^2`.

* pre-activations :math:`w_i^\top x\sim\mathcal N(0,c)` vs. theirs :math:`\sim\mathcal N(0,1)`: their
  activation is :math:`\sigma_c(g)=\sigma(\sqrt c\,g)` (the caller passes :math:`\mu_1,\mu_\star^2` of
  :math:`\sigma_c`); Gaussian vs. spherical inputs do not matter asymptotically;
* :math:`N=p`, so :math:`\psi_1=\beta`, :math:`\psi_2=\alpha`;
* :math:`a_{MM}=a/\sqrt p`: the package objective is
  :math:`\sum_\mu(y_\mu-a_{MM}^\top\sigma)^2+\lambda p\|a_{MM}\|^2
  = n\big[\frac1n\sum_\mu(\cdot)^2+\frac{\lambda p}{n}\|a_{MM}\|^2\big]` and
  :math:`\frac{\lambda p}n=\frac{N\lambda_{MM}}d` gives :math:`\lambda_{MM}=\lambda d/n=\lambda/\alpha`;
* teacher :math:`\sigma_\star(\theta^\top x)`, :math:`\|\theta\|=1`, odd: :math:`\beta_1=\mathbb E[G\sigma_\star(G)]\theta`,
  :math:`F_1^2=(\mathbb E[G\sigma_\star(G)])^2`, :math:`F_\star^2=\mathbb E\sigma_\star^2-F_1^2`; :math:`\tau^2=\Delta`
  (label noise in training only, noiseless test error in both conventions).
"""

import mpmath

__all__ = ["nu_pair", "rf_chi", "rf_bias_variance", "rf_test_error", "srf_r0_test_error"]


def _system(xi, psi1, psi2, z2):
    def F(n1, n2):
        den = 1 - z2 * n1 * n2
        return [n1 - psi1 / (-xi - n2 - z2 * n2 / den),
                n2 - psi2 / (-xi - n1 - z2 * n1 / den)]
    return F


def nu_pair(u, psi1, psi2, zeta2, dps=50, steps_per_decade=4):
    r"""Return :math:`(\nu_1,\nu_2)` at :math:`\xi=iu`, :math:`u>0` (mpc, at the caller's precision).

    The Stieltjes-type branch is followed by continuation in :math:`u` from large :math:`u`, where
    :math:`\nu_k\simeq\psi_k/(-\xi)=i\psi_k/u`, down to the target; at every step the solution must
    have :math:`\operatorname{Im}\nu_k>0`.
    """
    with mpmath.workdps(dps + 10):
        u, psi1, psi2, z2 = (mpmath.mpf(v) for v in (u, psi1, psi2, zeta2))
        if u <= 0:
            raise ValueError("u must be > 0")
        u_start = max(10 * (1 + psi1 + psi2) * (1 + z2), 10 * u)
        ndec = float(mpmath.log10(u_start / u))
        nstep = max(1, int(ndec * steps_per_decade) + 1)
        n1, n2 = 1j * psi1 / u_start, 1j * psi2 / u_start
        for k in range(nstep + 1):
            uk = u_start * (u / u_start) ** (mpmath.mpf(k) / nstep)
            xi = mpmath.mpc(0, uk)
            n1, n2 = mpmath.findroot(_system(xi, psi1, psi2, z2), (mpmath.mpc(n1), mpmath.mpc(n2)),
                                     tol=mpmath.mpf(10) ** (-2 * (dps + 5)), maxsteps=200)
            if not (mpmath.im(n1) > 0 and mpmath.im(n2) > 0):
                raise ArithmeticError(f"continuation left the Stieltjes branch at u={uk}: {n1}, {n2}")
        res = _system(mpmath.mpc(0, u), psi1, psi2, z2)(n1, n2)
        if max(abs(r) for r in res) > mpmath.mpf(10) ** (-(dps + 3)) * (1 + abs(n1) + abs(n2)):
            raise ArithmeticError("nu equations not solved to the requested precision")
        return +n1, +n2


def rf_chi(psi1, psi2, zeta2, lam_bar, dps=50):
    r""":math:`\chi=\nu_1\nu_2` at :math:`\xi=i\sqrt{\psi_1\psi_2\bar\lambda}` (real and negative)."""
    with mpmath.workdps(dps + 10):
        psi1, psi2, lam_bar = mpmath.mpf(psi1), mpmath.mpf(psi2), mpmath.mpf(lam_bar)
        n1, n2 = nu_pair(mpmath.sqrt(psi1 * psi2 * lam_bar), psi1, psi2, zeta2, dps=dps)
        chi = n1 * n2
        if abs(mpmath.im(chi)) > mpmath.mpf(10) ** (-(dps + 3)) * abs(chi):
            raise ArithmeticError(f"chi not real: {chi}")
        return mpmath.re(chi)


def rf_bias_variance(psi1, psi2, zeta2, lam_bar, dps=50):
    r"""Return :math:`(\mathcal B,\mathcal V)=(\mathcal E_1/\mathcal E_0,\mathcal E_2/\mathcal E_0)` (mpf)."""
    with mpmath.workdps(dps + 10):
        p1, p2, z2 = mpmath.mpf(psi1), mpmath.mpf(psi2), mpmath.mpf(zeta2)
        x = rf_chi(p1, p2, z2, lam_bar, dps=dps)
        z4, z6 = z2 ** 2, z2 ** 3
        x2, x3, x4, x5 = x ** 2, x ** 3, x ** 4, x ** 5
        pp = p1 * p2
        E0 = (-x5 * z6 + 3 * x4 * z4 + (pp - p2 - p1 + 1) * x3 * z6 - 2 * x3 * z4 - 3 * x3 * z2
              + (p1 + p2 - 3 * pp + 1) * x2 * z4 + 2 * x2 * z2 + x2 + 3 * pp * x * z2 - pp)
        E1 = p2 * x3 * z4 - p2 * x2 * z2 + pp * x * z2 - pp
        E2 = (x5 * z6 - 3 * x4 * z4 + (p1 - 1) * x3 * z6 + 2 * x3 * z4 + 3 * x3 * z2
              + (-p1 - 1) * x2 * z4 - 2 * x2 * z2 - x2)
        return E1 / E0, E2 / E0


def rf_test_error(mu1, mustar2, F1sq, Fstar2, tau2, psi1, psi2, lam_mm, dps=50):
    r"""Theorem 2 of [MM19]: :math:`R=F_1^2\mathcal B+(\tau^2+F_\star^2)\mathcal V+F_\star^2` (mpf, ``dps`` digits).

    ``mu1``, ``mustar2`` are :math:`\mu_1` and :math:`\mu_\star^2` of the activation acting on N(0,1)
    pre-activations; ``lam_mm`` is their :math:`\lambda` (penalty :math:`\frac{N\lambda}d\|a\|^2` on a
    mean loss).
    """
    with mpmath.workdps(dps + 10):
        mu1, ms2 = mpmath.mpf(mu1), mpmath.mpf(mustar2)
        if not ms2 > 0:
            raise ValueError("mu_star^2 must be > 0")
        zeta2 = mu1 ** 2 / ms2
        lam_bar = mpmath.mpf(lam_mm) / ms2
        B, V = rf_bias_variance(psi1, psi2, zeta2, lam_bar, dps=dps)
        R = mpmath.mpf(F1sq) * B + (mpmath.mpf(tau2) + mpmath.mpf(Fstar2)) * V + mpmath.mpf(Fstar2)
    with mpmath.workdps(dps):
        return +R


def srf_r0_test_error(mu1, mustar2, F1sq, Fstar2, noise_var, alpha, beta, lam, dps=50):
    r"""Test error of the package's r = 0 model (srf-theory.md §1) through Theorem 2.

    ``mu1``, ``mustar2``: :math:`\mu_1,\mu_\star^2` of :math:`\sigma_c(g)=\sigma(\sqrt c\,g)`;
    ``F1sq`` :math:`=(\mathbb E[G\sigma_\star(G)])^2`, ``Fstar2`` :math:`=\mathbb E\sigma_\star^2-F_1^2`,
    ``noise_var`` :math:`=\Delta`.  Map: :math:`\psi_1=\beta`, :math:`\psi_2=\alpha`,
    :math:`\lambda_{MM}=\lambda/\alpha`, :math:`\tau^2=\Delta`.
    """
    with mpmath.workdps(dps + 10):
        lam_mm = mpmath.mpf(lam) / mpmath.mpf(alpha)
        return rf_test_error(mu1, mustar2, F1sq, Fstar2, noise_var, beta, alpha, lam_mm, dps=dps)
