"""Pricing models: how a price is billed, listed once. Pure: no Django, so the planner can use it;
the catalog's model choices (catalog.choices.PricingModel) are built from it."""

from __future__ import annotations

from enum import StrEnum


class PricingModel(StrEnum):
    """How a price is billed."""

    ON_DEMAND = "on_demand"
    SPOT = "spot"
    MONTHLY = "monthly"
    YEARLY = "yearly"
    RESERVED_1Y = "reserved_1y"
    RESERVED_3Y = "reserved_3y"


# The catalog's labels for each pricing model (English; the admin and forms show them).
PRICING_MODEL_LABELS = {
    PricingModel.ON_DEMAND: "On demand",
    PricingModel.SPOT: "Spot / preemptible",
    PricingModel.MONTHLY: "Monthly subscription",
    PricingModel.YEARLY: "Yearly subscription",
    PricingModel.RESERVED_1Y: "Reserved, 1 year",
    PricingModel.RESERVED_3Y: "Reserved, 3 years",
}
