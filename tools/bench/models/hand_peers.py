"""The hand-fused peer of the model-layer suite: LayerNorm backward written
by hand in Triton, in the form that the well-known hand-fused
LayerNorm-backward kernels take (Liger-Kernel's, for one): row-persistent,
two launches.  It is the reference that fusec's own LayerNorm backward
(programs/ln_bwd.fuse, ln_bwd_dgamma_dbeta.fuse) is compared with; run.py
times it as the peer `hand` on those programs only.

Launch 1, `_ln_bwd_rows`: one program per multiprocessor, each over a
contiguous range of ceil(N / programs) rows, one row at a time held whole in
registers (BLOCK = the next power of two >= D, masked) and computed in
float32.  For each row it recomputes the statistics (mean, rstd = 1 /
sqrt(var + 1e-5), as ln_bwd.fuse does) or, for ln_bwd_dgamma_dbeta, loads
the saved mu and rstd; xhat = (x - mean) * rstd; for ln_bwd it stores
    dx = (wdy - xhat * mean(wdy * xhat) - mean(wdy)) * rstd,  wdy = dy * g
in the result dtype.  dy * xhat and dy are added up over the program's rows
in float32 registers and stored once, as one row of a float32 partial
buffer [programs, D] each.

Launch 2, `_col_sums`: the column sums of the two partial buffers, stored
as dgamma and dbeta in the result dtype.

The partial buffers are allocated once per case, so a call allocates its
results only.  This module imports triton: run.py imports it lazily, and
without triton the peer is absent.
"""
import triton
import triton.language as tl

PROGRAMS = ("ln_bwd", "ln_bwd_dgamma_dbeta")
EPS = 1e-5       # ln_bwd.fuse's
MAX_D = 16384    # a row of more elements does not stay in registers
COL_BLOCK_M, COL_BLOCK_N = 32, 64


@triton.jit
def _ln_bwd_rows(X, DY, G, MU, RSTD, DX, PDG, PDB, N, D, rows_per_program, eps,
                 BLOCK: tl.constexpr, SAVED_STATS: tl.constexpr, WITH_DX: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < D
    row_begin = pid * rows_per_program
    row_end = tl.minimum(row_begin + rows_per_program, N)  # below row_begin for programs past N: no rows
    if WITH_DX:
        g = tl.load(G + cols, mask=mask, other=0.0).to(tl.float32)
    dg_acc = tl.zeros([BLOCK], dtype=tl.float32)
    db_acc = tl.zeros([BLOCK], dtype=tl.float32)
    for row in range(row_begin, row_end):
        base = tl.cast(row, tl.int64) * D  # N * D may pass 2^31
        x = tl.load(X + base + cols, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + base + cols, mask=mask, other=0.0).to(tl.float32)
        if SAVED_STATS:
            mean = tl.load(MU + row).to(tl.float32)
            rstd = tl.load(RSTD + row).to(tl.float32)
        else:
            mean = tl.sum(x, axis=0) / D
            xc = tl.where(mask, x - mean, 0.0)
            rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=0) / D + eps)
        xhat = tl.where(mask, (x - mean) * rstd, 0.0)
        if WITH_DX:
            wdy = dy * g
            c1 = tl.sum(wdy * xhat, axis=0) / D
            c2 = tl.sum(wdy, axis=0) / D
            dx = (wdy - xhat * c1 - c2) * rstd
            tl.store(DX + base + cols, dx.to(DX.dtype.element_ty), mask=mask)
        dg_acc += dy * xhat
        db_acc += dy
    tl.store(PDG + pid * D + cols, dg_acc, mask=mask)
    tl.store(PDB + pid * D + cols, db_acc, mask=mask)


@triton.jit
def _col_sums(PDG, PDB, DG, DB, M, D, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    cmask = cols < D
    dg = tl.zeros([BLOCK_N], dtype=tl.float32)
    db = tl.zeros([BLOCK_N], dtype=tl.float32)
    for m0 in range(0, M, BLOCK_M):
        rows = m0 + tl.arange(0, BLOCK_M)
        mask = (rows[:, None] < M) & cmask[None, :]
        offs = rows[:, None] * D + cols[None, :]
        dg += tl.sum(tl.load(PDG + offs, mask=mask, other=0.0), axis=0)
        db += tl.sum(tl.load(PDB + offs, mask=mask, other=0.0), axis=0)
    tl.store(DG + cols, dg.to(DG.dtype.element_ty), mask=cmask)
    tl.store(DB + cols, db.to(DB.dtype.element_ty), mask=cmask)


def num_warps(block):
    return 4 if block <= 1024 else 8 if block <= 4096 else 16


def ln_bwd_peer(torch, name, dims, tensor_names, out_dtypes):
    """The peer's function for program `name` at dims: it takes the
    program's tensor params in the order of tensor_names and returns its
    results (torch tensors of out_dtypes).  ValueError for a row too long to
    hold in registers."""
    assert name in PROGRAMS, name
    n, d = dims["N"], dims["D"]
    if d > MAX_D:
        raise ValueError("D = %d > %d: a row does not stay in registers" % (d, MAX_D))
    block = triton.next_power_of_2(d)
    warps = num_warps(block)
    grid = torch.cuda.get_device_properties(0).multi_processor_count
    rows_per_program = triton.cdiv(n, grid)
    saved = name == "ln_bwd_dgamma_dbeta"
    pdg, pdb = (torch.empty((grid, d), device="cuda", dtype=torch.float32) for _ in range(2))  # once per case
    col_grid = (triton.cdiv(d, COL_BLOCK_N),)

    def f(*ts):
        a = dict(zip(tensor_names, ts))
        x, dy = a["x"], a["dy"]
        assert x.is_contiguous() and dy.is_contiguous()
        if saved:
            dx = None
            g, mu, rstd = x, a["mu"], a["rstd"]  # g: not read
            dg_dt, db_dt = out_dtypes
        else:
            dx = torch.empty((n, d), device=x.device, dtype=out_dtypes[0])
            g, mu, rstd = a["g"], x, x  # mu, rstd: not read
            dg_dt, db_dt = out_dtypes[1:]
        dg = torch.empty((d,), device=x.device, dtype=dg_dt)
        db = torch.empty((d,), device=x.device, dtype=db_dt)
        _ln_bwd_rows[(grid,)](x, dy, g, mu, rstd, x if dx is None else dx, pdg, pdb, n, d,
                              rows_per_program, EPS, BLOCK=block, SAVED_STATS=saved,
                              WITH_DX=not saved, num_warps=warps)
        _col_sums[col_grid](pdg, pdb, dg, db, grid, d, BLOCK_M=COL_BLOCK_M, BLOCK_N=COL_BLOCK_N,
                            num_warps=4)
        return (dg, db) if saved else (dx, dg, db)
    return f
