"""Random straight-line NumPy programs, differentiated in both modes and checked numerically.

Hypothesis writes programs the rest of the suite never saw: a sequence of
assignments over scalars, vectors and matrices (broadcasting included),
drawing from arithmetic, elementwise functions, reductions with axis and
keepdims, products and slicing. Each is checked with ``check_grads``:
forward mode against central differences, reverse against forward.
Set ADGEN_FUZZ_EXAMPLES to run more of them.
"""

import importlib.util
import itertools
import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adgen.testing import check_grads

EXAMPLES = int(os.environ.get("ADGEN_FUZZ_EXAMPLES", "40"))
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
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(source=programs(), seed=st.integers(0, 2**16))
def test_random_program_derivatives_agree(tmp_path, source, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, SHAPES["x"])
    y = rng.uniform(-1.0, 1.0, SHAPES["y"])
    s = float(rng.uniform(-1.0, 1.0))
    program = load(tmp_path, source)
    # ties in max/maximum/clip/abs have no derivative; they have probability 0 here
    check_grads(program, x, y, s, rtol=1e-4, atol=1e-6)
