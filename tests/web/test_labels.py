"""The pages name every pricing model and every rejection in both languages, from the one list."""

from __future__ import annotations

import pytest
from django.utils import translation

from catalog.pricing import PRICING_MODEL_LABELS, PricingModel
from sizing.messages import RejectionCode
from web import labels


def test_every_pricing_model_has_a_page_label_from_catalog_pricing():
    assert list(labels.PRICING_MODELS) == list(PricingModel)
    with translation.override("en"):
        assert {m: str(v) for m, v in labels.PRICING_MODELS.items()} == PRICING_MODEL_LABELS


@pytest.mark.parametrize("model", list(PricingModel))
def test_every_pricing_model_is_translated(model):
    with translation.override("zh-hans"):
        assert labels.label(labels.PRICING_MODELS, model) != PRICING_MODEL_LABELS[model]


def test_every_rejection_code_has_a_page_label():
    assert set(labels.REJECTIONS) == set(RejectionCode)
