r"""What the TeX names of each paper mean: one symbol table per convention (docs/theory/checking.md §7).

A formula pasted as LaTeX (:mod:`onestep_theory.quantities.latex.tex`) names its symbols the way its paper does.  The
table of the paper's convention (the conventions of ``convert``, docs/theory/conventions.md §1) says what every name
means, as an expression in two vocabularies:

* the **parameters of the convention** (``phi psi lam noise_var`` for ``moniri23``, ``alpha beta alpha0 eta lam
  noise_var`` for ``cui24``, …), converted exactly to the convention of the checked quantity's family
  (:func:`onestep_theory.core.conventions.express`) — so ``\lambda`` of [MLHD23] is :math:`\lambda\beta/\alpha`
  when the quantity is an sRF one;
* the **formula names** of the quantity's family (docs/theory/checking.md §2: ``m1 cs1 c_star2 mu1 mu1s …``).

An entry is either a meaning (an expression), a refusal with its reason (``\eta`` of [CPDKLZL24] is :math:`\tilde\eta
p`, which diverges), or ambiguous: it lists its readings and asks for ``--symbol NAME=READING``.  Every name not in
the table is an error that lists the table.

===========  ==========================================================================================
convention   names
===========  ==========================================================================================
moniri23     ``\phi \psi \lambda m_1 m_2`` (and their λ-derivatives), ``\tau_1 \tau_2``, ``c_0..c_8
             c_{>1}``, ``c_{\star,k}``, ``c_\star``, ``\sigma_\varepsilon``, ``b \rho``, ``q_{\rm lin}
             q_{\rm nl}``, ``\Delta_\ell \Lambda_\ell`` (the package's closed forms), ``\Lambda_1^{\rm slide}``
cui24        ``\alpha \beta \lambda \alpha_0 \alpha_L \tilde\eta \Delta r c \gamma \rho \mu_1 \check\mu_1
             \mu_1^\star \mu_2^\star``
dandi24      as cui24, with ``\tilde\eta`` = η̃_d (η = η̃_d d)
ba22         ``\psi_1 \psi_2 \lambda \eta \mu_1 \sigma_\varepsilon``
===========  ==========================================================================================

References: [MLHD23] arXiv:2310.07891 and its talk (docs/theory/spike-theory.md §1, §7, §8); [CPDKLZL24]
arXiv:2402.04980 (docs/theory/srf-theory.md §1, §2); [BES+22] arXiv:2205.01445 (docs/theory/srf-theory.md §1,
§9).
"""

from __future__ import annotations

import dataclasses

__all__ = ["Entry", "TABLES", "FAMILY_OF", "table"]


@dataclasses.dataclass(frozen=True)
class Entry:
    """One TeX name: ``text`` (its meaning in the vocabulary of the module docstring), ``deriv`` (the meaning of its
    λ-derivative, if it has one; a name with one is a function of λ), ``of_lambda`` (a function of λ without a
    λ-derivative in the table: ``\\Delta_1(\\lambda)`` is read as Δ1), ``refused`` (why it cannot appear in a formula), ``readings`` (name ->
    (text, description) for an ambiguous name) and a one-line ``describe``.  On a left-hand side
    (docs/theory/checking.md §7.5), ``quantity`` (``dquantity`` for the λ-derivative) is the package's quantity the
    name stands for — an expression in quantity names, ``{ell}`` the window — and ``args`` lists the arguments a
    name must carry, ``(argument, describe, text, quantity)``: ``\\mathcal L_{\\rm tr}(\\mathbf F_0)``;
    ``variant`` marks a printed variant of a quantity (``\\Lambda_1^{\\rm slide}``): as a left-hand side it stands for
    the quantity checked, never for its own formula (a tautology)."""

    tex: str
    describe: str
    text: str | None = None
    deriv: str | None = None
    refused: str | None = None
    readings: tuple = ()
    of_lambda: bool = False
    quantity: str | None = None
    dquantity: str | None = None
    args: tuple = ()
    variant: bool = False


def _e(tex, describe, text=None, **kw):
    return Entry(tex, describe, text, **kw)


_DIMENSION = "a dimension (it diverges); the limiting formulas use its ratios"
#: Entries two tables share.
_SIGMA_EPS = _e(r"\sigma_\varepsilon", "label-noise standard deviation", "sqrt(noise_var)")
_MU1 = _e(r"\mu_1", "mu_1 = E sigma'(z) (student)", "mu1")

_MONIRI = [
    _e(r"\phi", "phi = d/n", "phi"),
    _e(r"\psi", "psi = d/N", "psi"),
    _e(r"\lambda", "ridge penalty (mean loss)", "lam"),
    _e("m_1", "resolvent trace m_1(lambda)", "m1", deriv="dm1", quantity="m1", dquantity="dm1"),
    _e("m_2", "resolvent trace m_2(lambda)", "m2", deriv="dm2", quantity="m2", dquantity="dm2"),
    _e(r"\tau_1", "tau_1 = (psi/phi) m_1, the un-normalised trace", "psi/phi*m1", deriv="psi/phi*dm1"),
    _e(r"\tau_2", "tau_2 = (psi/phi) m_2", "psi/phi*m2", deriv="psi/phi*dm2"),
    *[_e(f"c_{k}", f"student Hermite coefficient c_{k}", f"c{k}") for k in range(9)],
    _e("c_{>1}", "student's non-linear norm c_{>1}", "c_gt1"),
    *[_e(rf"c_{{\star,{k}}}", f"teacher Hermite coefficient c_(star,{k})", f"cs{k}") for k in range(9)],
    _e(r"c_\star", "teacher norm c_star = ||sigma_star||", "sqrt(c_star2)"),
    _SIGMA_EPS,
    _e("b", "b = sqrt(c_(star,1)^2 + phi (c_star^2 + sigma_eps^2))", "b"),
    _e(r"\rho", "rho = c_(star,1)/b", "rho"),
    _e(r"q_{\rm lin}", "q_lin = (phi/psi)(-dm_2/dlambda)/m_1^2 (docs/theory/spike-theory.md §8.1)", "phi/psi*(-dm2)/m1**2", of_lambda=True),
    _e(r"q_{\rm nl}", "q_nl = (phi/psi)(-dm_1/dlambda)/m_1^2 (docs/theory/spike-theory.md §8.1)", "phi/psi*(-dm1)/m1**2", of_lambda=True),
    *[_e(rf"\Delta_{k}", f"the package's Delta_{k} (closed form, docs/theory/spike-theory.md §7.3)", f"@delta_{k}",
         of_lambda=True, quantity=f"delta_{k}") for k in range(1, 9)],
    *[_e(rf"\Lambda_{k}", f"the package's Lambda_{k} (closed form, docs/theory/spike-theory.md §8.6)", f"@lambda_{k}",
         of_lambda=True, quantity=f"lambda_{k}") for k in range(1, 9)],
    _e(r"\Delta_\ell", "the package's Delta_ell in the window ell given (closed form, docs/theory/spike-theory.md §7.3)",
       "@delta_{ell}", of_lambda=True, quantity="delta_{ell}"),
    _e(r"\Lambda_\ell", "the package's Lambda_ell in the window ell given (closed form, docs/theory/spike-theory.md "
                        "§8.6)", "@lambda_{ell}", of_lambda=True, quantity="lambda_{ell}"),
    *[_e(rf"\mathcal L_{{\rm {w}}}", f"the {what} loss", args=(
        ("F_0", f"RF {what} loss L_{w}(F_0) (docs/theory/spike-theory.md {sec})", f"@{what}_loss_f0",
         f"{what}_loss_f0"),
        ("F", f"{what} loss after the step in the window ell given: L_{w}(F_0) - {gain}_ell", f"@{what}_loss_f0 - "
         f"@{gain.lower()}_{{ell}}", f"{what}_loss_f0 - {gain.lower()}_{{ell}}")))
      for w, what, gain, sec in (("tr", "train", "Delta", "§7.1"), ("train", "train", "Delta", "§7.1"),
                                 ("te", "test", "Lambda", "§8.1"), ("test", "test", "Lambda", "§8.1"))],
    _e(r"\Lambda_1^{\rm slide}", "the talk's printed Lambda_1 (docs/theory/spike-theory.md §8.2)",
       "cs1**4/(cs1**2 + phi*(c_star2 + noise_var))*(-dm2)", of_lambda=True, variant=True),
    _e(r"\sigma", "ambiguous: the activation or the noise level", readings=(
        ("noise", "sqrt(noise_var)", "sigma_eps, the label-noise standard deviation"),
        ("activation", None, "the student activation, a function: not a value a formula can use"))),
    _e(r"\eta", "the step size eta = c n^alpha", refused="the step size is not a parameter of the limiting "
                                                          "formulas: its exponent selects the window, i.e. the "
                                                          "quantity delta_ELL or lambda_ELL"),
    _e(r"\alpha", "the step-size exponent", refused="the step-size exponent selects the window: pick the quantity "
                                                    "delta_ELL or lambda_ELL (convention cui24 reads alpha as n/d)"),
    *[_e(n, "a dimension", refused=_DIMENSION) for n in ("n", "N", "d")],
]

_CUI = [
    _e(r"\alpha", "alpha = n/d", "alpha"),
    _e(r"\beta", "beta = p/d", "beta"),
    _e(r"\lambda", "ridge penalty (sum loss)", "lam"),
    _e(r"\alpha_0", "alpha_0 = n_0/d (step batch)", "alpha0"),
    _e(r"\alpha_L", "alpha_L = n/p", "alpha/beta"),
    _e(r"\tilde\eta", "step size eta~ (eta = eta~ p)", "eta"),
    _e(r"\Delta", "label-noise variance", "noise_var"),
    _e("r", "spike strength r (Result 3.1)", "r", quantity="r"),
    _e("c", "bulk variance c (Result 3.1)", "c", quantity="c"),
    _e(r"\gamma", "alignment gamma (Result 3.1)", "gamma", quantity="gamma"),
    _e(r"\varepsilon_g", "the sRF test error (25) (docs/theory/srf-theory.md §4.7)", quantity="test_error"),
    _e(r"\rho", "rho = sqrt(1 - gamma^2)", "sqrt(1 - gamma**2)"),
    _MU1,
    _e(r"\check\mu_1", "check-mu_1 = sqrt(E sigma'^2 - mu_1^2)", "sqrt(mu1c2)"),
    _e(r"\mu_1^\star", "mu_1^star = E z sigma_star(z) (teacher)", "mu1s"),
    _e(r"\mu_2^\star", "mu_2^star = E y^2 (teacher, with the noise)", "mu2s"),
    _e(r"\eta", "eta = eta~ p", refused="eta = eta~ p diverges with p: the theory's step size is \\tilde\\eta"),
    _e(r"\sigma", "the activation", refused="sigma is the activation, a function: not a value (the noise is "
                                            "\\Delta)"),
    *[_e(n, "a Gaussian variable", refused="a Gaussian variable integrated out by the theory") for n in
      (r"\kappa", "z", r"\xi")],
    *[_e(n, "a dimension", refused=_DIMENSION) for n in ("n", "p", "d", "n_0")],
]

_DANDI = [e if e.tex != r"\tilde\eta" else _e(r"\tilde\eta", "step size eta~_d (eta = eta~_d d)", "eta_d")
          for e in _CUI]

_BA = [
    _e(r"\psi_1", "psi_1 = n/d (= n_0/d)", "psi1"),
    _e(r"\psi_2", "psi_2 = N/d", "psi2"),
    _e(r"\lambda", "ridge penalty (1/n loss, lambda/N penalty)", "lam"),
    _e(r"\eta", "step size (W_1 = W_0 + eta sqrt(N) G_0)", "eta"),
    _MU1,
    _SIGMA_EPS,
    _e(r"\mu_2", "[BES+22]'s mu_2", refused="[BES+22]'s mu_2 = sqrt(E sigma^2 - mu_0^2 - mu_1^2) of the student "
                                            "enters no quantity's formula here"),
    _e(r"\mu_2^\star", "[BES+22]'s mu_2^*", refused="[BES+22]'s mu_2^* is the norm of the target's non-linear "
                                                    "part, which no quantity's formula uses (docs/theory/srf-theory.md §1: "
                                                    "mu_2^star here is E y^2)"),
    *[_e(n, "a dimension", refused=_DIMENSION) for n in ("n", "N", "d")],
]

#: Convention -> its entries, in the order they are listed in messages.
TABLES = {"moniri23": tuple(_MONIRI), "cui24": tuple(_CUI), "dandi24": tuple(_DANDI), "ba22": tuple(_BA)}
#: The family whose formula names a convention's table uses besides its parameters.
FAMILY_OF = {"moniri23": "spike", "cui24": "srf", "dandi24": "srf", "ba22": "srf"}


def table(convention: str) -> tuple:
    """The entries of ``convention`` (a clear error for an unknown convention)."""
    from ...core.errors import InvalidParameterError

    if convention not in TABLES:
        raise InvalidParameterError("convention", convention, " or ".join(TABLES))
    return TABLES[convention]
