"""The paging helpers :class:`~submetrics.Ledger` and
:class:`~submetrics.Client` share: every record of a kind, a page at a
time, through the class's own ``list_*`` methods."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, Optional

from .errors import InvalidQueryError


def checked_page_size(page_size: Any) -> int:
    """``page_size`` when it is a whole number of at least 1; anything else
    (0 would page through nothing) is an :class:`InvalidQueryError` naming it."""
    if not isinstance(page_size, int) or isinstance(page_size, bool) or page_size < 1:
        raise InvalidQueryError(f"page_size: must be a whole number of at least 1, got {page_size!r}",
                                None, "page_size")
    return page_size


class Paging:
    """``iter_*`` over the ``list_*`` methods of the class it is mixed into
    (each taking ``limit`` and ``offset`` and answering ``{count, list}``)."""

    list_customers: Callable[..., Dict[str, Any]]
    list_plans: Callable[..., Dict[str, Any]]
    list_plan_groups: Callable[..., Dict[str, Any]]
    list_invoices: Callable[..., Dict[str, Any]]
    list_data_sources: Callable[..., Dict[str, Any]]

    @staticmethod
    def _pages(lister: Callable[..., Dict[str, Any]], page_size: int, **query: Any) -> Iterator[Any]:
        checked_page_size(page_size)
        offset = 0
        while True:
            page = lister(limit=page_size, offset=offset, **query)
            yield from page["list"]
            offset += len(page["list"])
            if not page["list"] or offset >= page["count"]:
                return

    def iter_customers(self, page_size: int = 1000) -> Iterator[Any]:
        """Every customer record, ``page_size`` at a time."""
        return self._pages(self.list_customers, page_size)

    def iter_plans(self, page_size: int = 1000, source: Optional[str] = None) -> Iterator[Any]:
        """Every plan record (of the data source ``source``), page by page."""
        return self._pages(self.list_plans, page_size, source=source)

    def iter_plan_groups(self, page_size: int = 1000) -> Iterator[Any]:
        """Every plan group, page by page."""
        return self._pages(self.list_plan_groups, page_size)

    def iter_invoices(self, page_size: int = 1000, customer: Optional[str] = None) -> Iterator[Any]:
        """Every invoice record (of the customer ``customer``), page by page."""
        return self._pages(self.list_invoices, page_size, customer=customer)

    def iter_data_sources(self, page_size: int = 1000) -> Iterator[Any]:
        """Every data source, page by page."""
        return self._pages(self.list_data_sources, page_size)
