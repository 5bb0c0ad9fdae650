"use strict";
// swe-forge's Mocha reporter: the shape of Mocha's own JSON reporter (stats, tests, pending,
// failures, passes) with every test's file, which Mocha's reporter gives only from version 8
// (sinonjs/fake-timers at Mocha 5 and 7: every test id lost its file). One JSON document on
// stdout when the run ends; nothing else is written. Plain ES5: it runs with any Mocha.
// What it uses at the end is taken when Mocha loads it, before any test runs: fake-timer
// suites replace or delete the global Date (lolex's tests left it unusable, and a reporter
// that made a Date at the end wrote nothing).

var NativeDate = Date;
var stringify = JSON.stringify;
var stdout = process.stdout;
var write = process.stdout.write;

function fileOf(runnable) {
  for (var r = runnable; r; r = r.parent) {
    if (r.file) {
      return String(r.file);
    }
  }
  return "";
}

function errorJSON(err) {
  var out = {};
  if (!err) {
    return out;
  }
  Object.getOwnPropertyNames(err).forEach(function (key) {
    var value = err[key];
    if (value === null || typeof value === "string" || typeof value === "number" ||
        typeof value === "boolean") {
      out[key] = value;
    }
  });
  out.message = String(err.message || err);
  out.stack = typeof err.stack === "string" ? err.stack : "";
  return out;
}

function clean(runnable) {
  return {
    title: String(runnable.title),
    fullTitle: typeof runnable.fullTitle === "function" ? runnable.fullTitle() : "",
    file: fileOf(runnable),
    duration: runnable.duration,
    currentRetry: typeof runnable.currentRetry === "function" ? runnable.currentRetry() : 0,
    pending: Boolean(runnable.pending),
    err: runnable.state === "failed" || runnable.swefErr ? errorJSON(runnable.swefErr) : {}
  };
}

// Mocha makes its reporter only once every test file has loaded: a file that throws while
// it loads (a test patch's file requiring what only the fix adds) ends the process with no
// report, and the run would be lost as a whole. Loaded before the test files, this module
// then writes a report of no test that says the files did not load (each expected file a
// collection error, as a Jest suite that fails to load is), only when no reporter was made.
var made = false;
process.on("exit", function () {
  if (made) {
    return;
  }
  var report = {
    stats: { suites: 0, tests: 0, passes: 0, pending: 0, failures: 0 },
    tests: [],
    pending: [],
    failures: [],
    passes: [],
    swefLoadFailed: true
  };
  write.call(stdout, stringify(report, null, 2) + "\n");
});

function SweForgeMochaJson(runner) {
  made = true;
  var tests = [];
  var pending = [];
  var failures = [];
  var passes = [];
  var stats = { suites: 0, tests: 0, passes: 0, pending: 0, failures: 0 };
  var start = new NativeDate();
  runner.on("suite", function (suite) {
    if (!suite.root) {
      stats.suites += 1;
    }
  });
  runner.on("test end", function (test) {
    tests.push(test);
    stats.tests += 1;
  });
  runner.on("pass", function (test) {
    passes.push(test);
    stats.passes += 1;
  });
  runner.on("fail", function (runnable, err) {
    runnable.swefErr = err || new Error("failed");
    failures.push(runnable);
    stats.failures += 1;
  });
  runner.on("pending", function (test) {
    pending.push(test);
    stats.pending += 1;
  });
  runner.once("end", function () {
    var end = new NativeDate();
    stats.start = start.toISOString();
    stats.end = end.toISOString();
    stats.duration = end - start;
    var report = {
      stats: stats,
      tests: tests.map(clean),
      pending: pending.map(clean),
      failures: failures.map(clean),
      passes: passes.map(clean)
    };
    write.call(stdout, stringify(report, null, 2) + "\n");
  });
}

module.exports = SweForgeMochaJson;
