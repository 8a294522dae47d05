"""Result lines for the Python scenarios, as lib.sh prints them: PASS,
FAIL, SKIP and INFO at the start of a console line, each result also
appended to $CC_RESULTS (the runner's "reported something")."""
import os
import sys
import traceback

SCENARIO = os.environ.get("CC_SCENARIO", os.path.basename(sys.argv[0]))
RESULTS = os.environ.get("CC_RESULTS", "/dev/null")
KERNEL = os.environ.get("CC_KERNEL", "")
counts = {"pass": 0, "fail": 0}


def _one(s):
    """One line of at most 400 characters.  A runtime's error that quotes
    corecarve's own line (runc: "... error running createRuntime hook #0:
    exit status 2, stdout: , stderr: corecarve: ...") keeps that line: the
    runtime's prefix is what would be cut."""
    s = " ".join(str(s).split())
    i = s.find("stderr: corecarve: ")
    if len(s) > 400 and i > 0:
        s = "[...] " + s[i:]
    return s[:400]


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


def run(main):
    """Run a scenario's main(): an exception that escapes it (the node's
    setup: containerd not answering, an image import that failed) becomes a
    FAIL line naming it and where it was raised, so that the host's summary,
    which shows FAIL lines only, says why; the exit status stays 1."""
    try:
        main()
    except Exception as e:  # noqa: BLE001 - reported, then the scenario fails
        tb = traceback.extract_tb(e.__traceback__)
        where = ("%s:%d" % (os.path.basename(tb[-1].filename), tb[-1].lineno)) if tb else "?"
        fail("uncaught", "%s at %s: %s" % (type(e).__name__, where, e))
        traceback.print_exc()
        sys.exit(1)
