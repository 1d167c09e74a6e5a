"""adgen's runtime: the NumPy helpers generated derivative code calls as ``rt.<name>``.

Every helper is a plain function of its arguments: no classes, no global state and no
in-place mutation of the inputs (a helper may build a fresh array and write into it).
They accept Python floats, NumPy scalars, 0-d arrays and n-d arrays, and they keep the
floating dtype of their inputs (float32 stays float32).

Naming: ``g`` is always the cotangent of the primal *output*; the helpers return the
cotangent of one primal *input*.

Where a helper lives: beside the rules whose templates call it, one module per family of
:mod:`adgen.rules` -- :mod:`~adgen.rules.runtime.reductions` holds the helpers of
``adgen/rules/reductions.py`` (``rt.prod_vjp``, ``rt.sort_vjp``...), and likewise
``arithmetic``, ``contractions``, ``elementwise``, ``fft`` (``np.fft``), ``indexing``,
``linalg`` (products, ``x[index]``, ``np.linalg``), ``shaping`` (with the joins of
``rules/arrays.py``) and ``stats`` (``scipy.stats``).
:mod:`~adgen.rules.runtime.core` holds what every family and the code generators share
(a template's questions about shapes, ``rt.zero_safe``, ``rt.unbroadcast`` /
``rt.unreduce``, ``rt.zeros_like`` / ``rt.cast_like``, the derivatives of lists),
:mod:`~adgen.rules.runtime.loops` the helpers of reverse mode's loops, and
:mod:`~adgen.rules.runtime.adjoints` the transposes ``rules/adjoints.py`` needs. This
package gathers every public helper into one namespace, ``rt``: generated code, templates
and the registry's spellings name a helper ``rt.<name>`` whichever module defines it, and
``adgen.runtime`` is the same namespace under its public name.

Rules every helper follows:

* It imports NumPy and the standard library only, never adgen: :func:`adgen.export`
  writes these modules one after the other into one file, ``adgen_runtime.py``, that runs
  where adgen is not installed. Names a module takes from another (``from .core import
  unbroadcast``) are then one namespace, so no two modules define the same top-level
  name, private ones included. A helper that needs SciPy imports it when it is called:
  importing the runtime (or ``adgen_runtime.py``) never imports SciPy.
* Generated code is differentiated again (second order), and so are its calls of the
  helpers: each helper such code calls has a rule in :mod:`adgen.rules.adjoints` (a
  ``*_vjp`` helper is linear in ``g``; its transpose, where no NumPy function computes
  it, is a helper too), and a helper without one is refused by name, never read as
  source. A new helper called by generated code therefore comes with its rule.
* A helper in ``__all__`` below shows its use in a doctest (``tests/test_runtime.py``
  checks it), and a new helper is imported below so that ``rt`` has it.
"""

from __future__ import annotations

# ``rt`` is this namespace: every public helper of the modules, whatever ``__all__`` says
from .adjoints import rebroadcast, written_vjp  # noqa: F401
from .arithmetic import power  # noqa: F401
from .batched import (  # noqa: F401
    batch_axis,
    batch_transpose,
    batch_zeros,
    batched_getitem_vjp,
    batched_unbroadcast,
    batched_unreduce,
    batched_written,
    lifted,
)
from .contractions import (  # noqa: F401
    cross_vjp,
    einsum_terms,
    einsum_vjp,
    inner_vjp_a,
    inner_vjp_b,
    kron_vjp,
    multi_dot_terms,
    multi_dot_vjp,
    tensordot_vjp_a,
    tensordot_vjp_b,
    vecdot_vjp,
)
from .core import (  # noqa: F401
    Like,
    Refusal,
    accumulate,
    accumulate_item,
    as_list,
    bounds_kept,
    cast_like,
    copy_of,
    dtype_of,
    expect,
    extremum_jvp,
    extremum_shares,
    is_complex,
    is_inexact,
    items_vjp,
    join_last,
    known_constant,
    known_ndim,
    known_real,
    known_scalar,
    known_shape,
    list_vjp,
    max_items,
    min_items,
    read_back,
    real_like,
    refuse_unless,
    saved_shape,
    split_last,
    sum_items,
    unbroadcast,
    unreduce,
    writable,
    zero_safe,
    zero_safe_tangent,
    zeros_like,
)
from .elementwise import (  # noqa: F401
    interp_slope,
    interp_slope_vjp,
    interp_vjp_fp,
    polyval_dx,
    polyval_vjp_p,
)
from .fft import fft_axes, fft_resize, fft_sizes, hermitian_weights  # noqa: F401
from .indexing import (  # noqa: F401
    added_at,
    along_axis_index,
    choose_mask,
    choose_vjp,
    diagonal_index,
    flat_index,
    put_index,
    putmask_gather,
    putmasked,
    select_mask,
    select_otherwise,
    select_vjp,
    selected,
    subtracted_at,
    take_along_axis_vjp,
    take_vjp,
)
from .interpolate import (  # noqa: F401
    grid_slopes,
    grid_value,
    interp_data_axis,
    interp_fit,
    interp_fit_at,
    interp_fit_vjp,
    interp_gather,
    interp_lead,
    interp_made,
    interp_spread,
    interp_support,
    interp_value,
)
from .kernels import kernel_matrix, kernel_theta_gradient  # noqa: F401
from .linalg import (  # noqa: F401
    diagonal_vjp,
    distinct,
    dot_vjp_a,
    dot_vjp_b,
    full_rank,
    getitem_vjp,
    matmul_vjp_a,
    matmul_vjp_b,
    matrix_power_jvp,
    matrix_power_vjp,
    norm_grad,
    require_given,
    require_matrix,
    require_square,
    require_tall,
    written,
)
from .loops import backwards, checkpoint_every  # noqa: F401
from .losses import loss_gradient, loss_hessian, pointwise_loss  # noqa: F401
from .optimize import (  # noqa: F401
    curve_fit_covariance_jvp,
    curve_fit_jvp,
    curve_fit_vjp,
    fitted_curve,
    fsolve_jvp,
    fsolve_vjp,
    least_squares_fit,
    least_squares_jvp,
    least_squares_vjp,
    minimize_jvp,
    minimize_vjp,
    minimum,
    minimum_value_jvp,
    minimum_value_vjp,
    root_cotangent,
    root_jvp,
    root_vjp,
    root_vjp_jvp,
    scalar_minimum,
    scalar_minimum_jvp,
    scalar_minimum_value_jvp,
    scalar_minimum_value_vjp,
    scalar_minimum_vjp,
    scalar_root,
    scalar_root_jvp,
    scalar_root_vjp,
    vector_root,
    vector_root_jvp,
    vector_root_residual,
    vector_root_vjp,
)
from .quadrature import (  # noqa: F401
    cumulative_trapezoid_vjp_x,
    cumulative_trapezoid_vjp_y,
    fixed_quad_jvp,
    fixed_quad_vjp,
    quad_end,
    quad_jvp,
    quad_vec_end_vjp,
    quad_vec_jvp,
    quad_vec_vjp,
    quad_vjp,
    romb_vjp_y,
    simpson_vjp_y,
)
from .reductions import (  # noqa: F401
    accumulates_in,
    average_weights,
    average_weights_vjp,
    convolve_vjp,
    corrcoef_jvp,
    corrcoef_vjp,
    correlate_vjp,
    cov_jvp,
    cov_vjp,
    cumprod_jvp,
    cumprod_vjp,
    cumsum_vjp,
    diff_jvp,
    diff_vjp,
    gradient_vjp,
    gradients,
    linear_recurrence,
    mean_vjp,
    minmax_vjp,
    partition_jvp,
    partition_vjp,
    prod_hvp,
    prod_vjp,
    quantile_jvp,
    quantile_vjp,
    quantile_weights,
    sort_jvp,
    sort_vjp,
    trapezoid_vjp_x,
    trapezoid_vjp_y,
    trapezoid_y_weights,
)
from .scipy_linalg import (  # noqa: F401
    assumed_matrix,
    assumed_matrix_vjp,
    banded_matvec,
    banded_outer,
    banded_transpose,
    frechet,
    require_copied_triangle,
    sqrtm_frechet,
)
from .shaping import (  # noqa: F401
    concatenated_part,
    concatenated_part_vjp,
    copying_pad_mode,
    gathered,
    gathered_vjp,
    index_order,
    inserted_tangent,
    inserted_values_vjp,
    inverse_axes,
    joined_items,
    pad_interior,
    ravel_axes,
    rollaxis_destination,
    samples_only,
    source_index,
)
from .signal import boundary_pad_width, full_pad_width, lagged_sum  # noqa: F401
from .solvers import (  # noqa: F401
    ivp_args_cotangent,
    ivp_cotangents_tangent,
    ivp_time_cotangent,
    ivp_time_tangent,
    ivp_y0_cotangent,
    ode_solution,
    ode_solution_jvp,
    ode_solution_vjp,
    odeint_args_cotangent,
    odeint_cotangents_tangent,
    odeint_jvp,
    odeint_t_cotangent,
    odeint_vjp,
    odeint_y0_cotangent,
)
from .spatial import distance_metric  # noqa: F401
from .stats import (  # noqa: F401
    covariance,
    covariance_vjp,
    kde_logpdf,
    kde_logpdf_gradient,
    kde_logpdf_hvp,
    kde_pdf,
    nonsingular_covariance,
    whitened,
)

# the helpers shown with a doctest (tests/test_runtime.py checks that each has one)
__all__ = [
    "backwards",
    "refuse_unless",
    "expect",
    "dtype_of",
    "saved_shape",
    "cast_like",
    "real_like",
    "is_complex",
    "is_inexact",
    "bounds_kept",
    "copy_of",
    "writable",
    "diagonal_index",
    "put_index",
    "along_axis_index",
    "added_at",
    "subtracted_at",
    "putmasked",
    "putmask_gather",
    "banded_matvec",
    "banded_outer",
    "banded_transpose",
    "checkpoint_every",
    "diagonal_vjp",
    "dot_vjp_a",
    "dot_vjp_b",
    "getitem_vjp",
    "interp_slope",
    "interp_support",
    "interp_lead",
    "interp_value",
    "interp_spread",
    "interp_gather",
    "grid_slopes",
    "grid_value",
    "interp_made",
    "interp_data_axis",
    "interp_fit",
    "interp_fit_at",
    "interp_fit_vjp",
    "interp_slope_vjp",
    "interp_vjp_fp",
    "matmul_vjp_a",
    "matmul_vjp_b",
    "matrix_power_jvp",
    "matrix_power_vjp",
    "mean_vjp",
    "minmax_vjp",
    "polyval_dx",
    "polyval_vjp_p",
    "norm_grad",
    "prod_vjp",
    "distinct",
    "full_rank",
    "require_square",
    "require_given",
    "require_matrix",
    "require_tall",
    "unbroadcast",
    "unreduce",
    "sum_items",
    "max_items",
    "min_items",
    "extremum_shares",
    "extremum_jvp",
    "choose_mask",
    "choose_vjp",
    "cross_vjp",
    "einsum_terms",
    "einsum_vjp",
    "inner_vjp_a",
    "inner_vjp_b",
    "kron_vjp",
    "multi_dot_terms",
    "multi_dot_vjp",
    "select_mask",
    "select_vjp",
    "selected",
    "take_along_axis_vjp",
    "take_vjp",
    "tensordot_vjp_a",
    "tensordot_vjp_b",
    "vecdot_vjp",
    # shaping helpers
    "copying_pad_mode",
    "samples_only",
    "gathered",
    "gathered_vjp",
    "inserted_tangent",
    "inserted_values_vjp",
    "pad_interior",
    "inverse_axes",
    "joined_items",
    "rollaxis_destination",
    "ravel_axes",
    "index_order",
    "distance_metric",
    "source_index",
    # reductions, scans and statistics
    "accumulates_in",
    "average_weights",
    "average_weights_vjp",
    "corrcoef_jvp",
    "corrcoef_vjp",
    "convolve_vjp",
    "correlate_vjp",
    "cov_jvp",
    "cov_vjp",
    "cumprod_jvp",
    "cumprod_vjp",
    "cumsum_vjp",
    "diff_jvp",
    "diff_vjp",
    "gradient_vjp",
    "gradients",
    "linear_recurrence",
    "partition_jvp",
    "partition_vjp",
    "quantile_jvp",
    "quantile_vjp",
    "quantile_weights",
    "sort_jvp",
    "sort_vjp",
    "trapezoid_vjp_x",
    "trapezoid_vjp_y",
    "trapezoid_y_weights",
    # scipy.stats
    "covariance",
    "covariance_vjp",
    "kde_logpdf_gradient",
    "kde_logpdf_hvp",
    "nonsingular_covariance",
    "whitened",
    # scipy.signal
    "boundary_pad_width",
    "full_pad_width",
    # np.fft
    "fft_axes",
    "fft_resize",
    "fft_sizes",
    "hermitian_weights",
    # scipy.linalg
    "assumed_matrix",
    "assumed_matrix_vjp",
    "frechet",
    "require_copied_triangle",
    "sqrtm_frechet",
    # derivatives of the helpers
    "rebroadcast",
    "written_vjp",
    # singular points: a zero seed contributes exactly zero
    "power",
    "zero_safe",
    "zero_safe_tangent",
    # implicit differentiation of roots
    "root_jvp",
    "root_vjp",
]
