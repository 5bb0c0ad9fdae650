"""Rust: cargo, libtest's JSON events, toolchains from static.rust-lang.org.

- **Toolchain.** The Rust release that was newest when the base commit was made (a fixed
  table of minor releases and the patch release pinned for each, so the same date always
  gives the same toolchain), raised to ``rust-version`` in Cargo.toml and to a version pinned
  by ``rust-toolchain(.toml)``. Its component tarballs (rustc, cargo, rust-std) come from
  ``static.rust-lang.org/dist``, checked against the published ``.sha256`` files, are
  merged into one prefix once per machine and copied into the env image at
  ``/usr/local/rust``. Rust links with ``cc``, so the env image is made from the base
  image's build flavour (gcc, libc6-dev).
- **Dependencies.** ``cargo vendor`` on the host (the chosen toolchain's cargo, or the
  host's when that one cannot read the lockfile: the recipe says which) of the base tree and
  of the tree with the gold and test patches, into one directory copied into the env image at
  ``/opt/cargo/vendor``, with a cargo configuration that replaces crates.io by it and sets
  ``net.offline``. Without a committed Cargo.lock, the one generated on the host goes into
  the image too (and into the record's lock digest), and so does the gold tree's lock as
  cargo vendor resolved it: every run replaces the tree's Cargo.lock by it, writable, so a
  gold patch that changes Cargo.toml builds offline (cargo fits the lock from the vendored
  crates only).
- **Build.** The instance image compiles every integration test target offline
  (``cargo test --no-run``) into ``/opt/target``; a run copies it (mtimes kept, so only what
  changed is rebuilt) to ``/tmp/target``.
- **Tests.** One ``cargo test --test <target>`` per integration test target of the test
  files, libtest printing JSON events (``--format json``, ``RUSTC_BOOTSTRAP=1``) in a random
  order (``--shuffle-seed``); the run script frames each target's stream with a line of its
  own and ends with another, and the supervisor reads per-test events from it (never the
  human text). Test ids are ``<test file of the target>::<test name>``
  (``tests/text.rs::truncate_long``, ``tests/words/main.rs::edge::empty``). Which files
  are targets, under which name and with which ``required-features``, and which helper
  modules (``tests/common/mod.rs``) belong to which targets, is read at build time from the
  tree with both patches (``[[test]]`` entries, ``autotests``, ``mod`` declarations) and
  recorded (``harness.layout``); the instance warms one build per set of required features.
- **Judge's files.** ``tests/`` at any depth; Cargo.toml's ``[profile]``, ``[patch]``,
  ``[replace]``, ``[[test]]``, ``[lib]``, ``[workspace]``, ``[target]`` sections and its
  ``build``, ``harness``, ``auto*``, ``path``, ``proc-macro``... keys, ``.cargo/``,
  ``build.rs``, ``rust-toolchain*`` and ``vendor/`` are runner configuration a candidate may
  not change unless the gold patch does.
- **Capabilities.** A candidate's Rust source may not newly use what reaches the process or
  the test binary's output (``process::exit``, ``unsafe``, ``libc``, ``print!``, stdout,
  ``#[ctor]``, ``extern "C"``, ``#[no_mangle]``, ``env::args``, ``thread::current``
  (the running test's name), panic hooks, text shaped like
  libtest's JSON, ``include!``...) unless the base code or the gold patch already does: read
  on the token stream of the syntax tree, macros and ``cfg_attr`` included, ``use`` aliases
  resolved and strings folded (:mod:`swe_forge.ecosystems.rust.scan`).

Modules: ``toolchain`` (the release by date, fetched and merged), ``deps`` (the crates
vendored on the host, the lock generated when none is committed), ``image`` (the env and
instance images), ``runner`` (cargo test, its scripts and the tree's test targets), ``scope``
(the tests a patch touches), ``canary`` (the decoys), ``scan`` (capabilities on the syntax
tree); this module is the adapter that puts them together (judge's files, verification jobs,
and the images ``image`` builds).

The package's own module imports nothing: mine's classifier reads :mod:`.detect` (markers and
test-file names) without loading the adapter (:mod:`.adapter`, :class:`RustEcosystem`).
"""
