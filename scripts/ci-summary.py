#!/usr/bin/env python3
"""What a CTest run skipped, counted by cause, and the gaps CI must not pass silently.

Reads CTest's log of the last run (build/Testing/Temporary/LastTest.log), which holds every test's
output: a GoogleTest skip prints "FILE:LINE: Skipped" and then its message; a pytest entry (run
with -rs) prints "SKIPPED [N] FILE:LINE: reason". Prints one line per cause with its count and
exits 1 when
  - the shared data directory exists but a test skipped for its absence (a path or a mount that
    is wrong where it should be right), or
  - no Python test ran (nanobind missing: the pytest entries are then not registered at all).

Usage: scripts/ci-summary.py LOG --shared-data DIR
"""
import argparse
import collections
import os
import re
import sys

TEST_HEADER = re.compile(r'^\d+/\d+ Test: (\S+)$')
GTEST_SKIP = re.compile(r'^\S+:\d+: Skipped$')
PYTEST_SKIP = re.compile(r'^SKIPPED \[(\d+)\] \S+?:\d+: (.*)$')


def skips_by_cause(log_lines):
    """{cause: [test names]} from the log's per-test output blocks."""
    causes = collections.defaultdict(list)
    tests = set()
    test = None
    for i, line in enumerate(log_lines):
        header = TEST_HEADER.match(line)
        if header:
            test = header.group(1)
            tests.add(test)
            continue
        if test is None:
            continue
        if GTEST_SKIP.match(line):
            message = log_lines[i + 1].strip() if i + 1 < len(log_lines) else ''
            causes[message or '(no message)'].append(test)
            continue
        pytest_skip = PYTEST_SKIP.match(line)
        if pytest_skip:
            causes[pytest_skip.group(2).strip()].extend([test] * int(pytest_skip.group(1)))
    return causes, tests


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('log')
    parser.add_argument('--shared-data', required=True)
    args = parser.parse_args()
    with open(args.log, encoding='utf-8', errors='replace') as log:
        lines = log.read().splitlines()
    causes, tests = skips_by_cause(lines)
    print(f'ci: {len(tests)} CTest entries ran; skipped, by cause:')
    for cause, names in sorted(causes.items(), key=lambda item: -len(item[1])):
        print(f'  {len(names):4d}  {cause}')
    if not causes:
        print('     0  (nothing skipped)')
    failures = []
    if os.path.isdir(args.shared_data):
        missing = sorted({name for cause, names in causes.items() if 'shared/data' in cause
                          for name in names})
        if missing:
            failures.append(f'{args.shared_data} is present, yet {len(missing)} tests skipped for '
                            f'its absence: {", ".join(missing[:10])}')
    if not any(name.startswith('Python.') for name in tests):
        failures.append('no Python.* test ran: the module was not built (is nanobind installed '
                        'for the build\'s Python? scripts/setup.sh installs it)')
    for failure in failures:
        print(f'ci: error: {failure}')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
