ATOL = 30                 # the Krylov stops, scaled to reach about the warm power iteration's L1 error
import numpy as np, scipy.sparse as sp, scipy.sparse.linalg as spl, scipy.io, gzip, time
a = scipy.io.mmread(gzip.open('/work/shared/data/static/coAuthorsDBLP.mtx.gz')).tocsr()
a = ((a + a.T) > 0).astype(np.float64).tocsr(); a.setdiag(0); a.eliminate_zeros()
n = a.shape[0]; d = 0.85; tol = 1e-6
def pmat(a):
    deg = np.asarray(a.sum(1)).ravel(); inv = np.where(deg > 0, 1/np.maximum(deg,1), 0)
    return (sp.diags(inv) @ a).T.tocsr(), deg == 0
def power(P, dang, x, tol):
    it = 0
    while True:
        xn = d * (P @ x) + (d * x[dang].sum() + 1 - d) / n
        it += 1
        err = np.abs(xn - x).sum(); x = xn
        if err < tol: return x, it
P, dang = pmat(a)
x, it = power(P, dang, np.full(n, 1/n), 1e-12)
rng = np.random.default_rng(1)
coo = sp.triu(a).tocoo(); m = coo.nnz
for frac in (1e-4, 1e-3):
    k = max(1, int(frac * m)); kd = k // 2
    idx = rng.choice(m, kd, replace=False)
    keep = np.ones(m, bool); keep[idx] = False
    s = np.r_[coo.row[keep], rng.integers(0, n, k - kd)]; t = np.r_[coo.col[keep], rng.integers(0, n, k - kd)]
    b = sp.coo_matrix((np.ones(len(s)), (s, t)), shape=(n, n)).tocsr(); b = ((b + b.T) > 0).astype(np.float64).tocsr(); b.setdiag(0); b.eliminate_zeros()
    P2, dang2 = pmat(b)
    t0 = time.perf_counter(); xw, itw = power(P2, dang2, x.copy(), tol); tw = time.perf_counter() - t0
    xs, _ = power(P2, dang2, x.copy(), 1e-13)
    # linear system: (I - d P2 - d/n 1 dang^T) y = (1-d)/n 1 ; solve with GMRES / BiCGSTAB from x
    def mv(v): return v - d * (P2 @ v) - d * v[dang2].sum() / n
    A = spl.LinearOperator((n, n), matvec=mv, dtype=np.float64)
    rhs = np.full(n, (1 - d) / n)
    for name, solver in (("bicgstab", spl.bicgstab), ("gmres", spl.gmres)):
        cnt = [0]
        def mv2(v): cnt[0] += 1; return mv(v)
        A2 = spl.LinearOperator((n, n), matvec=mv2, dtype=np.float64)
        r0 = np.abs(rhs - mv(x)).sum()
        t0 = time.perf_counter()
        kw = dict(rtol=0, atol=ATOL * (1 - d) * tol / np.sqrt(n))  # 2-norm atol; compare L1 error after
        if name == "gmres": kw["restart"] = 30
        y, info = solver(A2, rhs, x0=x.copy(), **kw)
        ts = time.perf_counter() - t0
        print(f"{frac:.0e} {name}: matvecs {cnt[0]} time {ts*1e3:.1f} ms L1 err {np.abs(y/y.sum()-xs).sum():.2e}")
    print(f"{frac:.0e} power warm: iters {itw} time {tw*1e3:.1f} ms L1 err {np.abs(xw-xs).sum():.2e}")
