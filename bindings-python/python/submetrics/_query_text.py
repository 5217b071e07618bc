"""Call parameters as query text, as the ledger reads a parameter: the
rules :class:`~submetrics.Client` shares with the embedded ledger, applied
before anything is sent."""

from __future__ import annotations

import operator
from typing import Any, Dict, Iterable, Mapping, Optional

from .errors import InvalidQueryError

#: Report parameters whose name has a dash; a keyword spells it with ``_``.
DASHED = ("selected-date", "selected-type", "breakdown-value")


def _plain(value: Any) -> Any:
    """A numpy scalar or a ``Decimal`` as the plain value it stands for (a
    numpy datetime64 as its text; a Decimal as an int when whole, else the
    float of the same number), ``None`` for any other value, as the ledger's
    reader takes them."""
    kind = type(value)
    module = getattr(kind, "__module__", "")
    if module == "numpy":
        if kind.__name__ == "datetime64":
            return str(value)
        if hasattr(value, "item"):
            item = value.item()
            return None if type(item).__module__ == "numpy" else item
        return None
    if module == "decimal" and kind.__name__ == "Decimal":
        finite = value.is_finite()
        if finite and value == value.to_integral_value():
            return int(value)
        number = float(value)
        if finite and kind(repr(number)) != value:
            raise TypeError(f"Decimal {value} has more digits than a float holds exactly; give it as a string")
        return number
    return None


def _scalar_text(value: Any) -> str:
    """One value of a parameter as text (see :func:`_text`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return str(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    plain = _plain(value)
    if plain is not None:
        return _scalar_text(plain)
    raise TypeError(
        "a parameter value is text, a number, a boolean, a date or a list of those, got " + type(value).__name__
    )


def _list_text(items: Iterable[str]) -> str:
    """Items space-separated as the service reads a list: one holding a
    space or comma, or starting with a quote, in double quotes with its
    quotes doubled (``"acme corp"``), as the ledger writes it."""
    def written(item: str) -> str:
        if " " in item or "," in item or item.startswith('"'):
            return '"' + item.replace('"', '""') + '"'
        return item
    return " ".join(written(item) for item in items)


def _text(name: str, value: Any) -> str:
    """The query text of parameter ``name``'s value, as the ledger reads a
    parameter: text as given, numbers as ``str()`` writes them, booleans
    true/false, dates and datetimes ISO 8601 (numpy scalars and Decimals as
    the plain values they stand for), and a list, tuple or set of those
    space-separated (see ``_list_text``). Anything else (a dict, bytes, a list of lists) is the
    ledger's ``TypeError`` naming the parameter, before anything is sent:
    its ``str()`` would filter on text nobody wrote."""
    try:
        if isinstance(value, (list, tuple, set, frozenset)):
            return _list_text(_scalar_text(v) for v in value)
        return _scalar_text(value)
    except TypeError as error:
        raise TypeError(f"parameter `{name}`: {error}") from None


def _query(params: Optional[Mapping[str, Any]], keywords: Mapping[str, Any]) -> Dict[str, Optional[str]]:
    """Report parameters as query strings, ``None`` for one left unset (its
    default: :meth:`Client._send` checks its name and leaves it out); a
    keyword ``selected_date`` means ``selected-date`` (as the ledger reads
    them). A parameter given a value both in ``params`` and as a keyword is
    an :class:`InvalidQueryError` naming it, as the ledger raises."""
    out: Dict[str, Optional[str]] = {}
    for source, are_keywords in ((params or {}, False), (keywords, True)):
        for name, value in source.items():
            dashed = name.replace("_", "-")
            name = dashed if are_keywords and dashed in DASHED else name
            if value is None:
                out.setdefault(name, None)
                continue
            if out.get(name) is not None:
                raise InvalidQueryError(
                    f"parameter `{name}`: is given both in params and as a keyword; give it once", None, name
                )
            out[name] = _text(name, value)
    return out


def _query_at(
    params: Optional[Mapping[str, Any]], keywords: Mapping[str, Any], as_of: Any, **extra: str
) -> Dict[str, Optional[str]]:
    """:func:`_query` of a call at an instant: an ``as_of`` among the
    parameters stands when ``as_of`` is not given, and both is an
    :class:`InvalidQueryError` naming it, as is a parameter the call sets
    itself (``extra``: the Arrow calls' ``format``)."""
    query = _query(params, keywords)
    for name, value in extra.items():
        if query.get(name) is not None:
            raise InvalidQueryError(f"parameter `{name}`: this call sets it to {value}", None, name)
        query[name] = value
    if as_of is not None:
        if query.get("as_of") is not None:
            raise InvalidQueryError(
                "parameter `as_of`: is given twice (as the as_of argument and among the parameters); give it once",
                None,
                "as_of",
            )
        query["as_of"] = _text("as_of", as_of)
    return query


def _page_bound(name: str, value: Any) -> Optional[int]:
    """A list's ``limit`` or ``offset``: a whole number of 0 or more (or
    ``None``, the default); anything else (a negative number, a float, a
    bool) is the ledger's :class:`InvalidQueryError` naming it, raised
    before anything is sent."""
    if value is None:
        return None
    try:
        number = None if isinstance(value, bool) else operator.index(value)
    except TypeError:
        number = None
    if number is None or number < 0:
        raise InvalidQueryError(f"parameter `{name}`: `{value!r}` is not a whole number of 0 or more", None, name)
    return number
