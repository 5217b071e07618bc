"""The asyncio face of the service client: :class:`AsyncClient` has the
methods of :class:`~submetrics.Client` as coroutines, each running the
blocking call in the event loop's default thread pool, and ``async for``
paging helpers."""

from __future__ import annotations

import asyncio
import functools
from typing import Any, AsyncIterator, Callable, Dict, Optional, TypeVar

from ._paging import checked_page_size
from .client import Client

__all__ = ["AsyncClient"]

_T = TypeVar("_T")


def _in_thread(method: Callable[..., _T]) -> Callable[..., Any]:
    """The coroutine version of a :class:`Client` method: the blocking call
    runs in the default executor's threads."""
    name = method.__name__

    @functools.wraps(method)
    async def run(self: "AsyncClient", *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        bound = getattr(self._client, name)
        return await loop.run_in_executor(None, functools.partial(bound, *args, **kwargs))

    return run


class AsyncClient:
    """The asyncio face of :class:`Client`: the same methods, as coroutines
    (``await client.report("mrr")``), and ``async for`` paging helpers.

    Standard library only: each call runs the blocking client in the event
    loop's default thread pool, so calls from many tasks proceed in
    parallel up to that pool's size. Arguments are those of :class:`Client`.
    """

    def __init__(self, base_url: Optional[str] = None, api_key: Optional[str] = None, **options: Any) -> None:
        self._client = Client(base_url, api_key, **options)

    @property
    def base_url(self) -> str:
        return self._client.base_url

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        return None

    call = _in_thread(Client.call)
    upsert_customers = _in_thread(Client.upsert_customers)
    upsert_plans = _in_thread(Client.upsert_plans)
    upsert_invoices = _in_thread(Client.upsert_invoices)
    upsert_data_sources = _in_thread(Client.upsert_data_sources)
    upsert_plan_groups = _in_thread(Client.upsert_plan_groups)
    get_customer = _in_thread(Client.get_customer)
    get_plan = _in_thread(Client.get_plan)
    get_plan_group = _in_thread(Client.get_plan_group)
    get_invoice = _in_thread(Client.get_invoice)
    get_data_source = _in_thread(Client.get_data_source)
    list_customers = _in_thread(Client.list_customers)
    list_plans = _in_thread(Client.list_plans)
    list_plan_groups = _in_thread(Client.list_plan_groups)
    list_invoices = _in_thread(Client.list_invoices)
    list_data_sources = _in_thread(Client.list_data_sources)
    list_fx_rates = _in_thread(Client.list_fx_rates)
    delete_customer = _in_thread(Client.delete_customer)
    delete_plan = _in_thread(Client.delete_plan)
    delete_plan_group = _in_thread(Client.delete_plan_group)
    delete_invoice = _in_thread(Client.delete_invoice)
    delete_data_source = _in_thread(Client.delete_data_source)
    update_customer = _in_thread(Client.update_customer)
    update_plan = _in_thread(Client.update_plan)
    replace_invoice = _in_thread(Client.replace_invoice)
    update_plan_group = _in_thread(Client.update_plan_group)
    update_data_source = _in_thread(Client.update_data_source)
    import_records = _in_thread(Client.import_records)
    load_fx_rates = _in_thread(Client.load_fx_rates)
    update_settings = _in_thread(Client.update_settings)
    movements = _in_thread(Client.movements)
    report = _in_thread(Client.report)
    customers = _in_thread(Client.customers)
    customer = _in_thread(Client.customer)
    resync_customer = _in_thread(Client.resync_customer)
    movements_arrow = _in_thread(Client.movements_arrow)
    movements_df = _in_thread(Client.movements_df)
    report_arrow = _in_thread(Client.report_arrow)
    report_df = _in_thread(Client.report_df)
    health = _in_thread(Client.health)
    account = _in_thread(Client.account)
    update_account = _in_thread(Client.update_account)
    profile = _in_thread(Client.profile)
    update_profile = _in_thread(Client.update_profile)
    billing = _in_thread(Client.billing)
    team = _in_thread(Client.team)
    api_keys = _in_thread(Client.api_keys)
    create_api_key = _in_thread(Client.create_api_key)
    revoke_api_key = _in_thread(Client.revoke_api_key)
    notification_settings = _in_thread(Client.notification_settings)
    update_notification_settings = _in_thread(Client.update_notification_settings)
    payment_platform_settings = _in_thread(Client.payment_platform_settings)
    crm_settings = _in_thread(Client.crm_settings)

    async def settings(self) -> Dict[str, Any]:
        """The ledger settings of the account (a coroutine here, a property on :class:`Client`)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(None, lambda: self._client.settings)

    async def _pages(self, lister: Callable[..., Any], page_size: int, **query: Any) -> AsyncIterator[Any]:
        checked_page_size(page_size)
        offset = 0
        while True:
            page = await lister(limit=page_size, offset=offset, **query)
            for item in page["list"]:
                yield item
            offset += len(page["list"])
            if not page["list"] or offset >= page["count"]:
                return

    def iter_customers(self, page_size: int = 1000) -> AsyncIterator[Any]:
        """Every customer record, page by page (``async for``)."""
        return self._pages(self.list_customers, page_size)

    def iter_plans(self, page_size: int = 1000, source: Optional[str] = None) -> AsyncIterator[Any]:
        """Every plan record, page by page."""
        return self._pages(self.list_plans, page_size, source=source)

    def iter_plan_groups(self, page_size: int = 1000) -> AsyncIterator[Any]:
        """Every plan group, page by page."""
        return self._pages(self.list_plan_groups, page_size)

    def iter_invoices(self, page_size: int = 1000, customer: Optional[str] = None) -> AsyncIterator[Any]:
        """Every invoice record, page by page."""
        return self._pages(self.list_invoices, page_size, customer=customer)

    def iter_data_sources(self, page_size: int = 1000) -> AsyncIterator[Any]:
        """Every data source, page by page."""
        return self._pages(self.list_data_sources, page_size)
