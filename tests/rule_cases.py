"""Small functions exercising each derivative rule, one primitive (or one spelling) each.

adgen differentiates a function by reading its source, so every case is a plain
module-level ``def``. ``tests/test_rules.py`` maps each case to the inputs it is
checked at; ``test_every_rule_has_a_case`` there reads the IR of these functions
to make sure every registered rule (and every object registered for it) is used
by at least one case.
"""

import math
import operator  # noqa: F401  (operators are reached through Python syntax)

import numpy as np

from adgen.rules import runtime as rt

# A module-level integer index array (a free value, not an argument).
IDX = np.array([0, 2, 0])


# --------------------------------------------------------------------------- arithmetic


def case_add(x, y):
    return x + y


def case_np_add(x, y):
    return np.add(x, y)


def case_sub(x, y):
    return x - y


def case_np_subtract(x, y):
    return np.subtract(x, y)


def case_mul(x, y):
    return x * y


def case_np_multiply(x, y):
    return np.multiply(x, y)


def case_truediv(x, y):
    return x / y


def case_np_divide(x, y):
    return np.divide(x, y)


def case_np_true_divide(x, y):
    return np.true_divide(x, y)


def case_pow(x, y):
    return x**y


def case_pow_const_exponent(x):
    return x**3


def case_pow_const_base(x):
    return 2.0**x


def case_np_power(x, y):
    return np.power(x, y)


def case_builtin_pow(x, y):
    return pow(x, y)


def case_mod(x, y):
    return x % y


def case_np_mod(x, y):
    return np.mod(x, y)


def case_np_remainder(x, y):
    return np.remainder(x, y)


def case_neg(x):
    return -x


def case_np_negative(x):
    return np.negative(x)


def case_pos(x):
    return +x


def case_np_positive(x):
    return np.positive(x)


def case_abs(x):
    return abs(x)


def case_np_absolute(x):
    return np.absolute(x)


def case_np_abs(x):
    return np.abs(x)


def case_np_fabs(x):
    return np.fabs(x)


def case_maximum(x, y):
    return np.maximum(x, y)


def case_minimum(x, y):
    return np.minimum(x, y)


def case_where(x, y):
    return np.where(x > 0, x, y)


def case_where_cond(c, x, y):
    return np.where(c, x, y)


def case_where_const_branch(x):
    return np.where(x > 0, x, 0.0)


def case_clip(x):
    return np.clip(x, -0.5, 0.5)


def case_clip_no_min(x):
    return np.clip(x, None, 0.5)


def case_clip_no_max(x):
    return np.clip(x, -0.5, None)


def case_clip_varying(x, lo, hi):
    return np.clip(x, lo, hi)


# --------------------------------------------------------------------------- elementwise (NumPy)


def case_sin(x):
    return np.sin(x)


def case_cos(x):
    return np.cos(x)


def case_tan(x):
    return np.tan(x)


def case_arcsin(x):
    return np.arcsin(x)


def case_arccos(x):
    return np.arccos(x)


def case_arctan(x):
    return np.arctan(x)


def case_sinh(x):
    return np.sinh(x)


def case_cosh(x):
    return np.cosh(x)


def case_tanh(x):
    return np.tanh(x)


def case_exp(x):
    return np.exp(x)


def case_exp2(x):
    return np.exp2(x)


def case_expm1(x):
    return np.expm1(x)


def case_log1p(x):
    return np.log1p(x)


def case_square(x):
    return np.square(x)


def case_reciprocal(x):
    return np.reciprocal(x)


def case_log(x):
    return np.log(x)


def case_log2(x):
    return np.log2(x)


def case_log10(x):
    return np.log10(x)


def case_sqrt(x):
    return np.sqrt(x)


# --------------------------------------------------------------------------- math module


def case_math_sin(x):
    return math.sin(x)


def case_math_cos(x):
    return math.cos(x)


def case_math_tan(x):
    return math.tan(x)


def case_math_asin(x):
    return math.asin(x)


def case_math_acos(x):
    return math.acos(x)


def case_math_atan(x):
    return math.atan(x)


def case_math_sinh(x):
    return math.sinh(x)


def case_math_cosh(x):
    return math.cosh(x)


def case_math_tanh(x):
    return math.tanh(x)


def case_math_asinh(x):
    return math.asinh(x)


def case_math_acosh(x):
    return math.acosh(x)


def case_math_atanh(x):
    return math.atanh(x)


def case_math_exp(x):
    return math.exp(x)


def case_math_expm1(x):
    return math.expm1(x)


def case_math_log1p(x):
    return math.log1p(x)


def case_math_erf(x):
    return math.erf(x)


def case_math_erfc(x):
    return math.erfc(x)


def case_math_sqrt(x):
    return math.sqrt(x)


def case_math_log(x):
    return math.log(x)


def case_math_log_base(x):
    return math.log(x, 3.0)


def case_math_log_varying_base(x, b):
    return math.log(x, b)


def case_math_log2(x):
    return math.log2(x)


def case_math_log10(x):
    return math.log10(x)


def case_math_pow(x, y):
    return math.pow(x, y)


def case_math_fabs(x):
    return math.fabs(x)


def case_math_atan2(y, x):
    return math.atan2(y, x)


def case_math_hypot(x, y):
    return math.hypot(x, y)


def case_math_copysign(x, y):
    return math.copysign(x, y)


# --------------------------------------------------------------------------- reductions


def case_sum(x):
    return np.sum(x)


def case_sum_axis0(x):
    return np.sum(x, axis=0)


def case_sum_axis1_keepdims(x):
    return np.sum(x, axis=1, keepdims=True)


def case_sum_axis_neg1(x):
    return np.sum(x, axis=-1)


def case_sum_axis_tuple(x):
    return np.sum(x, axis=(0, 2))


def case_sum_method(x):
    return x.sum(axis=0)


def case_mean(x):
    return np.mean(x)


def case_mean_axis0(x):
    return np.mean(x, axis=0)


def case_mean_axis1_keepdims(x):
    return np.mean(x, axis=1, keepdims=True)


def case_mean_axis_tuple_keepdims(x):
    return np.mean(x, axis=(0, 2), keepdims=True)


def case_mean_method(x):
    return x.mean()


def case_prod(x):
    return np.prod(x)


def case_prod_axis0(x):
    return np.prod(x, axis=0)


def case_prod_axis1_keepdims(x):
    return np.prod(x, axis=1, keepdims=True)


def case_prod_axis_tuple(x):
    return np.prod(x, axis=(0, 2))


def case_prod_method(x):
    return x.prod(axis=-1)


def case_max(x):
    return np.max(x)


def case_max_axis0(x):
    return np.max(x, axis=0)


def case_max_axis1_keepdims(x):
    return np.max(x, axis=1, keepdims=True)


def case_max_method(x):
    return x.max(axis=-1)


def case_amax(x):
    return np.amax(x, axis=1)


def case_min(x):
    return np.min(x)


def case_min_axis0(x):
    return np.min(x, axis=0)


def case_min_axis1_keepdims(x):
    return np.min(x, axis=1, keepdims=True)


def case_min_method(x):
    return x.min(axis=(0, 2))


def case_amin(x):
    return np.amin(x, axis=0, keepdims=True)


# --------------------------------------------------------------------------- linear algebra


def case_matmul(a, b):
    return a @ b


def case_np_matmul(a, b):
    return np.matmul(a, b)


def case_dot(a, b):
    return np.dot(a, b)


def case_dot_method(a, b):
    return a.dot(b)


def case_transpose(x):
    return np.transpose(x)


def case_transpose_axes(x):
    return np.transpose(x, (1, 0, 2))


def case_transpose_axes_cycle(x):
    return np.transpose(x, (2, 0, 1))


def case_transpose_negative_axes(x):
    return np.transpose(x, (-1, 0, 1))


def case_transpose_method(x):
    return x.transpose()


def case_transpose_method_axes(x):
    return x.transpose(1, 2, 0)


def case_attr_T(x):
    return x.T


def case_attr_real(x):
    return x.real


def case_attr_imag(x):
    return x.imag * 2.0 + x


def case_reshape(x):
    return np.reshape(x, (4, 3))


def case_reshape_flat(x):
    return np.reshape(x, -1)


def case_reshape_infer(x):
    return np.reshape(x, (2, -1))


def case_reshape_method(x):
    return x.reshape(2, 6)


def case_reshape_method_tuple(x):
    return x.reshape((6, -1))


# --------------------------------------------------------------------------- indexing


def case_getitem_int(x):
    return x[1]


def case_getitem_neg_int(x):
    return x[-1]


def case_getitem_slice(x):
    return x[1:3]


def case_getitem_step(x):
    return x[::2]


def case_getitem_reverse(x):
    return x[::-1]


def case_getitem_newaxis(x):
    return x[:, None]


def case_getitem_ellipsis(x):
    return x[..., 0]


def case_getitem_pair(x):
    return x[1, 2]


def case_getitem_args(x, i, j):
    return x[i, j]


def case_getitem_slice2(x):
    return x[:, 1:3]


def case_getitem_mixed(x):
    return x[None, 1:, ::2]


def case_getitem_fancy_free(x):
    return x[IDX]


def case_getitem_fancy_arg(x, idx):
    return x[idx]


def case_getitem_mask(x):
    return x[x > 0]


# ------------------------------------------------------------------ dtype / shape of gradients


def scalar_sin_sum(x):
    return np.sum(np.sin(x) * x)


def scalar_math(x):
    return math.sin(x) * math.exp(x)


def scalar_broadcast(x, y):
    return np.sum(x * y + np.maximum(x, y))


def scalar_matmul(a, b):
    return np.sum(np.tanh(a @ b))


def scalar_reductions(x):
    return np.sum(np.max(x, axis=0)) + np.mean(x) * np.prod(x[0])


def scalar_index(x):
    return np.sum(x[1:, None] ** 2)


# --------------------------------------------------------------------------- kinks


def kink_abs(x):
    return abs(x)


def kink_np_abs(x):
    return np.sum(np.abs(x))


def kink_math_fabs(x):
    return math.fabs(x)


def kink_maximum(x, y):
    return np.sum(np.maximum(x, y))


def kink_minimum(x, y):
    return np.sum(np.minimum(x, y))


def kink_max(x):
    return np.max(x)


def kink_max_axis(x):
    return np.sum(np.max(x, axis=1))


def kink_min(x):
    return np.min(x)


def kink_prod(x):
    return np.prod(x)


def kink_sqrt(x):
    return np.sqrt(x)


def kink_math_sqrt(x):
    return math.sqrt(x)


def kink_where(c, x, y):
    return np.sum(np.where(c, x, y))


def kink_clip(x, lo, hi):
    return np.sum(np.clip(x, lo, hi))


def kink_pow_zero_base(x, y):
    return x**y


def kink_nondiff(x):
    return np.sum(np.floor(x) + np.sign(x) * 0.0 + x // 1.0)


# --------------------------------------------------------------------------- copies, casts, shapes


def case_ravel(x):
    return np.ravel(x)


def case_ravel_method(x):
    return x.ravel()


def case_flatten_method(x):
    return x.flatten()


def case_copy(x):
    return np.copy(x)


def case_copy_method(x):
    return x.copy()


def case_astype_float64(x):
    return x.astype(np.float64)


def case_astype_float32(x):
    return x.astype(np.float32)


def case_astype_string(x):
    return x.astype("float64")


def case_astype_like(x, y):
    return x.astype(y.dtype) * y


def case_astype_int(x):
    return x.astype(np.int64) * x


def case_astype_bool(x):
    return x.astype(np.bool_) * x


def case_squeeze(x):
    return np.squeeze(x)


def case_squeeze_axis0(x):
    return np.squeeze(x, axis=0)


def case_squeeze_method(x):
    return x.squeeze()


def case_squeeze_method_axis(x):
    return x.squeeze(-1)


def case_trace(x):
    return np.trace(x)


def case_trace_offset(x):
    return np.trace(x, 1)


def case_trace_negative_offset(x):
    return np.trace(x, offset=-1)


def case_trace_axes(x):
    return np.trace(x, 0, 1, 2)


def case_trace_axes_reversed(x):
    return np.trace(x, -1, 2, 0)


def case_trace_method(x):
    return x.trace()


def case_trace_method_offset(x):
    return x.trace(1)


def case_clip_method(x):
    return x.clip(-0.5, 0.5)


def case_clip_method_varying(x, lo, hi):
    return x.clip(lo, hi)


# --------------------------------------------------------------------------- Python builtins


def case_builtin_float(x):
    return float(x)


def case_builtin_float_times(x):
    return float(np.sum(x)) * x


def case_builtin_max(x, y):
    return max(x, y)


def case_builtin_min(x, y):
    return min(x, y)


def case_builtin_sum(x):
    return sum(x)


def case_builtin_sum_start(x):
    return sum(x, 1.0)


def case_builtin_nondiff(x):
    return x * len(x) + x * isinstance(x, np.ndarray) + int(x[0] > 0.0) + sum(range(3))


# ------------------------------------------------- array methods and attributes, every form


def method_T(x):
    return x.T @ x


def method_shape(x):
    return x * x.shape[0] + x.ndim * x.size


def method_dtype(x):
    return np.sum(x.astype(x.dtype) ** 2)


def method_sum(x):
    return x.sum()


def method_sum_axis(x):
    return x.sum(0)


def method_sum_axis_keepdims(x):
    return x.sum(axis=1, keepdims=True)


def method_mean(x):
    return x.mean(axis=-1)


def method_max(x):
    return x.max(axis=0)


def method_min(x):
    return x.min()


def method_prod(x):
    return x.prod(1)


def method_dot(x, y):
    return x.dot(y)


def method_reshape_args(x):
    return x.reshape(2, 6)


def method_reshape_tuple(x):
    return x.reshape((2, 6))


def method_reshape_flat(x):
    return x.reshape(-1)


def method_transpose_args(x):
    return x.transpose(1, 0)


def method_transpose_tuple(x):
    return x.transpose((1, 0))


def method_transpose(x):
    return x.transpose()


def method_ravel(x):
    return x.ravel()


def method_flatten(x):
    return x.flatten()


def method_copy(x):
    return x.copy()


def method_astype(x):
    return x.astype(np.float64)


def method_clip(x):
    return x.clip(-0.5, 0.5)


def method_trace(x):
    return x.trace()


def method_squeeze(x):
    return x[None].squeeze()


def method_squeeze_axis(x):
    return x[:, None].squeeze(1)


def method_chain(x):
    return x.T.copy().reshape(4, 3).sum(axis=0).astype(np.float64).clip(-3.0, 3.0).max()


# --------------------------------------------------------------------------- internal primitives


def case_list_helpers(x):
    # the list helpers of adgen's own higher-order code, called directly
    xs = list(x)  # the rows
    rest, last = rt.split_last(xs)
    ys = rt.join_last(rest, last * 2.0)
    zs = rt.accumulate(ys, rt.as_list(x))
    zs = rt.accumulate_item(zs, -1, np.cos(xs[0]))
    return np.stack(zs) + rt.items_vjp([np.sin(r) for r in xs], x)


def case_list_vjp(x):
    return np.stack(rt.list_vjp([np.cos(r) for r in x], x)) * 3.0


def case_self_product(x):
    # `x * x`: the optimizer's square (same primal, derivative 2 x dx)
    return x * x


def case_assign_rebound_in_branch(x):
    # `y = x` is a real copy (the `assign` primitive) when y is rebound inside a block
    y = x
    if np.sum(x) > 100.0:
        y = x * 2.0
    return y


# -- functions of a sequence of arrays -----------------------------------------------------------


def case_np_array_of_scalars(x, y):
    return np.array([x, -y * x, 2.0])


def case_stack_axis0(a, b):
    return np.stack((a, b * 2.0, a))


def case_stack_axis_last(a, b):
    return np.stack([a, np.sin(b)], axis=-1)


def case_concatenate(a, b):
    return np.concatenate((a, b * b, a))


def case_concatenate_axis1(a, b):
    return np.concatenate([a, b], axis=1)


def case_hstack(a, b):
    return np.hstack((a, b, a * b))


def case_vstack(a, b):
    return np.vstack([a, b * 3.0])


def case_tuple_of_a_list_known_when_the_code_runs(x):
    # tuple(xs) of a list whose length only the run decides: the list's rule
    xs = []
    k = 0
    while k < 3 + int(np.sum(x) > 100.0):
        xs.append(np.sin(x) * (k + 1.0))
        k = k + 1
    ts = tuple(xs)
    return ts[0] * ts[2] + np.stack(ts)[1]


def case_list_of_derivatives_helpers(x):
    # adgen's helpers for lists of derivatives (second-order code of loops calls them)
    xs = []
    xs.append(np.sin(x))
    xs.append(x * x)
    xs.append(np.cos(x) * 2.0)
    ys = list(xs)
    ys = rt.accumulate(ys, xs)
    rest, last = rt.split_last(ys)
    zs = rt.join_last(rest, last * 3.0)
    ws = rt.as_list(zs)
    us = rt.list_vjp(ws, xs)
    a = rt.items_vjp(us, np.stack(xs))
    return a * a + np.stack(us)
