"""Go: modules, ``go test -json``, toolchains from the Go module proxy.

- **Toolchain.** The Go release that was newest when the base commit was made (a fixed table
  of minor releases and the patch release we pin for each, so the same date always gives the
  same toolchain), raised to the ``go``/``toolchain`` lines of ``go.mod``. It comes from the
  Go module proxy as the module ``golang.org/toolchain``, checked against the checksum
  database by the host's ``go``, and is copied into the image at ``/usr/local/go``.
- **Dependencies.** ``go mod download`` with the chosen toolchain on the host, for the base
  tree and for the tree with the gold and test patches (a fix may add a module), into a
  module cache copied into the env image at ``/opt/go/modcache``. go.mod and go.sum pin
  exact versions, so the base date needs no resolver. Tests run with ``GOPROXY=off``,
  ``GOFLAGS=-mod=readonly``, ``GOTOOLCHAIN=local`` and no network; a missing module fails the
  image build, not a test.
- **Tests.** ``go test -json -count=1 -shuffle=SEED`` on the packages of the test files; the
  supervisor reads per-test events from test2json's stream (Go frames its own lines, so a
  test's output is an ``output`` event, never a verdict) and checks them against the exit
  status. Test ids are ``<package dir>::<TestName>[/<subtest>]`` (``.`` for the root).
  A test binary stops at a panic: the tests the shuffle had not reached are "not run" in
  that run (``GoRunner.settle`` marks the package crashed), never failed. A suite whose
  tests share global state (a test that swaps a package variable and never restores it)
  fails in most shuffles: the gate runs it again with ``-shuffle=off`` (the written order),
  and a task admitted so is graded in that order too (``gates.order: declared``).
- **Decoys, a known limit.** Decoys perturb a literal an assertion of a FAIL_TO_PASS test
  compares with. A test that compares only with values it computes or names
  (``got != io.Discard``, ``if !a.Equals(b)``, a bare boolean check) offers none, and the
  task is rejected ``no_decoys`` (``admit.min_decoys``, 1 by default, is the policy; 0 admits
  such tasks without decoys). Perturbing other sites (a negated condition, a named value
  swapped for another of its type) would make decoys a reader tells from the written tests
  more easily than literals (issue 21), so none is made.
- **Judge's files.** ``*_test.go`` and ``testdata/`` are tests; ``go.work``, ``vendor/`` and
  the ``replace``, ``toolchain`` and ``godebug`` directives of ``go.mod`` are runner
  configuration a candidate may not change; ``go.mod`` and ``go.sum`` are locked in the run.
- **Capabilities.** A candidate's Go source may not newly use what reaches the process or
  the test binary's output (``os.Exit``, ``os.Stdout``, ``syscall``, ``unsafe``,
  ``go:linkname``, ``runtime``, the ``testing`` package, text shaped like test2json's frames...)
  unless the base code or the gold patch already does: read on the syntax tree, aliases and
  folded strings resolved (:mod:`swe_forge.ecosystems.go.scan`).

Modules: ``toolchain`` (the release by date, fetched; modules downloaded), ``deps`` (the
module cache of the base tree and of the patched one), ``image`` (the env and instance
images), ``runner`` (go test through test2json, the twins' builds and runs), ``scope`` (the
tests a patch touches), ``canary`` (the decoys), ``scan`` (capabilities on the syntax tree);
this module is the adapter that puts them together (judge's files, verification jobs, and
the images ``image`` builds).

The package's own module imports nothing: mine's classifier reads :mod:`.detect` (markers and
test-file names) without loading the adapter (:mod:`.adapter`, :class:`GoEcosystem`).
"""
