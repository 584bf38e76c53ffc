"""The scraper contract: ``fetch(client)`` returns raw pages, ``parse(page)`` turns one into records.

Parsing is pure (no network, no database): a page in, typed price records out, so every parser is
tested on recorded pages. Only the ingest service (scrapers/services.py) writes prices.
"""

from __future__ import annotations

import io
import random
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import IO, Any, ClassVar

import httpx

from catalog.pricing import PricingModel

USER_AGENT = (
    "GPUAtlas/1.0 (+https://github.com/gpu-atlas; price catalog refresh; contact via repository)"
)
RETRY_STATUSES = {429, 500, 502, 503, 504}
# A spooled body stays in memory up to this size, then moves to a temporary file.
SPOOL_IN_MEMORY_BYTES = 8 * 1024 * 1024


class ParseError(ValueError):
    """A page that is not what the parser expects (changed layout, truncated, wrong format)."""


class FetchError(RuntimeError):
    """The source could not be fetched after retries."""


@dataclass(frozen=True)
class Page:
    """One fetched document: where it came from, its status, its body and when.

    A large source is fetched spooled (``HttpClient.get(..., spool=True)``): its bytes are in
    ``spool``, a temporary file, and ``body`` is "". Parsers of such sources read ``open()``,
    which serves both kinds of page; ``close()`` frees the spool once the page is parsed.
    """

    url: str
    status: int
    body: str
    fetched_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    content_type: str = ""
    # Free-form context a parser needs that is not in the body (e.g. the region a file is for).
    meta: dict[str, str] = field(default_factory=dict)
    spool: IO[bytes] | None = field(default=None, compare=False, repr=False)

    def open(self) -> IO[bytes]:
        """The body as bytes from its start: the spool rewound (not to be closed by the reader;
        ``close()`` does), or ``body`` encoded as UTF-8."""
        if self.spool is None:
            return io.BytesIO(self.body.encode("utf-8"))
        self.spool.seek(0)
        return self.spool

    def close(self) -> None:
        """Free the spool (its temporary file); a page without one has nothing to free."""
        if self.spool is not None:
            self.spool.close()


@dataclass(frozen=True)
class PriceRecord:
    """One price as the provider states it, before normalisation.

    ``gpu_name`` is the provider's own spelling; the ingest service maps it through aliases.
    ``amount`` is for the whole instance in ``currency`` per ``unit``.
    """

    instance_type: str
    gpu_name: str
    gpu_count: Decimal
    region: str
    pricing_model: str
    amount: Decimal
    currency: str
    unit: str = "hour"
    vcpus: int | None = None
    ram_gib: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["gpu_count"] = float(self.gpu_count)
        data["amount"] = float(self.amount)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PriceRecord:
        """The record ``as_json`` wrote (a held run keeps its records this way)."""
        return cls(
            **{
                **data,
                "gpu_count": Decimal(str(data["gpu_count"])),
                "amount": Decimal(str(data["amount"])),
            }
        )


# What a parser read but did not turn into a record.
NOTE_SKIPPED = "skipped"  # read and left out on purpose (not a GPU, not priced, not offered)
NOTE_UNMATCHED = "unmatched"  # a name the parser cannot map: drift a curator must see


@dataclass(frozen=True)
class ParseNote:
    """A row, SKU or name a parser read without making a record of it, and why.

    ``category`` says what kind of name an unmatched note is about: ``gpu``, ``sku``,
    ``instance`` (an instance type or family) or ``region``.
    """

    kind: str
    name: str
    reason: str
    category: str = ""

    def text(self) -> str:
        what = f"{self.category} " if self.category else ""
        return f"{self.kind} {what}{self.name!r}: {self.reason}"


@dataclass
class ParseResult:
    """Every record of a source's pages and the notes the parser left on the way."""

    records: list[PriceRecord]
    notes: list[ParseNote]
    pages: int = 0  # how many pages were parsed

    def unmatched(self) -> list[ParseNote]:
        return [note for note in self.notes if note.kind == NOTE_UNMATCHED]


class Scraper:
    """Base class: subclasses set ``key``, ``base_url`` and implement ``fetch`` and ``parse``."""

    key: ClassVar[str]
    provider_slug: ClassVar[str]
    base_url: str  # the class sets the source's; an instance may be pointed elsewhere
    description: ClassVar[str] = ""

    # Regions fetched when the caller names none (sources that are fetched per region).
    default_regions: ClassVar[tuple[str, ...]] = ()
    # True when parse() reads pages through ``Page.open()`` only, so a page may be spooled.
    reads_spooled_pages: ClassVar[bool] = False

    def __init__(
        self,
        *,
        base_url: str | None = None,
        credentials: dict[str, str] | None = None,
        regions: Iterable[str] | None = None,
    ):
        self.base_url = (base_url or type(self).base_url).rstrip("/")
        self.credentials = credentials or {}
        self.regions = tuple(regions) if regions else self.default_regions
        self.notes: list[ParseNote] = []

    def note_skipped(self, name: str, reason: str) -> None:
        """Say that ``name`` was read and left out on purpose (``parse_page --explain`` shows it)."""
        self.notes.append(ParseNote(NOTE_SKIPPED, str(name), reason))

    def note_unmatched(self, category: str, name: str, reason: str) -> None:
        """Say that ``name`` (a gpu, sku, instance or region) could not be mapped: drift.

        The refresh files it in the unmatched-names queue and in the run's warnings.
        """
        self.notes.append(ParseNote(NOTE_UNMATCHED, str(name), reason, category))

    def credential(self, name: str) -> str:
        """A configured credential (scrapers.registry), stripped; "" when unset."""
        return (self.credentials.get(name) or "").strip()

    def has_credentials(self, *names: str) -> bool:
        """Whether every named credential is configured."""
        return all(self.credential(name) for name in names)

    def host_url(self, host: str, path: str) -> str:
        """URL on another host of the same provider (price files, APIs). With a test or staging
        base URL the host is mounted under it: ``<base_url>/<host><path>``."""
        if self.base_url == type(self).base_url.rstrip("/"):
            return f"https://{host}{path}"
        return f"{self.base_url}/{host}{path}"

    def pricing_models(self) -> frozenset[str]:
        """Pricing models this source publishes as configured; only these can be marked gone.

        Override when a model depends on configuration (e.g. AWS spot needs a spot source).
        Capacity blocks are left out: no scraper reads them yet (fixtures/tools/aws_prices.py
        curates them), so a refresh must not mark the curated rates gone.
        """
        return frozenset(model.value for model in PricingModel) - {PricingModel.CAPACITY_BLOCK}

    # --- to implement ------------------------------------------------------------------
    def fetch(self, client: HttpClient) -> Iterator[Page]:
        """Yield every page of the source (following pagination)."""
        raise NotImplementedError

    def parse(self, page: Page) -> list[PriceRecord]:
        """Records in one page; raise ParseError when the page is not in the expected format."""
        raise NotImplementedError


REGISTRY: dict[str, type[Scraper]] = {}


def register(cls: type[Scraper]) -> type[Scraper]:
    """Class decorator adding a scraper to the registry under its key."""
    REGISTRY[cls.key] = cls
    return cls


class HttpClient:
    """httpx with timeouts, a polite user agent and retries with backoff on 429 and 5xx."""

    def __init__(
        self,
        *,
        timeout_s: float = 30.0,
        retries: int = 3,
        backoff_s: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.retries = retries
        self.backoff_s = backoff_s
        self.sleep = sleep
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout_s),
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate"},
            follow_redirects=True,
            transport=transport,
        )

    def get(
        self,
        url: str,
        *,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        meta: dict[str, str] | None = None,
        spool: bool = False,
    ) -> Page:
        """GET ``url``; with ``spool`` the body streams into a temporary file (``Page.spool``)
        instead of memory, for sources of hundreds of megabytes."""
        return self.request("GET", url, params=params, headers=headers, meta=meta, spool=spool)

    def post(
        self,
        url: str,
        *,
        json: Any = None,
        headers: dict[str, str] | None = None,
        meta: dict[str, str] | None = None,
    ) -> Page:
        return self.request("POST", url, json=json, headers=headers, meta=meta)

    def request(
        self,
        method: str,
        url: str,
        *,
        meta: dict[str, str] | None = None,
        spool: bool = False,
        **kwargs: Any,
    ) -> Page:
        last_error = ""
        for attempt in range(self.retries + 1):
            try:
                response, page = self._attempt(method, url, meta=meta, spool=spool, **kwargs)
            except httpx.TransportError as exc:  # timeouts, refused connections, resets
                last_error = f"{type(exc).__name__}: {exc}"
            else:
                if page is not None:
                    return page
                last_error = f"HTTP {response.status_code} from {url}"
                if response.status_code not in RETRY_STATUSES:
                    break
                retry_after = response.headers.get("retry-after", "")
                if retry_after.isdigit() and attempt < self.retries:
                    self.sleep(min(float(retry_after), 60.0))
                    continue
            if attempt < self.retries:
                # Exponential backoff with jitter: 1, 2, 4 s (+/- 25%).
                self.sleep(self.backoff_s * (2**attempt) * random.uniform(0.75, 1.25))
        raise FetchError(last_error or f"could not fetch {url}")

    def _attempt(
        self, method: str, url: str, *, meta: dict[str, str] | None, spool: bool, **kwargs: Any
    ) -> tuple[httpx.Response, Page | None]:
        """One request: the response, and its page when the status is a success."""
        if not spool:
            response = self._client.request(method, url, **kwargs)
            if response.status_code >= 400:
                return response, None
            return response, Page(
                url=str(response.url),
                status=response.status_code,
                body=response.text,
                content_type=response.headers.get("content-type", ""),
                meta=dict(meta or {}),
            )
        with self._client.stream(method, url, **kwargs) as response:
            if response.status_code >= 400:
                return response, None
            file = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY_BYTES)  # noqa: SIM115 (the page owns it; Page.close() frees it)
            try:
                for chunk in response.iter_bytes():  # content-encoding (gzip) already undone
                    file.write(chunk)
            except BaseException:
                file.close()
                raise
            return response, Page(
                url=str(response.url),
                status=response.status_code,
                body="",
                content_type=response.headers.get("content-type", ""),
                meta=dict(meta or {}),
                spool=file,
            )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def parse_pages(scraper: Scraper, pages: Iterable[Page]) -> ParseResult:
    """Every record of every page, in order, with the notes the parser left (duplicates once).

    Pages are parsed one at a time as ``pages`` yields them, and each is closed once parsed, so
    handing in ``scraper.fetch(client)`` itself keeps one raw page in memory (or spooled) at a
    time, however many the source has.
    """
    scraper.notes = []
    records: list[PriceRecord] = []
    count = 0
    for page in pages:
        count += 1
        try:
            records.extend(scraper.parse(page))
        finally:
            page.close()
    notes = list(dict.fromkeys(scraper.notes))
    scraper.notes = []
    return ParseResult(records=records, notes=notes, pages=count)


def parse_all(scraper: Scraper, pages: Iterable[Page]) -> list[PriceRecord]:
    """Every record of every page, in order."""
    return parse_pages(scraper, pages).records
