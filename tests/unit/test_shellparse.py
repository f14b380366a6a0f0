"""The shell parser (``detectors/shellparse.py``): what a script's commands are once its
variables, loops, moves and nested runs are read, the same way a shell or Python runs them."""

from __future__ import annotations

import pytest

from monitor_gateway.monitors.detectors.shellparse import (
    commands,
    python_queries,
    python_runs,
    run_as,
    script,
)


def argvs(line: str) -> list[list[str]]:
    return [command.argv for command in commands(line)]


@pytest.mark.parametrize(("line", "argv"), [
    ('D=/srv/x; rm -rf "$D"', ["rm", "-rf", "/srv/x"]),
    ("export D=/srv/x && rm -rf ${D}/old", ["rm", "-rf", "/srv/x/old"]),
    ("for d in a b; do rm -rf /srv/$d; done", ["rm", "-rf", "/srv/a", "/srv/b"]),
    ("if true; then rm -rf /srv/x; fi", ["rm", "-rf", "/srv/x"]),
    ("mv /srv/x /tmp/y && rm -rf /tmp/y/", ["rm", "-rf", "/srv/x"]),
    ("find /srv/x -mindepth 1 -delete", ["rm", "-rf", "/srv/x/*"]),
    ("find /srv/x /srv/y -type d -exec rm -rf {} +", ["rm", "-rf", "/srv/x", "/srv/y"]),
    ("python3 -c \"import shutil; shutil.rmtree('/srv/x')\"", ["rm", "-rf", "/srv/x"]),
    ("cd /srv && rm -rf x/../y", ["rm", "-rf", "x/../y"]),
    ("rm -rf /srv/{a,b}/cache", ["rm", "-rf", "/srv/a/cache", "/srv/b/cache"]),
    ("ls -d /srv/x* | xargs rm -r", ["rm", "-r", "/srv/x*"]),
], ids=["assigned", "exported-braced", "loop", "if", "moved", "find-delete", "find-exec",
        "python-c", "cd-kept-as-written", "braces", "ls-d-xargs"])
def test_a_deletion_is_read_as_the_command_it_amounts_to(line: str, argv: list[str]) -> None:
    assert argv in argvs(line)


@pytest.mark.parametrize("line", [
    'D=/srv/x; rm -rf "$DIR"',  # another name, never set here: left as written
    "for f in $(ls); do rm -rf $f; done",  # a loop over what a command prints: not guessed
    "find /srv/x -name '*.log' -mtime +7 -delete",  # it selects: not all of /srv/x
    "find /srv/x -type f -print",  # it deletes nothing
])
def test_what_the_script_does_not_spell_is_not_guessed(line: str) -> None:
    assert not any(argv[:1] == ["rm"] and any(w.startswith("/srv/x") for w in argv)
                   for argv in argvs(line))


def test_a_scripts_lines_share_what_the_lines_before_set() -> None:
    ran = [command.argv for _, _, command in script("ROOT=/srv/app\ncd $ROOT\nrm -rf $ROOT/c")]
    assert ran == [["cd", "/srv/app"], ["rm", "-rf", "/srv/app/c"]]
    # a line read alone starts afresh
    assert argvs("rm -rf $ROOT/c") == [["rm", "-rf", "$ROOT/c"]]


@pytest.mark.parametrize(("code", "runs"), [
    ("import shutil, os\nbase = '/data'\nfor n in ['a', 'b']:\n    shutil.rmtree("
     "os.path.join(base, n))\n", ["rm -rf /data/a", "rm -rf /data/b"]),
    ("import subprocess\nsubprocess.run(['rm', '-rf', f'{HOME}/x'])\n", []),
    ("import subprocess\nroot = '/srv'\nsubprocess.run(f'rm -rf {root}/old', shell=True)\n",
     ["rm -rf /srv/old"]),
    ("import boto3\nboto3.resource('s3').Bucket('logs').objects.filter(Prefix='2023/')"
     ".delete()\n", ["aws s3 rm s3://logs/2023/ --recursive"]),
    ("from google.cloud import storage\nfor b in storage.Client().bucket('t').list_blobs():\n"
     "    b.delete()\n", ["gsutil rm -r 'gs://t/**'"]),
    ("items = ['a']\nitems.remove('/srv/x')\nrecord.delete()\n", []),
    ("x = " + " + ".join(["'a'"] * 200) + "\nimport shutil\nshutil.rmtree(x)\n", []),
], ids=["loop-join", "unknown-name", "f-string", "boto3", "gcs", "not-a-deletion",
        "nested-too-deep"])
def test_what_a_python_script_runs(code: str, runs: list[str]) -> None:
    assert sorted(run for _, run in python_runs(code)) == sorted(runs)


def test_a_python_runs_place_is_its_calls_in_the_script() -> None:
    code = "import shutil\nname = 'é'; shutil.rmtree('/srv/x')\n"  # columns count bytes
    [(at, _)] = python_runs(code)
    assert code[at:].startswith("shutil.rmtree")


def test_a_url_built_in_python_keeps_its_scheme_and_a_path_joins_as_python_joins_it() -> None:
    code = ("import os, shutil, subprocess\nb = 'logs'\nsubprocess.run(f'gsutil rm -r "
            "gs://{b}/**', shell=True)\nshutil.rmtree(os.path.join('/srv/', 'old'))\n"
            "shutil.rmtree(os.path.join('/srv', '/etc'))\n")
    assert sorted(run for _, run in python_runs(code)) == [
        "gsutil rm -r gs://logs/**", "rm -rf /etc", "rm -rf /srv/old"]


def test_only_leading_keywords_are_the_shells_grammar() -> None:
    assert argvs("mv do /tmp/x && rm -rf /tmp/x") == [["mv", "do", "/tmp/x"], ["rm", "-rf", "do"]]


@pytest.mark.parametrize(("path", "ran", "kind"), [
    ("jobs/purge.py", "cd /srv && python3 -u jobs/purge.py --yes", "python"),
    ("purge.py", "python ./purge.py", "python"),
    ("purge.py", "python -m pytest tests/ && ruff check purge.py", ""),
    ("purge.py", "python repurge.py", ""),
    ("drop.sql", "psql -d app -f drop.sql", "sql"),
    ("sql/drop.sql", "mysql app < sql/drop.sql", "sql"),
    ("drop.sql", "cat drop.sql", ""),
])
def test_a_file_written_is_run_where_a_command_runs_it(path: str, ran: str, kind: str) -> None:
    assert run_as(path, ran) == kind


def test_the_queries_a_python_script_runs() -> None:
    code = ("import sqlite3\nc = sqlite3.connect('a.db')\nT = 'events'\n"
            "c.execute(f'DELETE FROM {T}')\nc.execute(sql)\n")
    assert [query for _, query in python_queries(code)] == ["DELETE FROM events"]


@pytest.mark.parametrize(("line", "cwd"), [
    ("cd /srv/app && rm -rf build", "/srv/app"),
    ("cd /srv && cd app/../web && rm -rf build", "/srv/web"),
    ("rm -rf build; cd /srv/app", ""),
    ("cd ~/app && rm -rf build", ""),
    ('cd "$(mktemp -d)" && rm -rf build', ""),
])
def test_a_command_knows_the_absolute_directory_the_script_went_to(line: str,
                                                                    cwd: str) -> None:
    [removed] = [c for c in commands(line) if c.argv[0] == "rm"]
    assert removed.cwd == cwd
    assert removed.path("build") == (f"{cwd}/build" if cwd else "build")


def test_a_value_that_grows_with_each_use_is_not_read() -> None:
    """``D=$D$D`` doubles: read, twenty of them would make a word of a million characters."""
    [removed] = [c for c in commands("D=x; " + "D=$D$D; " * 20 + "rm -rf $D")
                 if c.argv[0] == "rm"]
    assert max(len(word) for word in removed.argv) <= 2048


def test_a_word_of_many_brace_groups_expands_a_bounded_number_of_words() -> None:
    [echoed] = [c for c in commands("echo " + "{a,b}" * 30)]
    assert 1 < len(echoed.argv) <= 65


@pytest.mark.parametrize(("code", "run"), [
    ("import shutil\n[shutil.rmtree(p) for p in ('/srv/a', '/srv/b')]\n", "rm -rf /srv/b"),
    ("import shutil\nall(shutil.rmtree(p) for p in ['/srv/a'])\n", "rm -rf /srv/a"),
    ("print(open('/etc/app/db.conf').read())\n", "cat /etc/app/db.conf"),
    ("with open('/etc/app/db.conf', 'rb') as f:\n    f.read()\n", "cat /etc/app/db.conf"),
    ("from pathlib import Path\nPath('/etc/app/db.conf').read_text()\n",
     "cat /etc/app/db.conf"),
    ("import requests\nrequests.get('https://api.acme.io/x', verify=False)\n",
     "curl --insecure https://api.acme.io/x"),
    ("import httpx\nhttpx.Client(verify=False)\n", "curl --insecure"),
], ids=["list-comprehension", "generator", "open", "open-with-mode", "read-text",
        "requests-unverified", "httpx-client-unverified"])
def test_a_python_script_reads_as_the_commands_it_amounts_to(code: str, run: str) -> None:
    assert run in [r for _, r in python_runs(code)]


@pytest.mark.parametrize("code", [
    "open('/etc/app/db.conf', 'w').write(text)\n",
    "open('/etc/app/db.conf', mode='a+')\n",
    "import requests\nrequests.get('https://api.acme.io/x', verify='/etc/ssl/ca.pem')\n",
    "import requests\nrequests.get('https://api.acme.io/x', verify=True)\n",
    "import json\njson.loads(text, strict=False)\n",
], ids=["open-to-write", "open-to-append", "verified-by-bundle", "verified", "other-call"])
def test_a_file_written_or_a_call_verified_runs_no_such_command(code: str) -> None:
    assert not any(r.startswith(("cat ", "curl ")) for _, r in python_runs(code))


@pytest.mark.parametrize(("line", "argv"), [
    ("env | grep -i token", ["env"]),
    ("env FOO=1", ["env"]),
    ("env FOO=1 make build", ["make", "build"]),
    ("sudo env", ["env"]),
], ids=["env-piped", "env-assignments-only", "env-wrapping", "sudo-env"])
def test_env_with_no_program_is_the_program(line: str, argv: list[str]) -> None:
    assert argvs(line)[0] == argv


@pytest.mark.parametrize("body", [
    '{"text": "db password rotated, new one: x"}',
    '{"a": 1,"b": 2}',
], ids=["spaces", "double-quotes"])
def test_a_quoted_brace_is_one_word_as_written(body: str) -> None:
    """Bash expands no brace in quotes: a JSON body stays one word (a word holding a space
    or a double quote was quoted)."""
    [posted] = commands(f"curl -X POST https://hooks.example.io/x -d '{body}'")
    assert posted.argv[-1] == body

