"""SciPy's dense linear algebra (``scipy.linalg``), registered only when SciPy is installed.

Generated code calls the functions as ``scipy.linalg.<name>``; every derivative is written with
functions that have rules themselves (``scipy.linalg.solve_triangular``, ``cho_solve``,
``lu_solve``, the helpers ``rt.frechet`` and ``rt.sqrtm_frechet``...), so it can be
differentiated again. All accept stacks of matrices (``(..., n, n)``, as SciPy does), and a
right-hand side ``b`` of one dimension is one vector (for every matrix of a stack), as in
SciPy. ``overwrite_a`` / ``overwrite_b`` are not accepted (the derivative reads the inputs);
``check_finite`` is. Derivative code calls SciPy with ``check_finite=False``: where the
derivative is not finite (a singular point upstream) it is nan, as NumPy's would be, not an
error of SciPy's check.

* ``solve_triangular(a, b, trans, lower, unit_diagonal)``: ``a`` is read from one triangle
  (without its diagonal for ``unit_diagonal=True``): the other entries get derivative 0.
* ``solve(a, b, lower, assume_a, transposed)`` and ``inv(a, assume_a, lower)``: ``assume_a``
  ``None``/``'gen'`` (general), ``'sym'``, ``'her'``, ``'pos'`` (the symmetric matrix of the
  upper triangle, the lower one with ``lower=True``: the other triangle gets derivative 0),
  ``'upper triangular'``, ``'lower triangular'``. The derivative w.r.t. ``a`` refuses the
  other structures (``'diagonal'``, ``'tridiagonal'``, ``'banded'``) when it runs
  (``ValueError``); the one w.r.t. ``b`` holds for all. ``det(a)``.
* ``cholesky(a, lower)``: the upper factor by default; ``a`` is read from the upper triangle
  (the lower one with ``lower=True``), as for ``np.linalg.cholesky``.
* ``c, low = cho_factor(a, lower)`` and ``cho_solve((c, low), b)``: ``c`` holds the factor in
  one triangle and, SciPy's docs say, "random data" in the other: SciPy leaves ``a``'s own
  entries there (LAPACK's ``potrf`` does not touch them), so they are differentiated as the
  copies of ``a`` they are -- checked when the derivative runs (``rt.require_copied_triangle``),
  never assumed. ``cho_solve`` reads only the factor's triangle of ``c``; ``low`` (a flag) has
  no derivative.
* ``lu, piv = lu_factor(a)`` and ``lu_solve((lu, piv), b, trans)``: ``lu`` packs ``L``
  (strictly below the diagonal, unit diagonal) and ``U``; the pivots ``piv`` are integers (no
  derivative: the permutation is piecewise constant). The derivatives need no permutation:
  ``a = P L U`` gives ``a⁻¹ P = U⁻¹ L⁻¹`` and ``P L⁻ᵀ = a⁻ᵀ Uᵀ``.
* ``expm(A)``, ``logm(A)``: ``dF = L_f(A, dA)``, the Fréchet derivative (``rt.frechet``), whose
  transpose is the Fréchet derivative at ``Aᵀ``. ``sqrtm(A)``: ``dS`` solves ``S dS + dS S =
  dA`` (``rt.sqrtm_frechet``). ``logm`` and ``sqrtm`` need a real principal value (no
  eigenvalue of ``A`` on the closed negative real axis, ``A`` nonsingular): elsewhere their
  derivative raises ``ValueError``. Their deprecated ``disp``/``blocksize`` are not accepted.

* Linear matrix equations, each differentiated by solving one more equation of its kind (the
  adjoint one in reverse mode): ``solve_sylvester(a, b, q)`` (A X + X B = Q; complex values
  too), ``solve_continuous_lyapunov(a, q)`` (A X + X Aᵀ = Q), ``solve_discrete_lyapunov(a, q,
  method)`` (A X Aᵀ - X + Q = 0; the derivatives use the same ``method``) and
  ``solve_continuous_are(a, b, q, r, e, s, balanced)`` (Riccati: its derivative is a Lyapunov
  equation in the closed-loop matrix; ``e`` and ``s`` differentiated too). ``q`` is used as
  given (not made symmetric), so its derivative is the plain linear one. The Lyapunov and
  Riccati equations hold Aᴴ for complex values, not holomorphic in ``a``: their rules are real
  (a complex value is refused by name).

* ``eigh(a, lower, eigvals_only, driver)`` and ``eigvalsh`` (the symmetric matrix read from
  one triangle; distinct eigenvalues), ``pinv`` (full rank) and ``lstsq`` (one full-rank
  matrix): np.linalg's derivatives, of SciPy's own results. The generalized problem
  (``b``), subsets of eigenpairs, ``return_rank`` and ``overwrite_*`` are refused by name.

Singular matrices (and ties between pivots of ``lu_factor``) are not claimed, as for
``np.linalg``.
"""

from __future__ import annotations

import numpy as np

from adgen.rules import runtime as rt
from adgen.rules.registry import nondifferentiable, rule, sequence_rule
from adgen.rules.samples import (
    CONTRACTIVE,
    INVERTIBLE,
    POSITIVE,
    SPD,
    STABLE,
    SYMMETRIC,
    Arg,
    Domain,
    example,
)

try:
    import scipy.linalg
except ImportError:  # pragma: no cover - SciPy is optional
    scipy = None  # type: ignore[assignment]
# every SciPy has scipy.linalg.norm as its rule below computes it (BLAS for the 2-norm)
_linalg = scipy.linalg if scipy is not None else None

# The rules follow SciPy 1.16's scipy.linalg: stacks of matrices, inv(assume_a=), and real
# principal sqrtm/logm results. Older SciPy (the last for Python 3.10 is 1.15) differs in
# each, so there these functions have no rules: a call of one is refused by name
# (NoRuleError), never differentiated by the wrong formula.
if scipy is not None and tuple(int(p) for p in scipy.__version__.split(".")[:2]) < (1, 16):
    scipy = None  # type: ignore[assignment]
# are this module's rules registered (SciPy 1.16 or newer installed)?
SUPPORTED = scipy is not None


def _copies_other_triangle() -> bool:
    """Does ``scipy.linalg.cho_factor`` leave the triangle it does not use as ``a``'s?"""
    a = np.array([[4.0, 1.0], [1.0, 3.0]])
    c, _ = scipy.linalg.cho_factor(a)
    return bool(c[1, 0] == a[1, 0])


# are cho_factor / cho_solve's rules registered?
CHOLESKY_PAIR = SUPPORTED and _copies_other_triangle()


if scipy is not None:
    # -- triangular and general solves, inverses, determinants ------------------------------

    # banded systems: `ab` holds the bands of `a` (ab[u + i - j, j] = a[i, j]); the products and
    # transposes derivatives need are helpers with rules of their own (bilinear / linear)
    _BANDED = "scipy.linalg.solve_banded((1, 1), ab + np.array([[0.0], [5.0], [0.0]]), b)"

    @rule(
        scipy.linalg.solve_banded,
        examples=[
            example(_BANDED, ab=(3, 4), b=(4,), f32=True),
            example(_BANDED, ab=(3, 4), b=(4, 2)),
            example(
                "scipy.linalg.solve_banded((2, 0), ab + np.array([[4.0], [0.0], [0.0]]), b)",
                ab=(3, 5),
                b=(5,),
            ),
        ],
    )
    def solve_banded(ans, l_and_u, ab, b, *, check_finite=True):
        """x = a⁻¹ b for the banded ``a`` stored in ``ab``: dx = a⁻¹ (db - da x); the
        cotangents are λ = a⁻ᵀ g for ``b`` and the band of -λ xᵀ for ``ab``."""

        def jvp_ab(dab):
            product = rt.banded_matvec(l_and_u, dab, ans)
            return -scipy.linalg.solve_banded(l_and_u, ab, product, check_finite=False)

        def jvp_b(db):
            return scipy.linalg.solve_banded(l_and_u, ab, db, check_finite=False)

        def vjp_ab(g):
            transposed = rt.banded_transpose(l_and_u, ab)
            lam = scipy.linalg.solve_banded(
                (l_and_u[1], l_and_u[0]), transposed, g, check_finite=False
            )
            return -rt.banded_outer(l_and_u, lam, ans, ab)

        def vjp_b(g):
            transposed = rt.banded_transpose(l_and_u, ab)
            return scipy.linalg.solve_banded(
                (l_and_u[1], l_and_u[0]), transposed, g, check_finite=False
            )

    @rule(
        rt.banded_matvec,
        examples=[
            example("rt.banded_matvec((1, 1), ab, x)", ab=(3, 4), x=(4,), f32=True),
            example("rt.banded_matvec((2, 1), ab, x)", ab=(4, 5), x=(5, 2)),
        ],
    )
    def banded_matvec(ans, l_and_u, ab, x):
        """a @ x, bilinear in the bands and ``x``."""

        def jvp_ab(dab):
            return rt.banded_matvec(l_and_u, dab, x)

        def jvp_x(dx):
            return rt.banded_matvec(l_and_u, ab, dx)

        def vjp_ab(g):
            return rt.banded_outer(l_and_u, g, x, ab)

        def vjp_x(g):
            swapped = (l_and_u[1], l_and_u[0])
            return rt.banded_matvec(swapped, rt.banded_transpose(l_and_u, ab), g)

    @rule(
        rt.banded_outer,
        examples=[
            example("rt.banded_outer((1, 1), y, x, like)", y=(4,), x=(4,), like=(3, 4), f32=True),
            example("rt.banded_outer((0, 2), y, x, like)", y=(5, 2), x=(5, 2), like=(3, 5)),
        ],
    )
    def banded_outer(ans, l_and_u, y, x, like):
        """The band of y xᵀ, bilinear in ``y`` and ``x`` (``like`` gives only the shape)."""

        def jvp_y(dy):
            return rt.banded_outer(l_and_u, dy, x, like)

        def jvp_x(dx):
            return rt.banded_outer(l_and_u, y, dx, like)

        def vjp_y(g):
            return rt.banded_matvec(l_and_u, g, x)

        def vjp_x(g):
            swapped = (l_and_u[1], l_and_u[0])
            return rt.banded_matvec(swapped, rt.banded_transpose(l_and_u, g), y)

        def jvp_like(dlike):
            return rt.zeros_like(ans)

        def vjp_like(g):
            return rt.zeros_like(like)

    @rule(
        rt.banded_transpose,
        examples=[example("rt.banded_transpose((2, 1), ab)", ab=(4, 5), f32=True)],
    )
    def banded_transpose(ans, l_and_u, ab):
        """The bands of aᵀ: linear (its transpose is the transpose the other way)."""

        def jvp_ab(dab):
            return rt.banded_transpose(l_and_u, dab)

        def vjp_ab(g):
            return rt.banded_transpose((l_and_u[1], l_and_u[0]), g)

    @rule(
        scipy.linalg.solve_triangular,
        examples=[
            example(
                "scipy.linalg.solve_triangular(a, b)", a=Arg((3, 3), INVERTIBLE), b=(3,), f32=True
            ),
            example(
                "scipy.linalg.solve_triangular(a, b, lower=True)",
                a=Arg((3, 3), INVERTIBLE),
                b=(3, 2),
                f32=True,
            ),
            example(
                "scipy.linalg.solve_triangular(a, b, trans=1, lower=True, unit_diagonal=True)",
                a=Arg((3, 3), INVERTIBLE),
                b=(3, 2),
            ),
            example(
                "scipy.linalg.solve_triangular(a, b, trans='T', unit_diagonal=True)",
                a=Arg((3, 3), INVERTIBLE),
                b=(3,),
            ),
            example(
                "scipy.linalg.solve_triangular(a, b, 2, True)", a=Arg((2, 3, 3), INVERTIBLE), b=(3,)
            ),
            example(
                "scipy.linalg.solve_triangular(a, b, trans='N')",
                a=Arg((3, 3), INVERTIBLE),
                b=(2, 3, 2),
            ),
        ],
    )
    def solve_triangular(
        ans, a, b, trans=0, lower=False, unit_diagonal=False, *, check_finite=True
    ):
        """x = op(T)⁻¹ b, T the triangle of ``a`` read (with a unit diagonal for
        ``unit_diagonal=True``), op the transpose for ``trans`` 1, 2, 'T', 'C' (real input).
        dx = -op(T)⁻¹ op(dT) x; the cotangent of T is -op(T)⁻ᵀ g xᵀ (transposed back for a
        transposed op), kept on the triangle read."""

        def jvp_a(da):
            if lower:
                dt = np.tril(da, -1 if unit_diagonal else 0)
            else:
                dt = np.triu(da, 1 if unit_diagonal else 0)
            if trans in (1, 2, "T", "C"):
                dt = np.swapaxes(dt, -1, -2)
            xm = ans[..., None] if np.ndim(b) == 1 else ans
            dxm = -scipy.linalg.solve_triangular(
                a,
                dt @ xm,
                trans=trans,
                lower=lower,
                unit_diagonal=unit_diagonal,
                check_finite=False,
            )
            return dxm[..., 0] if np.ndim(b) == 1 else dxm

        def jvp_b(db):
            return scipy.linalg.solve_triangular(
                a,
                db,
                trans=trans,
                lower=lower,
                unit_diagonal=unit_diagonal,
                check_finite=False,
            )

        def vjp_a(g):
            xm = ans[..., None] if np.ndim(b) == 1 else ans
            gm = g[..., None] if np.ndim(b) == 1 else g
            flipped = 0 if trans in (1, 2, "T", "C") else 1
            q = scipy.linalg.solve_triangular(
                a,
                gm,
                trans=flipped,
                lower=lower,
                unit_diagonal=unit_diagonal,
                check_finite=False,
            )
            if trans in (1, 2, "T", "C"):
                gt = -(xm @ np.swapaxes(q, -1, -2))
            else:
                gt = -(q @ np.swapaxes(xm, -1, -2))
            if lower:
                return rt.unbroadcast(np.tril(gt, -1 if unit_diagonal else 0), a)
            return rt.unbroadcast(np.triu(gt, 1 if unit_diagonal else 0), a)

        def vjp_b(g):
            gm = g[..., None] if np.ndim(b) == 1 else g
            flipped = 0 if trans in (1, 2, "T", "C") else 1
            q = scipy.linalg.solve_triangular(
                a,
                gm,
                trans=flipped,
                lower=lower,
                unit_diagonal=unit_diagonal,
                check_finite=False,
            )
            return rt.unbroadcast(q[..., 0] if np.ndim(b) == 1 else q, b)

    @rule(
        scipy.linalg.solve,
        examples=[
            example("scipy.linalg.solve(a, b)", a=Arg((3, 3), INVERTIBLE), b=(3,), f32=True),
            example(
                "scipy.linalg.solve(a, b, transposed=True)", a=Arg((3, 3), INVERTIBLE), b=(3, 2)
            ),
            example(
                "scipy.linalg.solve(a, b, assume_a='gen')", a=Arg((2, 3, 3), INVERTIBLE), b=(3,)
            ),
            example(
                "scipy.linalg.solve(a, b, assume_a='sym')", a=Arg((3, 3), INVERTIBLE), b=(3, 2)
            ),
            example(
                "scipy.linalg.solve(a, b, lower=True, assume_a='sym')",
                a=Arg((3, 3), INVERTIBLE),
                b=(3,),
            ),
            example(
                "scipy.linalg.solve(a, b, assume_a='pos')", a=Arg((3, 3), SPD), b=(3, 2), f32=True
            ),
            example(
                "scipy.linalg.solve(a, b, True, assume_a='pos')", a=Arg((2, 3, 3), SPD), b=(3, 1)
            ),
            example(
                "scipy.linalg.solve(a, b, assume_a='her', transposed=True)",
                a=Arg((3, 3), SPD),
                b=(3,),
            ),
            example(
                "scipy.linalg.solve(a, b, assume_a='lower triangular')",
                a=Arg((3, 3), INVERTIBLE),
                b=(3, 2),
            ),
            example(
                "scipy.linalg.solve(a, b, assume_a='upper triangular', transposed=True)",
                a=Arg((3, 3), INVERTIBLE),
                b=(3,),
            ),
            example("scipy.linalg.solve(a, b)", a=Arg((3, 3), INVERTIBLE), b=(2, 3, 1)),
        ],
    )
    def solve(ans, a, b, lower=False, *, check_finite=True, assume_a=None, transposed=False):
        """x = op(M)⁻¹ b, M the matrix read from ``a`` for ``assume_a`` (``rt.assumed_matrix``)
        and op the transpose for ``transposed=True``. dx = -op(M)⁻¹ op(dM) x; the cotangent of
        M is -op(M)⁻ᵀ g xᵀ (transposed back for ``transposed``), carried to ``a`` by the
        transpose of its reading (``rt.assumed_matrix_vjp``)."""

        def jvp_a(da):
            if assume_a in (None, "gen", "general"):
                dm = da
            else:
                dm = rt.assumed_matrix(da, assume_a, lower)
            if transposed:
                dm = np.swapaxes(dm, -1, -2)
            xm = ans[..., None] if np.ndim(b) == 1 else ans
            dxm = -scipy.linalg.solve(
                a,
                dm @ xm,
                lower=lower,
                assume_a=assume_a,
                transposed=transposed,
                check_finite=False,
            )
            return dxm[..., 0] if np.ndim(b) == 1 else dxm

        def jvp_b(db):
            return scipy.linalg.solve(
                a, db, lower=lower, assume_a=assume_a, transposed=transposed, check_finite=False
            )

        def vjp_a(g):
            xm = ans[..., None] if np.ndim(b) == 1 else ans
            gm = g[..., None] if np.ndim(b) == 1 else g
            q = scipy.linalg.solve(
                a, gm, lower=lower, assume_a=assume_a, transposed=not transposed, check_finite=False
            )
            if transposed:
                gm_a = -(xm @ np.swapaxes(q, -1, -2))
            else:
                gm_a = -(q @ np.swapaxes(xm, -1, -2))
            if assume_a in (None, "gen", "general"):
                return rt.unbroadcast(gm_a, a)
            return rt.unbroadcast(rt.assumed_matrix_vjp(gm_a, assume_a, lower), a)

        def vjp_b(g):
            gm = g[..., None] if np.ndim(b) == 1 else g
            q = scipy.linalg.solve(
                a, gm, lower=lower, assume_a=assume_a, transposed=not transposed, check_finite=False
            )
            return rt.unbroadcast(q[..., 0] if np.ndim(b) == 1 else q, b)

    @rule(
        scipy.linalg.inv,
        examples=[
            example("scipy.linalg.inv(a)", a=Arg((3, 3), INVERTIBLE), f32=True),
            example("scipy.linalg.inv(a)", a=Arg((2, 3, 3), INVERTIBLE)),
            example("scipy.linalg.inv(a, assume_a='pos')", a=Arg((3, 3), SPD), f32=True),
            example("scipy.linalg.inv(a, assume_a='sym', lower=True)", a=Arg((3, 3), INVERTIBLE)),
            example("scipy.linalg.inv(a, assume_a='upper triangular')", a=Arg((3, 3), INVERTIBLE)),
            example("scipy.linalg.inv(a) ** 2", a=Arg((4, 4), INVERTIBLE)),
        ],
    )
    def inv(ans, a, *, check_finite=True, assume_a=None, lower=False):
        """a⁻¹ (of the matrix M read from ``a`` for ``assume_a``): dM⁻¹ = -M⁻¹ dM M⁻¹."""

        def jvp(da):
            if assume_a in (None, "gen", "general"):
                return -(ans @ da @ ans)
            return -(ans @ rt.assumed_matrix(da, assume_a, lower) @ ans)

        def vjp(g):
            gm = -(np.swapaxes(ans, -1, -2) @ g @ np.swapaxes(ans, -1, -2))
            if assume_a in (None, "gen", "general"):
                return gm
            return rt.assumed_matrix_vjp(gm, assume_a, lower)

    @rule(
        scipy.linalg.det,
        domain=INVERTIBLE,
        examples=[
            example("scipy.linalg.det(a)", a=(3, 3), f32=True),
            example("scipy.linalg.det(a)", a=(2, 3, 3)),
            example("scipy.linalg.det(a) ** 2", a=(1, 1)),
        ],
        complex=True,
    )
    def det(ans, a, *, check_finite=True):
        """d det a = det a · tr(a⁻¹ da) (invertible ``a``; not claimed at singular matrices)."""

        def jvp(da):
            return ans * np.trace(np.linalg.solve(a, da), axis1=-2, axis2=-1)

        def vjp(g):
            return np.expand_dims(g * ans, (-2, -1)) * np.swapaxes(np.linalg.inv(a), -1, -2)

    # -- Cholesky ---------------------------------------------------------------------------
    # With L the lower factor (Uᵀ for the upper one) of the symmetric matrix S read from one
    # triangle of ``a``: dL = L Φ(L⁻¹ dS L⁻ᵀ), Φ = the lower triangle with its diagonal
    # halved; the cotangent of S is the symmetric part of L⁻ᵀ Φ(Lᵀ Ḡ) L⁻¹, carried to the
    # triangle read by ``rt.assumed_matrix_vjp(·, "pos", lower)``.

    @rule(
        scipy.linalg.cholesky,
        domain=SPD,
        examples=[
            example("scipy.linalg.cholesky(a)", a=(3, 3), f32=True),
            example("scipy.linalg.cholesky(a, lower=True)", a=(3, 3), f32=True),
            example("scipy.linalg.cholesky(a, True)", a=(2, 3, 3)),
            example("scipy.linalg.cholesky(a) ** 2", a=(4, 4)),
        ],
    )
    def cholesky(ans, a, lower=False, *, check_finite=True):
        """``a = L Lᵀ`` (``lower=True``, L returned) or ``a = Uᵀ U`` (U returned)."""

        def jvp(da):
            low = ans if lower else np.swapaxes(ans, -1, -2)
            ds = rt.assumed_matrix(da, "pos", lower)
            y = scipy.linalg.solve_triangular(low, ds, lower=True, check_finite=False)
            x = scipy.linalg.solve_triangular(
                low, np.swapaxes(y, -1, -2), lower=True, check_finite=False
            )
            dlow = low @ (0.5 * (np.tril(x) + np.tril(x, -1)))
            return dlow if lower else np.swapaxes(dlow, -1, -2)

        def vjp(g):
            low = ans if lower else np.swapaxes(ans, -1, -2)
            glow = g if lower else np.swapaxes(g, -1, -2)
            p = np.swapaxes(low, -1, -2) @ glow
            p = 0.5 * (np.tril(p) + np.tril(p, -1))
            y = scipy.linalg.solve_triangular(low, p, trans=1, lower=True, check_finite=False)
            s = np.swapaxes(
                scipy.linalg.solve_triangular(
                    low, np.swapaxes(y, -1, -2), trans=1, lower=True, check_finite=False
                ),
                -1,
                -2,
            )
            return rt.assumed_matrix_vjp(0.5 * (s + np.swapaxes(s, -1, -2)), "pos", lower)

    # cho_factor leaves the other triangle of its result as LAPACK found it (a copy of a) in
    # SciPy up to 1.17, and zeroes it in 1.18: its rule follows the first; with the second it
    # is refused by name (no rule), never differentiated wrongly
    if CHOLESKY_PAIR:

        @rule(
            scipy.linalg.cho_factor,
            outputs=2,
            domain=SPD,
            examples=[
                example("scipy.linalg.cho_factor(a)[0]", a=(3, 3), f32=True),
                example("scipy.linalg.cho_factor(a, lower=True)[0]", a=(3, 3)),
                example("scipy.linalg.cho_factor(a, True)[0] * 2.0", a=(2, 3, 3)),
            ],
        )
        def cho_factor(ans, a, lower=False, *, check_finite=True):
            """``(c, lower)``: the Cholesky factor in one triangle of ``c`` (as
            ``scipy.linalg.cholesky``), ``a``'s own entries in the other (checked); the flag has
            no derivative."""

            def jvp(da):
                rt.require_copied_triangle(ans[0], a, lower)
                low = np.tril(ans[0]) if lower else np.swapaxes(np.triu(ans[0]), -1, -2)
                ds = rt.assumed_matrix(da, "pos", lower)
                y = scipy.linalg.solve_triangular(low, ds, lower=True, check_finite=False)
                x = scipy.linalg.solve_triangular(
                    low, np.swapaxes(y, -1, -2), lower=True, check_finite=False
                )
                dlow = low @ (0.5 * (np.tril(x) + np.tril(x, -1)))
                if lower:
                    return (dlow + np.triu(da, 1), rt.zeros_like(ans[1]))
                return (np.swapaxes(dlow, -1, -2) + np.tril(da, -1), rt.zeros_like(ans[1]))

            def vjp(g):
                rt.require_copied_triangle(ans[0], a, lower)
                low = np.tril(ans[0]) if lower else np.swapaxes(np.triu(ans[0]), -1, -2)
                glow = np.tril(g[0]) if lower else np.swapaxes(np.triu(g[0]), -1, -2)
                p = np.swapaxes(low, -1, -2) @ glow
                p = 0.5 * (np.tril(p) + np.tril(p, -1))
                y = scipy.linalg.solve_triangular(low, p, trans=1, lower=True, check_finite=False)
                s = np.swapaxes(
                    scipy.linalg.solve_triangular(
                        low, np.swapaxes(y, -1, -2), trans=1, lower=True, check_finite=False
                    ),
                    -1,
                    -2,
                )
                ga = rt.assumed_matrix_vjp(0.5 * (s + np.swapaxes(s, -1, -2)), "pos", lower)
                return ga + (np.triu(g[0], 1) if lower else np.tril(g[0], -1))

        nondifferentiable(rt.require_copied_triangle)

    # cho_solve reads only the factor's triangle of `c`: its rule holds whatever cho_factor
    # leaves in the other one (the examples through cho_factor need that rule too)
    _CHO_FACTORED = (
        [
            example(
                "scipy.linalg.cho_solve(scipy.linalg.cho_factor(a), b)",
                a=Arg((3, 3), SPD),
                b=(3,),
                f32=True,
            ),
            example(
                "scipy.linalg.cho_solve(scipy.linalg.cho_factor(a, lower=True), b)",
                a=Arg((3, 3), SPD),
                b=(3, 2),
            ),
            example(
                "scipy.linalg.cho_solve(scipy.linalg.cho_factor(a), b)",
                a=Arg((2, 3, 3), SPD),
                b=(3, 1),
            ),
        ]
        if CHOLESKY_PAIR
        else []
    )

    @sequence_rule(
        scipy.linalg.cho_solve,
        sequence="c_and_lower",
        examples=[
            *_CHO_FACTORED,
            example("scipy.linalg.cho_solve((c, True), b)", c=Arg((3, 3), INVERTIBLE), b=(3, 2)),
            example("scipy.linalg.cho_solve((c, False), b)", c=Arg((2, 3, 3), INVERTIBLE), b=(3,)),
        ],
    )
    def cho_solve(ans, c_and_lower, b, *, check_finite=True):
        """x = M⁻¹ b, M = L Lᵀ with L = tril(c) (``lower``) or triu(c)ᵀ: only that triangle of
        ``c`` is read. dx = -M⁻¹ (dL Lᵀ + L dLᵀ) x; with Ḡ = -M⁻¹ g xᵀ, L̄ = (Ḡ + Ḡᵀ) L. The
        flag may be an array (one per matrix of a stack, from a batched ``cho_factor``); it
        is read through ``np.not_equal`` (no derivative), as it comes from ``cho_factor``."""

        def jvp_c_and_lower(parts):
            low_flag = np.expand_dims(np.not_equal(c_and_lower[1], False), (-2, -1))
            c = c_and_lower[0]
            low = np.where(low_flag, np.tril(c), np.swapaxes(np.triu(c), -1, -2))
            dlow = np.where(low_flag, np.tril(parts[0]), np.swapaxes(np.triu(parts[0]), -1, -2))
            dm = dlow @ np.swapaxes(low, -1, -2) + low @ np.swapaxes(dlow, -1, -2)
            xm = ans[..., None] if np.ndim(b) == 1 else ans
            dxm = -scipy.linalg.cho_solve(c_and_lower, dm @ xm, check_finite=False)
            return dxm[..., 0] if np.ndim(b) == 1 else dxm

        def jvp_b(db):
            return scipy.linalg.cho_solve(c_and_lower, db, check_finite=False)

        def vjp_c_and_lower(g, k):
            if k == 1:
                return rt.zeros_like(c_and_lower[1])
            low_flag = np.expand_dims(np.not_equal(c_and_lower[1], False), (-2, -1))
            c = c_and_lower[0]
            low = np.where(low_flag, np.tril(c), np.swapaxes(np.triu(c), -1, -2))
            xm = ans[..., None] if np.ndim(b) == 1 else ans
            gm = g[..., None] if np.ndim(b) == 1 else g
            gs = -(
                scipy.linalg.cho_solve(c_and_lower, gm, check_finite=False)
                @ np.swapaxes(xm, -1, -2)
            )
            glow = (gs + np.swapaxes(gs, -1, -2)) @ low
            gc = np.where(low_flag, np.tril(glow), np.triu(np.swapaxes(glow, -1, -2)))
            return rt.unbroadcast(gc, c)

        def vjp_b(g):
            gm = g[..., None] if np.ndim(b) == 1 else g
            q = scipy.linalg.cho_solve(c_and_lower, gm, check_finite=False)
            return rt.unbroadcast(q[..., 0] if np.ndim(b) == 1 else q, b)

    # -- LU ---------------------------------------------------------------------------------
    # ``lu`` packs L (unit lower) and U, a = P L U. Products: L v = tril(lu, -1) v + v,
    # U v = triu(lu) v; solves: ``solve_triangular(lu, ·, lower=True, unit_diagonal=True)``
    # reads L, ``solve_triangular(lu, ·)`` reads U.

    @rule(
        scipy.linalg.lu_factor,
        outputs=2,
        domain=INVERTIBLE,
        examples=[
            example("scipy.linalg.lu_factor(a)[0]", a=(3, 3), f32=True),
            example("scipy.linalg.lu_factor(a[::-1])[0]", a=(3, 3)),
            example("scipy.linalg.lu_factor(a)[0] ** 2", a=(2, 3, 3)),
        ],
    )
    def lu_factor(ans, a, *, check_finite=True):
        """``(lu, piv)``. With X = L⁻¹ Pᵀ da U⁻¹ = U a⁻¹ (da U⁻¹): dL = L tril(X, -1),
        dU = triu(X) U. Transposed: with Z = tril(Lᵀ L̄, -1) + triu(Ū Uᵀ), ā = P L⁻ᵀ Z U⁻ᵀ =
        a⁻ᵀ Uᵀ Z U⁻ᵀ. The pivots have no derivative."""

        def jvp(da):
            lu = ans[0]
            w = np.swapaxes(
                scipy.linalg.solve_triangular(
                    lu, np.swapaxes(da, -1, -2), trans=1, check_finite=False
                ),
                -1,
                -2,
            )
            x = np.triu(lu) @ scipy.linalg.lu_solve(ans, w, check_finite=False)
            dl = np.tril(lu, -1) @ np.tril(x, -1) + np.tril(x, -1)
            return (dl + np.triu(x) @ np.triu(lu), rt.zeros_like(ans[1]))

        def vjp(g):
            lu = ans[0]
            gl = np.tril(g[0], -1)
            z = np.tril(np.swapaxes(np.tril(lu, -1), -1, -2) @ gl + gl, -1) + np.triu(
                np.triu(g[0]) @ np.swapaxes(np.triu(lu), -1, -2)
            )
            w = np.swapaxes(
                scipy.linalg.solve_triangular(lu, np.swapaxes(z, -1, -2), check_finite=False),
                -1,
                -2,
            )
            return scipy.linalg.lu_solve(
                ans, np.swapaxes(np.triu(lu), -1, -2) @ w, trans=1, check_finite=False
            )

    @sequence_rule(
        scipy.linalg.lu_solve,
        sequence="lu_and_piv",
        examples=[
            example(
                "scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b)",
                a=Arg((3, 3), INVERTIBLE),
                b=(3,),
                f32=True,
            ),
            example(
                "scipy.linalg.lu_solve(scipy.linalg.lu_factor(a[::-1]), b, trans=1)",
                a=Arg((3, 3), INVERTIBLE),
                b=(3, 2),
            ),
            example(
                "scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b, 2)",
                a=Arg((2, 3, 3), INVERTIBLE),
                b=(3,),
            ),
            example(
                "scipy.linalg.lu_solve((lu, np.array([2, 2, 2])), b)",
                lu=Arg((3, 3), INVERTIBLE),
                b=(2, 3, 2),
            ),
        ],
    )
    def lu_solve(ans, lu_and_piv, b, trans=0, *, check_finite=True):
        """x = a⁻¹ b (``trans=0``) or a⁻ᵀ b (1, 2), a = P L U. For ``trans=0``:
        dx = -U⁻¹ L⁻¹ (dL U + L dU) x. For ``trans`` 1: with z = Pᵀ x = L⁻ᵀ U⁻ᵀ b,
        dx = -a⁻ᵀ (dL U + L dU)ᵀ z. In both, the cotangent of ``lu`` is
        -(tril(p (U q)ᵀ, -1) + triu(Lᵀ p qᵀ)) with (p, q) = (Pᵀ a⁻ᵀ g, x), resp.
        (Pᵀ x, a⁻¹ g), where Pᵀ a⁻ᵀ = L⁻ᵀ U⁻ᵀ."""

        def jvp_lu_and_piv(parts):
            lu = lu_and_piv[0]
            dlu = parts[0]
            xm = ans[..., None] if np.ndim(b) == 1 else ans
            if trans == 0:
                w = np.tril(dlu, -1) @ (np.triu(lu) @ xm)
                w = w + np.tril(lu, -1) @ (np.triu(dlu) @ xm) + np.triu(dlu) @ xm
                dxm = -scipy.linalg.solve_triangular(
                    lu,
                    scipy.linalg.solve_triangular(
                        lu, w, lower=True, unit_diagonal=True, check_finite=False
                    ),
                    check_finite=False,
                )
            else:
                bm = b[..., None] if np.ndim(b) == 1 else b
                z = scipy.linalg.solve_triangular(
                    lu,
                    scipy.linalg.solve_triangular(lu, bm, trans=1, check_finite=False),
                    trans=1,
                    lower=True,
                    unit_diagonal=True,
                    check_finite=False,
                )
                ltz = np.swapaxes(np.tril(lu, -1), -1, -2) @ z + z
                w = np.swapaxes(np.triu(lu), -1, -2) @ (np.swapaxes(np.tril(dlu, -1), -1, -2) @ z)
                w = w + np.swapaxes(np.triu(dlu), -1, -2) @ ltz
                dxm = -scipy.linalg.lu_solve(lu_and_piv, w, trans=trans, check_finite=False)
            return dxm[..., 0] if np.ndim(b) == 1 else dxm

        def jvp_b(db):
            return scipy.linalg.lu_solve(lu_and_piv, db, trans=trans, check_finite=False)

        def vjp_lu_and_piv(g, k):
            if k == 1:
                return rt.zeros_like(lu_and_piv[1])
            lu = lu_and_piv[0]
            gm = g[..., None] if np.ndim(b) == 1 else g
            if trans == 0:
                p = scipy.linalg.solve_triangular(
                    lu,
                    scipy.linalg.solve_triangular(lu, gm, trans=1, check_finite=False),
                    trans=1,
                    lower=True,
                    unit_diagonal=True,
                    check_finite=False,
                )
                q = ans[..., None] if np.ndim(b) == 1 else ans
            else:
                bm = b[..., None] if np.ndim(b) == 1 else b
                p = scipy.linalg.solve_triangular(
                    lu,
                    scipy.linalg.solve_triangular(lu, bm, trans=1, check_finite=False),
                    trans=1,
                    lower=True,
                    unit_diagonal=True,
                    check_finite=False,
                )
                q = scipy.linalg.lu_solve(lu_and_piv, gm, check_finite=False)
            ltp = np.swapaxes(np.tril(lu, -1), -1, -2) @ p + p
            glu = np.tril(p @ np.swapaxes(np.triu(lu) @ q, -1, -2), -1)
            glu = glu + np.triu(ltp @ np.swapaxes(q, -1, -2))
            return rt.unbroadcast(-glu, lu)

        def vjp_b(g):
            gm = g[..., None] if np.ndim(b) == 1 else g
            q = scipy.linalg.lu_solve(
                lu_and_piv, gm, trans=1 if trans == 0 else 0, check_finite=False
            )
            return rt.unbroadcast(q[..., 0] if np.ndim(b) == 1 else q, b)

    # -- matrix functions -------------------------------------------------------------------

    @rule(
        scipy.linalg.expm,
        examples=[
            example("scipy.linalg.expm(A)", A=(3, 3), f32=True),
            example("scipy.linalg.expm(A)", A=(2, 2, 2)),
            example("scipy.linalg.expm(0.5 * A) ** 2", A=Arg((3, 3), SPD)),
        ],
    )
    def expm(A):  # noqa: N803 - SciPy's parameter name
        """dF = L_exp(A, dA); the transpose of L_exp(A, ·) is L_exp(Aᵀ, ·)."""

        def jvp(dA):  # noqa: N803
            return rt.frechet(A, dA, "expm")

        def vjp(g):
            return rt.frechet(np.swapaxes(A, -1, -2), g, "expm")

    @rule(
        scipy.linalg.logm,
        domain=INVERTIBLE,
        examples=[
            example("scipy.linalg.logm(A)", A=(3, 3)),
            example("scipy.linalg.logm(A)", A=(2, 2, 2)),
            example("scipy.linalg.logm(A) ** 2", A=Arg((3, 3), SPD)),
        ],
    )
    def logm(A):  # noqa: N803 - SciPy's parameter name
        """dF = L_log(A, dA) (a real principal logarithm: no eigenvalue on the closed negative
        real axis); the transpose of L_log(A, ·) is L_log(Aᵀ, ·). (SciPy returns a complex
        logarithm for float32 input: not differentiated.)"""

        def jvp(dA):  # noqa: N803
            return rt.frechet(A, dA, "logm")

        def vjp(g):
            return rt.frechet(np.swapaxes(A, -1, -2), g, "logm")

    @rule(
        scipy.linalg.sqrtm,
        domain=INVERTIBLE,
        examples=[
            example("scipy.linalg.sqrtm(A)", A=(3, 3), f32=True),
            example("scipy.linalg.sqrtm(A)", A=(2, 2, 2)),
            example("scipy.linalg.sqrtm(A) ** 2", A=Arg((4, 4), SPD)),
        ],
    )
    def sqrtm(ans, A):  # noqa: N803 - SciPy's parameter name
        """S = A^½ (principal, real): S dS + dS S = dA, solved by ``rt.sqrtm_frechet(S, dA)``;
        its transpose is ``rt.sqrtm_frechet(Sᵀ, ·)``."""

        def jvp(dA):  # noqa: N803
            return rt.sqrtm_frechet(ans, dA)

        def vjp(g):
            return rt.sqrtm_frechet(np.swapaxes(ans, -1, -2), g)

    # -- the helpers' own rules -------------------------------------------------------------
    # rt.frechet(a, e, f) = L_f(a, e) is linear in e, with transpose L_f(aᵀ, ·). In a, it is
    # read off a block matrix: f([[a, e], [0, a]]) = [[f(a), L_f(a, e)], [0, f(a)]], so the
    # tangent of L_f(a, e) along da is the upper right block of L_f(B, [[da, 0], [0, da]]),
    # B = [[a, e], [0, a]], and its cotangent for c the sum of the diagonal blocks of
    # L_f(Bᵀ, [[0, c], [0, 0]]). Every order doubles the size of the matrices.

    _FRECHET_EXAMPLES = [
        ("expm", (3, 3), None, True),
        ("expm", (2, 2, 2), None, False),
        ("logm", (3, 3), INVERTIBLE, False),
        ("logm", (2, 2, 2), INVERTIBLE, False),
    ]

    @rule(
        rt.frechet,
        examples=[
            example(f"rt.frechet(a, e, {fn!r})", a=Arg(shape, dom), e=shape, f32=f32)
            for fn, shape, dom, f32 in _FRECHET_EXAMPLES
        ],
    )
    def frechet(a, e, function="expm"):
        """Linear in ``e``; in ``a``, the block matrices above."""

        def jvp_e(de):
            return rt.frechet(a, de, function)

        def jvp_a(da):
            n = np.shape(a)[-1]
            z = rt.zeros_like(da)
            big = np.concatenate(
                (np.concatenate((a, e), axis=-1), np.concatenate((rt.zeros_like(a), a), axis=-1)),
                axis=-2,
            )
            dbig = np.concatenate(
                (np.concatenate((da, z), axis=-1), np.concatenate((z, da), axis=-1)), axis=-2
            )
            return rt.frechet(big, dbig, function)[..., :n, n:]

        def vjp_e(c):
            return rt.frechet(np.swapaxes(a, -1, -2), c, function)

        def vjp_a(c):
            n = np.shape(a)[-1]
            z = rt.zeros_like(c)
            big = np.concatenate(
                (np.concatenate((a, e), axis=-1), np.concatenate((rt.zeros_like(a), a), axis=-1)),
                axis=-2,
            )
            cbig = np.concatenate(
                (np.concatenate((z, c), axis=-1), np.concatenate((z, z), axis=-1)), axis=-2
            )
            h = rt.frechet(np.swapaxes(big, -1, -2), cbig, function)
            return h[..., :n, :n] + h[..., n:, n:]

    # rt.sqrtm_frechet(s, e) = x, s x + x s = e: linear in e, with transpose
    # rt.sqrtm_frechet(sᵀ, ·). In s: ds x + s dx + dx s + x ds = 0, so
    # dx = -rt.sqrtm_frechet(s, ds x + x ds), and for the cotangent c, with
    # y = rt.sqrtm_frechet(sᵀ, c): s̄ = -(y xᵀ + xᵀ y).

    @rule(
        rt.sqrtm_frechet,
        examples=[
            example("rt.sqrtm_frechet(s, e)", s=Arg((3, 3), INVERTIBLE), e=(3, 3), f32=True),
            example("rt.sqrtm_frechet(s, e)", s=Arg((2, 3, 3), SPD), e=(2, 3, 3)),
        ],
    )
    def sqrtm_frechet(ans, s, e):
        """Linear in ``e``; in ``s``, the derivative of the Sylvester equation above."""

        def jvp_e(de):
            return rt.sqrtm_frechet(s, de)

        def jvp_s(ds):
            return -rt.sqrtm_frechet(s, ds @ ans + ans @ ds)

        def vjp_e(c):
            return rt.sqrtm_frechet(np.swapaxes(s, -1, -2), c)

        def vjp_s(c):
            y = rt.sqrtm_frechet(np.swapaxes(s, -1, -2), c)
            xt = np.swapaxes(ans, -1, -2)
            return -(y @ xt + xt @ y)

    _STRUCTURES = [
        ("'pos'", False, True),
        ("'sym'", True, False),
        ("'upper triangular'", False, False),
        ("'lower triangular'", False, False),
        ("None", False, False),
    ]

    @rule(
        rt.assumed_matrix,
        examples=[
            example(f"rt.assumed_matrix(a, {kind}, {low})", a=(3, 3), f32=f32)
            for kind, low, f32 in _STRUCTURES
        ]
        + [example("rt.assumed_matrix(a, 'her', True)", a=(2, 3, 3))],
        complex=True,
    )
    def assumed_matrix(a, assume_a=None, lower=False):
        """Linear in ``a``: its transpose is ``rt.assumed_matrix_vjp``."""

        def jvp_a(da):
            return rt.assumed_matrix(da, assume_a, lower)

        def vjp_a(g):
            return rt.assumed_matrix_vjp(g, assume_a, lower)

    @rule(
        rt.assumed_matrix_vjp,
        examples=[
            example(f"rt.assumed_matrix_vjp(g, {kind}, {low})", g=(3, 3), f32=f32)
            for kind, low, f32 in _STRUCTURES
        ]
        + [example("rt.assumed_matrix_vjp(g, 'positive definite')", g=(2, 3, 3))],
        complex=True,
    )
    def assumed_matrix_vjp(g, assume_a=None, lower=False):
        """Linear in ``g``: its transpose is ``rt.assumed_matrix``."""

        def jvp_g(dg):
            return rt.assumed_matrix_vjp(dg, assume_a, lower)

        def vjp_g(c):
            return rt.assumed_matrix(c, assume_a, lower)

    # -- linear matrix equations ------------------------------------------------------------
    # Each derivative solves an equation of the same kind, with the same operator: the
    # tangent's right-hand side is the equation's residual along the inputs' tangents, the
    # cotangent Λ solves the adjoint equation (the operator transposed), and each input's
    # cotangent is Λ paired with that input's part of the residual.

    @rule(
        scipy.linalg.solve_sylvester,
        examples=[
            example(
                "scipy.linalg.solve_sylvester(a, b, q)",
                a=Arg((3, 3), STABLE),
                b=Arg((2, 2), STABLE),
                q=(3, 2),
                f32=True,
            ),
            example(
                "scipy.linalg.solve_sylvester(a, b, q)",
                a=Arg((2, 3, 3), INVERTIBLE),
                b=Arg((3, 3), SPD),
                q=(3, 3),
            ),
        ],
        complex=True,
    )
    def solve_sylvester(ans, a, b, q):
        """A X + X B = Q: A dX + dX B = dQ - dA X - X dB. With Λ solving Aᵀ Λ + Λ Bᵀ = G:
        Q̄ = Λ, Ā = -Λ Xᵀ, B̄ = -Xᵀ Λ (holomorphic: plain transposes for complex values)."""

        def jvp_a(da):
            return -scipy.linalg.solve_sylvester(a, b, da @ ans)

        def jvp_b(db):
            return -scipy.linalg.solve_sylvester(a, b, ans @ db)

        def jvp_q(dq):
            return scipy.linalg.solve_sylvester(a, b, dq)

        def vjp_a(g):
            lam = scipy.linalg.solve_sylvester(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), g)
            return rt.unbroadcast(-(lam @ np.swapaxes(ans, -1, -2)), a)

        def vjp_b(g):
            lam = scipy.linalg.solve_sylvester(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), g)
            return rt.unbroadcast(-(np.swapaxes(ans, -1, -2) @ lam), b)

        def vjp_q(g):
            lam = scipy.linalg.solve_sylvester(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), g)
            return rt.unbroadcast(lam, q)

    @rule(
        scipy.linalg.solve_continuous_lyapunov,
        examples=[
            example(
                "scipy.linalg.solve_continuous_lyapunov(a, q)",
                a=Arg((3, 3), STABLE),
                q=(3, 3),
                f32=True,
            ),
            example(
                "scipy.linalg.solve_continuous_lyapunov(a, q)",
                a=Arg((2, 3, 3), STABLE),
                q=(3, 3),
            ),
        ],
    )
    def solve_continuous_lyapunov(ans, a, q):
        """A X + X Aᵀ = Q (real values; Q as given, not made symmetric): A dX + dX Aᵀ = dQ -
        dA X - X dAᵀ. With Λ solving Aᵀ Λ + Λ A = G: Q̄ = Λ, Ā = -(Λ Xᵀ + Λᵀ X)."""

        def jvp_a(da):
            return -scipy.linalg.solve_continuous_lyapunov(
                a, da @ ans + ans @ np.swapaxes(da, -1, -2)
            )

        def jvp_q(dq):
            return scipy.linalg.solve_continuous_lyapunov(a, dq)

        def vjp_a(g):
            lam = scipy.linalg.solve_continuous_lyapunov(np.swapaxes(a, -1, -2), g)
            abar = lam @ np.swapaxes(ans, -1, -2) + np.swapaxes(lam, -1, -2) @ ans
            return rt.unbroadcast(-abar, a)

        def vjp_q(g):
            lam = scipy.linalg.solve_continuous_lyapunov(np.swapaxes(a, -1, -2), g)
            return rt.unbroadcast(lam, q)

    @rule(
        scipy.linalg.solve_discrete_lyapunov,
        examples=[
            example(
                "scipy.linalg.solve_discrete_lyapunov(a, q)", a=Arg((3, 3), CONTRACTIVE), q=(3, 3)
            ),
            example(
                "scipy.linalg.solve_discrete_lyapunov(a, q, method='bilinear')",
                a=Arg((2, 3, 3), CONTRACTIVE),
                q=(3, 3),
            ),
            example(
                "scipy.linalg.solve_discrete_lyapunov(a, q, 'direct')",
                a=Arg((2, 2), CONTRACTIVE),
                q=(2, 2),
            ),
        ],
    )
    def solve_discrete_lyapunov(ans, a, q, method=None):
        """A X Aᵀ - X + Q = 0 (real values; Q as given): A dX Aᵀ - dX + dQ + dA X Aᵀ + A X dAᵀ
        = 0. With Λ solving Aᵀ Λ A - Λ + G = 0: Q̄ = Λ, Ā = Λ A Xᵀ + Λᵀ A X. The derivatives
        use the same ``method``."""

        def jvp_a(da):
            w = da @ ans @ np.swapaxes(a, -1, -2) + a @ ans @ np.swapaxes(da, -1, -2)
            return scipy.linalg.solve_discrete_lyapunov(a, w, method)

        def jvp_q(dq):
            return scipy.linalg.solve_discrete_lyapunov(a, dq, method)

        def vjp_a(g):
            lam = scipy.linalg.solve_discrete_lyapunov(np.swapaxes(a, -1, -2), g, method)
            abar = lam @ a @ np.swapaxes(ans, -1, -2) + np.swapaxes(lam, -1, -2) @ a @ ans
            return rt.unbroadcast(abar, a)

        def vjp_q(g):
            lam = scipy.linalg.solve_discrete_lyapunov(np.swapaxes(a, -1, -2), g, method)
            return rt.unbroadcast(lam, q)

    @rule(
        scipy.linalg.solve_continuous_are,
        examples=[
            example(
                "scipy.linalg.solve_continuous_are(a, b, q + q.T, r + r.T)",
                a=(3, 3),
                b=(3, 2),
                q=Arg((3, 3), SPD),
                r=Arg((2, 2), SPD),
            ),
            example(
                "scipy.linalg.solve_continuous_are(a, b, q + np.swapaxes(q, -1, -2), r)",
                a=(2, 2, 2),
                b=(2, 2, 1),
                q=Arg((2, 2, 2), SPD),
                r=Arg((1, 1), POSITIVE),
            ),
            example(
                "scipy.linalg.solve_continuous_are(a, b, q + q.T, r + r.T, "
                "e=np.eye(3) + 0.2 * np.tri(3), balanced=False)",
                a=(3, 3),
                b=(3, 1),
                q=Arg((3, 3), SPD),
                r=Arg((1, 1), SPD),
            ),
            example(
                "scipy.linalg.solve_continuous_are(a, b, q + q.T, r + r.T, e, 0.1 * s)",
                a=(3, 3),
                b=(3, 2),
                q=Arg((3, 3), SPD),
                r=Arg((2, 2), SPD),
                e=Arg((3, 3), INVERTIBLE),
                s=(3, 2),
            ),
        ],
    )
    def solve_continuous_are(ans, a, b, q, r, e=None, s=None, balanced=True):
        """Aᵀ X E + Eᵀ X A - M R⁻¹ Mᵀ + Q = 0, M = Eᵀ X B + S (E = I, S = 0 when not given;
        real values). With K = R⁻¹ Mᵀ and the closed loop Acl = A - B K, the tangent solves
        Aclᵀ dX E + Eᵀ dX Acl + C = 0, C = dAᵀ X E + Eᵀ X dA + Aclᵀ X dE + dEᵀ X Acl - dM K -
        Kᵀ dMᵀ + Kᵀ dR K + dQ (dM = Eᵀ X dB + dS): with F = Acl E⁻¹, the continuous Lyapunov
        equation Fᵀ dX + dX F = -E⁻ᵀ C E⁻¹. With Λ solving F Λ + Λ Fᵀ = G and Λ' = E⁻¹ Λ E⁻ᵀ:
        Q̄ = -Λ', R̄ = -K Λ' Kᵀ, S̄ = (Λ' + Λ'ᵀ) Kᵀ, B̄ = Xᵀ E S̄, Ā = -(X E Λ'ᵀ + Xᵀ E Λ'),
        Ē = -(Xᵀ Acl Λ' + X Acl Λ'ᵀ). SciPy asks for symmetric ``q`` and ``r`` (and returns a
        symmetric X); these are the derivatives of the equation, in every direction."""

        def jvp_a(da):
            ex = ans if e is None else np.swapaxes(e, -1, -2) @ ans
            m = ex @ b if s is None else ex @ b + s
            k = np.linalg.solve(r, np.swapaxes(m, -1, -2))
            acl = a - b @ k
            xe = ans if e is None else ans @ e
            c = np.swapaxes(da, -1, -2) @ xe + ex @ da
            if e is None:
                return scipy.linalg.solve_continuous_lyapunov(np.swapaxes(acl, -1, -2), -c)
            et = np.swapaxes(e, -1, -2)
            ft = np.linalg.solve(et, np.swapaxes(acl, -1, -2))
            y = np.swapaxes(
                np.linalg.solve(et, np.swapaxes(np.linalg.solve(et, c), -1, -2)), -1, -2
            )
            return scipy.linalg.solve_continuous_lyapunov(ft, -y)

        def jvp_b(db):
            ex = ans if e is None else np.swapaxes(e, -1, -2) @ ans
            m = ex @ b if s is None else ex @ b + s
            k = np.linalg.solve(r, np.swapaxes(m, -1, -2))
            acl = a - b @ k
            dmk = ex @ db @ k
            c = -(dmk + np.swapaxes(dmk, -1, -2))
            if e is None:
                return scipy.linalg.solve_continuous_lyapunov(np.swapaxes(acl, -1, -2), -c)
            et = np.swapaxes(e, -1, -2)
            ft = np.linalg.solve(et, np.swapaxes(acl, -1, -2))
            y = np.swapaxes(
                np.linalg.solve(et, np.swapaxes(np.linalg.solve(et, c), -1, -2)), -1, -2
            )
            return scipy.linalg.solve_continuous_lyapunov(ft, -y)

        def jvp_q(dq):
            ex = ans if e is None else np.swapaxes(e, -1, -2) @ ans
            m = ex @ b if s is None else ex @ b + s
            k = np.linalg.solve(r, np.swapaxes(m, -1, -2))
            acl = a - b @ k
            if e is None:
                return scipy.linalg.solve_continuous_lyapunov(np.swapaxes(acl, -1, -2), -dq)
            et = np.swapaxes(e, -1, -2)
            ft = np.linalg.solve(et, np.swapaxes(acl, -1, -2))
            y = np.swapaxes(
                np.linalg.solve(et, np.swapaxes(np.linalg.solve(et, dq), -1, -2)), -1, -2
            )
            return scipy.linalg.solve_continuous_lyapunov(ft, -y)

        def jvp_r(dr):
            ex = ans if e is None else np.swapaxes(e, -1, -2) @ ans
            m = ex @ b if s is None else ex @ b + s
            k = np.linalg.solve(r, np.swapaxes(m, -1, -2))
            acl = a - b @ k
            c = np.swapaxes(k, -1, -2) @ dr @ k
            if e is None:
                return scipy.linalg.solve_continuous_lyapunov(np.swapaxes(acl, -1, -2), -c)
            et = np.swapaxes(e, -1, -2)
            ft = np.linalg.solve(et, np.swapaxes(acl, -1, -2))
            y = np.swapaxes(
                np.linalg.solve(et, np.swapaxes(np.linalg.solve(et, c), -1, -2)), -1, -2
            )
            return scipy.linalg.solve_continuous_lyapunov(ft, -y)

        def jvp_e(de):
            ex = np.swapaxes(e, -1, -2) @ ans
            m = ex @ b if s is None else ex @ b + s
            k = np.linalg.solve(r, np.swapaxes(m, -1, -2))
            acl = a - b @ k
            w = np.swapaxes(acl, -1, -2) @ ans @ de
            c = w + np.swapaxes(de, -1, -2) @ ans @ acl
            et = np.swapaxes(e, -1, -2)
            ft = np.linalg.solve(et, np.swapaxes(acl, -1, -2))
            y = np.swapaxes(
                np.linalg.solve(et, np.swapaxes(np.linalg.solve(et, c), -1, -2)), -1, -2
            )
            return scipy.linalg.solve_continuous_lyapunov(ft, -y)

        def jvp_s(ds):
            ex = ans if e is None else np.swapaxes(e, -1, -2) @ ans
            m = ex @ b + s
            k = np.linalg.solve(r, np.swapaxes(m, -1, -2))
            acl = a - b @ k
            dmk = ds @ k
            c = -(dmk + np.swapaxes(dmk, -1, -2))
            if e is None:
                return scipy.linalg.solve_continuous_lyapunov(np.swapaxes(acl, -1, -2), -c)
            et = np.swapaxes(e, -1, -2)
            ft = np.linalg.solve(et, np.swapaxes(acl, -1, -2))
            y = np.swapaxes(
                np.linalg.solve(et, np.swapaxes(np.linalg.solve(et, c), -1, -2)), -1, -2
            )
            return scipy.linalg.solve_continuous_lyapunov(ft, -y)

        def vjp_a(g):
            ex = ans if e is None else np.swapaxes(e, -1, -2) @ ans
            m = ex @ b if s is None else ex @ b + s
            k = np.linalg.solve(r, np.swapaxes(m, -1, -2))
            acl = a - b @ k
            if e is None:
                lam = scipy.linalg.solve_continuous_lyapunov(acl, g)
            else:
                et = np.swapaxes(e, -1, -2)
                ft = np.linalg.solve(et, np.swapaxes(acl, -1, -2))
                mu = scipy.linalg.solve_continuous_lyapunov(np.swapaxes(ft, -1, -2), g)
                lam = np.swapaxes(
                    np.linalg.solve(e, np.swapaxes(np.linalg.solve(e, mu), -1, -2)), -1, -2
                )
            xe = ans if e is None else ans @ e
            abar = xe @ np.swapaxes(lam, -1, -2) + np.swapaxes(ex, -1, -2) @ lam
            return rt.unbroadcast(-abar, a)

        def vjp_b(g):
            ex = ans if e is None else np.swapaxes(e, -1, -2) @ ans
            m = ex @ b if s is None else ex @ b + s
            k = np.linalg.solve(r, np.swapaxes(m, -1, -2))
            acl = a - b @ k
            if e is None:
                lam = scipy.linalg.solve_continuous_lyapunov(acl, g)
            else:
                et = np.swapaxes(e, -1, -2)
                ft = np.linalg.solve(et, np.swapaxes(acl, -1, -2))
                mu = scipy.linalg.solve_continuous_lyapunov(np.swapaxes(ft, -1, -2), g)
                lam = np.swapaxes(
                    np.linalg.solve(e, np.swapaxes(np.linalg.solve(e, mu), -1, -2)), -1, -2
                )
            mbar = (lam + np.swapaxes(lam, -1, -2)) @ np.swapaxes(k, -1, -2)
            return rt.unbroadcast(np.swapaxes(ex, -1, -2) @ mbar, b)

        def vjp_q(g):
            ex = ans if e is None else np.swapaxes(e, -1, -2) @ ans
            m = ex @ b if s is None else ex @ b + s
            k = np.linalg.solve(r, np.swapaxes(m, -1, -2))
            acl = a - b @ k
            if e is None:
                lam = scipy.linalg.solve_continuous_lyapunov(acl, g)
            else:
                et = np.swapaxes(e, -1, -2)
                ft = np.linalg.solve(et, np.swapaxes(acl, -1, -2))
                mu = scipy.linalg.solve_continuous_lyapunov(np.swapaxes(ft, -1, -2), g)
                lam = np.swapaxes(
                    np.linalg.solve(e, np.swapaxes(np.linalg.solve(e, mu), -1, -2)), -1, -2
                )
            return rt.unbroadcast(-lam, q)

        def vjp_r(g):
            ex = ans if e is None else np.swapaxes(e, -1, -2) @ ans
            m = ex @ b if s is None else ex @ b + s
            k = np.linalg.solve(r, np.swapaxes(m, -1, -2))
            acl = a - b @ k
            if e is None:
                lam = scipy.linalg.solve_continuous_lyapunov(acl, g)
            else:
                et = np.swapaxes(e, -1, -2)
                ft = np.linalg.solve(et, np.swapaxes(acl, -1, -2))
                mu = scipy.linalg.solve_continuous_lyapunov(np.swapaxes(ft, -1, -2), g)
                lam = np.swapaxes(
                    np.linalg.solve(e, np.swapaxes(np.linalg.solve(e, mu), -1, -2)), -1, -2
                )
            return rt.unbroadcast(-(k @ lam @ np.swapaxes(k, -1, -2)), r)

        def vjp_e(g):
            ex = np.swapaxes(e, -1, -2) @ ans
            m = ex @ b if s is None else ex @ b + s
            k = np.linalg.solve(r, np.swapaxes(m, -1, -2))
            acl = a - b @ k
            et = np.swapaxes(e, -1, -2)
            ft = np.linalg.solve(et, np.swapaxes(acl, -1, -2))
            mu = scipy.linalg.solve_continuous_lyapunov(np.swapaxes(ft, -1, -2), g)
            lam = np.swapaxes(
                np.linalg.solve(e, np.swapaxes(np.linalg.solve(e, mu), -1, -2)), -1, -2
            )
            w = np.swapaxes(ans, -1, -2) @ acl @ lam
            ebar = w + ans @ acl @ np.swapaxes(lam, -1, -2)
            return rt.unbroadcast(-ebar, e)

        def vjp_s(g):
            ex = ans if e is None else np.swapaxes(e, -1, -2) @ ans
            m = ex @ b + s
            k = np.linalg.solve(r, np.swapaxes(m, -1, -2))
            acl = a - b @ k
            if e is None:
                lam = scipy.linalg.solve_continuous_lyapunov(acl, g)
            else:
                et = np.swapaxes(e, -1, -2)
                ft = np.linalg.solve(et, np.swapaxes(acl, -1, -2))
                mu = scipy.linalg.solve_continuous_lyapunov(np.swapaxes(ft, -1, -2), g)
                lam = np.swapaxes(
                    np.linalg.solve(e, np.swapaxes(np.linalg.solve(e, mu), -1, -2)), -1, -2
                )
            return rt.unbroadcast((lam + np.swapaxes(lam, -1, -2)) @ np.swapaxes(k, -1, -2), s)

    # -- symmetric eigenproblems and the pseudo-inverse (np.linalg's formulas; SciPy's own
    # results: its eigenvectors' signs may differ from NumPy's) ------------------------------

    def _eigh_outputs(static):
        return 1 if static["eigvals_only"] else 2

    @rule(
        scipy.linalg.eigh,
        outputs=_eigh_outputs,
        domain=SYMMETRIC,
        examples=[
            example("scipy.linalg.eigh(a)[0]", a=(3, 3), f32=True),
            example("scipy.linalg.eigh(a)[1] ** 2", a=(3, 3)),
            example("scipy.linalg.eigh(a, lower=False, driver='evd')[1] ** 2", a=(3, 3)),
            example("scipy.linalg.eigh(a, eigvals_only=True)", a=(4, 4), f32=True),
            example("scipy.linalg.eigh(a)[0] * np.sum(scipy.linalg.eigh(a)[1] ** 2, 0)", a=(4, 4)),
            example("scipy.linalg.eigh(a)[1] ** 2", a=(2, 3, 3)),
        ],
    )
    def eigh(ans, a, *, lower=True, eigvals_only=False, check_finite=True, driver=None):
        """``w, v = eigh(a)`` of the symmetric matrix read from one triangle (the lower one by
        default), distinct eigenvalues: np.linalg.eigh's derivative with SciPy's ``w`` and
        ``v``. ``eigvals_only=True``: ``w`` alone, dw_i = v_iᵀ dA v_i. The generalized problem
        (``b``) and subsets of eigenpairs are refused by name."""

        def jvp(da):
            if lower:
                ds = np.tril(da) + np.swapaxes(np.tril(da, -1), -1, -2)
            else:
                ds = np.triu(da) + np.swapaxes(np.triu(da, 1), -1, -2)
            if eigvals_only:
                v = scipy.linalg.eigh(a, lower=lower, driver=driver, check_finite=False)[1]
                return (np.sum(v * (ds @ v), axis=-2),)
            w = rt.distinct(ans[0], "scipy.linalg.eigh")
            v = ans[1]
            eye = np.eye(np.shape(a)[-1], dtype=w.dtype)
            f = (1.0 - eye) / (w[..., None, :] - w[..., :, None] + eye)
            m = np.swapaxes(v, -1, -2) @ ds @ v
            return (np.sum(m * eye, axis=-1), v @ (f * m))

        def vjp(g):
            if eigvals_only:
                v = scipy.linalg.eigh(a, lower=lower, driver=driver, check_finite=False)[1]
                s = (v * g[0][..., None, :]) @ np.swapaxes(v, -1, -2)
            else:
                w = rt.distinct(ans[0], "scipy.linalg.eigh")
                v = ans[1]
                eye = np.eye(np.shape(a)[-1], dtype=w.dtype)
                f = (1.0 - eye) / (w[..., None, :] - w[..., :, None] + eye)
                inner = f * (np.swapaxes(v, -1, -2) @ g[1]) + g[0][..., None] * eye
                s = v @ inner @ np.swapaxes(v, -1, -2)
            if lower:
                return np.tril(s) + np.tril(np.swapaxes(s, -1, -2), -1)
            return np.triu(s) + np.triu(np.swapaxes(s, -1, -2), 1)

    @rule(
        scipy.linalg.eigvalsh,
        domain=SYMMETRIC,
        examples=[
            example("scipy.linalg.eigvalsh(a)", a=(3, 3), f32=True),
            example("scipy.linalg.eigvalsh(a, lower=False)", a=(3, 3)),
            example("scipy.linalg.eigvalsh(a, driver='ev')", a=(2, 4, 4)),
        ],
    )
    def eigvalsh(a, *, lower=True, check_finite=True, driver=None):
        """The eigenvalues of ``eigh``: dw_i = v_iᵀ dA v_i (distinct eigenvalues)."""

        def jvp(da):
            if lower:
                ds = np.tril(da) + np.swapaxes(np.tril(da, -1), -1, -2)
            else:
                ds = np.triu(da) + np.swapaxes(np.triu(da, 1), -1, -2)
            v = scipy.linalg.eigh(a, lower=lower, driver=driver, check_finite=False)[1]
            return np.sum(v * (ds @ v), axis=-2)

        def vjp(g):
            v = scipy.linalg.eigh(a, lower=lower, driver=driver, check_finite=False)[1]
            s = (v * g[..., None, :]) @ np.swapaxes(v, -1, -2)
            if lower:
                return np.tril(s) + np.tril(np.swapaxes(s, -1, -2), -1)
            return np.triu(s) + np.triu(np.swapaxes(s, -1, -2), 1)

    @rule(
        scipy.linalg.pinv,
        examples=[
            example("scipy.linalg.pinv(a)", a=(3, 2), f32=True),
            example("scipy.linalg.pinv(a, atol=1e-12, rtol=None)", a=(2, 4)),
            example("scipy.linalg.pinv(a)", a=Arg((2, 3, 3), INVERTIBLE)),
        ],
    )
    def pinv(ans, a, *, atol=None, rtol=None, check_finite=True):
        """The pseudo-inverse P = a⁺ of a full-rank ``a`` (not claimed at rank-deficient
        inputs, where it jumps): dP = -P da P + P Pᵀ daᵀ (I - a P) + (I - P a) daᵀ Pᵀ P.
        ``return_rank=True`` is refused by name."""

        def jvp(da):
            p = ans
            pt = np.swapaxes(p, -1, -2)
            dat = np.swapaxes(da, -1, -2)
            return (
                -(p @ da @ p)
                + p @ (pt @ dat - (pt @ dat @ a) @ p)
                + (dat - p @ (a @ dat)) @ (pt @ p)
            )

        def vjp(g):
            p = ans
            pt = np.swapaxes(p, -1, -2)
            gt = np.swapaxes(g, -1, -2)
            return -(pt @ g @ pt) + (gt - a @ (p @ gt)) @ (p @ pt) + (pt @ p) @ (gt - (gt @ p) @ a)

    @rule(
        scipy.linalg.lstsq,
        outputs=4,
        examples=[
            example("scipy.linalg.lstsq(a, b)[0]", a=(4, 2), b=(4,), f32=True),
            example("scipy.linalg.lstsq(a, b)[0]", a=(2, 3), b=(2, 2)),
            example("scipy.linalg.lstsq(a, b, cond=None)[1]", a=(4, 3), b=(4, 2)),
            example(
                "scipy.linalg.lstsq(a, b)[1] * scipy.linalg.lstsq(a, b)[0][0]", a=(3, 2), b=(3,)
            ),
            example("scipy.linalg.lstsq(a, b, lapack_driver='gelss')[0]", a=(4, 3), b=(4,)),
            example("scipy.linalg.lstsq(a, b)[3] ** 2", a=(3, 2), b=(3,)),
        ],
    )
    def lstsq(ans, a, b, cond=None, *, check_finite=True, lapack_driver=None):
        """``x, residues, rank, s = lstsq(a, b)`` for one full-rank matrix ``a`` (not claimed
        at rank-deficient inputs; a stack refused when the derivative runs): np.linalg.lstsq's
        derivative, x = a⁺ b; the residues (present when m > n, a number for a vector ``b``)
        ‖b - a x‖² have d = 2 eᵀ(db - da x), e = b - a x; the rank has none; ``s`` are the
        singular values of ``a``. ``overwrite_a``/``overwrite_b`` are refused by name;
        ``lapack_driver='gelsy'`` (it gives no ``s``) when the derivative runs."""

        def jvp_a(da):
            rt.require_matrix(a, "scipy.linalg.lstsq")
            rt.require_given(ans[3], "scipy.linalg.lstsq with lapack_driver='gelsy'")
            p = np.linalg.pinv(a)
            bm = np.reshape(b, (np.shape(b)[0], -1))
            xm = np.reshape(ans[0], (np.shape(ans[0])[0], -1))
            e = bm - a @ xm
            dat = np.swapaxes(da, -1, -2)
            ptx = np.swapaxes(p, -1, -2) @ xm
            dx = -(p @ (da @ xm)) + p @ (np.swapaxes(p, -1, -2) @ (dat @ e)) + dat @ ptx
            dx = dx - p @ (a @ (dat @ ptx))
            dr = (
                np.reshape(-2.0 * np.sum(e * (da @ xm), axis=0), np.shape(ans[1]))
                if np.size(ans[1])
                else np.zeros_like(ans[1])
            )
            u, _, vh = np.linalg.svd(a, full_matrices=False)
            ds = np.sum(u * (da @ np.swapaxes(vh, -1, -2)), axis=-2)
            return (
                np.reshape(dx, np.shape(ans[0])),
                dr,
                np.zeros_like(ans[3], shape=()),
                ds,
            )

        def jvp_b(db):
            rt.require_matrix(a, "scipy.linalg.lstsq")
            rt.require_given(ans[3], "scipy.linalg.lstsq with lapack_driver='gelsy'")
            p = np.linalg.pinv(a)
            bm = np.reshape(b, (np.shape(b)[0], -1))
            xm = np.reshape(ans[0], (np.shape(ans[0])[0], -1))
            dbm = np.reshape(db, np.shape(bm))
            dr = (
                np.reshape(2.0 * np.sum((bm - a @ xm) * dbm, axis=0), np.shape(ans[1]))
                if np.size(ans[1])
                else np.zeros_like(ans[1])
            )
            return (
                np.reshape(p @ dbm, np.shape(ans[0])),
                dr,
                np.zeros_like(ans[3], shape=()),
                np.zeros_like(ans[3]),
            )

        def vjp_a(g):
            rt.require_matrix(a, "scipy.linalg.lstsq")
            rt.require_given(ans[3], "scipy.linalg.lstsq with lapack_driver='gelsy'")
            p = np.linalg.pinv(a)
            pt = np.swapaxes(p, -1, -2)
            bm = np.reshape(b, (np.shape(b)[0], -1))
            xm = np.reshape(ans[0], (np.shape(ans[0])[0], -1))
            e = bm - a @ xm
            gx = np.reshape(g[0], np.shape(xm))
            gxt = np.swapaxes(gx, -1, -2)
            ga = -(pt @ gx @ np.swapaxes(xm, -1, -2)) + e @ (gxt @ p @ pt)
            ga = ga + (pt @ xm) @ (gxt - (gxt @ p) @ a)
            u, _, vh = np.linalg.svd(a, full_matrices=False)
            ga = ga + (u * g[3][..., None, :]) @ vh
            if np.size(ans[1]):
                ga = ga - 2.0 * (e * np.reshape(g[1], (1, -1))) @ np.swapaxes(xm, -1, -2)
            return ga

        def vjp_b(g):
            rt.require_matrix(a, "scipy.linalg.lstsq")
            rt.require_given(ans[3], "scipy.linalg.lstsq with lapack_driver='gelsy'")
            p = np.linalg.pinv(a)
            bm = np.reshape(b, (np.shape(b)[0], -1))
            xm = np.reshape(ans[0], (np.shape(ans[0])[0], -1))
            gb = np.swapaxes(p, -1, -2) @ np.reshape(g[0], np.shape(xm))
            if np.size(ans[1]):
                gb = gb + 2.0 * (bm - a @ xm) * np.reshape(g[1], (1, -1))
            return np.reshape(gb, np.shape(b))


# -- norms (with any SciPy) -------------------------------------------------------------------
if _linalg is not None:

    @rule(
        _linalg.norm,
        examples=[
            example("scipy.linalg.norm(a)", a=(4,), f32=True),
            example("scipy.linalg.norm(a, 1, axis=0)", a=(3, 4)),
            example("scipy.linalg.norm(a, 'fro', keepdims=True)", a=(3, 2)),
            example("scipy.linalg.norm(a, np.inf, check_finite=False)", a=(5,)),
            example("scipy.linalg.norm(a, 0.5)", a=Arg((4,), Domain(0.3, 1.5))),
        ],
    )
    def norm(ans, a, ord=None, axis=None, keepdims=False, check_finite=True):  # noqa: A002
        """``np.linalg.norm``'s value (SciPy takes BLAS's ``nrm2`` for a vector 2-norm) and its
        derivative: the norm's gradient ``rt.norm_grad`` (np.linalg.norm's conventions at
        kinks), a zero seed contributing exactly 0 where an order below 1 is singular."""

        def jvp(da):
            grad = rt.norm_grad(ans, a, ord, axis, keepdims)
            return np.sum(rt.zero_safe(grad * da, da), axis=axis, keepdims=keepdims)

        def vjp(g):
            spread = rt.unreduce(g, a, axis, keepdims)
            return rt.zero_safe(spread * rt.norm_grad(ans, a, ord, axis, keepdims), spread)
