"""Parameters left unset, for the rule :class:`~submetrics.Client` shares
with the ledger: a parameter given as ``None`` means its default and is left
out of the query, but its name must be one the call takes, for a misspelt
name must never pass silently.

The service refuses a name it does not take by the name alone, whatever the
value, so an unset name the call does not take is sent with a placeholder
value (:data:`UNSET`) and the service answers the error it gives that name
with any value, in its own words. The names a call takes come from
``_api.QUERY_PARAMS`` (the description's) and, for a report, from the
report's own, which the service lists at ``GET /reports`` (read by the
caller, once, and only for a report given a name its operation does not
declare).
"""

from __future__ import annotations

from typing import Callable, List, Mapping, Optional, Sequence

from . import _api

#: The value an unset name the call does not take is sent with: the service
#: refuses the name before it reads a value.
UNSET = "unset"


def refused(
    operation: str,
    path_params: Mapping[str, object],
    query: Mapping[str, object],
    report_params: Callable[[], Mapping[str, Sequence[str]]],
) -> List[str]:
    """The names of ``query`` left unset (``None``) that ``operation`` does
    not take, in query order. An unknown report takes every name: the
    service answers that it has no such report."""
    declared = _api.QUERY_PARAMS.get(operation, ())
    names = [name for name, value in query.items() if value is None and name not in declared]
    if names and operation == "getReport":
        known: Optional[Sequence[str]] = report_params().get(str(path_params["name"]))
        names = [name for name in names if known is not None and name not in known]
    return names
