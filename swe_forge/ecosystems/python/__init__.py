"""Python (pytest) through the ecosystem seam, a peer of the other adapters.

Its modules by concern: ``recipe`` (how to install the repository, its metadata read
statically: ``recipe_metadata``, ``recipe_requirements``, ``recipe_poetry``), ``deps`` (the
lock resolved as of the base date and the wheelhouse vendored on the host, ``deps_wheels``: the
shared wheel store), ``image`` (the env and instance images), ``runner`` (pytest with the
judge's plugin), ``scope`` (the tests a patch touches, read with ``ast``), ``pytest_settings``
(pytest's settings a patch may not change), ``canary`` (which calibration copies are kept as
decoys), ``swebench`` (SWE-bench 5's eval script) and ``comparison_hooks`` (the comparisons a
patch adds, read on the host: ``comparison_hooks_sites``, ``comparison_hooks_project``). The
capability scanner and canary writer run in the container with the task's own Python
(``gates/harness/``; the scanner is read on the host here too).

The package's own module imports nothing: mine's classifier reads :mod:`.detect` (markers and
test-file names) without loading the adapter (:mod:`.adapter`, :class:`PythonEcosystem`).
"""
