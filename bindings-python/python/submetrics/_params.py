"""The names of the query parameters a service call takes, for the rule
:class:`~submetrics.Client` shares with the ledger: a parameter left unset
(``None``) means its default and is left out of the query, but its name must
be one the call takes, for a misspelt name must never pass silently. The
service is not sent an unset name, so it cannot refuse one: the client
checks such a query before sending it and raises the error the service
answers for an unknown name given a value, in the same words.

Where the names come from: ``_api.QUERY_PARAMS`` (the description's) for
each operation, and for a report its own, which the service lists at
``GET /reports`` (read by the caller, once).
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Optional, Sequence

from . import _api
from .errors import BadRequestError, InvalidQueryError, SubmetricsError

#: Operations whose parameters a view of the core reads (besides ``as_of``
#: and ``format``), by the name the service's refusal gives the view; a
#: report's view is the report.
VIEWS = {"listAnalyticsCustomers": "customers", "getAnalyticsCustomer": "customer", "listMovements": "movements"}
#: Parameters of the call rather than of the view it asks for.
CALL_PARAMS = ("as_of", "format")


def check(
    operation: str,
    path_params: Mapping[str, object],
    query: Mapping[str, object],
    report_params: Callable[[], Mapping[str, Sequence[str]]],
) -> None:
    """Raises the error the service answers for the first name in ``query``
    (given a value or unset) that ``operation`` does not take: a view's
    (a report's, the customer views', the movements') first in name order,
    another operation's first in query order, as the service checks them.
    ``report_params`` answers every report's parameter names; it is called
    only for a report with a name its operation does not declare. An
    unknown report passes: the service answers that it has none."""
    declared = _api.QUERY_PARAMS.get(operation, ())
    if all(name in declared for name in query):
        return
    if operation == "getReport":
        view = str(path_params["name"])
        known: Optional[Sequence[str]] = report_params().get(view)
        if known is None:
            return
    elif operation in VIEWS:
        view = VIEWS[operation]
        known = [name for name in declared if name not in CALL_PARAMS]
    else:
        first = next(name for name in query if name not in declared)
        if not declared:
            raise BadRequestError(f"query parameter `{first}`: this endpoint takes no query parameters", None, first)
        raise BadRequestError(
            f"query parameter `{first}`: this endpoint has no such parameter; its parameters: {', '.join(declared)}",
            None,
            first,
        )
    unknown = next((name for name in sorted(query) if name not in declared and name not in known), None)
    if unknown is not None:
        raise unknown_parameter(view, unknown, known)


def unknown_parameter(view: str, name: str, known: Sequence[str]) -> SubmetricsError:
    """The core's refusal of a parameter ``view`` does not read."""
    near = near_miss(name, known)
    hint = f"; did you mean `{near}`?" if near is not None else "."
    message = f"parameter `{name}`: report `{view}` has no such parameter{hint} Its parameters: {', '.join(known)}"
    return InvalidQueryError(message, None, name)


def _loose(name: str) -> str:
    """A name compared loosely: lower case (each character on its own),
    without ``-`` and ``_``."""
    return "".join(c.lower() for c in name if c not in "-_")


def near_miss(given: str, known: Iterable[str]) -> Optional[str]:
    """The known name nearest to ``given`` when it is a near miss, as the
    core suggests it: at most one edit away for names up to 4 characters,
    two for longer ones, ignoring case, ``-`` and ``_`` (the first of
    equally near names)."""
    loose = _loose(given)
    allowed = 1 if len(loose) <= 4 else 2
    near = [(_edit_distance(loose, _loose(name)), name) for name in known]
    best = min((pair for pair in near if pair[0] <= allowed), key=lambda pair: pair[0], default=None)
    return best[1] if best is not None else None


def _edit_distance(a: str, b: str) -> int:
    """The fewest inserted, removed or replaced characters that turn ``a`` into ``b``."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a):
        current = [i + 1] * (len(b) + 1)
        for j, cb in enumerate(b):
            current[j + 1] = min(previous[j] + (ca != cb), previous[j + 1] + 1, current[j] + 1)
        previous = current
    return previous[len(b)]
