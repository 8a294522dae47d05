#!/usr/bin/env python3
"""hostguard.py SUITE LOG: judge what hostguard.so wrote down while SUITE ran
(issue #42, item 3; tests/unit/hostguard.c says what is caught and why).

Each host read in LOG is a failure, unless a known debt covers it:
tests/unit/hostguard.known, one per line, tab-separated,
    SUITE  COMMAND-REGEX  WHY
a read by a process of SUITE whose command line matches COMMAND-REGEX (a
Python regex, searched) is counted, not failed.  A debt that read nothing
this time is noted (a test that skipped here reads nothing either; once
fixed, take it out).

Prints, one line each,
    hostguard: SUITE: pid N (COMMAND) read the host: PATH (as asked: PATH)
for every unknown read (one per path), and exits 3 when there was one, 0
otherwise.
"""
import os
import re
import sys

KNOWN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hostguard.known")


def known_debts(suite):
    debts = []
    with open(KNOWN) as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3 or not parts[2].strip():
                sys.exit("hostguard: %s:%d: expected SUITE<TAB>COMMAND-REGEX<TAB>WHY" % (KNOWN, n))
            if parts[0] == suite:
                debts.append(re.compile(parts[1]))
    return debts


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: hostguard.py SUITE LOG")
    suite, log = sys.argv[1], sys.argv[2]
    debts = known_debts(suite)
    reads = []
    if os.path.exists(log):
        with open(log, errors="replace") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t")
                if len(parts) == 4:
                    reads.append(parts)
    used, seen, bad = set(), set(), 0
    for pid, cmd, path, asked in reads:
        debt = next((i for i, r in enumerate(debts) if r.search(cmd.strip())), None)
        if debt is not None:
            used.add(debt)
            continue
        bad += 1
        if path not in seen:
            seen.add(path)
            print("hostguard: %s: pid %s (%s) read the host: %s (as asked: %s)" %
                  (suite, pid, cmd.strip()[:200], path, asked))
    for i, r in enumerate(debts):
        if i not in used:
            print("hostguard: %s: note: the known debt /%s/ read nothing of the host this time "
                  "(fixed? then take it out of tests/unit/hostguard.known)" % (suite, r.pattern))
    if used:
        print("hostguard: %s: %d known debt(s) read the host (tests/unit/hostguard.known)" % (suite, len(used)))
    return 3 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
