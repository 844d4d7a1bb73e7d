"""`hopsim --help` and every subcommand's --help: they run, and every option says what it
does and, where it takes a value, its default or unit.

The list of commands and options is read from the argparse parser itself, so a new
subcommand or option is covered without touching this file.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys

import pytest

from hopsim.cli import build_parser

# A value-taking option's help must name a default (or say it is required, or what its
# absence means) ...
_DEFAULT = re.compile(r"\b(default|required)\b", re.IGNORECASE)
# ... and a numeric option must also name what its number counts or measures.
_UNIT = re.compile(r"\b(us|ms|seconds|bytes|B|KiB|MiB|Gbit/s|ranks|rank|nodes|hosts|"
                   r"round trips|repetitions|messages|seed|base|degree|d|radix|processes)\b|\bS seconds\b")


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _commands() -> list[str]:
    parser, _ = build_parser([])
    return sorted(_subparsers(parser))


def _command_parser(name: str) -> argparse.ArgumentParser:
    # Some commands (topology) register their full parser only when they are the one run.
    parser, _ = build_parser([name])
    return _subparsers(parser)[name]


COMMANDS = _commands()


def test_the_command_list_is_what_the_docs_describe():
    # Guards the derivation above: an empty or partial list would make the other tests vacuous.
    assert {"simulate", "run", "platforms", "topology", "live", "smpi", "calibrate",
            "validate"} <= set(COMMANDS)


def _hopsim(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hopsim", *args], capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("args", [[]] + [[c] for c in COMMANDS] + [["platforms", "export"]],
                         ids=lambda a: " ".join(a) or "hopsim")
def test_help_exits_0_and_describes_the_options(args):
    p = _hopsim(*args, "--help")
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert p.stdout.startswith("usage: hopsim")
    if args:
        parser = _command_parser(args[0])
        for action in parser._actions:
            for flag in action.option_strings:
                assert flag in p.stdout, f"{flag} missing from hopsim {args[0]} --help"
    else:
        for command in COMMANDS:
            assert command in p.stdout


def _options():
    for name in COMMANDS:
        parser = _command_parser(name)
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            yield pytest.param(name, action, id=f"{name} {action.dest}")


@pytest.mark.parametrize("command,action", list(_options()))
def test_every_option_has_help_naming_its_default_or_unit(command, action):
    label = f"hopsim {command} {'/'.join(action.option_strings) or action.metavar or action.dest}"
    text = " ".join((action.help or "").split())
    assert len(text) >= 10, f"{label}: no help text"
    if action.nargs == 0:  # a switch (--json, --oversubscribe): saying what it does is enough
        return
    positional = not action.option_strings
    if not positional:
        assert action.required or _DEFAULT.search(text), \
            f"{label}: the help text names no default: {text!r}"
        if action.default is not None and not isinstance(action.default, bool):
            assert str(action.default) in text, \
                f"{label}: the default is {action.default!r} but the help says {text!r}"
    if action.type in (int, float) and action.choices is None:
        assert _UNIT.search(text), f"{label}: a number without a unit: {text!r}"


def test_help_matches_the_platform_defaults():
    # docs/platforms.md: host.reception defaults to any-source; simulate's --reception
    # help must not contradict it.
    from hopsim import platforms

    p = platforms.load_preset("two-nodes")
    assert p.reception == "any-source"
    parser = _command_parser("simulate")
    (reception,) = [a for a in parser._actions if a.dest == "reception"]
    assert "any-source" in reception.help and "host.reception" in reception.help
