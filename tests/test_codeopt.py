"""The text passes over generated code (adgen.backend.codeopt): what they may and may not rewrite.

Each pass must leave values unchanged; the property tests run random straight-line code
before and after a pass and compare every name the function returns.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import adgen
from adgen.backend.codeopt.direct_reductions import direct_reductions
from adgen.backend.codeopt.drop_broadcasts import drop_broadcasts
from adgen.backend.codeopt.drop_copies import drop_copies
from adgen.backend.codeopt.fuse_temporaries import fuse_temporaries
from adgen.backend.codeopt.reuse_buffers import reuse_buffers
from adgen.backend.codeopt.share_repeated import share_repeated


def _code(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def _body(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()[1:] if line.strip()]


def _run(source: str, *args: object) -> object:
    space: dict[str, object] = {"np": np, "math": math}
    exec(compile(source, "<test>", "exec"), space)
    fn = next(v for k, v in space.items() if k.startswith("f"))
    return fn(*args)  # type: ignore[operator]


# -- fuse_temporaries ----------------------------------------------------------------------------
def test_fuse_writes_a_line_back_as_one_expression() -> None:
    src = _code(
        """
        def f(x, y):
            # line 2: return np.sin(x) * y + 1.0
            a = np.sin(x)
            b = a * y
            c = b + 1.0
            return c
        """
    )
    assert _body(fuse_temporaries(src)) == [
        "# line 2: return np.sin(x) * y + 1.0",
        "c = np.sin(x) * y + 1.0",
        "return c",
    ]


def test_fuse_keeps_a_value_read_twice() -> None:
    src = _code(
        """
        def f(x):
            a = np.exp(x)
            b = a * a
            return b
        """
    )
    assert fuse_temporaries(src) == src


def test_fuse_a_temporary_bound_twice_when_each_binding_has_its_one_reader() -> None:
    # a checkpointed loop's body is written twice (the primal run and its recomputation)
    src = _code(
        """
        def f(x, n):
            for i in range(n):
                # line 3: x = np.sin(x) * 0.5
                t = np.sin(x)
                x = t * 0.5
            for i in range(n):
                # line 3: x = np.sin(x) * 0.5
                t = np.sin(x)
                x = t * 0.5
            return x
        """
    )
    out = fuse_temporaries(src)
    assert "t = " not in out and _body(out).count("x = np.sin(x) * 0.5") == 2
    assert _run(out, 0.3, 3) == _run(src, 0.3, 3)


def test_fuse_keeps_a_temporary_bound_twice_if_another_statement_reads_a_binding() -> None:
    # the second binding's value is read again after its loop: fusing only the first
    # binding would leave that read of t without the value it reads
    src = _code(
        """
        def f(x, n):
            for i in range(n):
                # line 3: x = np.sin(x) * 0.5
                t = np.sin(x)
                x = t * 0.5
            for i in range(n):
                t = np.cos(x)
            return x + t
        """
    )
    assert fuse_temporaries(src) == src


def test_fuse_never_fuses_past_a_second_binding_of_the_temporary() -> None:
    src = _code(
        """
        def f(x):
            t = x * 2.0
            t = x + 1.0
            b = t * 3.0
            c = b + 0.0
            return c
        """
    )
    out = fuse_temporaries(src)
    assert _run(out, 1.0) == _run(src, 1.0) == 6.0


def test_fuse_never_moves_past_a_rebinding_of_what_it_reads() -> None:
    src = _code(
        """
        def f(x):
            a = x * 2.0
            x = 5.0
            b = a + x
            return b
        """
    )
    out = fuse_temporaries(src)
    assert "a = x * 2.0" in out
    assert _run(out, 1.0) == _run(src, 1.0) == 7.0


def test_fuse_never_moves_past_a_del_of_what_it_reads() -> None:
    src = _code(
        """
        def f(x):
            y = x + 1.0
            c = y - 1.0
            a = y * 2.0
            del y
            b = a + c
            return b
        """
    )
    out = fuse_temporaries(src)
    assert "a = y * 2.0" in out and _run(out, 1.0) == 5.0


def test_fuse_drops_the_del_of_a_fused_temporary() -> None:
    src = _code(
        """
        def f(x):
            a = x * 2.0
            b = np.sum(a)
            del a
            return b
        """
    )
    assert _body(fuse_temporaries(src)) == ["b = np.sum(x * 2.0)", "return b"]


@pytest.mark.parametrize(
    "call",
    [
        "np.random.normal(x)",  # draws from global state: order matters
        "g(x)",  # unknown code
        "np.add(x, 1.0, out=x)",  # writes
        "obj.value",  # a property may do anything
        "stack.pop()",
    ],
)
def test_fuse_never_moves_code_that_may_act(call: str) -> None:
    src = _code(
        f"""
        def f(x, g, obj, stack):
            a = {call}
            b = x * 3.0
            c = a + b
            return c
        """
    )
    assert f"a = {call}" in fuse_temporaries(src)


def test_fuse_never_moves_past_code_that_may_act() -> None:
    src = _code(
        """
        def f(x, stack):
            a = x * 2.0
            stack.append(a)
            b = a + 1.0
            return b
        """
    )
    assert fuse_temporaries(src) == src
    src2 = _code(
        """
        def f(x, stack):
            a = x * 2.0
            y = stack.pop()
            b = a + 1.0
            return b
        """
    )
    assert "a = x * 2.0" in fuse_temporaries(src2)


def test_fuse_stays_within_one_original_line() -> None:
    src = _code(
        """
        def f(x):
            # line 2: a = x * 2.0
            a = x * 2.0
            # line 3: return a + 1.0
            b = a + 1.0
            return b
        """
    )
    assert "a = x * 2.0" in fuse_temporaries(src)


def test_fuse_never_moves_code_into_a_loop_or_branch() -> None:
    src = _code(
        """
        def f(x, n):
            a = x * 2.0
            for i in range(n):
                x = a + x
            if n:
                x = a * x
            return x
        """
    )
    assert fuse_temporaries(src) == src


def test_fuse_keeps_lines_within_the_width() -> None:
    long = " + ".join(f"x{i}" for i in range(20))
    params = ", ".join(f"x{i}" for i in range(20))
    src = _code(
        f"""
        def f({params}):
            a = {long}
            b = a * ({long})
            return b
        """
    )
    assert fuse_temporaries(src) == src
    assert "a = " not in fuse_temporaries(src, width=400)


def test_fuse_never_moves_a_value_past_a_new_binding_of_its_name() -> None:
    """``t0 = x + x`` then ``t0 = x + y``: the later reads of ``t0`` are of the second value
    (the pass moved the first one into them: a silently wrong result, found by the property
    test below)."""
    src = textwrap.dedent(
        """\
        def f(x, y):
            # line 0
            t0 = x + x
            t1 = x + x
            t0 = x + y
            t4 = x + t0
            t5 = x + t0
            del t0
            return (t1, t4, t5)
        """
    )
    x, y = np.linspace(-1.0, 1.0, 5), np.linspace(0.5, 2.0, 5)
    for got, want in zip(_run(fuse_temporaries(src), x, y), (2 * x, 2 * x + y, 2 * x + y)):
        np.testing.assert_array_equal(got, want)


_OPS = ["{a} + {b}", "{a} * {b}", "{a} - {b}", "np.sin({a})", "np.tanh({a}) * {b}", "-{a}"]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_fuse_property_random_straight_line_code_keeps_its_values(data: st.DataObject) -> None:
    """Random straight-line code over arrays, with rebindings, dels and line comments:
    fused and as written give identical results."""
    names = ["x", "y"]
    lines = ["def f(x, y):"]
    for k in range(data.draw(st.integers(3, 14))):
        if data.draw(st.integers(0, 5)) == 0:
            lines.append(f"    # line {k}")
        op = data.draw(st.sampled_from(_OPS))
        a, b = data.draw(st.sampled_from(names)), data.draw(st.sampled_from(names))
        target = data.draw(st.sampled_from([f"t{k}", f"t{k}", data.draw(st.sampled_from(names))]))
        lines.append(f"    {target} = " + op.format(a=a, b=b))
        if target not in names:
            names.append(target)
        if data.draw(st.integers(0, 6)) == 0 and len(names) > 3:
            gone = names.pop(data.draw(st.integers(2, len(names) - 1)))
            lines.append(f"    del {gone}")
    lines.append(f"    return ({', '.join(names)},)")
    src = "\n".join(lines) + "\n"
    x, y = np.linspace(-1.0, 1.0, 5), np.linspace(0.5, 2.0, 5)
    want = _run(src, x, y)
    got = _run(fuse_temporaries(src), x, y)
    assert isinstance(want, tuple) and isinstance(got, tuple)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


# -- share_repeated ------------------------------------------------------------------------------
_REPEATED = ["1.0 - {a} * {a}", "np.exp({a}) + {b}", "{a} * {b}", "np.tanh({a})"]


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_share_property_random_code_with_writes_keeps_its_values(data: st.DataObject) -> None:
    """Random straight-line code repeating expressions, with rebindings, dels, writes into
    arrays (and views of them), ``+=`` and list appends: shared and as written give
    identical results."""
    names = ["x", "y"]
    lines = ["def f(x, y):", "    x = x.copy()", "    y = y.copy()", "    v = x[1:]", "    xs = []"]
    for k in range(data.draw(st.integers(3, 16))):
        kind = data.draw(st.integers(0, 9))
        a, b = data.draw(st.sampled_from(names)), data.draw(st.sampled_from(names))
        if kind == 0:
            lines.append(f"    v[0] = {k}.5")  # (a write into x through its view)
        elif kind == 1 and a not in ("x", "y"):
            lines.append(f"    {a} += 0.25")
        elif kind == 2:
            lines.append(f"    xs.append({a} * 2.0)")
        elif kind == 3 and len(names) > 3:
            gone = names.pop(data.draw(st.integers(2, len(names) - 1)))
            lines.append(f"    del {gone}")
        else:
            op = data.draw(st.sampled_from(_REPEATED + _OPS))
            target = data.draw(st.sampled_from([f"t{k}", f"t{k}", a]))
            lines.append(f"    {target} = " + op.format(a=a, b=b) + " + " + op.format(a=a, b=b))
            if target not in names:
                names.append(target)
    lines.append(f"    return ({', '.join(names)}, *xs)")
    src = "\n".join(lines) + "\n"
    x, y = np.linspace(-1.0, 1.0, 5), np.linspace(0.5, 2.0, 5)
    want = _run(src, x, y)
    got = _run(share_repeated(src), x, y)
    assert isinstance(want, tuple) and isinstance(got, tuple)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_share_computes_tanhs_slope_once_in_a_hessian_vector_product() -> None:
    # forward mode over a gradient's code: tanh's tangent and the gradient's own line both
    # write 1.0 - h * h; the code computes it once, and the product is unchanged
    from tests_support_mlp import mlp_loss  # noqa: PLC0415

    rng = np.random.default_rng(0)
    w, X, Y = rng.normal(size=12) * 0.5, rng.normal(size=(7, 3)), rng.normal(size=(7, 3))
    v = rng.normal(size=12)
    text = adgen.source(adgen.grad(mlp_loss), mode="forward", args=(w, X, Y))
    code = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    assert sum(line.count("1.0 - ") for line in code) == 1, text
    g = adgen.grad(mlp_loss)
    want = (g(w + 1e-6 * v, X, Y) - g(w - 1e-6 * v, X, Y)) / 2e-6
    np.testing.assert_allclose(adgen.hvp(mlp_loss)(w, X, Y, v), want, rtol=1e-6, atol=1e-8)


# -- drop_copies ---------------------------------------------------------------------------------
def test_drop_copies_removes_a_copy_back_that_changes_nothing() -> None:
    src = _code(
        """
        def f(a_bar, z_bar, y):
            a_2_bar = a_bar
            z_bar = z_bar - a_bar
            a_bar = a_2_bar
            x_bar = a_2_bar * y
            return (a_bar, z_bar, x_bar)
        """
    )
    out = drop_copies(src)
    assert _body(out) == [
        "z_bar = z_bar - a_bar",
        "x_bar = a_bar * y",
        "return (a_bar, z_bar, x_bar)",
    ]
    assert _run(out, 2.0, 1.0, 3.0) == _run(src, 2.0, 1.0, 3.0)


def test_drop_copies_leaves_a_pass_in_a_block_it_empties() -> None:
    src = _code(
        """
        def f(x, c):
            if c:
                t = x
            return x
        """
    )
    out = drop_copies(src)
    assert "t = x" not in out and "pass" in out
    assert _run(out, 2.0, True) == _run(src, 2.0, True) == 2.0


def test_drop_copies_keeps_a_copy_whose_source_changes_before_it_is_read() -> None:
    src = _code(
        """
        def f(z_bar):
            z_4_bar = z_bar
            z_bar = z_bar * 0.1
            w_bar = z_4_bar * 0.5
            return (z_bar, w_bar)
        """
    )
    assert drop_copies(src) == src


def test_drop_copies_merges_a_name_copied_back() -> None:
    src = _code(
        """
        def f(x_bar, g, t):
            x_new_bar = x_bar
            x_new_bar = x_new_bar + g
            t_bar = x_new_bar * t
            x_bar = x_new_bar * 0.9
            return (x_bar, t_bar)
        """
    )
    out = drop_copies(src)
    assert "x_new_bar" not in out
    assert _run(out, 1.0, 2.0, 3.0) == _run(src, 1.0, 2.0, 3.0)


def test_drop_copies_does_not_merge_when_the_source_is_read_meanwhile() -> None:
    src = _code(
        """
        def f(x_bar, g):
            x_new_bar = x_bar
            x_new_bar = x_new_bar + g
            y_bar = x_bar * 2.0
            x_bar = x_new_bar * 0.9
            return (x_bar, y_bar)
        """
    )
    out = drop_copies(src)
    assert _run(out, 1.0, 2.0) == _run(src, 1.0, 2.0) == (2.7, 2.0)
    assert "x_new_bar = x_bar" in out


# -- through adgen -------------------------------------------------------------------------------
def scalar_recurrence(a, b, n):
    x, y = a, b
    acc = 0.0
    for _ in range(n):
        s = math.sin(x) * y + 0.5 * math.cos(y)
        x_new = 0.9 * x + 0.1 * math.tanh(s) * y
        y = 0.8 * y + 0.2 * math.cos(s + x_new)
        x = x_new
        acc = acc + x * y
    return acc


def test_generated_loop_code_reads_like_its_source_and_matches_unfused() -> None:
    args = (0.3, -0.7, 7)
    fused = adgen.source(scalar_recurrence, wrt=(0, 1), args=args)
    plain = adgen.source(scalar_recurrence, wrt=(0, 1), optimize=False)
    assert "s = s_1 * y + 0.5 * math.cos(y)" in fused
    assert "s_2 = s_1 * y" in plain
    value, grads = adgen.value_and_grad(scalar_recurrence, wrt=(0, 1))(*args)
    h = 1e-6
    for k in range(2):
        up = list(args)
        down = list(args)
        up[k] += h  # type: ignore[operator]
        down[k] -= h  # type: ignore[operator]
        fd = (scalar_recurrence(*up) - scalar_recurrence(*down)) / (2 * h)
        assert grads[k] == pytest.approx(fd, rel=1e-6, abs=1e-8)
    assert value == scalar_recurrence(*args)
    tangent = adgen.jvp(lambda a, b: scalar_recurrence(a, b, 7), (0.3, -0.7), (1.0, 0.0))[1]
    assert tangent == pytest.approx(grads[0], rel=1e-12)


# -- reuse_buffers -------------------------------------------------------------------------------
_KNOWN = {"x": ((2, 3), "float64"), "y": ((3,), "float64"), "z": ((2, 3), "float32")}
# operations of one or two operands: arithmetic, ufuncs, and reads that keep a reference
# (a view, a list, a tuple) or read something other than the values
_REUSE_OPS = [
    "{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / ({b} * {b} + 1.0)", "-{a}", "np.tanh({a})",
    "np.exp(-{a} * {a})", "{a} * 2.0", "1.0 - {a}", "np.maximum({a}, {b})",
    "{a}.reshape(-1)", "np.transpose({a})", "[{a}, {b}]", "({a}, 1.0)", "{a}[0]",
    "np.sum({a}) + {b}", "{a} ** 2", "np.full((2, 3), 0.5, dtype=np.float64)",
    "np.full((3,), 2.0, dtype=np.float32)", "{a} * 3",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_reuse_property_random_code_keeps_its_values_and_its_arguments(
    data: st.DataObject,
) -> None:
    """Random straight-line code over arrays of two shapes and two dtypes, with views,
    lists, tuples, rebindings, loops reading names later and results returned in part:
    with results written into dead temporaries, every result is the same to the bit, and
    no argument (nor a list or view made of one) changes."""
    names = ["x", "y", "z"]
    lines = ["def f(x, y, z):"]
    for k in range(data.draw(st.integers(2, 16))):
        op = data.draw(st.sampled_from(_REUSE_OPS))
        a, b = data.draw(st.sampled_from(names)), data.draw(st.sampled_from(names))
        again = data.draw(st.sampled_from(names))  # (a name bound again)
        target = data.draw(st.sampled_from([f"t{k}", f"t{k}", f"t{k}", again]))
        lines.append(f"    {target} = " + op.format(a=a, b=b))
        if target not in names:
            names.append(target)
        if data.draw(st.integers(0, 8)) == 0:
            later = data.draw(st.sampled_from(names))
            lines.append(f"    for _ in range(2):\n        acc = {later}")
    kept = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=4))
    lines.append(f"    return ({', '.join(kept)},)")
    src = "\n".join(lines) + "\n"
    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    y = np.linspace(0.5, 2.0, 3)
    z = np.linspace(-2.0, 1.0, 6, dtype=np.float32).reshape(2, 3)
    try:
        want = _run(src, x.copy(), y.copy(), z.copy())
    except (ValueError, TypeError, AttributeError, IndexError):  # the program's own error
        return  # (shapes that do not broadcast, arithmetic on lists...)
    args = (x.copy(), y.copy(), z.copy())
    got = _run(reuse_buffers(src, _KNOWN, min_bytes=0), *args)
    for arg, original in zip(args, (x, y, z)):
        np.testing.assert_array_equal(arg, original)
    assert _same(got, want)


def _same(got: object, want: object) -> bool:
    """Equal to the bit, with the same dtypes, item by item in lists and tuples."""
    if isinstance(want, (list, tuple)):
        return (
            type(got) is type(want)
            and len(got) == len(want)  # type: ignore[arg-type]
            and all(_same(g, w) for g, w in zip(got, want))  # type: ignore[call-overload]
        )
    return bool(np.array_equal(got, want)) and np.asarray(got).dtype == np.asarray(want).dtype


def test_reuse_rewrites_last_uses_and_leaves_kept_arrays() -> None:
    src = _code(
        """
        def f(x, y, z):
            a = x * 2.0
            keep = [a]
            b = x + y
            c = b * 3.0
            v = c.reshape(-1)
            d = x * 0.5
            e = d + z
            g = x - 1.0
            h = np.tanh(g)
            k = z * 2.0
            m = k + x
            return (keep, v, e, h, c, m)
        """
    )
    out = _body(reuse_buffers(src, _KNOWN, min_bytes=0))
    assert "c = b * 3.0" not in out and "c = np.multiply(b, 3.0, out=b)" in out  # b: dead
    assert "v = c.reshape(-1)" in out  # (a view: c is kept as it is)
    assert "e = np.add(d, z, out=d)" in out  # (float64 + float32: float64, d's dtype)
    assert "h = np.tanh(g, out=g)" in out
    assert "keep = [a]" in out and "a = x * 2.0" in out
    assert "m = k + x" in out  # (float32 + float64: not k's dtype)


def test_reuse_leaves_small_arrays_to_numpy() -> None:
    """A small array costs next to nothing to make: its operations stay as written."""
    src = _code(
        """
        def f(x, y, z):
            b = x + 1.0
            c = b * 3.0
            return (c,)
        """
    )
    assert reuse_buffers(src, _KNOWN) == src
    large = {"x": ((64, 64), "float64")}
    assert "c = np.multiply(b, 3.0, out=b)" in _body(reuse_buffers(src, large))


def _tanh_loss(x, w):
    h = np.tanh(x * w) - np.sin(x)
    a = h * h + 0.5 * np.exp(-x * x)
    return np.sum(a * w - np.cos(h))


def test_reuse_in_derivatives_of_large_arrays_keeps_their_values() -> None:
    """End to end, on arrays large enough for reuse: the specialised derivative writes into
    dead temporaries and agrees with the general code (which reuses nothing) in both modes
    and at second order."""
    from adgen.pipeline import derivative, run

    rng = np.random.default_rng(5)
    x, w, v = (rng.normal(size=(64, 64)) for _ in range(3))
    signature = (("x", adgen.middle.shapes.describe(x)), ("w", adgen.middle.shapes.describe(w)))
    for mode, extra in (("reverse", (1.0,)), ("forward", (v,))):
        special = derivative(_tanh_loss, mode, ("x",), signature=signature)
        general = derivative(_tanh_loss, mode, ("x",))
        assert "out=" not in general.generated.source
        if mode == "reverse":  # (forward mode's lines are fused: NumPy reuses their temporaries)
            assert "out=" in special.generated.source
        got, want = run(special, x, w, *extra), run(general, x, w, *extra)
        np.testing.assert_allclose(
            got[1][0] if mode == "reverse" else got[1],
            want[1][0] if mode == "reverse" else want[1],
            rtol=1e-12,
        )
    hvp = adgen.hvp(_tanh_loss)(x, w, v)
    g = adgen.grad(_tanh_loss)
    np.testing.assert_allclose(
        hvp, (g(x + 1e-6 * v, w) - g(x - 1e-6 * v, w)) / 2e-6, rtol=1e-5, atol=1e-6
    )


def test_drop_copies_reads_a_free_name_where_its_copy_was_read() -> None:
    """A copy of a name the function never binds (a closure's or a module's: a template's
    ``n = num``) is read through; it raised a KeyError (found with np.linspace in a closure)."""
    source = textwrap.dedent(
        """\
        def f_vjp(x, out_bar):
            n = num
            w = np.linspace(0.0, 1.0, n)
            return (w, (x,))
        """
    )
    assert drop_copies(source) == textwrap.dedent(
        """\
        def f_vjp(x, out_bar):
            w = np.linspace(0.0, 1.0, num)
            return (w, (x,))
        """
    )


# -- direct_reductions ---------------------------------------------------------------------------
_REDUCTIONS = [
    "np.sum({a})", "np.sum({a}, axis=0)", "np.sum({a} * {b}, -1)", "np.prod({a} + 1.0)",
    "np.max({a}, axis=0, keepdims=True)", "np.min(np.exp({a}))", "np.amax({a} ** 2, 0)",
    "np.sum({a}, dtype=np.float32)", "np.sum([{a}, {b}])", "np.sum({a}.T, axis=1)",
    "np.sum({a}, axis=(0,))", "np.amin({a}, keepdims=True)",
]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_direct_reductions_keep_every_value_to_the_bit(data: st.DataObject) -> None:
    """Random reductions of known arrays of two shapes and two dtypes (and of values that
    are not known arrays, left as they are): called as ufunc methods, every result is the
    same to the bit, with the same dtype."""
    lines = ["def f(x, y, z):"]
    for k in range(data.draw(st.integers(1, 6))):
        op = data.draw(st.sampled_from(_REDUCTIONS))
        a, b = data.draw(st.sampled_from(["x", "y", "z"])), data.draw(st.sampled_from("xyz"))
        lines.append(f"    t{k} = " + op.format(a=a, b=b))
    lines.append(f"    return ({', '.join(f't{k}' for k in range(len(lines) - 1))},)")
    src = "\n".join(lines) + "\n"
    args = (
        np.linspace(-1.0, 1.0, 6).reshape(2, 3),
        np.linspace(0.5, 2.0, 3),
        np.linspace(-2.0, 1.0, 6, dtype=np.float32).reshape(2, 3),
    )
    try:
        want = _run(src, *args)
    except (ValueError, TypeError):  # the program's own error (shapes that do not broadcast)
        return
    assert _same(_run(direct_reductions(src, _KNOWN), *args), want)


def test_direct_reductions_in_a_derivative_keep_its_values() -> None:
    def loss(w, X, y):
        r = X @ w - y
        return np.sum(r**2) + np.max(np.abs(w)) * 0.1

    X = np.linspace(-1.0, 1.0, 15).reshape(5, 3)
    y, w = np.linspace(0.0, 1.0, 5), np.array([0.3, -0.2, 0.5])
    text = adgen.source(loss, "reverse", args=(w, X, y))
    assert "(r ** 2).sum()" in text and "out_3.max()" in text
    general = adgen.source(loss, "reverse")  # (not made for shapes: left as written)
    assert ").sum()" not in general
    expected = 2 * X.T @ (X @ w - y) + 0.1 * np.eye(3)[2]
    np.testing.assert_allclose(adgen.grad(loss)(w, X, y), expected, rtol=1e-14)


def test_grad_code_drops_the_value_work_of_scipy_special_and_reductions() -> None:
    scipy_special = pytest.importorskip("scipy.special")

    def poisson_loglike(b, X, y):
        eta = X @ b
        return np.sum(-np.exp(eta) + y * eta - scipy_special.gammaln(y + 1))

    X = np.linspace(-1.0, 1.0, 12).reshape(4, 3)
    y, b = np.array([0.0, 1.0, 3.0, 2.0]), np.array([0.2, -0.1, 0.3])
    grad_code = adgen.source(poisson_loglike, "reverse_grad", args=(b, X, y))
    code = [row for row in grad_code.splitlines() if not row.lstrip().startswith("#")]
    assert not any("gammaln" in row for row in code)  # (only the value reads it)
    assert "gammaln(" in adgen.source(poisson_loglike, "reverse", args=(b, X, y))
    expected = X.T @ (y - np.exp(X @ b))
    np.testing.assert_allclose(adgen.grad(poisson_loglike)(b, X, y), expected, rtol=1e-13)
    value, g = adgen.value_and_grad(poisson_loglike)(b, X, y)
    assert value == pytest.approx(poisson_loglike(b, X, y), rel=1e-15)


_FILLS = [
    "np.full((2, 3), {v}, dtype=np.float64) * {a}",
    "{a} / np.full((2, 3), {v}, dtype=np.float64)",
    "np.full((2, 3), {v}, dtype=np.float64) - np.exp({a})",
    "np.full((3,), {v}, dtype=np.float64) + {a}",
    "np.full((2, 3), {v}, dtype=np.float64) * ({a} + {b})",
]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_dropped_fills_keep_every_value_and_dtype(data: st.DataObject) -> None:
    """``np.full(S, v, dtype=np.float64)`` meeting arrays of shape S: the fill is dropped
    only where the values and the dtype stay (float64 operands), never for float32 ones."""
    op = data.draw(st.sampled_from(_FILLS))
    a, b = data.draw(st.sampled_from("xyz")), data.draw(st.sampled_from("xyz"))
    v = data.draw(st.sampled_from(["2.5", "g", "-1", "np.float32(0.3)"]))
    src = f"def f(x, y, z, g):\n    return ({op.format(a=a, b=b, v=v)},)\n"
    args = (
        np.linspace(-1.0, 1.0, 6).reshape(2, 3),
        np.linspace(0.5, 2.0, 3),
        np.linspace(-2.0, 1.0, 6, dtype=np.float32).reshape(2, 3),
        np.float64(0.7),
    )
    try:
        want = _run(src, *args)
    except ValueError:  # (shapes that do not broadcast)
        return
    assert _same(_run(drop_broadcasts(src, _KNOWN), *args), want)


def test_direct_reductions_leave_python_numbers_to_np_sum() -> None:
    # a value of shape () may be a Python float, which has no .sum(): the fuzzer's find
    def f(x, s):
        return np.sum(s * x) + np.sum(s * 2.0) * np.max(x)

    x, s = np.array([0.5, -1.0, 2.0]), 1.5
    text = adgen.source(f, "reverse", args=(x, s))
    assert "np.sum(s * 2.0)" in text
    value, g = adgen.value_and_grad(f, wrt=(0, 1))(x, s)
    assert value == pytest.approx(f(x, s), rel=1e-15)
    np.testing.assert_allclose(g[0], s + 3.0 * np.eye(3)[2], rtol=1e-15)
    assert g[1] == pytest.approx(np.sum(x) + 2.0 * np.max(x), rel=1e-15)
