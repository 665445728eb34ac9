"""The label of each policy in a run: what tables and plots show, unique within the run and readable.

A spec's label is the ``name=`` it was given; else the spec itself when it is short (``LABEL_WIDTH``
characters at most); else the policy's name with just the options on which it differs from the run's
other specs of the same policy (``llm:temperature=0.7``); else, when even that is long, the policy's
name numbered (``llm#2``). A label taken already gets the next free number. Labels are worked out from
the normalised specs alone, so an old run folder gets the same labels every time it is summarised.

>>> policy_labels(["random", "expectiminimax:depth=3,budget_ms=0.0,nodes=20000"])
{'random': 'random', 'expectiminimax:depth=3,budget_ms=0.0,nodes=20000': 'expectiminimax'}
>>> sorted(policy_labels(["llm:model=m,base_url=http://localhost:8000/v1",
...                       "llm:model=m,base_url=http://localhost:8000/v1,temperature=0.7"]).values())
['llm', 'llm:temperature=0.7']
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tabletop_rl.agents.registry import LABEL_OPTION

__all__ = ["LABEL_WIDTH", "check_labels", "policy_labels"]

#: Automatic labels are at most this long (what a plot's axis shows whole).
LABEL_WIDTH = 28
_POSITIONAL = ""  # the key of a positional value (``ppo:PATH``) among a spec's items


def _split(spec: str) -> tuple[str, dict[str, str], str | None]:
    """A normalised spec as ``(policy, {key: item text}, label)``; a positional value has key ``""``.

    >>> _split("ppo:runs/a.zip,deterministic=false,name=mine")
    ('ppo', {'': 'runs/a.zip', 'deterministic': 'deterministic=false'}, 'mine')
    """
    policy, _, rest = spec.partition(":")
    items: dict[str, str] = {}
    label = None
    for item in (part for part in rest.split(",") if part) if rest else ():
        key, eq, value = item.partition("=")
        if not eq:
            items[_POSITIONAL] = item
        elif key == LABEL_OPTION:
            label = value
        else:
            items[key] = item
    return policy, items, label


def _distinguishing(spec: str, specs: Sequence[str]) -> str:
    """The policy's name and the items on which ``spec`` differs from the other specs of that policy."""
    policy, items, _ = _split(spec)
    group = [_split(other)[1] for other in specs if _split(other)[0] == policy]
    differing = {key for some in group for key in some if len({other.get(key) for other in group}) > 1}
    shown = [item for key, item in items.items() if key in differing]
    return policy + (":" + ",".join(shown) if shown else "")


def _automatic(spec: str, specs: Sequence[str]) -> str:
    if len(spec) <= LABEL_WIDTH:
        return spec
    short = _distinguishing(spec, specs)
    if len(short) <= LABEL_WIDTH:
        return short
    policy = _split(spec)[0]
    same = [other for other in specs if _split(other)[0] == policy]
    return f"{policy}#{same.index(spec) + 1}"


def _free(label: str, taken: set[str]) -> str:
    """``label``, or its base numbered with the first number not taken (``llm#1`` -> ``llm#2``)."""
    if label not in taken:
        return label
    base = re.sub(r"#\d+$", "", label)
    number = 2
    while f"{base}#{number}" in taken:
        number += 1
    return f"{base}#{number}"


def policy_labels(specs: Sequence[str]) -> dict[str, str]:
    """``{spec: label}`` for the normalised specs of one run, every label different (see the module)."""
    given = {spec: _split(spec)[2] for spec in specs}
    taken = {label for label in given.values() if label is not None}
    labels: dict[str, str] = {}
    for spec in specs:
        label = given[spec]
        if label is None:
            label = _free(_automatic(spec, specs), taken)
            taken.add(label)
        labels[spec] = label
    return labels


def check_labels(specs: Sequence[str]) -> None:
    """``ValueError`` when a ``name=`` would label two policies the same (before a run starts).

    >>> check_labels(["greedy", "random:name=greedy"])
    Traceback (most recent call last):
    ValueError: label 'greedy' would name two policies: greedy and random:name=greedy; give each its own name=
    """
    seen: dict[str, str] = {}
    for spec in specs:
        label = _split(spec)[2] or _automatic(spec, specs)
        other = seen.get(label)
        if other is not None and (_split(other)[2] or _split(spec)[2]):  # automatic ones are numbered apart
            raise ValueError(f"label {label!r} would name two policies: {other} and {spec}; "
                             f"give each its own {LABEL_OPTION}=")
        seen[label] = spec
