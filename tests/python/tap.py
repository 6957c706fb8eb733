# SPDX-License-Identifier: GPL-2.0-or-later
"""Runs the client's unittest modules and reports each test in TAP, for
make check's TAP driver.  A skip is a failure: nothing here may skip."""
import sys
import unittest


class TapResult(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.n = 0
        self.lines = []

    def _line(self, ok, test, detail=None):
        self.n += 1
        print("%s %d - %s" % ("ok" if ok else "not ok", self.n, test.id()))
        if detail:
            for line in detail.rstrip().splitlines():
                print("# " + line)
        sys.stdout.flush()

    def addSuccess(self, test):
        self._line(True, test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._line(False, test, self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._line(False, test, self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        self._line(False, test, "skipped (%s), and nothing here may skip" % reason)

    def addSubTest(self, test, subtest, err):
        if err is not None:
            super().addSubTest(test, subtest, err)
            self._line(False, subtest, self._exc_info_to_string(err, test))


def main(names):
    suite = unittest.defaultTestLoader.loadTestsFromNames(names)
    result = TapResult()
    suite.run(result)
    print("1..%d" % result.n)
    return 0 if result.n and not result.failures and not result.errors else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["test_client"]))
