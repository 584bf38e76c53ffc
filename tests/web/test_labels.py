"""The pages name every pricing model and every rejection in both languages, from the one list."""

from __future__ import annotations

import pytest
from django.utils import translation

from catalog.pricing import PRICING_MODEL_LABELS, PricingModel
from sizing import inputs
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


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (6.65e18, "6.65 \u00d7 10¹⁸"),
        (4.29e21, "4.29 \u00d7 10²¹"),
        (1e6, "1 \u00d7 10⁶"),
        (1234.5, "1,234.5"),
    ],
)
def test_large_counts_read_as_powers_of_ten_not_e_notation(value, shown):
    from web.templatetags.atlas import sci

    assert sci(value) == shown


def test_every_providers_compliance_note_has_a_chinese_translation():
    """A note changed in fixtures/providers/*.yaml needs web/provider_notes.py and the zh
    catalog changed with it; until then Chinese pages would show it in English."""
    from pathlib import Path

    import yaml

    from web.provider_notes import COMPLIANCE_NOTES

    fixtures = Path(__file__).resolve().parents[2] / "fixtures" / "providers"
    notes = {}
    for path in sorted(fixtures.glob("*.yaml")):
        # Only the file's provider block: the price lists after it take seconds to parse.
        lines = path.read_text().splitlines()
        start = lines.index("provider:")
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i][:1] not in ("", " ", "#")),
            len(lines),
        )
        provider = yaml.safe_load("\n".join(lines[start:end]))["provider"]
        if provider.get("compliance_notes"):
            notes[path.stem] = " ".join(provider["compliance_notes"].split())
    assert notes
    for slug, note in notes.items():
        assert note in COMPLIANCE_NOTES, f"{slug}: its note is not in web/provider_notes.py"
        with translation.override("zh-hans"):
            assert translation.gettext(note) != note, f"{slug}: no Chinese translation"


def test_every_constraint_meant_for_the_plan_page_has_a_field():
    """The plan form's constraint fields are written by hand (labels, widgets); a constraint
    added to sizing/inputs.py with form=True fails here until the form has it."""
    from sizing import inputs
    from web.forms import PlanForm

    wanted = {f.name for f in inputs.CONSTRAINTS if f.form}
    assert wanted <= set(PlanForm.base_fields), sorted(wanted - set(PlanForm.base_fields))


@pytest.mark.parametrize(
    "spec", [f for f in (*inputs.WORKLOAD, *inputs.CONSTRAINTS) if f.form], ids=lambda f: f.name
)
def test_every_plan_field_label_has_a_chinese_translation(spec):
    """sizing/inputs.py marks the plan page's labels; makemessages must not leave them out
    (docs/web.md's command once ignored sizing/, and the page showed English labels)."""
    untranslatable = {"torch.compile"}
    with translation.override("zh-hans"):
        chinese = translation.gettext(spec.label)
    assert chinese != spec.label or spec.label in untranslatable, spec.label
