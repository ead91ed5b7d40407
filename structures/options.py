"""Declared structure options: each structure class lists the options its constructor takes.

A structure declares ``options_spec = {"name": Option(...), ...}`` beside its constructor (the
way scikit-learn estimators declare their parameters' constraints); :class:`structures.base.DynamicGraph`
checks the options it is given against that declaration before the constructor reads them.  Before
this, every constructor read ``options.get(name, default)``: a misspelt option was ignored, 0 was
clamped to 1, 2.5 truncated to 2, and ``"abc"`` failed inside ``int()`` without naming the option.

The checks here are of one option at a time (type, range, choices, power of two), a bound possibly
naming another option (graphvine's ``block_size`` up to its ``max_block_size``); what else ties options
together (GPMA's density bounds, a default that depends on another option) stays in the constructor.
"""
from __future__ import annotations

import difflib
import math
import numbers
from dataclasses import dataclass

import numpy as np

#: the bound of vertex capacities: internal vertex ids are int32
MAX_VERTEX_CAPACITY = 1 << 31

#: the bound of sizes counted in entries, slots or bytes: 2^40 entries are terabytes, past any device, and a
#: larger request fails in the allocator (OverflowError, "array is too big") without naming the option
MAX_ENTRIES = 1 << 40

#: the type words of the messages
_KIND_WORDS = {int: "an integer", float: "a number", bool: "True or False"}


@dataclass(frozen=True)
class Option:
    """One constructor option: its type, default, allowed values and meaning.

    ``low`` / ``high`` are inclusive bounds (``low_open`` / ``high_open`` make them strict); a bound
    given as a string names another option of the same structure, whose value (given or default) is
    the bound.  ``choices``: for a ``str`` option its values; for another type extra values accepted
    as they are (graphvine's ``graphs="emulate"``).  ``none_ok``: None is a value (its meaning in
    ``doc``).  ``internal``: a switch for tests and benchmarks, accepted and checked like any other
    option but not listed among the structure's options in messages.
    """

    kind: type
    default: object
    doc: str
    low: float | str | None = None
    high: float | str | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple = ()
    none_ok: bool = False
    power_of_two: bool = False
    internal: bool = False

    def describe(self, values: dict) -> str:
        """What a valid value is, in words (``values``: every option's value, for the named bounds)."""
        if self.kind is str:
            words = "one of " + ", ".join(repr(c) for c in self.choices)
        else:
            words = "a power of two" if self.power_of_two else _KIND_WORDS[self.kind]
            low, high = (_bound(b, values) for b in (self.low, self.high))
            if low is not None and high is not None and not (self.low_open or self.high_open):
                words += f" from {_num(low)} to {_num(high)}"
            elif low is not None:
                words += f" {'>' if self.low_open else '>='} {_num(low)}"
                if high is not None:
                    words += f" and {'<' if self.high_open else '<='} {_num(high)}"
            elif high is not None:
                words += f" {'<' if self.high_open else '<='} {_num(high)}"
            if isinstance(self.high, str) and high is not None:
                words += f" ({self.high})"
            if self.choices:
                words += ", or " + " or ".join(repr(c) for c in self.choices)
        if self.none_ok:
            words += ", or None"
        return words


def _bound(bound, values: dict):
    """A bound's value: a number, or the value of the option it names."""
    return values.get(bound) if isinstance(bound, str) else bound


def _num(x) -> str:
    if isinstance(x, float):
        return f"{x:g}"
    return f"2^{x.bit_length() - 1}" if x >= 1 << 20 and not x & (x - 1) else str(x)


def check_options(structure: str, spec: dict[str, Option], options: dict) -> dict:
    """Every declared option's value: ``options`` checked against ``spec`` and converted to the declared
    type, the declared defaults for the others.  ValueError (one line naming the option and what is
    valid) for an unknown option or a wrong value."""
    for name in options:
        if name not in spec:
            known = sorted(n for n, o in spec.items() if not o.internal)
            close = difflib.get_close_matches(str(name), list(spec), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            listed = f"its options: {', '.join(known)}" if known else f"{structure} takes no options"
            raise ValueError(f"{structure}: unknown option {name!r}{hint}; {listed}")
    out, wrong = {}, set()
    for name, opt in spec.items():
        if name not in options:
            out[name] = opt.default
            continue
        value = options[name]
        if (value is None and opt.none_ok) or _is_choice(opt, value):
            out[name] = value
            continue
        try:
            out[name] = _typed(opt.kind, value)
        except (ValueError, OverflowError):             # OverflowError: an int too large for a float
            out[name], wrong = value, wrong | {name}
    # a bound may name another option: checked once every option has its value (given or default)
    for name, opt in spec.items():
        value = out[name]
        if name in wrong or (name in options and value is not None and not _is_choice(opt, value)
                             and not _in_range(opt, value, out)):
            raise ValueError(f"{structure} option {name}={options[name]!r}: expected {opt.describe(out)}")
    return out


def _is_choice(opt: Option, value) -> bool:
    """``value`` is one of the option's choices (of the same type: True is not 1, 1 is not 1.0)."""
    return any(type(value) is type(c) and value == c for c in opt.choices)


def _typed(kind: type, value):
    """``value`` as ``kind``, or raise ValueError: no text but a choice (``str`` options have
    nothing else), no fraction for an integer, no number but 0 and 1 for a bool, no bool for a number,
    nothing infinite or NaN."""
    if kind is str:
        raise ValueError
    if kind is bool:
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        if isinstance(value, numbers.Integral) and int(value) in (0, 1):
            return bool(value)
        raise ValueError
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError
    if isinstance(value, numbers.Integral):
        return int(value) if kind is int else float(value)
    value = float(value)
    if not math.isfinite(value) or (kind is int and not value.is_integer()):
        raise ValueError
    return int(value) if kind is int else value


def _in_range(opt: Option, value, values: dict) -> bool:
    low, high = _bound(opt.low, values), _bound(opt.high, values)
    if low is not None and (value <= low if opt.low_open else value < low):
        return False
    if high is not None and (value >= high if opt.high_open else value > high):
        return False
    return not (opt.power_of_two and (value < 1 or value & (value - 1)))
