#!/usr/bin/env bash
# The studies of docs/studies/readouts-losses.md (about 1.5 hours on 2 cores; a rerun reuses every stored task).
# Stores: rl_*.sqlite in the current folder; outputs: rl_*.json and rl_*.png.  Then:
#   python docs/studies/make_readouts_losses.py . docs/studies
set -euo pipefail
W="--workers ${WORKERS:-2} --resume --json --quiet"
# K-group readout u in {1, 2} (case A at alpha = 2), against the K-group theory (srf-theory.md §8)
KG="--student tanh --teacher sin --alpha 2 --beta 1 --lam 0.1 --alpha0 20 --eta 3 --readout 1:0.5,2:0.5"
for e in "0.5,1" "1"; do
  onestep-theory study giant-step $KG --d 400,800,1600 --reps 10,20,6 --exponents "$e" --store rl_kgroup.sqlite \
    --plot "rl_kgroup_e${e/,/_}.png" $W > "rl_kgroup_e${e/,/_}.json"
done
# logistic and hinge readouts (tanh/sign, alpha0 = 20, eta = 3, alpha = 2): classification error and test MSE
for L in logistic hinge; do
  for key in class_error test_error; do
    for e in "0.5,1" "1" "0.5"; do
      onestep-theory study giant-step --student tanh --teacher sign --alpha 2 --beta 1 --lam 0.1 --alpha0 20 --eta 3 \
        --loss "$L" --key "$key" --d 250,500,1000 --reps 8 --exponents "$e" --store "rl_$L.sqlite" \
        --plot "rl_${L}_${key}_e${e/,/_}.png" $W > "rl_${L}_${key}_e${e/,/_}.json"
    done
  done
done
