"""Huawei Cloud (华为云) ECS GPU prices: the public price calculator, or BSS ratings with AK/SK.

Public source (default): the JSON the huaweicloud.com price calculator loads per region
(``portalcalculatornodeservice/v4/api/productInfo?urlPath=ecs&region=...``). Its
``product.ec2_vm`` list holds one entry per flavor and OS image with the flavor's vCPUs, memory,
accelerator card and a ``planList`` of pay-per-use (ONDEMAND), monthly and yearly prices.

With ``huawei_access_key`` / ``huawei_secret_key`` / ``huawei_project_id``: the pay-per-use price
comes from BSS ``ListOnDemandResourceRatings`` (AK/SK signed, SDK-HMAC-SHA256) instead, the
account's official inquiry API; monthly and yearly stay with the calculator.
See docs/providers/huawei.md.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar
from urllib.parse import quote

from ..base import HttpClient, Page, ParseError, PriceRecord, Scraper, register

CALCULATOR_PATH = "/api/calculator/rest/cbc/portalcalculatornodeservice/v4/api/productInfo"
BSS_HOST = "bss.myhuaweicloud.com"
BSS_PATH = "/v2/bills/ratings/on-demand-resources"
BSS_BATCH = 100  # product_infos per inquiry; keeps each request small
# BSS amounts come with measure_id, the money unit: 1 yuan, 2 jiao (0.1), 3 fen (0.01).
MEASURE_FACTOR = {1: Decimal(1), 2: Decimal("0.1"), 3: Decimal("0.01")}

_LEADING_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_CARD_COUNT_FIRST = re.compile(r"^\s*(\d+)\s*[*x×]\s*(.+?)\s*$")  # noqa: RUF001 - the multiplication sign is written
_CARD_COUNT_LAST = re.compile(r"^\s*(.+?)\s*[*x×]\s*(\d+)\s*$")  # noqa: RUF001
# "1*32GiB", and "2 * 16G" as public readers of the calculator record it (no B).
_CARD_MEMORY = re.compile(r"(\d+)\s*G(?:i?B)?\b", re.IGNORECASE)


def _sha256_hex(data: bytes | str) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()


def _encode(value: str) -> str:
    return quote(value, safe="-_.~")


def sdk_canonical_request(
    *, method: str, path: str, query: dict[str, str], headers: dict[str, str], body: bytes
) -> tuple[str, str]:
    """Canonical request and signed-header list of Huawei's AK/SK scheme (API Gateway signing).

    The URI is encoded per segment and always ends with "/"; query pairs and headers are sorted;
    the body is hashed with SHA-256. Every header given is signed, X-Sdk-Date among them.
    """
    uri = "/".join(_encode(segment) for segment in path.split("/"))
    if not uri.endswith("/"):
        uri += "/"
    canonical_query = "&".join(f"{_encode(k)}={_encode(v)}" for k, v in sorted(query.items()))
    lowered = {name.lower(): value.strip() for name, value in headers.items()}
    signed = sorted(lowered)
    canonical_headers = "".join(f"{name}:{lowered[name]}\n" for name in signed)
    signed_headers = ";".join(signed)
    request = "\n".join(
        [method, uri, canonical_query, canonical_headers, signed_headers, _sha256_hex(body)]
    )
    return request, signed_headers


def sdk_authorization(
    *,
    access_key: str,
    secret_key: str,
    method: str,
    path: str,
    query: dict[str, str],
    headers: dict[str, str],
    body: bytes,
) -> str:
    """Authorization header: HexEncode(HMAC-SHA256(SK, "SDK-HMAC-SHA256\\n" date "\\n" hash))."""
    request, signed_headers = sdk_canonical_request(
        method=method, path=path, query=query, headers=headers, body=body
    )
    date = {k.lower(): v for k, v in headers.items()}["x-sdk-date"]
    string_to_sign = f"SDK-HMAC-SHA256\n{date}\n{_sha256_hex(request)}"
    signature = hmac.new(secret_key.encode(), string_to_sign.encode(), "sha256").hexdigest()
    return f"SDK-HMAC-SHA256 Access={access_key}, SignedHeaders={signed_headers}, Signature={signature}"


def accelerator(card: Any) -> tuple[str, Decimal] | None:
    """(GPU name, count) from the calculator's ``acceleratorCard``; None for a CPU-only flavor.

    Seen as "1*NVIDIA V100 / 1*32GiB" and "2 * NVIDIA T4 / 2 * 16G" (count first, memory per card
    after "/"; the second form is the one fuzzbuster/ec2instances.info's calculator reader tests,
    huaweicloud/scrape_test.go at 6fa4f37e2f8af54159c9a64aad4e9a73daac4be0). The memory is
    kept in the name ("NVIDIA V100 32GB") because it tells variants apart (V100 16/32 GB). The
    calculator sometimes glues the vendor to the model ("NVIDIAT4"); a space is put back.
    """
    text, _, memory_text = str(card or "").partition("/")
    text = text.strip()
    if text in ("", "0", "-", "--"):
        return None
    if match := _CARD_COUNT_FIRST.match(text):
        count, name = match.group(1), match.group(2)
    elif match := _CARD_COUNT_LAST.match(text):
        name, count = match.group(1), match.group(2)
    else:
        name, count = text, "1"
    name = re.sub(r"^NVIDIA(?=[A-Z0-9])", "NVIDIA ", " ".join(name.split()))
    if memory := _CARD_MEMORY.search(memory_text):
        name = f"{name} {memory.group(1)}GB"
    return name, Decimal(count)


def _number(text: Any) -> Decimal | None:
    match = _LEADING_NUMBER.search(str(text or ""))
    return Decimal(match.group()) if match else None


@register
class HuaweiScraper(Scraper):
    """Huawei Cloud ECS GPU and Ascend flavor prices (CNY, China site) per region."""

    key = "huawei"
    provider_slug = "huawei"
    base_url = "https://portal.huaweicloud.com"
    description = "Huawei Cloud price calculator (ECS); BSS ListOnDemandResourceRatings with AK/SK"
    default_regions: ClassVar[tuple[str, ...]] = (
        "cn-north-4",
        "cn-east-3",
        "cn-south-1",
        "cn-southwest-2",
        "ap-southeast-1",
        "ap-southeast-3",
    )

    # --- fetch ---------------------------------------------------------------------------
    def fetch(self, client: HttpClient) -> Iterator[Page]:
        """The calculator answer per region; with keys, a BSS inquiry for its GPU flavors after."""
        keyed = self.has_credentials("huawei_access_key", "huawei_secret_key", "huawei_project_id")
        for region in self.regions:
            meta = {"kind": "calculator", "region": region, "currency": "CNY"}
            if keyed:
                meta["skip_models"] = "on_demand"  # BSS gives the pay-per-use price instead
            page = client.get(
                self.base_url + CALCULATOR_PATH,
                params={
                    "urlPath": "ecs",
                    "tag": "general.online.portal",
                    "region": region,
                    "tab": "calc",
                    "sign": "common",
                },
                meta=meta,
            )
            yield page
            if keyed:
                yield from self._fetch_ratings(client, region, page)

    def _fetch_ratings(self, client: HttpClient, region: str, calculator: Page) -> Iterator[Page]:
        try:
            records = self._parse_calculator(calculator, keep_all_models=True)
        except ParseError:
            return  # the same page fails again in parse(), where the run reports it
        flavors: dict[str, PriceRecord] = {}
        for record in records:
            flavors.setdefault(record.instance_type, record)
        names = sorted(flavors)
        for start in range(0, len(names), BSS_BATCH):
            batch = names[start : start + BSS_BATCH]
            products = {
                str(i): {
                    "spec": name,
                    "gpu_name": flavors[name].gpu_name,
                    "gpu_count": str(flavors[name].gpu_count),
                    "vcpus": flavors[name].vcpus,
                    "ram_gib": flavors[name].ram_gib,
                }
                for i, name in enumerate(batch, start=1)
            }
            body = json.dumps(
                {
                    "project_id": self.credentials["huawei_project_id"],
                    "product_infos": [
                        {
                            "id": product_id,
                            "cloud_service_type": "hws.service.type.ec2",
                            "resource_type": "hws.resource.type.vm",
                            "resource_spec": f"{product['spec']}.linux",
                            "region": region,
                            "usage_factor": "Duration",
                            "usage_value": 1,
                            "usage_measure_id": 4,  # hours
                            "subscription_num": 1,
                        }
                        for product_id, product in products.items()
                    ],
                },
                separators=(",", ":"),
            ).encode()
            headers = {
                "Content-Type": "application/json",
                "Host": BSS_HOST,
                "X-Sdk-Date": datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"),
            }
            headers["Authorization"] = sdk_authorization(
                access_key=self.credentials["huawei_access_key"],
                secret_key=self.credentials["huawei_secret_key"],
                method="POST",
                path=BSS_PATH,
                query={},
                headers=headers,
                body=body,
            )
            # httpx sets Host from the URL (the loopback server in tests); the signed value stands.
            send_headers = {k: v for k, v in headers.items() if k != "Host"}
            yield client.request(
                "POST",
                self.host_url(BSS_HOST, BSS_PATH),
                content=body,
                headers=send_headers,
                meta={"kind": "bss", "region": region, "products": json.dumps(products)},
            )

    # --- parse ---------------------------------------------------------------------------
    def parse(self, page: Page) -> list[PriceRecord]:
        """Records of a calculator answer or of a BSS on-demand rating answer."""
        kind = page.meta.get("kind")
        if kind is None:
            kind = "bss" if "product_rating_results" in page.body else "calculator"
        if kind == "bss":
            return self._parse_ratings(page)
        return self._parse_calculator(page)

    @staticmethod
    def _json(page: Page) -> dict[str, Any]:
        try:
            data = json.loads(page.body)
        except json.JSONDecodeError as exc:
            raise ParseError(f"Huawei: invalid JSON ({exc.msg} at {exc.pos})") from None
        if not isinstance(data, dict):
            raise ParseError("Huawei: expected a JSON object")
        if "error_code" in data:
            raise ParseError(f"Huawei API error {data['error_code']}: {data.get('error_msg')}")
        return data

    def _parse_calculator(self, page: Page, *, keep_all_models: bool = False) -> list[PriceRecord]:
        data = self._json(page)
        product = data.get("product")
        if not isinstance(product, dict) or not isinstance(product.get("ec2_vm"), list):
            raise ParseError("Huawei calculator: no product.ec2_vm list")
        region = page.meta.get("region") or data.get("region")
        if not region:
            raise ParseError("Huawei calculator: answer names no region")
        currency = page.meta.get("currency") or data.get("currency") or "CNY"
        skip = set() if keep_all_models else set(page.meta.get("skip_models", "").split(","))
        records: list[PriceRecord] = []
        for vm in product["ec2_vm"]:
            if not isinstance(vm, dict) or "resourceSpecCode" not in vm or "planList" not in vm:
                raise ParseError("Huawei calculator: ec2_vm entry lacks resourceSpecCode/planList")
            code = vm["resourceSpecCode"]
            image = vm.get("imageSpec") or code.rsplit(".", 1)[-1]
            if image != "linux":
                continue  # Windows images add a licence fee
            card = accelerator(vm.get("acceleratorCard"))
            if card is None:
                continue  # CPU-only flavor
            gpu_name, gpu_count = card
            flavor = vm.get("spec") or code.removesuffix(".linux")
            vcpus, ram = _number(vm.get("cpu")), _number(vm.get("mem"))
            for model, unit, amount in self._plans(vm["planList"], code):
                if model in skip:
                    continue
                records.append(
                    PriceRecord(
                        instance_type=flavor,
                        gpu_name=gpu_name,
                        gpu_count=gpu_count,
                        region=region,
                        pricing_model=model,
                        amount=amount,
                        currency=currency,
                        unit=unit,
                        vcpus=int(vcpus) if vcpus is not None else None,
                        ram_gib=float(ram) if ram is not None else None,
                        extra={
                            "accelerator_card": str(vm.get("acceleratorCard")),
                            "generation": vm.get("generation", ""),
                            "arch": vm.get("instanceArch", ""),
                        },
                    )
                )
        return records

    @staticmethod
    def _plans(plans: Any, code: str) -> Iterator[tuple[str, str, Decimal]]:
        """(pricing model, unit, amount) of the one-period plans; other periods are skipped."""
        if not isinstance(plans, list):
            raise ParseError(f"Huawei calculator: {code} planList is not a list")
        for plan in plans:
            if not isinstance(plan, dict) or "billingMode" not in plan or "amount" not in plan:
                raise ParseError(f"Huawei calculator: {code} plan lacks billingMode/amount")
            mode, period = plan["billingMode"], plan.get("periodNum")
            if mode == "ONDEMAND":
                model, unit = "on_demand", "hour"
            elif mode == "MONTHLY" and period in (1, "1"):
                model, unit = "monthly", "month"
            elif mode == "YEARLY" and period in (1, "1"):
                model, unit = "yearly", "year"
            else:
                continue
            if plan["amount"] in (None, ""):
                continue  # not sold under this plan here
            try:
                amount = Decimal(str(plan["amount"]))
            except InvalidOperation:
                raise ParseError(f"Huawei calculator: {code} amount {plan['amount']!r}") from None
            if amount > 0:
                yield model, unit, amount

    def _parse_ratings(self, page: Page) -> list[PriceRecord]:
        data = self._json(page)
        results = data.get("product_rating_results")
        if not isinstance(results, list):
            raise ParseError("Huawei BSS: no product_rating_results list")
        try:
            products = json.loads(page.meta.get("products") or "{}")
        except ValueError:
            raise ParseError("Huawei BSS: page meta lost its product list") from None
        region = page.meta.get("region", "")
        currency = data.get("currency") or "CNY"
        records = []
        for result in results:
            try:
                product = products[str(result["id"])]
                official = Decimal(str(result["official_website_amount"]))
            except KeyError as exc:
                raise ParseError(f"Huawei BSS: rating result lacks {exc}") from None
            except InvalidOperation:
                raise ParseError("Huawei BSS: official_website_amount is not a number") from None
            measure = int(result.get("measure_id", data.get("measure_id", 1)))
            if measure not in MEASURE_FACTOR:
                raise ParseError(f"Huawei BSS: unknown money unit measure_id={measure}")
            amount = official * MEASURE_FACTOR[measure]
            if amount <= 0:
                continue
            records.append(
                PriceRecord(
                    instance_type=product["spec"],
                    gpu_name=product["gpu_name"],
                    gpu_count=Decimal(product["gpu_count"]),
                    region=region,
                    pricing_model="on_demand",
                    amount=amount,
                    currency=currency,
                    unit="hour",
                    vcpus=product.get("vcpus"),
                    ram_gib=product.get("ram_gib"),
                    extra={
                        "source": "bss",
                        "product_id": result.get("product_id", ""),
                        "discount_amount": str(result.get("discount_amount", "")),
                        "measure_id": measure,
                    },
                )
            )
        return records
