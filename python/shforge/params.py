"""Parameter files for ``harness_runner.sh`` (``shforge params``)."""

from __future__ import annotations

import json
from typing import Mapping, Sequence, Union

from . import _cli
from ._files import StrPath, write_atomic
from .errors import UsageError

#: A parameter value: one string, or an array of strings.
ParamValue = Union[str, Sequence[str]]


def params_text(params: Mapping[str, ParamValue]) -> str:
    """The parameter file for ``params`` (bash assignments, one per key),
    exactly as ``shforge params`` prints it.

    Keys must be variable names, values strings or lists of strings without
    NUL: anything else raises :class:`~shforge.errors.UsageError` (code 2)
    with the CLI's message.
    """
    for key in params:
        # json.dumps would turn 1, True or None keys into strings silently.
        if not isinstance(key, str):
            raise UsageError(f"shforge: key {key!r} is not a string", 2)
    try:
        document = json.dumps(params, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise UsageError(f"shforge: the parameters are not JSON: {e}", 2) from e
    # The CLI refuses NUL, non-string values and bad names: one rule, its words.
    return _cli.run(["params", "-"], stdin=document.encode("utf-8")).decode("utf-8")


def write_params(path: StrPath, params: Mapping[str, ParamValue]) -> None:
    """Write the parameter file for ``params`` to ``path`` atomically
    (nothing is written when the input is refused)."""
    write_atomic(path, params_text(params).encode("utf-8"))
