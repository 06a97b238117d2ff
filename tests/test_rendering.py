"""What a notebook shows (issue 23): every result's HTML is well formed, has no raw JSON or cut dump, prints values
with their errors, and closed forms as math for the notebook's typesetter."""

import pytest

from onestep_theory.hermite import he_coeffs
from onestep_theory.quantities import check
from onestep_theory.simulate import sim_srf
from onestep_theory.spikes import gains
from onestep_theory.srf import srf_solve


def test_gains_render_the_closed_forms_as_math(check_rendered):
    g = gains("sin(x) + cos(x) - exp(-1/2)", "He1 + He2/sqrt(2)", "1/2", "1/2", "1/10", ell=2, symbolic=True)
    h = g._repr_html_()
    check_rendered(h)
    assert h.count("$") == 4 and "c_{\\star,1}^{4}" in h and "delta_2" in h
    assert f"{g.to_dict()['delta'][0]} ± {g.to_dict()['errors']['delta'][0]}" in h


def test_srf_solution_shows_order_parameters_with_their_errors(check_rendered):
    s = srf_solve("tanh", "sin", alpha0=20, eta=3, alpha=3, beta=1, lam="0.1")
    h = s._repr_html_()
    check_rendered(h)
    d = s.to_dict()
    assert f"{d['order']['m']} ± {d['errors']['m']}" in h and f"{d['test_error']} ± {d['errors']['test_error']}" in h


@pytest.mark.parametrize("make", [
    lambda: he_coeffs("relu", 30, 20),
    lambda: check("psi*lam*cs1**4*m2/(phi*b**2)", "delta_1", student="tanh", teacher="He1", n=2),
    lambda: sim_srf("tanh", "sin", 40, r=1.1, c=1.02, gamma=0.97, alpha=2, beta=1, lam=0.1, reps=2, n_test=500),
], ids=["hermite", "check", "simulation"])
def test_every_result_renders(make, check_rendered):
    h = make()._repr_html_()
    check_rendered(h)
    assert "±" in h or "+/-" in h or "+-" in h
