#!/usr/bin/env python3
"""How well can code that reads the test files tell a decoy twin from the honest one?

A verification runs the held-out tests as K+1 twins: the honest one, and K decoys that each
change one literal of one assertion to a wrong value of the same type and shape. Code under
test that can read its test files (the capability gate and the hidden sources are meant to
stop it; this measures what is left if they do not) would forge a pass only in the twin it
believes honest. This script plays that attacker as well as it can, offline, on real test
files, and reports how often it wins against the same perturbations the verifier makes.

The attacker sees one twin's test file at a time (twins cannot talk: the supervisor cleans the
scratch places between them) plus the whole repository (its vocabulary, its other literals),
and scores the file: the higher, the more likely the file is the honest one. Its detectors:

- words: a word of a string literal that occurs nowhere else in the repository;
- characters: a pair of adjacent characters that occurs nowhere else in the repository;
- numbers: an integer literal that is not round when the file's other numbers mostly are;
- repeats: a string literal that appears once while a near-identical one (one edit away)
  appears elsewhere in the file, and a word said twice in one string;
- helpers: a call of the judge's Python helpers (``_value_<token>(``), which only a decoy
  whose expected value has no literal makes.

It forges when the score says "honest". A verification is won when it forges in the honest
twin and in no decoy. Chance, for an attacker that cannot tell at all, is the best blind rate
``max_q q (1 - q)^K`` (K=2: 4/27 = 0.148); the single-file accuracy on balanced honest/decoy
files is reported too (chance 0.5).

Usage: scripts/canary_recognition.py --language python --repo PATH [--repo PATH ...]
       [--decoys 2] [--trials 2000] [--seed 0]
A repository is a work tree or a bare git directory (read at HEAD).
"""

from __future__ import annotations

import argparse
import itertools
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from swe_forge.gates.harness import swe_forge_canaries as python_canaries

TEST_FILE = {
    "python": re.compile(r"(^|/)test_[^/]*\.py$|_test\.py$"),
    "go": re.compile(r"_test\.go$"),
    "rust": re.compile(r"(^|/)tests/[^/]+\.rs$"),
    "java": re.compile(r"src/test/.*Test[^/]*\.java$"),
    "js": re.compile(r"\.(test|spec)\.[cm]?[jt]sx?$|(^|/)test/.*\.[cm]?js$"),
}
#: The verifier's default ``verify.canary_limit``: perturbations tried per task at most.
CANARY_LIMIT = 40
SOURCE = re.compile(r"\.(py|go|rs|java|js|ts|mjs|cjs|jsx|tsx|md|txt|json|toml|yaml|yml)$")
WORD = re.compile(r"[A-Za-z]{2,}")
STRING = re.compile(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`")
NUMBER = re.compile(r"(?<![\w.])\d+(?![\w.])")


def repo_files(repo: Path) -> dict[str, str]:
    """path -> text of a repository's source-like files at HEAD (or its work tree)."""
    out: dict[str, str] = {}
    if (repo / ".git").exists() or not (repo / "HEAD").exists():
        for path in repo.rglob("*"):
            rel = path.relative_to(repo).as_posix()
            if path.is_file() and SOURCE.search(rel) and "/.git/" not in f"/{rel}":
                try:
                    out[rel] = path.read_text(encoding="utf-8")
                except (UnicodeDecodeError, OSError):
                    continue
        return out
    names = subprocess.run(
        ["git", "--git-dir", str(repo), "ls-tree", "-r", "--name-only", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    for rel in names:
        if not SOURCE.search(rel):
            continue
        got = subprocess.run(
            ["git", "--git-dir", str(repo), "show", f"HEAD:{rel}"],
            capture_output=True,
            check=False,
        )
        if got.returncode == 0 and len(got.stdout) < 1 << 20:
            try:
                out[rel] = got.stdout.decode("utf-8")
            except UnicodeDecodeError:
                continue
    return out


# ------------------------------------------------------------------- making decoys per language


def python_decoys(path: str, text: str, rng: random.Random) -> list[Callable[[], str | None]]:
    """Every site of the file's tests, two perturbations each (at most the canary limit), as
    the judge writes them in place; decoys that call the judge's helpers (an expected value
    with no literal) dropped for a kind of assertion that has plain ones, as admission drops
    them (``verifier._plain_python``)."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    tests = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
            tests.append(node.name)
        elif isinstance(node, ast.ClassDef):
            tests += [
                f"{node.name}::{m.name}"
                for m in node.body
                if isinstance(m, ast.FunctionDef) and m.name.startswith("test")
            ]
    from swe_forge.ecosystems.decoys import natural_first

    made: list[tuple[str, str, float | None]] = []  # (kind, decoy, strangeness or None)
    sites = python_canaries.find_sites(text, tests)
    for site in (sites * 2)[:CANARY_LIMIT]:
        test, k, seed = str(site["test"]), int(site["site"]), rng.randrange(1, 2**31)
        out, _ = python_canaries.decoy_source(text, test, k, seed, "tok")
        if out is not None and out != text:
            made.append(
                (str(site["kind"]), out, python_canaries.decoy_strangeness(text, test, k, seed))
            )
    plain = [m for m in made if m[2] is not None]
    kept = [plain[i] for i in natural_first([float(m[2] or 0.0) for m in plain])]
    for kind in {m[0] for m in plain} - {m[0] for m in kept}:
        kept.append(min((m for m in plain if m[0] == kind), key=lambda m: float(m[2] or 0.0)))
    kinds = {m[0] for m in plain}
    kept += [m for m in made if m[2] is None and m[0] not in kinds]
    return [lambda out=out: out for _, out, _ in kept]


#: A call of the judge's Python helpers (``_value_<token>(``, ``_error_<token>(``): written
#: only where a decoy's expected value has no literal to change.
HELPER_CALL = re.compile(r"\b_(?:value|error)_[a-z0-9]+\(")


def tests_in(language: str, path: str, data: bytes) -> list[str]:
    """The test ids of a file, as the runner reports them (what the writer takes)."""
    from swe_forge.ecosystems import syntax

    text = data.decode("utf-8", "replace")
    if language == "go":
        pkg = path.rsplit("/", 1)[0] if "/" in path else "."
        found = re.findall(r"^func (Test\w*)\(\w+ \*testing\.T\)", text, re.M)
        return [f"{pkg}::{m}" for m in found]
    if language == "rust":
        found = re.findall(r"#\[test\]\s*(?:#\[[^\]]*\]\s*)*fn (\w+)", text)
        return [f"{path}::{m}" for m in found]
    if language == "java":
        pkg = re.search(r"^\s*package\s+([\w.]+)\s*;", text, re.M)
        cls = path.rsplit("/", 1)[-1].removesuffix(".java")
        fqn = f"{pkg.group(1)}.{cls}" if pkg else cls
        names = re.findall(r"@Test\b[^;{]*?\s(?:public\s+)?void\s+(\w+)\s*\(", text)
        return [f"{fqn}::{m}" for m in names]
    from swe_forge.ecosystems import writer_for

    writer: Any = writer_for("js")
    tree = syntax.parse(syntax.grammar_for_path(path), data)
    return sorted(k for k, v in writer.prepare(tree, path).items() if len(v) == 1)


def host_decoys(
    language: str,
) -> Callable[[str, str, random.Random], list[Callable[[], str | None]]]:
    """Decoy makers of an ecosystem whose canary writer runs on the host."""

    def decoys(path: str, text: str, rng: random.Random) -> list[Callable[[], str | None]]:
        """As admission arms them (ecosystems/decoys.py): every site of the file's tests, two
        perturbations each (at most the canary limit), the natural ones kept when there
        are enough (``natural_first``)."""
        from swe_forge.ecosystems import writer_for
        from swe_forge.ecosystems.decoys import (
            SEEDS_PER_SITE,
            literal_of,
            natural_first,
            strangeness,
        )

        writer = writer_for(language)
        data = text.encode("utf-8")
        try:
            sites = writer.sites(path, data, tests_in(language, path, data))
        except Exception:  # a file the writer cannot read offers no decoys
            return []
        made: list[tuple[str, float]] = []
        for site in (sites * SEEDS_PER_SITE)[:CANARY_LIMIT]:
            out = writer.perturb(data, site, random.Random(rng.randrange(1, 2**31)))
            if out is not None and out != data:
                made.append(
                    (out.decode("utf-8"), strangeness(data, site, literal_of(data, site, out)))
                )
        kept = [made[i][0] for i in natural_first([d for _, d in made])]
        return [lambda out=out: out for out in kept]

    return decoys


# --------------------------------------------------------------------------------- the attacker


class Attacker:
    """Scores a test file: how likely it is the honest twin (higher: more likely)."""

    def __init__(self, files: dict[str, str]) -> None:
        self.words: dict[str, int] = {}
        self.pairs: dict[str, int] = {}
        for text in files.values():
            for word in WORD.findall(text):
                self.words[word] = self.words.get(word, 0) + 1
            for literal in STRING.findall(text):
                for a, b in itertools.pairwise(literal):
                    self.pairs[a + b] = self.pairs.get(a + b, 0) + 1

    def score(self, text: str, own: str) -> float:
        """Suspicion is counted against the repository *without* this file's own honest
        text (``own``) and with the file it reads (``text``): a twin reads its own test
        file, never the honest one when it is a decoy."""
        own_words: dict[str, int] = {}
        for word in WORD.findall(own):
            own_words[word] = own_words.get(word, 0) + 1
        own_pairs: dict[str, int] = {}
        for literal in STRING.findall(own):
            for a, b in itertools.pairwise(literal):
                own_pairs[a + b] = own_pairs.get(a + b, 0) + 1
        suspicion = 0.0
        literals = STRING.findall(text)
        here: dict[str, int] = {}
        for word in WORD.findall(text):
            here[word] = here.get(word, 0) + 1
        here_pairs: dict[str, int] = {}
        for literal in literals:
            for a, b in itertools.pairwise(literal):
                here_pairs[a + b] = here_pairs.get(a + b, 0) + 1
        for literal in literals:
            for word in WORD.findall(literal):
                # How often the word occurs in the repository apart from this file.
                elsewhere = self.words.get(word, 0) - own_words.get(word, 0)
                if elsewhere <= 0 and here.get(word, 0) <= 1:
                    suspicion += 1.0
            for a, b in itertools.pairwise(literal):
                # Once in what this twin can read: the other files and the file it reads.
                elsewhere = self.pairs.get(a + b, 0) - own_pairs.get(a + b, 0)
                if elsewhere + here_pairs.get(a + b, 0) <= 1:
                    suspicion += 0.5
        seen = set(literals)
        for literal in literals:
            if len(literal) > 4 and literals.count(literal) == 1:
                for other in seen:
                    near = other != literal and len(other) == len(literal)
                    if near and sum(x != y for x, y in zip(other, literal, strict=True)) == 1:
                        suspicion += 0.5
                        break
        for literal in literals:
            # A word said twice in one string ("oh oh!"): what swapping a word of a string
            # for another of the same string makes.
            found = [w.lower() for w in WORD.findall(literal)]
            suspicion += 0.5 * (len(found) - len(set(found)))
        # The judge's helpers called (its source is public): only a decoy does that.
        suspicion += 5.0 * len(HELPER_CALL.findall(text))
        numbers = [int(n) for n in NUMBER.findall(text) if len(n) < 10]
        if len(numbers) >= 5:
            round_share = sum(1 for n in numbers if n % 5 == 0) / len(numbers)
            odd = sum(1 for n in numbers if n % 5 != 0)
            if round_share > 0.8:
                suspicion += 0.25 * odd
        return -suspicion


class BigramAttacker:
    """Scores a test file by how likely its strings' characters are: the log-likelihood of
    every pair of adjacent characters of its string literals under the repository's own
    pairs (without this file's honest text), add-one smoothed. A decoy's changed character
    that the project would not write lowers it."""

    def __init__(self, files: dict[str, str]) -> None:
        self.pairs: dict[str, int] = {}
        self.firsts: dict[str, int] = {}
        for text in files.values():
            self._count(text, 1)

    def _count(self, text: str, sign: int) -> None:
        for literal in STRING.findall(text):
            for a, b in itertools.pairwise(literal):
                self.pairs[a + b] = self.pairs.get(a + b, 0) + sign
                self.firsts[a] = self.firsts.get(a, 0) + sign

    def score(self, text: str, own: str) -> float:
        import math

        self._count(own, -1)
        try:
            total = 0.0
            for literal in STRING.findall(text):
                for a, b in itertools.pairwise(literal):
                    count = max(0, self.pairs.get(a + b, 0))
                    total += math.log((count + 1) / (max(0, self.firsts.get(a, 0)) + 96))
            return total
        finally:
            self._count(own, 1)


def _best_single(runs: list[list[float]]) -> float:
    """The best accuracy of a threshold on the score telling the honest file (``run[0]``)
    from one decoy (``run[1]``), either way round (an attacker may learn that decoys score
    *higher*), the threshold chosen after seeing every score: an upper bound."""
    best = 0.0
    for threshold in sorted({s for run in runs for s in run[:2]}):
        single = sum((run[0] >= threshold) + (run[1] < threshold) for run in runs) / (2 * len(runs))
        best = max(best, single, 1.0 - single)
    return best


def _best_win(runs: list[list[float]]) -> float:
    best = 0.0
    for threshold in sorted({s for run in runs for s in run}):
        for sign in (1, -1):
            wins = sum(
                1
                for run in runs
                if sign * run[0] >= sign * threshold
                and all(sign * s < sign * threshold for s in run[1:])
            )
            best = max(best, wins / len(runs))
    return best


def _chance_single(runs: list[list[float]], rng: random.Random, rounds: int = 40) -> float:
    """What :func:`_best_single` gives when nothing can be told: the same runs with the
    honest and the first decoy's labels swapped at random, 95th percentile over ``rounds``
    shuffles. The threshold search alone lifts an attacker above 0.5; this is the bar."""
    got = []
    for _ in range(rounds):
        shuffled = [[run[1], run[0], *run[2:]] if rng.random() < 0.5 else run for run in runs]
        got.append(_best_single(shuffled))
    got.sort()
    return got[int(0.95 * (len(got) - 1))]


def measure(
    language: str, repos: list[Path], decoys: int, trials: int, seed: int
) -> dict[str, Any]:
    rng = random.Random(seed)
    maker_of = python_decoys if language == "python" else host_decoys(language)
    cases = []  # (attackers, honest text, makers)
    for repo in repos:
        files = repo_files(repo)
        attackers = {"rare": Attacker(files), "bigram": BigramAttacker(files)}
        for path, text in sorted(files.items()):
            if not TEST_FILE[language].search(path):
                continue
            makers = maker_of(path, text, rng)
            if makers:
                cases.append((attackers, path, text, makers))
    if not cases:
        raise SystemExit("no test file with a perturbable assertion")
    runs: dict[str, list[list[float]]] = {"rare": [], "bigram": []}
    for _ in range(trials):
        attackers, path, text, makers = rng.choice(cases)
        twins = [text]
        for _k in range(decoys):
            made = rng.choice(makers)()
            if made is not None and made != text:
                twins.append(made)
        if len(twins) == decoys + 1:
            for name, attacker in attackers.items():
                runs[name].append([attacker.score(t, text) for t in twins])
    if not runs["rare"]:
        raise SystemExit("no verification could be simulated")
    per: dict[str, dict[str, float]] = {}
    for name, got in runs.items():
        per[name] = {
            # The attacker forges where a file scores past a threshold. It cannot know the
            # best threshold; it is given it anyway (the best over every score seen).
            "attacker_wins": _best_win(got),
            "single_file_accuracy": _best_single(got),
            "chance_single": _chance_single(got, random.Random(seed + 1)),
            # Picking the highest-scoring twin, a tie broken at random.
            "honest_scores_higher": sum(
                (1 / sum(1 for x in r if x == max(r))) if r[0] == max(r) else 0.0 for r in got
            )
            / len(got),
        }
    return {
        "cases": len(cases),
        "verifications": len(runs["rare"]),
        "blind_best": max(q * (1 - q) ** decoys for q in [i / 1000 for i in range(1001)]),
        "chance_highest": 1 / (decoys + 1),
        "attackers": per,
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--language", required=True, choices=sorted(TEST_FILE))
    ap.add_argument("--repo", type=Path, action="append", required=True)
    ap.add_argument("--decoys", type=int, default=2)
    ap.add_argument("--trials", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    got = measure(args.language, args.repo, args.decoys, args.trials, args.seed)
    print(
        f"{args.language}: {int(got['cases'])} test files, {int(got['verifications'])} "
        f"verifications simulated, K={args.decoys}"
    )
    for name, a in got["attackers"].items():
        verdict = (
            "no better than chance"
            if a["single_file_accuracy"] <= a["chance_single"]
            else "ABOVE chance"
        )
        print(
            f"  [{name}] attacker wins (forges in the honest twin only): "
            f"{a['attacker_wins']:.3f}  (blind best: {got['blind_best']:.3f})"
        )
        print(
            f"  [{name}] single-file accuracy (honest vs one decoy): "
            f"{a['single_file_accuracy']:.3f}  (chance: {a['chance_single']:.3f}, the 95th "
            f"percentile with the labels shuffled): {verdict}"
        )
        print(
            f"  [{name}] with memory across twins, picks the honest one: "
            f"{a['honest_scores_higher']:.3f}  (chance {got['chance_highest']:.3f})"
        )


if __name__ == "__main__":
    main()
