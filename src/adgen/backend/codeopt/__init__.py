"""The optimizer of generated code: passes that rewrite a generated function's source text.

Forward and reverse mode write one statement per IR statement, and reverse mode writes the
chain rule mechanically: a copy for each ``+`` and plain assignment, a save for each name a
loop rebinds, and no ``del`` at all. The passes here rewrite that source into code with the
same values that holds fewer names, copies and arrays. Each takes the text of one generated
function (a single ``def``), returns the text unchanged when it has nothing to do, and
shows what it does with a doctest (source in, source out). One pass per module:

* :mod:`~adgen.backend.codeopt.drop_copies`: reads ``b`` where a copy ``a = b`` was read, and
  starts an adjoint summed from zeros with its first contribution;
* :mod:`~adgen.backend.codeopt.batch_saves`: saves a loop iteration's values with one push of a
  tuple (and takes them back with one pop);
* :mod:`~adgen.backend.codeopt.sum_before_linear`: sums an adjoint read only summed before the
  linear maps that make it (code specialised for shapes);
* :mod:`~adgen.backend.codeopt.collect_terms`: writes runs of elementwise ``+``, ``-`` and ``*``
  as polynomials in the values they start from, like terms added, by Horner's scheme (code
  specialised for NumPy arrays of known shapes and floating dtypes);
* :mod:`~adgen.backend.codeopt.fuse_temporaries`: writes a temporary read once back into the
  expression that reads it;
* :mod:`~adgen.backend.codeopt.share_repeated`: computes once a pure expression the code
  writes twice over the same values (``1.0 - h * h`` of ``tanh``'s tangent and its adjoint,
  in code differentiated again);
* :mod:`~adgen.backend.codeopt.drop_broadcasts`: drops a ``np.broadcast_to`` whose result
  meets an array of the shape it broadcasts to in elementwise arithmetic (code for NumPy
  arrays of known shapes);
* :mod:`~adgen.backend.codeopt.keep_shapes_only`: keeps only the shape and dtype (``rt.Like``) of a
  forward value whose adjoint reads nothing else of it;
* :mod:`~adgen.backend.codeopt.free_dead_names`: frees each value after its last use (``del``);
* :mod:`~adgen.backend.codeopt.reuse_buffers`: writes an elementwise result into the array of a
  temporary read for the last time (``out=``), in code for large NumPy arrays of known shapes;
* :mod:`~adgen.backend.codeopt.direct_reductions`: calls ``np.sum`` (``prod``, ``max``,
  ``min``) of NumPy arrays as the ufunc's method, ``np.add.reduce``, without NumPy's Python
  checks.

:mod:`~adgen.backend.codeopt.common` holds what several of them share.

The order they run in:

* forward mode (:func:`adgen.modes.forward.forward`) runs ``collect_terms``, :func:`fuse_temporaries
  <adgen.backend.codeopt.fuse_temporaries.fuse_temporaries>` and ``share_repeated`` (not with
  ``fuse=False``), then ``drop_broadcasts`` and
  ``reuse_buffers`` and ``direct_reductions`` (none with ``fuse=False``); batched forward
  mode (:mod:`adgen.modes.batched`) runs ``fuse_temporaries``, ``drop_dead``, then
  ``reuse_buffers`` on its tangents (their batch axis' length stands in as a prime);
* reverse mode (:func:`adgen.modes.reverse.reverse`) runs, in this order, ``drop_copies``;
  ``batch_saves`` (not with ``batch=False``: code meant for a higher derivative);
  ``sum_before_linear`` (only for code specialised for shapes); ``collect_terms`` (code
  specialised for NumPy arrays, not with ``fuse=False`` nor ``batch=False``);
  ``fuse_temporaries`` and ``share_repeated`` (not with ``fuse=False``); ``drop_broadcasts`` (where
  ``collect_terms`` runs); then ``keep_shapes_only`` and
  ``free_dead_names`` together
  (:func:`~adgen.backend.codeopt.keep_shapes_only.keep_shapes_and_free`, one parse for both);
  then ``reuse_buffers`` and ``direct_reductions`` (not with ``batch=False``).

``reuse_buffers`` writes ``out=``, ``direct_reductions`` ufunc methods and ``collect_terms``
casts numbers (``np.float64(v)``), which adgen does not differentiate: they run only on code
adgen will not read again (not on code made for a nested derivative, whose answers hold
:data:`adgen.rules.known.ANY_KIND`, nor with ``batch=False``).

``sum_before_linear`` matches each contribution to an adjoint as the sweep writes it, one
operation on names, so it runs before ``fuse_temporaries`` merges statements, and so does
``collect_terms``, which reads each statement's value as a polynomial;
``keep_shapes_only`` and ``free_dead_names`` decide from what the final code reads, so they
run last.
"""
