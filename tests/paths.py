"""Where things are, for tests in any of the test folders."""

from pathlib import Path

TESTS = Path(__file__).parent
ROOT = TESTS.parent
