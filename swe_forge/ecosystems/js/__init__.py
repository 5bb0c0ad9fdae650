"""JavaScript / TypeScript (npm): Jest, Vitest and Mocha suites on Debian's Node.js.

- **Detection.** A ``package.json`` at the root naming a test framework (Jest, Vitest or
  Mocha, in its ``test`` script or its dependencies), and no Python packaging at the root.
- **Toolchain.** Node.js from Debian's own packages, the release chosen by the base commit's
  date: bookworm's nodejs 18.19 before trixie's release (2025-08-09), trixie's nodejs 20.19
  after; raised to trixie when ``engines.node`` (of the project or of its test framework)
  needs 19 or 20; a task that needs a newer Node than Debian gives is refused with a build
  reason. The base image is the Debian base plus ``nodejs`` (npm is not in the image: the
  tests run the framework's own entry point with ``node``).
- **Dependencies.** Resolved on the host with the host's npm, install scripts off: ``npm ci``
  from ``package-lock.json``/``npm-shrinkwrap.json``; without one (or with only a yarn or
  pnpm lock, which needs a package manager this pipeline does not fetch),
  ``npm install --before=<base date>``. When the gold or test patch changes package.json or a
  lock, the tree with both patches applied is what is resolved. ``node_modules`` goes into
  the env image at ``/opt/node_modules`` (root's, read-only for the tests) and the instance
  links ``/testbed/node_modules`` to it: outside the work tree the patches touch, and Node
  (CommonJS and ESM alike) resolves through the link. Native addons that compile in an
  install script do not build (scripts are skipped); packages that ship prebuilt binaries as
  optional dependencies (esbuild, rollup, swc) work.
- **Tests.** The framework's report on stdout, never a file: ``jest --json`` (its other
  output goes to stderr), ``vitest run --reporter=json``, Mocha with the judge's reporter
  (``harness/swe_forge_mocha_reporter.js``: Mocha's JSON shape with each test's file, which
  Mocha's own reporter lacks before version 8); read by
  the supervisor (``swe_forge_polyglot.parse_jest_json``/``parse_mocha_json``). Random order:
  jest-cli >= 29.5 ``--randomize --seed`` (the jest-cli that jest runs, which parses the
  options; 29.2-29.4 know ``--seed`` but refuse ``--randomize``), Vitest
  ``--sequence.shuffle --sequence.seed``, Mocha the order of its files. Test ids are
  ``<file>::<describe> > <test>`` (Mocha: the full title). ``harness.module`` is
  ``<framework>@<version>`` (Jest: jest-cli's version). A configuration file the ``test``
  script gives the runner (``jest --config config/jest.config.js``, also through the scripts
  it runs with ``npm run``; read as text, never run; only a file of the repository) is
  ``harness.config`` and passed with ``--config``.
- **Test modules.** Files named as tests (``*.test.*``, ``*.spec.*``, ``*-test.*``) and the
  JS/TS files under ``__tests__/``, ``test/`` or ``tests/`` at any depth, except helpers there
  (``fixtures/``, ``helpers/``, ``_utils.ts``, ``setup.js``...): :mod:`.detect`.
- **Judge's files.** Test files and the framework's configuration (``jest.config.*``,
  ``vitest.config.*``, ``vite.config.*``, ``.mocharc*``, Babel and TypeScript configuration,
  setup files, ``__mocks__/``), locks, ``.npmrc``, ``node_modules/`` and package.json lines
  the gold patch does not change.
- **Capabilities.** A candidate's source may not newly use what reaches the process, its
  stdout or the test framework (``process.exit``, ``process.stdout``, a replaced ``console``,
  ``require.cache``/``Module._load``, ``child_process``, ``vm``, test globals, builtins
  replaced, text shaped like a report...) unless the base code or the gold patch already
  does: read on the syntax tree, scopes, aliases and folded strings resolved
  (:mod:`swe_forge.ecosystems.js.scan`).

Modules: ``toolchain`` (Node by date, the framework a project uses), ``runner`` (Jest, Vitest
and Mocha with their reports), ``scope`` (the tests a patch touches), ``canary`` (the decoys),
``scan`` (capabilities on the syntax tree), ``deps`` (resolution with npm), ``image`` (the
images); this module is the adapter that puts them together (judge's files, capabilities,
verification jobs).

The package's own module imports nothing: mine's classifier reads :mod:`.detect` (markers and
test-file names) without loading the adapter (:mod:`.adapter`, :class:`JsEcosystem`).
"""
