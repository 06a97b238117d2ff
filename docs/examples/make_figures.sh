#!/usr/bin/env bash
# The example figures of docs/theory/checking.md §9 (case A of docs/studies/finite-size.md: tanh student, sin teacher,
# alpha0 = 20, beta = 1, lambda = 1/10). Run from this folder; the study store is made first (about 10 minutes on one
# core; a rerun reuses every stored task).
set -euo pipefail
A="--student tanh --teacher sin --alpha0 20 --beta 1 --lam 1/10"
for a in 1 2 3 4; do
  onestep-theory study giant-step $A --eta 3 --alpha $a --d 250,500,1000 --reps 4 --store caseA_study.sqlite --resume --quiet > /dev/null
done
# the phase diagram: 200 x 200 points, contours, the error mask at 1e-10 relative, the grid's argmin over eta and
# the eta minimising the bounds (26), (27)
onestep-theory sweep test_error $A --over alpha=0.2:5:200,eta=0.2:8:200 --plot phase_caseA.png --dpi 200 \
  --contours 8 --tol 1e-10 --with argmin,eta-star --csv phase_caseA.csv
# the learning curve with the best-linear baseline, the bounds, the row-norm correction and the simulated networks
onestep-theory srf-curve $A --eta 3 --alphas 0.25:5:96 --plot curve_caseA.png --dpi 200 \
  --with best-linear,bounds,row-norms,study:caseA_study.sqlite
rm -f phase_caseA.csv
