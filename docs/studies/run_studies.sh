#!/usr/bin/env bash
# The finite-size studies of docs/studies/finite-size.md (2 cores: about 65 minutes; a rerun reuses every stored task).
# Stores: caseA.sqlite, caseB.sqlite in the current folder; outputs: *.json, *.csv, *.png.
set -euo pipefail
A="--student tanh --teacher sin --alpha 3 --beta 1 --lam 0.1"
B="--student tanh --teacher tanh --alpha 3 --beta 1 --lam 0.1"
RA="--d 250,500,1000,2000,4000 --store caseA.sqlite --resume --json"
RB="--d 250,500,1000,2000,4000 --store caseB.sqlite --resume --json"
onestep-theory study giant-step $A --alpha0 20 --eta 3 $RA --reps 24,24,16,24,16 --plot caseA_network.png --csv caseA_network.csv > caseA_network.json
onestep-theory study srf $A --r 1.1340555093 --c 1.0189732005 --gamma 0.9718544445 $RA --reps 24,24,16,12,6 --plot caseA_srf.png --csv caseA_srf.csv > caseA_srf.json
onestep-theory study giant-step $B --alpha0 0.5 --eta 1 $RB --reps 32,32,24,32,24 --plot caseB_network.png --csv caseB_network.csv > caseB_network.json
onestep-theory study srf $B --r 0.6510892316 --c 1.0769061452 --gamma 0.5634852284 $RB --reps 32,32,24,16,8 --plot caseB_srf.png --csv caseB_srf.csv > caseB_srf.json
# the same data under other fit models (no task runs again)
for e in 1 0.5; do
  onestep-theory study giant-step $A --alpha0 20 --eta 3 $RA --reps 24,24,16,24,16 --exponents $e --quiet > caseA_network_e${e/./}.json
  onestep-theory study giant-step $B --alpha0 0.5 --eta 1 $RB --reps 32,32,24,32,24 --exponents $e --quiet > caseB_network_e${e/./}.json
done
onestep-theory study srf $A --r 1.1340555093 --c 1.0189732005 --gamma 0.9718544445 $RA --reps 24,24,16,12,6 --exponents 1 --quiet > caseA_srf_e1.json
onestep-theory study srf $B --r 0.6510892316 --c 1.0769061452 --gamma 0.5634852284 $RB --reps 32,32,24,16,8 --exponents 1 --quiet > caseB_srf_e1.json
