// swe-forge's reporter for Node's own test runner (`node --test --test-reporter=<this file>`):
// the shape of our Mocha reporter's JSON (stats, tests, pending, failures, passes; each test
// with its file and its full title: the titles of the suites and tests it is in and its own,
// joined by a space, as Mocha's fullTitle), so the judge reads both alike. One JSON document on
// the destination when the source of events ends; nothing else is written.
//
// It runs in the runner's process, which gets the events of each test file's own process.
// A test is a leaf: a suite (describe) or a test with subtests (t.test) is not reported as a
// test; one that fails while none of what it holds failed (a hook, or a parent's own assertion
// after its subtests) makes its file a collection error, as a Mocha "before all" hook does. A
// file that does not load is reported by Node as a top-level test named after the file.
// Nesting is kept per file: files may run side by side and their events interleave.

const stringify = JSON.stringify;

function messageOf(details) {
  const error = details && details.error;
  if (!error) {
    return "failed";
  }
  // Node wraps what the test threw: the assertion is the wrapper's cause.
  const inner = error.cause && typeof error.cause === "object" ? error.cause : error;
  const text = inner.message !== undefined ? inner.message : inner;
  return String(text);
}

function stackOf(details) {
  const error = details && details.error;
  const inner = error && error.cause && typeof error.cause === "object" ? error.cause : error;
  return inner && typeof inner.stack === "string" ? inner.stack : "";
}

export default async function* sweForgeNodeReporter(source) {
  const stacks = new Map();
  const tests = [];
  const pending = [];
  const failures = [];
  const passes = [];
  const stats = { suites: 0, tests: 0, passes: 0, pending: 0, failures: 0 };
  let forged = 0;
  for await (const event of source) {
    const type = event && event.type;
    const data = (event && event.data) || {};
    const file = typeof data.file === "string" ? data.file : "";
    const nesting = Number.isInteger(data.nesting) && data.nesting >= 0 ? data.nesting : 0;
    const name = String(data.name);
    if (type === "test:start") {
      const stack = stacks.get(file) || [];
      stack.length = Math.min(stack.length, nesting);
      if (nesting > 0 && stack[nesting - 1]) {
        stack[nesting - 1].parent = true;
      }
      stack[nesting] = { name: name, parent: false };
      stacks.set(file, stack);
      continue;
    }
    if (type !== "test:pass" && type !== "test:fail") {
      continue;
    }
    const stack = stacks.get(file) || [];
    const node = stack[nesting];
    if (!node || node.name !== name || node.done) {
      // Node's runner starts every test before it reports it, in the file's own order: a
      // result with no start of its own came from elsewhere (frames of the runner's protocol
      // written by the code under test on its process's output).
      forged += 1;
      continue;
    }
    node.done = true;
    const details = data.details || {};
    const holds = (node && node.name === name && node.parent) || details.type === "suite";
    const titles = [];
    for (let i = 0; i < nesting; i += 1) {
      titles.push(stack[i] ? stack[i].name : "");
    }
    titles.push(name);
    const skipped = (data.skip !== undefined && data.skip !== false) || (data.todo !== undefined && data.todo !== false);
    const failed = type === "test:fail" && !skipped;
    const loadFailure = nesting === 0 && file !== "" && (name === file || file.endsWith("/" + name));
    if (holds || loadFailure) {
      if (holds) {
        stats.suites += 1;
      }
      if (failed && (loadFailure || !node || !node.failedWithin)) {
        failures.push({
          title: name,
          fullTitle: '"before all" hook: ' + titles.join(" "),
          file: file,
          err: { message: messageOf(details), stack: stackOf(details) },
        });
      }
      stack.length = Math.min(stack.length, nesting);
      continue;
    }
    const item = {
      title: name,
      fullTitle: titles.join(" "),
      file: file,
      duration: details.duration_ms,
      currentRetry: 0,
      pending: skipped,
      err: failed ? { message: messageOf(details), stack: stackOf(details) } : {},
    };
    tests.push(item);
    stats.tests += 1;
    if (skipped) {
      pending.push(item);
      stats.pending += 1;
    } else if (failed) {
      failures.push(item);
      stats.failures += 1;
      for (let i = 0; i < nesting; i += 1) {
        if (stack[i]) {
          stack[i].failedWithin = true;
        }
      }
    } else {
      passes.push(item);
      stats.passes += 1;
    }
  }
  yield stringify({ stats, tests, pending, failures, passes, swefForged: forged }, null, 2) + "\n";
}
