// The judge's Java agent: a twin's held-out test classes enter the test JVM before any code of
// the project runs there, and are closed to the tests' user from then on.
//
// Standalone on purpose, like the supervisor: JDK only (11+), nothing of the project's. The
// supervisor starts every JVM of a Java twin with -javaagent (JAVA_TOOL_OPTIONS) and the path
// of a spec in SWE_FORGE_PRELOAD:
//   line 1: the request FIFO (this agent writes the classes directory it read, one line)
//   line 2: the answer FIFO (the supervisor writes one byte once it has closed the files)
//   then:   "<test classes directory>\t<class path prefix>" per held-out test class
//           (e.g. "/testbed/target/test-classes\torg/x/FooTest": FooTest.class, FooTest$*.class)
//
// In Surefire's forked JVM (and only there: Maven's own JVM and javac load it too, and it
// does nothing in them) premain, which runs before the JVM's main class:
//   1. reads the bytes of every class file of the held-out test classes on this JVM's class
//      path (compiled by this run's test-compile, readable until now);
//   2. asks the supervisor to close them (and the test sources) and waits for its answer;
//   3. defines every class from memory in the system class loader, which Surefire's test
//      class loader is, so JUnit finds them already loaded.
// A class file holds every literal its assertions compare with: once the code under test
// runs, neither the class files nor the sources can be read by it (they are root's, 0600),
// so it cannot pick the expected value out of them.
//
// Defining a class resolves (loads, never initialises) its supertypes: a held-out class that
// extends another is defined after it (a retry loop), and nothing of the project's runs here.

import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.instrument.Instrumentation;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.CodeSource;
import java.security.ProtectionDomain;
import java.security.cert.Certificate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

public final class SweForgePreload {
    private SweForgePreload() {}

    public static void premain(String args, Instrumentation inst) throws Exception {
        String spec = System.getenv("SWE_FORGE_PRELOAD");
        String command = System.getProperty("sun.java.command", "");
        if (spec == null || spec.isEmpty() || !command.contains("surefire")) {
            return;
        }
        List<String> lines = Files.readAllLines(Paths.get(spec), StandardCharsets.UTF_8);
        if (lines.size() < 2) {
            return;
        }
        ClassLoader app = ClassLoader.getSystemClassLoader();
        // directory -> (binary name -> bytes), for the held-out classes on this class path.
        Map<String, Map<String, byte[]>> found = new TreeMap<>();
        for (String line : lines.subList(2, lines.size())) {
            int tab = line.indexOf('\t');
            if (tab <= 0) {
                continue;
            }
            String dir = line.substring(0, tab);
            String prefix = line.substring(tab + 1);
            URL here = app.getResource(prefix + ".class");
            Path file = Paths.get(dir, prefix + ".class");
            if (here == null || !"file".equals(here.getProtocol())
                    || !Paths.get(here.toURI()).equals(file)) {
                continue; // not this JVM's (another module's tests)
            }
            Map<String, byte[]> classes = found.computeIfAbsent(dir, k -> new TreeMap<>());
            Path parent = file.getParent();
            String base = file.getFileName().toString();
            String stem = base.substring(0, base.length() - ".class".length());
            String pkg = prefix.contains("/")
                    ? prefix.substring(0, prefix.lastIndexOf('/') + 1).replace('/', '.') : "";
            try (java.util.stream.Stream<Path> all = Files.list(parent)) {
                for (Path p : (Iterable<Path>) all::iterator) {
                    String name = p.getFileName().toString();
                    if (name.equals(base) || (name.startsWith(stem + "$") && name.endsWith(".class"))) {
                        classes.put(pkg + name.substring(0, name.length() - ".class".length()),
                                Files.readAllBytes(p));
                    }
                }
            }
        }
        if (found.isEmpty()) {
            return;
        }
        // Closed by the supervisor before anything of the project's runs in this JVM.
        try (FileOutputStream request = new FileOutputStream(lines.get(0))) {
            request.write((String.join("\n", found.keySet()) + "\n").getBytes(StandardCharsets.UTF_8));
        }
        try (InputStream answer = new FileInputStream(lines.get(1))) {
            if (answer.read() != '1') {
                throw new IOException("the judge did not close the test classes");
            }
        }
        define(inst, app, found);
    }

    private static void define(Instrumentation inst, ClassLoader app,
            Map<String, Map<String, byte[]>> found) throws Exception {
        // ClassLoader.defineClass is protected, and java.lang is closed to other modules
        // since JDK 16: open it to this agent's module (what -javaagent is given for).
        inst.redefineModule(Object.class.getModule(), Set.of(), Map.of(),
                Map.of("java.lang", Set.of(SweForgePreload.class.getModule())), Set.of(), Map.of());
        Method defineClass = ClassLoader.class.getDeclaredMethod("defineClass", String.class,
                byte[].class, int.class, int.class, ProtectionDomain.class);
        defineClass.setAccessible(true);
        for (Map.Entry<String, Map<String, byte[]>> dir : found.entrySet()) {
            URL location = Paths.get(dir.getKey()).toUri().toURL();
            ProtectionDomain domain = new ProtectionDomain(
                    new CodeSource(location, (Certificate[]) null), null, app, null);
            Map<String, byte[]> pending = new LinkedHashMap<>(dir.getValue());
            boolean progress = true;
            List<String> failed = new ArrayList<>();
            while (!pending.isEmpty() && progress) {
                progress = false;
                failed.clear();
                for (String name : new ArrayList<>(pending.keySet())) {
                    byte[] data = pending.get(name);
                    try {
                        defineClass.invoke(app, name, data, 0, data.length, domain);
                        pending.remove(name);
                        progress = true;
                    } catch (InvocationTargetException e) {
                        Throwable cause = e.getCause();
                        if (cause instanceof NoClassDefFoundError) {
                            failed.add(name + ": " + cause.getMessage());
                            continue; // a supertype of ours not defined yet: next round
                        }
                        if (cause instanceof LinkageError && isLoaded(app, name)) {
                            pending.remove(name); // loaded already (a supertype of another)
                            progress = true;
                            continue;
                        }
                        failed.add(name + ": " + cause);
                        pending.remove(name);
                    }
                }
            }
            for (String f : failed) {
                System.err.println("swe-forge: a held-out test class was not defined: " + f);
            }
        }
    }

    private static boolean isLoaded(ClassLoader app, String name) {
        try {
            Method m = ClassLoader.class.getDeclaredMethod("findLoadedClass", String.class);
            m.setAccessible(true);
            return m.invoke(app, name) != null;
        } catch (ReflectiveOperationException e) {
            return false;
        }
    }
}
