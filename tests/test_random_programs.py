"""Random straight-line NumPy programs, differentiated in both modes and checked numerically.

Hypothesis writes programs the rest of the suite never saw: a sequence of
assignments over scalars, vectors and matrices (broadcasting included),
drawing from arithmetic, elementwise functions, reductions with axis and
keepdims, products and slicing. Each is checked with ``check_grads``:
forward mode against central differences, reverse against forward.
Set ADGEN_FUZZ_EXAMPLES to run more of them (tests/test_fuzz.py is the larger fuzzer).
"""

import importlib.util
import itertools
import os

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from adgen.testing import check_grads

EXAMPLES = int(os.environ.get("ADGEN_FUZZ_EXAMPLES", "40"))
IN_CI = os.environ.get("CI", "").lower() in ("true", "1")  # a fixed sequence: reproducible
SHAPES = {"x": (3, 4), "y": (4,), "s": ()}

# elementwise templates: the result has the (broadcast) shape of the operands
UNARY = [
    "np.sin({a})",
    "np.cos({a})",
    "np.tanh({a})",
    "np.exp(np.tanh({a}))",
    "np.sqrt(1.0 + {a} * {a})",
    "np.log(1.5 + np.sin({a}))",
    "np.arctan({a})",
    "-{a}",
    "{a} ** 2",
    "np.square({a})",
    "abs({a} + 0.3125)",
    "np.clip({a}, -0.75, 0.75)",
    "np.maximum({a}, 0.1)",
]
BINARY = [
    "{a} + {b}",
    "{a} - {b}",
    "{a} * {b}",
    "{a} / (1.25 + {b} * {b})",
    "np.maximum({a}, {b} + 0.0625)",
    "np.where({a} > {b}, {a}, 2.0 * {b})",
]


def broadcast(a, b):
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        return None


@st.composite
def programs(draw):
    shapes = dict(SHAPES)
    lines = []
    counter = itertools.count(1)
    for _ in range(draw(st.integers(2, 7))):
        names = sorted(shapes)
        kind = draw(st.sampled_from(["unary", "binary", "binary", "reduce", "index", "product"]))
        a = draw(st.sampled_from(names))
        target = f"v{next(counter)}"
        if kind == "unary":
            expr, shape = draw(st.sampled_from(UNARY)).format(a=a), shapes[a]
        elif kind == "binary":
            b = draw(st.sampled_from(names))
            shape = broadcast(shapes[a], shapes[b])
            if shape is None:
                continue
            expr = draw(st.sampled_from(BINARY)).format(a=a, b=b)
        elif kind == "reduce":
            if not shapes[a]:
                continue
            fn = draw(st.sampled_from(["np.sum", "np.mean", "np.max", "np.prod"]))
            axis = draw(st.sampled_from([None, 0, -1]))
            keep = draw(st.booleans())
            if fn == "np.prod":
                a_expr = f"np.tanh({a}) + 1.5"
            else:
                a_expr = a
            expr = f"{fn}({a_expr}, axis={axis}, keepdims={keep})"
            shape = np.sum(np.zeros(shapes[a]), axis=axis, keepdims=keep).shape
        elif kind == "index":
            if not shapes[a]:
                continue
            index = draw(
                st.sampled_from(["[1:]", "[::-1]", "[0]", "[..., 1:3]", "[None, :]", "[-1, ...]"])
            )
            try:
                shape = np.zeros(shapes[a])[eval(index.replace("[", "np.s_[", 1))].shape
            except IndexError:
                continue
            expr = f"{a}{index}"
        else:
            b = draw(st.sampled_from(names))
            if not shapes[a] or not shapes[b]:
                continue
            try:
                shape = (np.zeros(shapes[a]) @ np.zeros(shapes[b]).T).shape
            except ValueError:
                continue
            expr = f"{a} @ {b}.T"
        lines.append(f"    {target} = {expr}")
        shapes[target] = shape
    last = sorted(shapes, key=lambda n: (n[0] != "v", -int(n[1:]) if n[1:].isdigit() else 0))[0]
    lines.append(f"    return np.sum({last}) + np.sum(s * y)")
    return "import numpy as np\n\n\ndef program(x, y, s):\n" + "\n".join(lines) + "\n"


_counter = itertools.count()


def load(tmp_path, source):
    path = tmp_path / f"prog_{next(_counter)}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.program


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=IN_CI,
    database=None if IN_CI else settings.default.database,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(source=programs(), seed=st.integers(0, 2**16))
def test_random_program_derivatives_agree(tmp_path, source, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, SHAPES["x"])
    y = rng.uniform(-1.0, 1.0, SHAPES["y"])
    s = float(rng.uniform(-1.0, 1.0))
    program = load(tmp_path, source)
    with np.errstate(all="ignore"):  # (the mean of an empty slice is nan: nothing to check)
        assume(np.all(np.isfinite(program(x, y, s))))
    # ties in max/maximum/clip/abs have no derivative; they have probability 0 here
    check_grads(program, x, y, s, rtol=1e-4, atol=1e-6)


# -- programs with loops and branches ------------------------------------------------------------

UPDATES = [
    "{v} = {v} * 0.9 + helper({u})",
    "{v} = {v} + 0.1 * np.sum(buf)",
    "{v} = {v} * 0.9 + {u}",
    "{v} = np.tanh({v}) + {u} * 0.5",
    "{v} = {v} - 0.1 * np.sin({u})",
    "{v} += 0.2 * np.tanh({u})",
    "{v} = {v} * (1.0 + 0.1 * np.cos({u}))",
]
CONDITIONS = ["np.sum({u}) > 0", "np.max({u}) > 0.2", "np.sum({u} * {u}) < 2.0"]


@st.composite
def control_flow_programs(draw):
    shapes = {"x": (3, 4), "y": (4,), "s": ()}
    lines = ["    a = x * 1.0", "    b = y * 1.0", "    c = s * 1.0", "    buf = np.zeros(4)"]
    shapes.update({"a": (3, 4), "b": (4,), "c": ()})
    state = ["a", "b", "c"]

    def update(indent):
        v = draw(st.sampled_from(state))
        fits = [n for n in shapes if broadcast(shapes[n], shapes[v]) == shapes[v]]
        u = draw(st.sampled_from(sorted(fits)))
        return indent + draw(st.sampled_from(UPDATES)).format(v=v, u=u)

    def condition():
        u = draw(st.sampled_from(sorted(shapes)))
        return draw(st.sampled_from(CONDITIONS)).format(u=u)

    def block(indent, depth):
        out = []
        for _ in range(draw(st.integers(1, 3))):
            kind = draw(
                st.sampled_from(
                    ["update", "update", "for", "if", "while", "write"]
                    if depth < 2
                    else ["update", "write"]
                )
            )
            if kind == "write":
                u = draw(st.sampled_from(sorted(shapes)))
                slot = draw(st.integers(0, 3))
                out.append(f"{indent}buf[{slot}] = buf[{slot}] * 0.5 + np.sum(np.sin({u}))")
            elif kind == "update":
                out.append(update(indent))
            elif kind == "for":
                n = draw(st.integers(0, 3))
                var = f"i{depth}"
                out.append(f"{indent}for {var} in range({n}):")
                out += block(indent + "    ", depth + 1)
                if draw(st.booleans()):
                    out.append(f"{indent}    if {condition()}:")
                    out.append(f"{indent}        break")
            elif kind == "if":
                out.append(f"{indent}if {condition()}:")
                out += block(indent + "    ", depth + 1)
                if draw(st.booleans()):
                    out.append(f"{indent}else:")
                    out += block(indent + "    ", depth + 1)
            else:
                var = f"n{depth}"
                out.append(f"{indent}{var} = 0")
                out.append(f"{indent}while {var} < {draw(st.integers(0, 3))}:")
                out += block(indent + "    ", depth + 1)
                out.append(f"{indent}    {var} = {var} + 1")
        return out

    lines += block("    ", 0)
    lines.append(
        "    return np.sum(a * a) + np.sum(b) * c + np.sum(np.sin(a) * b) + np.sum(buf * buf)"
    )
    helper = "def helper(u):\n    return np.tanh(u) * 0.5\n\n\n"
    return "import numpy as np\n\n\n" + helper + "def program(x, y, s):\n" + "\n".join(lines) + "\n"


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=IN_CI,
    database=None if IN_CI else settings.default.database,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(source=control_flow_programs(), seed=st.integers(0, 2**16))
def test_random_control_flow_program_derivatives_agree(tmp_path, source, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, SHAPES["x"])
    y = rng.uniform(-1.0, 1.0, SHAPES["y"])
    s = float(rng.uniform(-1.0, 1.0))
    program = load(tmp_path, source)
    # conditions are continuous in the inputs but almost surely not at a switching point
    check_grads(program, x, y, s, rtol=1e-4, atol=1e-6)
