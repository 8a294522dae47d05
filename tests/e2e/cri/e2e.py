"""Result lines for the Python scenarios, as lib.sh prints them: PASS,
FAIL, SKIP and INFO at the start of a console line, each result also
appended to $CC_RESULTS (the runner's "reported something")."""
import os
import sys

SCENARIO = os.environ.get("CC_SCENARIO", os.path.basename(sys.argv[0]))
RESULTS = os.environ.get("CC_RESULTS", "/dev/null")
KERNEL = os.environ.get("CC_KERNEL", "")
counts = {"pass": 0, "fail": 0}


def _one(s):
    return " ".join(str(s).split())[:400]


def _out(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def passed(name):
    counts["pass"] += 1
    _out("PASS %s/%s" % (SCENARIO, name))
    with open(RESULTS, "a") as f:
        f.write("PASS %s\n" % name)


def fail(name, why):
    counts["fail"] += 1
    _out("FAIL %s/%s: %s" % (SCENARIO, name, _one(why)))
    with open(RESULTS, "a") as f:
        f.write("FAIL %s\n" % name)


def info(text):
    _out("INFO %s: %s" % (SCENARIO, _one(text)))


def check(name, ok, why=""):
    if ok:
        passed(name)
    else:
        fail(name, why or "false")
    return ok


def check_eq(name, want, got):
    return check(name, want == got, "expected %r, got %r" % (want, got))


def check_in(name, needle, hay):
    return check(name, needle in (hay or ""), "expected %r in %r" % (needle, hay))
