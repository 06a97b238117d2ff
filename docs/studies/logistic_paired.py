"""Paired: logistic readout on the network vs on its equal_norm / srf variants (case tanh/sign, alpha0=20, eta=3,
alpha=2, beta=1, lam=0.1)."""
import sys, math, json, numpy as np
from onestep_theory.simulate.ablation import step_matrices, build_variants
from onestep_theory.simulate.base import Fn, fit_convex, sphere_rows, unit_vector
from onestep_theory.srf.losses import loss
d=int(sys.argv[1]); seeds=range(int(sys.argv[2]))
s,t=Fn("tanh","student"),Fn("sign","teacher")
L=loss("logistic"); p=d; n0=20*d; n=2*d
res=[]
for k in seeds:
    rng=np.random.default_rng([77,d,k])
    W0=sphere_rows(rng,p,d); th=unit_vector(rng,d)
    X0=rng.standard_normal((n0,d)); y0=t.f(X0@th)
    st=step_matrices(s,X0,y0,W0,3.0,())
    del X0

    out=build_variants(["network","equal_norm","srf"],W0,st["D"],st,th,rng)
    Ws=out[0] if isinstance(out,tuple) else out
    X=rng.standard_normal((n,d)); y=t.f(X@th)
    Xt=rng.standard_normal((20000,d)); yt=t.f(Xt@th)
    row={}
    for name in ("network","equal_norm","srf"):
        Wv=Ws[name]
        a,_=fit_convex(s.f(X@Wv.T)/math.sqrt(p),y,0.1,L)
        f=s.f(Xt@Wv.T)@a/math.sqrt(p)
        row[name]=(float(np.mean((yt-f)**2)), float(np.mean(np.sign(f)!=yt)))
    res.append(row); print(k,row,flush=True)
for name in ("equal_norm","srf"):
    for j,lab in ((0,"mse"),(1,"class")):
        dv=np.array([r["network"][j]-r[name][j] for r in res])
        print(f"network - {name} {lab}: {dv.mean():+.4f} +- {dv.std(ddof=1)/math.sqrt(len(dv)):.4f}; network {np.mean([r['network'][j] for r in res]):.4f}")
