"""Java with Maven: Debian's JDKs, Maven from Maven Central, Surefire's XML reports.

Gradle-only projects are not supported (no ``pom.xml`` at the root: not Java to us). A
multi-module Maven build is run from the root; its test files' modules give the report
directories (``<module>/target/surefire-reports``).

- **Toolchain.** A JDK from Debian's packages, the LTS release that was newest when the base
  commit was made (11 on bullseye, 17 on bookworm, 21 on trixie), raised to the pom's
  ``maven.compiler.release``/``source``/``target`` (and lowered to 11 for sources older than
  JDK 17 still compiles). Maven is the pinned patch release of the line that was newest then,
  the ``apache-maven`` bin tarball from Maven Central checked against a sha512 pinned in
  :data:`MAVEN_RELEASES` (and Central's own checksum). Surefire is one pinned version
  (:data:`SUREFIRE`) run by its coordinates, whatever the pom's own version, so every task's
  reports, random order and test filters behave alike.
- **Dependencies.** The real build, once on the host with the pinned Maven, into a local
  repository made for the candidate: ``test-compile`` and Surefire (on a probe test class of
  ours, so that Surefire's providers are fetched without running the project's tests) on the
  tree with the test and gold patches, then ``test-compile`` on the base tree. The repository
  is copied into the env image at ``/opt/m2`` (root-owned, read-only to the tests: Maven
  offline only reads it) and the instance image proves ``mvn -o test-compile`` works with no
  network. Plugins the pom binds to early phases run on the host: the repository's own
  history is trusted as much as its merged code, candidate patches never run there.
- **Tests.** ``mvn -o test-compile`` and Surefire with ``-Dtest=`` (classes in the gate,
  ``Class#m1+m2`` in the verifier), ``-Dsurefire.runOrder=random`` with a seed. Test output
  goes to files, not the console. The supervisor empties the report directories before the
  run and reads the XML reports after it; each is checked against the per-class line Maven
  itself prints (see ``parse_surefire`` in the harness). Test ids are
  ``<class FQN>::<method>``. Classes compile in every run (``/testbed`` is made anew at start
  and compiling a small project takes seconds).
- **Judge's files.** ``src/test/**`` are tests; ``.mvn/``, ``mvnw*``, any pom.xml line the
  gold patch does not change (but names, descriptions and comments), ``META-INF/services``
  files and ``junit-platform.properties`` are runner configuration; a source file in a test
  framework's package (``org/junit/...``) shadows the framework.
- **Capabilities.** A candidate's main Java code may not newly use what reaches the process,
  the JVM or the runner (``System.exit``/``halt``, ``System.out``/``setOut``, reflection,
  ``Unsafe``, processes, shutdown hooks, instrumentation, ``ServiceLoader``, annotation
  processing, file writes, JUnit/Surefire packages, text shaped like Surefire's reports)
  unless the base code or the gold patch already does. Plain threads are allowed: they die
  with the test JVM, before its reports are read. Read on the syntax tree, Unicode escapes
  translated first, names and expression types resolved, strings folded
  (:mod:`swe_forge.ecosystems.java.scan`).

Modules: ``toolchain`` (JDK and Maven by date, the POM's and CI's asks), ``deps`` (resolution
on the host, the local repository), ``image`` (the images), ``runner`` (Surefire and its
reports), ``scope`` (the tests a patch touches), ``canary`` (the decoys), ``scan``
(capabilities on the syntax tree); this module is the adapter that puts them together
(judge's files, verification jobs).

The package's own module imports nothing: mine's classifier reads :mod:`.detect` (markers and
test-file names) without loading the adapter (:mod:`.adapter`, :class:`JavaEcosystem`).
"""
