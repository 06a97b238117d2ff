"""An independent check of docs/studies/mechanism.md §1-2, written by a separate session that did not read the
package's simulator: plain numpy, no onestep_theory import.  One giant step (tanh student, sin teacher, alpha0 = 20,
eta~ = 3, alpha = 3, beta = 1, lambda = 0.1), the network against its equal-norm variant on the same data, and the
slope of the squared bulk row norms against w0_i . v.  Output per seed: network test error, equal-norm test error,
slope, r.  Usage: python independent_rownorm.py D SEED...   (d = 800: about 15 s per seed on 2 cores)

Measured (4 seeds each): network - equal_norm = -3.09 +- 0.19 % of 0.0325182 at d = 800, -3.15 +- 0.13 % at
d = 1600; slope - 2 r E[tanh He3]/E[tanh'] at each seed's own r: -0.0014 +- 0.0033 and +0.0006 +- 0.0015.
"""
import numpy as np, sys, time
def unit_rows(M): return M/np.linalg.norm(M,axis=1,keepdims=True)
def run(d, seed, eta=3.0, lam=0.1, ntest=20000):
    rng=np.random.default_rng(seed); p=d; n0=20*d; n=3*d
    W0=unit_rows(rng.standard_normal((p,d)))
    th=rng.standard_normal(d); th/=np.linalg.norm(th)
    X0=rng.standard_normal((n0,d)); y0=np.sin(X0@th)
    H=X0@W0.T; T=np.tanh(H)
    e=y0-T.mean(1)
    G=((1-T**2)*e[:,None]).T@X0          # p x d
    W1=W0+(eta/n0)*G
    del X0,H,T
    D=W1-W0; dbar=D.mean(0); r=np.linalg.norm(dbar); v=dbar/r
    B=W1-dbar[None,:]
    nb2=(B**2).sum(1); c=nb2.mean()
    Weq=unit_rows(B)*np.sqrt(c)+dbar[None,:]
    s=W0@v; slope=np.polyfit(s,nb2,1)[0]
    X=rng.standard_normal((n,d)); y=np.sin(X@th)
    Xt=rng.standard_normal((ntest,d)); yt=np.sin(Xt@th)
    errs=[]
    for W in (W1,Weq):
        F=np.tanh(X@W.T)/np.sqrt(p)
        a=np.linalg.solve(F.T@F+lam*np.eye(p),F.T@y)
        Ft=np.tanh(Xt@W.T)/np.sqrt(p)
        errs.append(np.mean((yt-Ft@a)**2))
    return errs[0],errs[1],slope,r
if __name__=="__main__":
    d=int(sys.argv[1]); seeds=[int(s) for s in sys.argv[2:]]
    for sd in seeds:
        t=time.time(); en,eq,sl,r=run(d,sd)
        print(f"d={d} seed={sd} err_net={en:.6f} err_eq={eq:.6f} diff%={(en-eq)/0.0325182*100:.3f} slope={sl:.4f} r={r:.4f} k_th={2*r*-0.3635954/0.6057055:.4f} t={time.time()-t:.1f}s",flush=True)
