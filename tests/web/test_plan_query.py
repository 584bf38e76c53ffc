"""/plan reads its query string as GET /api/recommend does: comma lists for every list field, and
an unknown parameter is a 400 naming it."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django import forms

from web.forms import PlanForm

pytestmark = pytest.mark.django_db

PLAN = "/plan?model=llama-3-8b&task=finetune&method=lora&tokens=2e8"
LIST_FIELDS = [
    name
    for name, field in PlanForm.base_fields.items()
    if isinstance(field, forms.MultipleChoiceField)
]


def _ranked(response) -> list[tuple]:
    return [
        (r["provider"], r["instance_type"], r["region"], r["pricing_model"], r["nodes"])
        for r in response.context["answer"]["recommendations"]
    ]


def test_the_forms_list_fields_are_the_apis():
    assert set(LIST_FIELDS) == {"pricing", "providers", "gpus"}


@pytest.mark.parametrize(
    ("name", "values"),
    [
        ("pricing", ["on_demand", "spot"]),
        ("providers", ["aws", "lambda"]),
        ("gpus", ["h100-sxm", "a100-sxm4-80gb"]),
    ],
)
def test_comma_list_is_the_same_plan_as_repeated_names(client, name, values):
    repeated = client.get(PLAN + "".join(f"&{name}={v}" for v in values))
    comma = client.get(PLAN + f"&{name}=" + ",".join(values))
    assert repeated.status_code == 200, repeated.context["form"].errors
    assert comma.status_code == 200, comma.context["form"].errors
    assert comma.context["form"].cleaned_data[name] == values
    assert _ranked(comma) == _ranked(repeated) and _ranked(comma)
    # The checkboxes and options show what was asked for, and the shared link repeats names.
    assert comma.context["form"].query()[name] == values
    body = comma.content.decode()
    for value in values:
        assert re.search(rf'value="{re.escape(value)}"[^>]*(checked|selected)', body), value


def test_comma_list_with_an_unknown_choice_names_it(client):
    response = client.get(PLAN + "&pricing=on_demand,spott")
    assert response.status_code == 400
    assert "spott" in str(response.context["form"].errors["pricing"])


def test_comma_list_matches_the_api(client, api_client):
    query = "model=llama-3-8b&method=lora&tokens=2e8&pricing=on_demand,spot&providers=aws,lambda"
    page = client.get("/plan?" + query)
    api = api_client.get("/api/recommend?" + query + "&limit=200&all_sizes=true")
    assert page.status_code == 200 and api.status_code == 200
    ranked = [
        (r["provider"], r["instance_type"], r["region"], r["pricing_model"], r["nodes"])
        for r in api.json()["recommendations"]
    ]
    assert _ranked(page) == ranked


@pytest.mark.parametrize("query", ["/plan?foo=1", PLAN + "&foo=1", PLAN + "&provider=aws"])
def test_unknown_parameter_is_a_400_naming_it(client, api_client, query):
    response = client.get(query)
    assert response.status_code == 400
    name = "provider" if "provider=" in query else "foo"
    body = response.content.decode()
    assert 'id="unknown-params"' in body and f"<code>{name}=" in body
    assert response.context.get("answer") is None
    # The API answers the same query string with a 400 under the same name, and the page
    # suggests the name the API suggests.
    api = api_client.get(query.replace("/plan?", "/api/recommend?"))
    assert api.status_code == 400 and name in api.json()["errors"]
    near = re.findall(r"'([a-z_]+)'", str(api.json()["errors"][name]))
    if near:
        assert re.search(rf"did you mean <code>[^<]*\b{near[0]}\b", body), near
    if name == "provider":
        assert re.search(r"did you mean <code>[^<]*\bproviders\b", body)


def test_unknown_parameter_in_chinese(client):
    response = client.get("/plan?foo=1", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert response.status_code == 400
    assert "未知参数" in response.content.decode()


class _FormNames(HTMLParser):
    """The names the plan form submits (inputs, selects, buttons inside form#plan-form)."""

    def __init__(self) -> None:
        super().__init__()
        self.inside = False
        self.names: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.inside = attrs.get("id") == "plan-form"
        elif self.inside and tag in ("input", "select", "textarea", "button") and attrs.get("name"):
            self.names.add(attrs["name"])

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False


@pytest.mark.parametrize("lang", ["en", "zh-hans"])
def test_every_name_the_form_sends_is_known(client, lang):
    page = client.get(PLAN, HTTP_ACCEPT_LANGUAGE=lang)
    assert page.status_code == 200
    parser = _FormNames()
    parser.feed(page.content.decode())
    assert {"model", "pricing", "include_stale"} <= parser.names
    assert set(parser.names) <= set(PlanForm.base_fields)
    # The page's own extras still plan: lang (ignored by pages) and a CSRF token.
    again = client.get(PLAN + "&lang=zh-hans&csrfmiddlewaretoken=x")
    assert again.status_code == 200 and again.context["answer"] is not None
