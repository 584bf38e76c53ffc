"""Rebuilds the recorded azure pages in this folder (see README.md); deterministic, byte for byte.

Run: PYTHONPATH=. .venv/bin/python tests/scrapers/pages/azure/build_pages.py
"""

import json
import random
import uuid
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import yaml

random.seed(4242)
OUT = str(Path(__file__).resolve().parent)
FIXTURE = Path(__file__).resolve().parents[4] / "fixtures" / "providers" / "azure.yaml"
fx = yaml.safe_load(FIXTURE.read_text())
P = {}
for p in fx["prices"]:
    P[(p["instance_type"], p["region"], p["pricing_model"])] = p["amount"]
LOC = {
    "eastus": "US East",
    "southcentralus": "US South Central",
    "westus2": "US West 2",
    "eastus2euap": "US East 2 EUAP",
}
SERIES = {
    "NC4as_T4_v3": "NCasT4_v3",
    "NC8as_T4_v3": "NCasT4_v3",
    "NC16as_T4_v3": "NCasT4_v3",
    "NC64as_T4_v3": "NCasT4_v3",
    "NC6s_v3": "NCSv3",
    "NC12s_v3": "NCSv3",
    "NC24s_v3": "NCSv3",
    "NC24rs_v3": "NCSv3",
    "NC24ads_A100_v4": "NCadsA100v4",
    "NC48ads_A100_v4": "NCadsA100v4",
    "NC96ads_A100_v4": "NCadsA100v4",
    "NC40ads_H100_v5": "NCadsH100v5",
    "NC80adis_H100_v5": "NCadsH100v5",
    "ND40rs_v2": "NDv2",
    "ND96asr_v4": "NDasrA100_v4",
    "ND96amsr_A100_v4": "NDamsrA100_v4",
    "ND96isr_H100_v5": "NDisrH100v5",
    "ND96isr_H200_v5": "NDisrH200v5",
    "NV6ads_A10_v5": "NVadsA10v5",
    "NV36ads_A10_v5": "NVadsA10v5",
    "NV72ads_A10_v5": "NVadsA10v5",
    "D2s_v5": "Dsv5",
    "NC6": "NC",
}
prodids = {}


def pid(series, win=False):
    k = (series, win)
    if k not in prodids:
        prodids[k] = "DZH318Z0" + "".join(
            random.choice("0123456789ABCDEFGHJKLMNPQRSTVWXZ") for _ in range(4)
        )
    return prodids[k]


def disp(sku):  # Standard_NC4as_T4_v3 -> "NC4as T4 v3"
    return sku.replace("Standard_", "").replace("_", " ")


def item(
    sku,
    region,
    price,
    kind="Consumption",
    spot=False,
    lowpri=False,
    windows=False,
    term=None,
    primary=True,
    savings=None,
):
    short = sku.replace("Standard_", "")
    series = SERIES[short]
    name = disp(sku) + (" Spot" if spot else "") + (" Low Priority" if lowpri else "")
    prod = f"Virtual Machines {series} Series" + (" Windows" if windows else "")
    p = pid(series, windows)
    it = {"currencyCode": "USD", "tierMinimumUnits": 0.0}
    if term:
        it["reservationTerm"] = term
    it.update(
        {
            "retailPrice": price,
            "unitPrice": price,
            "armRegionName": region,
            "location": LOC[region],
            "effectiveStartDate": "2024-05-01T00:00:00Z",
            "meterId": str(uuid.UUID(int=random.getrandbits(128))),
            "meterName": name,
            "productId": p,
            "skuId": f"{p}/{random.choice(['00B4', '00C2', '014X', '00HK', '0095'])}",
            "productName": prod,
            "skuName": name,
            "serviceName": "Virtual Machines",
            "serviceId": "DZH313Z7MMC8",
            "serviceFamily": "Compute",
            "unitOfMeasure": "1 Hour",
            "type": kind,
            "isPrimaryMeterRegion": primary,
            "armSkuName": sku,
        }
    )
    if savings:
        it["savingsPlan"] = savings
    return it


def f(x):
    return float(Decimal(str(x)))


def sp(od):  # savings plan rates: illustrative 1y ~ 0.67x, 3y ~ 0.45x
    d = Decimal(str(od))
    return [
        {
            "unitPrice": f((d * Decimal("0.45")).quantize(Decimal("0.0001"))),
            "retailPrice": f((d * Decimal("0.45")).quantize(Decimal("0.0001"))),
            "term": "3 Years",
        },
        {
            "unitPrice": f((d * Decimal("0.67")).quantize(Decimal("0.0001"))),
            "retailPrice": f((d * Decimal("0.67")).quantize(Decimal("0.0001"))),
            "term": "1 Year",
        },
    ]


def res(od, years):
    d = Decimal(str(od))
    h = 8760 * years
    factor = Decimal("0.6") if years == 1 else Decimal("0.4")
    return f((d * h * factor).quantize(Decimal("1"), rounding=ROUND_HALF_UP))


def std(sku, region, reservations=False, savings=True):
    out = []
    od = P[(sku, region, "on_demand")]
    out.append(item(sku, region, od, savings=sp(od) if savings else None))
    if (sku, region, "spot") in P:
        out.append(item(sku, region, P[(sku, region, "spot")], spot=True))
    if reservations:
        out.append(item(sku, region, res(od, 1), kind="Reservation", term="1 Year"))
        out.append(item(sku, region, res(od, 3), kind="Reservation", term="3 Years"))
    return out


def page(items, next_link=None):
    return {
        "BillingCurrency": "USD",
        "CustomerEntityId": "Default",
        "CustomerEntityType": "Retail",
        "Items": items,
        "NextPageLink": next_link,
        "Count": len(items),
    }


def dump(name, doc):
    Path(OUT, name).write_text(json.dumps(doc, indent=2) + "\n")


# eastus page 1
e1 = []
e1 += std("Standard_NC4as_T4_v3", "eastus", reservations=True)
e1.append(item("Standard_NC4as_T4_v3", "eastus", 0.736, windows=True))  # trap: Windows
e1.append(item("Standard_NC4as_T4_v3", "eastus", 0.1052, lowpri=True))  # trap: Low Priority
e1.append(
    item("Standard_NC4as_T4_v3", "eastus", 0.0891, spot=True, windows=True)
)  # trap: Windows Spot
e1.append(
    item("Standard_NC4as_T4_v3", "eastus", 0.526, kind="DevTestConsumption")
)  # trap: dev/test
e1.append(item("Standard_NC4as_T4_v3", "eastus", 0.526, primary=False))  # trap: non-primary meter
e1 += std("Standard_NC64as_T4_v3", "eastus")
e1 += std("Standard_NC6s_v3", "eastus")
e1 += std("Standard_NC24ads_A100_v4", "eastus", reservations=True)
e1.append(item("Standard_D2s_v5", "eastus", 0.096, savings=sp(0.096)))  # trap: not a GPU size
e1.append(item("Standard_NC6", "eastus", 0.9))  # trap: retired K80 size, not mapped
# a reservation with a term we do not map
x = item(
    "Standard_NC24ads_A100_v4",
    "eastus",
    res(3.673, 3) * 5 / 3 * Decimal(1) if False else 61900.0,
    kind="Reservation",
    term="5 Years",
)
e1.append(x)
link = "https://prices.azure.com:443/api/retail/prices?api-version=2023-01-01-preview&$filter=serviceName eq 'Virtual Machines' and armRegionName eq 'eastus'&$skip=1000"
dump("eastus-1.json", page(e1, link))
# eastus page 2
e2 = []
e2 += std("Standard_NC40ads_H100_v5", "eastus")
e2 += std("Standard_ND96asr_v4", "eastus", reservations=True)
e2 += std("Standard_ND96isr_H100_v5", "eastus")
e2 += std("Standard_NV6ads_A10_v5", "eastus")
e2 += std("Standard_NV36ads_A10_v5", "eastus")
e2.append(
    item("Standard_ND96isr_H200_v5", "eastus", 110.24, savings=sp(110.24))
)  # new size (illustrative price)
dump("eastus-2.json", page(e2, None))
# southcentralus single page
s = []
s += std("Standard_NC4as_T4_v3", "southcentralus")
s += std("Standard_ND96amsr_A100_v4", "southcentralus", reservations=True)
s.append(item("Standard_ND96amsr_A100_v4", "southcentralus", 55.0, windows=True))
dump("southcentralus.json", page(s, None))
dump("eastus2euap.json", page([], None))
